//! Golden frames: byte-exact fixtures written by hand from the spec (one file per frame in
//! `tests/golden/*.hex`, a comment per field), decoded with doppio-proto and re-encoded to
//! the same bytes.

use std::collections::BTreeSet;
use std::path::PathBuf;

use bytes::BytesMut;
use doppio_proto::frame::{Direction, Frame, FrameDecoder, Opcode, HEADER_LEN};
use protocol_tests::fixtures::{parse_hex, to_hex};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Every fixture: (file stem, bytes).
fn goldens() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(golden_dir())
        .expect("tests/golden exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "hex"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read fixture");
            let stem = p.file_stem().expect("stem").to_string_lossy().into_owned();
            (stem, parse_hex(&text))
        })
        .collect();
    out.sort();
    out
}

/// Decodes the single frame of a fixture, checking it is exactly one whole frame.
fn one_frame(name: &str, bytes: &[u8]) -> Frame {
    let direction = if name.starts_with("req_") {
        Direction::Request
    } else {
        Direction::Response
    };
    let d = FrameDecoder::new(direction);
    let mut buf = BytesMut::from(bytes);
    let frame = d
        .decode(&mut buf)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .unwrap_or_else(|| panic!("{name}: incomplete"));
    assert!(
        buf.is_empty(),
        "{name}: {} bytes after the frame",
        buf.len()
    );
    assert_eq!(frame.header.direction, direction, "{name}");
    assert_eq!(
        frame.header.length as usize,
        bytes.len() - HEADER_LEN,
        "{name}"
    );
    assert_eq!(frame.header.to_bytes()[..], bytes[..HEADER_LEN], "{name}");
    frame
}

#[test]
fn every_fixture_is_one_whole_frame() {
    let all = goldens();
    assert!(all.len() >= 40, "only {} fixtures", all.len());
    for (name, bytes) in &all {
        let f = one_frame(name, bytes);
        assert_eq!(f.header.opcode.direction(), f.header.direction, "{name}");
        assert_eq!(
            &f.body[..],
            &bytes[HEADER_LEN..],
            "{name}: {}",
            to_hex(bytes)
        );
    }
}

#[test]
fn every_opcode_has_a_fixture() {
    let seen: BTreeSet<u8> = goldens()
        .iter()
        .map(|(n, b)| one_frame(n, b).header.opcode as u8)
        .collect();
    for op in Opcode::ALL {
        assert!(seen.contains(&(op as u8)), "no golden frame for {op}");
    }
}
