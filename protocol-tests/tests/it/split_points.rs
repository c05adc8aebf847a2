//! Split points: a buffer of several frames gives the same frames wherever it is cut into
//! reads (spec section 2: frames are self-delimiting by their 9-byte header and length).

use bytes::BytesMut;
use doppio_proto::frame::{Direction, Flags, Frame, FrameDecoder, FrameStatus, Opcode};
use proptest::prelude::*;
use protocol_tests::fixtures::frame;

/// Five response frames: empty and non-empty bodies, different opcodes, flags and streams.
fn response_stream() -> Vec<u8> {
    let mut buf = Vec::new();
    buf.extend(frame(Opcode::Ready, Flags::NONE, 0, &[]));
    // RESULT Void.
    buf.extend(frame(Opcode::Result, Flags::NONE, 1, &[0, 0, 0, 1]));
    // EVENT on stream -1 with a short body (not a valid event: the decoder must not care).
    buf.extend(frame(Opcode::Event, Flags::NONE, -1, b"evt"));
    buf.extend(frame(Opcode::AuthSuccess, Flags::NONE, 0x7fff, &[]));
    // ERROR: code 0x2000 and a message.
    buf.extend(frame(
        Opcode::Error,
        Flags::WARNING,
        300,
        &[0, 0, 0x20, 0, 0, 3, b'b', b'a', b'd'],
    ));
    buf
}

fn request_stream() -> Vec<u8> {
    let mut buf = Vec::new();
    buf.extend(frame(Opcode::Options, Flags::NONE, 0, &[]));
    buf.extend(frame(
        Opcode::Prepare,
        Flags::TRACING,
        9,
        &[0, 0, 0, 1, b'x'],
    ));
    buf.extend(frame(Opcode::AuthResponse, Flags::NONE, 2, &[0xff; 4]));
    buf.extend(frame(Opcode::Options, Flags::NONE, -5, &[]));
    buf
}

/// Decodes everything in `buf` at once.
fn decode_whole(d: &FrameDecoder, buf: &[u8]) -> Vec<Frame> {
    let mut b = BytesMut::from(buf);
    let mut out = Vec::new();
    while let Some(f) = d.decode(&mut b).expect("valid frame") {
        out.push(f);
    }
    assert!(b.is_empty(), "bytes left over: {}", b.len());
    out
}

/// Feeds `buf` in reads ending at `cuts`, decoding greedily after each read, and checks
/// what `check` says about the partial buffer along the way.
fn decode_in_reads(d: &FrameDecoder, buf: &[u8], cuts: &[usize]) -> Vec<Frame> {
    let mut b = BytesMut::new();
    let mut out = Vec::new();
    let mut start = 0;
    let ends = cuts.iter().copied().chain(std::iter::once(buf.len()));
    for end in ends {
        b.extend_from_slice(&buf[start..end]);
        start = end;
        loop {
            let before = b.len();
            match d.check(&b).expect("valid prefix") {
                FrameStatus::NeedMore(n) => {
                    assert!(n > 0);
                    if b.is_empty() {
                        assert_eq!(n, 9, "an empty buffer needs a header");
                    } else {
                        // Mid-frame, never asks for more than the rest of the stream holds.
                        let left = buf.len() - end;
                        assert!(n <= left, "asks {n} with {left} left");
                    }
                    assert!(d.decode(&mut b).expect("valid prefix").is_none());
                    assert_eq!(b.len(), before, "a partial frame was consumed");
                    break;
                }
                FrameStatus::Complete { frame_len, .. } => {
                    let f = d.decode(&mut b).expect("valid frame").expect("complete");
                    assert_eq!(before - b.len(), frame_len);
                    out.push(f);
                }
            }
        }
    }
    assert!(b.is_empty());
    out
}

fn exhaustive(direction: Direction, buf: &[u8], frames_expected: usize) {
    let d = FrameDecoder::new(direction);
    let whole = decode_whole(&d, buf);
    assert_eq!(whole.len(), frames_expected);
    let n = buf.len();
    let mut checked = 0usize;
    for i in 0..=n {
        assert_eq!(decode_in_reads(&d, buf, &[i]), whole, "cut at {i}");
        for j in i..=n {
            assert_eq!(decode_in_reads(&d, buf, &[i, j]), whole, "cuts {i},{j}");
            checked += 1;
        }
    }
    assert_eq!(checked, (n + 1) * (n + 2) / 2);
}

#[test]
fn every_two_and_three_way_split_of_responses() {
    let buf = response_stream();
    exhaustive(Direction::Response, &buf, 5);
    // And the frames are what was written.
    let frames = decode_whole(&FrameDecoder::new(Direction::Response), &buf);
    let ops: Vec<Opcode> = frames.iter().map(|f| f.header.opcode).collect();
    assert_eq!(
        ops,
        [
            Opcode::Ready,
            Opcode::Result,
            Opcode::Event,
            Opcode::AuthSuccess,
            Opcode::Error
        ]
    );
    assert_eq!(frames[2].header.stream, -1);
    assert_eq!(&frames[2].body[..], b"evt");
    assert_eq!(frames[3].header.stream, 0x7fff);
    assert!(frames[4].header.flags.contains(Flags::WARNING));
}

#[test]
fn every_two_and_three_way_split_of_requests() {
    let buf = request_stream();
    exhaustive(Direction::Request, &buf, 4);
}

#[test]
fn one_byte_reads() {
    let buf = response_stream();
    let d = FrameDecoder::new(Direction::Response);
    let cuts: Vec<usize> = (1..buf.len()).collect();
    assert_eq!(decode_in_reads(&d, &buf, &cuts), decode_whole(&d, &buf));
}

fn arb_frame() -> impl Strategy<Value = Vec<u8>> {
    let ops = prop::sample::select(
        Opcode::ALL
            .iter()
            .copied()
            .filter(|o| o.direction() == Direction::Response)
            .collect::<Vec<_>>(),
    );
    (
        ops,
        any::<u8>(),
        any::<i16>(),
        prop::collection::vec(any::<u8>(), 0..300),
    )
        .prop_map(|(op, flags, stream, body)| frame(op, Flags(flags), stream, &body))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_frames_random_cuts(
        frames in prop::collection::vec(arb_frame(), 1..12),
        raw_cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let buf: Vec<u8> = frames.concat();
        let mut cuts: Vec<usize> = raw_cuts.iter().map(|i| i.index(buf.len() + 1)).collect();
        cuts.sort_unstable();
        let d = FrameDecoder::new(Direction::Response);
        let whole = decode_whole(&d, &buf);
        prop_assert_eq!(whole.len(), frames.len());
        for (f, bytes) in whole.iter().zip(&frames) {
            prop_assert_eq!(&f.header.to_bytes()[..], &bytes[..9]);
            prop_assert_eq!(&f.body[..], &bytes[9..]);
        }
        prop_assert_eq!(decode_in_reads(&d, &buf, &cuts), whole);
    }
}
