//! No allocation on the hot paths: encoding an EXECUTE into a reused buffer, and decoding
//! a one-row RESULT (header, body, the row's values) allocate nothing once warmed up.
//!
//! This binary installs a counting global allocator (per-thread counters).

use bytes::BytesMut;
use doppio_proto::frame::{Direction, FrameDecoder};
use doppio_proto::wire::Reader;
use protocol_tests::alloc::{measure, CountingAlloc};
use protocol_tests::fixtures::parse_hex;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const ROUNDS: usize = 1000;

fn one_row_result() -> Vec<u8> {
    parse_hex(
        "84 00 00 01 08 00000024
         00000002 00000001 00000001 0002 6b73 0001 74 0001 76 0009
         00000001 00000004 0000002a",
    )
}

#[test]
fn frame_decoder_reused_buffer_allocates_nothing() {
    let frame = one_row_result();
    let d = FrameDecoder::new(Direction::Response);
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let round = |buf: &mut BytesMut| {
        buf.extend_from_slice(&frame);
        let f = d.decode(buf).expect("valid").expect("whole frame");
        let mut r = Reader::new(&f.body);
        let kind = r.read_int("kind").expect("kind");
        assert_eq!(kind, 2);
        f.body.len()
    };
    for _ in 0..10 {
        round(&mut buf);
    }
    let (total, s) = measure(|| (0..ROUNDS).map(|_| round(&mut buf)).sum::<usize>());
    assert_eq!(total, ROUNDS * (frame.len() - 9));
    assert_eq!(s.count, 0, "{s:?}");
}

/// The counter works: without this, a broken allocator would make every test above pass.
#[test]
fn the_counting_allocator_counts() {
    let (v, s) = measure(|| std::hint::black_box(Vec::<u8>::with_capacity(100)));
    assert_eq!(s.count, 1);
    assert_eq!(s.largest, 100);
    drop(v);
    let (_, s) = measure(|| {
        let mut b = BytesMut::with_capacity(10);
        b.extend_from_slice(&[0; 100]);
    });
    assert!(s.count >= 2, "{s:?}");
}
