//! Decodes every committed frame captured from Cassandra (`fixtures/captured/*.bin`,
//! recorded by `cassandra_captured.rs` with `DOPPIO_RECORD_FIXTURES=1`). No server needed.

use bytes::BytesMut;
use doppio_proto::frame::{Direction, Frame, FrameDecoder, Opcode};
use protocol_tests::captured_dir;

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(captured_dir())
        .expect("fixtures/captured exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("read fixture"))
        })
        .collect();
    out.sort();
    out
}

fn one_frame(name: &str, bytes: &[u8]) -> Frame {
    let mut buf = BytesMut::from(bytes);
    let f = FrameDecoder::new(Direction::Response)
        .decode(&mut buf)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .unwrap_or_else(|| panic!("{name}: incomplete"));
    assert!(buf.is_empty(), "{name}: trailing bytes");
    f
}

#[test]
fn every_captured_frame_is_one_response_frame() {
    let all = fixtures();
    assert!(all.len() >= 15, "only {} captured frames", all.len());
    for (name, bytes) in &all {
        let f = one_frame(name, bytes);
        let expected = if name.contains("error") {
            Opcode::Error
        } else if name.contains("event") {
            Opcode::Event
        } else if name.contains("ready") {
            Opcode::Ready
        } else if name.contains("supported") {
            Opcode::Supported
        } else {
            Opcode::Result
        };
        assert_eq!(f.header.opcode, expected, "{name}");
    }
}
