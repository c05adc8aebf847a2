//! Decodes every committed v5 answer captured from Cassandra 5.0 as it came off the wire
//! (`fixtures/captured/v5_*.seg`: the segments that carried one envelope, recorded by
//! `cassandra_v5_messages.rs` and `cassandra_v5_segments.rs` with
//! `DOPPIO_RECORD_FIXTURES=1`). No server needed.
//!
//! Each fixture's segments must pass doppio-proto's CRC24 and CRC32 checks and hold exactly
//! one v5 envelope, which decodes and re-encodes to the very same bytes; an uncompressed
//! fixture's segments are re-framed by doppio-proto's encoder to the very same bytes too
//! (lz4 output differs between compressors, so a compressed one is compared by its payload).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use bytes::BytesMut;
use doppio_proto::frame::{Direction, Frame, FrameDecoder};
use doppio_proto::response::{ErrorCode, Response, ResponseFrame, ResultBody};
use doppio_proto::segment::{
    EnvelopeAssembler, Segment, SegmentCompression, SegmentDecoder, SegmentEncoder,
};
use doppio_proto::ProtocolVersion;
use protocol_tests::captured_dir;
use protocol_tests::fixtures::to_hex;
use protocol_tests::reencode::reencode_response;

const MAX: usize = 1 << 20;

struct Captured {
    name: String,
    wire: Vec<u8>,
    compression: SegmentCompression,
}

fn fixtures() -> Vec<Captured> {
    let mut out: Vec<Captured> = std::fs::read_dir(captured_dir())
        .expect("fixtures/captured exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            let compression = if name.starts_with("v5_lz4_") {
                SegmentCompression::Lz4
            } else {
                SegmentCompression::None
            };
            Captured {
                wire: std::fs::read(&p).expect("read fixture"),
                name,
                compression,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The segments of `c`, checked, and the one envelope they carry.
fn open(c: &Captured) -> (Vec<Segment>, BytesMut, Frame) {
    let mut wire = BytesMut::from(&c.wire[..]);
    let decoder = SegmentDecoder::new(c.compression);
    let mut assembler = EnvelopeAssembler::new(MAX);
    let mut segments = Vec::new();
    let mut envelopes = BytesMut::new();
    while let Some(s) = decoder
        .decode(&mut wire)
        .unwrap_or_else(|e| panic!("{}: {e}", c.name))
    {
        segments.push(s.clone());
        assembler
            .push(s, &mut envelopes)
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
    }
    assert!(wire.is_empty(), "{}: bytes after the last segment", c.name);
    assert!(!assembler.is_partial(), "{}: an envelope cut short", c.name);
    let payload = envelopes.clone();
    let frame = FrameDecoder::new(Direction::Response)
        .with_version(ProtocolVersion::V5)
        .decode(&mut envelopes)
        .unwrap_or_else(|e| panic!("{}: {e}", c.name))
        .unwrap_or_else(|| panic!("{}: no whole envelope", c.name));
    assert!(envelopes.is_empty(), "{}: more than one envelope", c.name);
    (segments, payload, frame)
}

fn decode(name: &str) -> ResponseFrame {
    let c = fixtures()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no captured v5 answer {name}"));
    let (_, _, frame) = open(&c);
    ResponseFrame::decode(&frame, None, MAX).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_captured_v5_answer_reencodes_byte_exact_in_envelope_and_segments() {
    let all = fixtures();
    assert!(all.len() >= 7, "only {} captured v5 answers", all.len());
    for c in &all {
        let (segments, payload, frame) = open(c);
        let decoded =
            ResponseFrame::decode(&frame, None, MAX).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(decoded.version, ProtocolVersion::V5, "{}", c.name);
        let again = reencode_response(&decoded, None).unwrap();
        assert_eq!(to_hex(&again), to_hex(&payload), "{}: envelope", c.name);
        assert!(
            segments.iter().all(|s| s.self_contained),
            "{}: small answers travel in self-contained segments",
            c.name
        );
        let mut framed = BytesMut::new();
        SegmentEncoder::new(c.compression)
            .encode(&again, &mut framed)
            .unwrap();
        if c.compression == SegmentCompression::None {
            assert_eq!(to_hex(&framed), to_hex(&c.wire), "{}: segments", c.name);
        } else {
            let back = SegmentDecoder::new(c.compression)
                .decode(&mut framed)
                .unwrap()
                .unwrap();
            assert_eq!(back.payload, payload, "{}: lz4 payload", c.name);
        }
    }
}

#[test]
fn captured_v5_answers_carry_what_v5_added() {
    let Response::Result(ResultBody::Prepared(p)) = decode("v5_result_prepared").response else {
        panic!("not prepared")
    };
    let rid = p.result_metadata_id.expect("a v5 PREPARED has a result id");
    assert_eq!(rid.len(), 16, "Cassandra's result metadata id is an MD5");
    assert_eq!(p.metadata.pk_indexes, [0]);
    assert_eq!(p.result_metadata.columns.len(), 2);

    let Response::Result(ResultBody::Rows(quiet)) = decode("v5_result_rows_no_metadata").response
    else {
        panic!("not rows")
    };
    assert!(quiet.metadata.no_metadata);
    assert_eq!(quiet.metadata.new_metadata_id, None);
    assert_eq!(quiet.rows_count, 1);

    let Response::Result(ResultBody::Rows(changed)) =
        decode("v5_result_rows_metadata_changed").response
    else {
        panic!("not rows")
    };
    let new_id = changed.metadata.new_metadata_id.expect("METADATA_CHANGED");
    assert_eq!(new_id.len(), 16);
    assert_ne!(new_id.as_ref(), &rid, "a new id after ALTER TABLE");
    let names: Vec<_> = changed.metadata.columns.iter().map(|c| &c.name).collect();
    assert_eq!(names, ["k", "v", "w"]);

    assert_eq!(
        decode("v5_result_void_batch").response,
        Response::Result(ResultBody::Void)
    );
    for (name, code) in [
        ("v5_error_unprepared", ErrorCode::Unprepared),
        ("v5_error_invalid", ErrorCode::Invalid),
        ("v5_lz4_error_invalid", ErrorCode::Invalid),
    ] {
        match decode(name).response {
            Response::Error(e) => assert_eq!(e.code, code, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// Every single bit flipped anywhere in a captured v5 answer (header, payload or either
/// CRC) is caught by the segment's CRC24 or CRC32 or its framing: never a panic, never a
/// segment that passes.
#[test]
fn a_flipped_bit_in_a_captured_answer_is_refused_by_the_segment_checks() {
    for c in fixtures() {
        for bit in 0..c.wire.len() * 8 {
            let mut wire = c.wire.clone();
            wire[bit / 8] ^= 1 << (bit % 8);
            let mut buf = BytesMut::from(&wire[..]);
            let decoded = SegmentDecoder::new(c.compression).decode(&mut buf);
            match decoded {
                Err(_) | Ok(None) => {}
                Ok(Some(s)) => panic!(
                    "{}: bit {bit} flipped and the segment passed ({} bytes)",
                    c.name,
                    s.payload.len()
                ),
            }
        }
    }
}

/// Wherever a read boundary falls in a captured answer (every two-piece split, and
/// byte-by-byte), the segment decoder and assembler give the same envelope, and nothing
/// before the last byte.
#[test]
fn every_split_point_of_a_captured_answer_gives_the_same_envelope() {
    for c in fixtures() {
        let (_, whole, _) = open(&c);
        let decoder = SegmentDecoder::new(c.compression);
        let feed = |pieces: &mut dyn Iterator<Item = &[u8]>| {
            let mut buf = BytesMut::new();
            let mut assembler = EnvelopeAssembler::new(MAX);
            let mut envelopes = BytesMut::new();
            let mut fed = 0;
            for piece in pieces {
                buf.extend_from_slice(piece);
                fed += piece.len();
                while let Some(s) = decoder.decode(&mut buf).unwrap() {
                    assembler.push(s, &mut envelopes).unwrap();
                }
                if fed < c.wire.len() {
                    assert!(
                        envelopes.is_empty(),
                        "{}: an envelope before its end",
                        c.name
                    );
                }
            }
            envelopes
        };
        for at in 0..=c.wire.len() {
            let (a, b) = c.wire.split_at(at);
            let got = feed(&mut [a, b].into_iter());
            assert_eq!(got, whole, "{}: split at {at}", c.name);
        }
        let got = feed(&mut c.wire.chunks(1));
        assert_eq!(got, whole, "{}: byte by byte", c.name);
    }
}
