//! What each fuzz target checks, one function a target, over any bytes; shared by the
//! cargo-fuzz targets (`protocol-tests/fuzz/fuzz_targets/`, nightly, which depend on this
//! crate) and by the corpus replay (`tests/it/fuzz_corpus.rs`, stable, in CI), so that every
//! input kept in `protocol-tests/fuzz/corpus/` is checked on each test run. A panic (an
//! assertion here or in doppio-proto) is a finding.

use crate::reencode::reencode_response;
use bytes::{Bytes, BytesMut};
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, Frame, FrameDecoder, FrameHeader, Opcode};
use doppio_proto::request::Request;
use doppio_proto::response::{Response, ResponseFrame, ResultBody};
use doppio_proto::segment::{
    EnvelopeAssembler, SegmentCompression, SegmentDecoder, SegmentEncoder, MAX_PAYLOAD,
};
use doppio_proto::types::ColumnType;
use doppio_proto::value::CqlValue;
use doppio_proto::wire::Reader;
use doppio_proto::ProtocolVersion;

/// The body limit every target decodes with.
const LIMIT: usize = 1 << 20;

/// Any bytes as a stream of request frames (the server's side, as the stub reads clients):
/// frame decoder, lz4 when flagged, `Request::decode`; every frame within its limit.
pub fn frame_request(data: &[u8]) {
    for_each_frame(Direction::Request, data, |frame| {
        if let Some(body) = plain_body(frame) {
            let _ = Request::decode(&frame.header, &body);
        }
    });
}

/// Any bytes as a stream of v5 segments (the first byte picks lz4 when odd): every segment
/// the decoder yields is within the segment limit and survives its own re-encoding; the
/// envelopes assembled from them are whole and within the body limit.
pub fn segments(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let compression = if pick & 1 == 1 {
        SegmentCompression::Lz4
    } else {
        SegmentCompression::None
    };
    let decoder = SegmentDecoder::new(compression);
    let mut assembler = EnvelopeAssembler::new(LIMIT);
    let mut buf = BytesMut::from(rest);
    let mut envelopes = BytesMut::new();
    while let Ok(Some(segment)) = decoder.decode(&mut buf) {
        assert!(segment.payload.len() <= MAX_PAYLOAD);
        let self_contained = segment.self_contained;
        let payload = segment.payload.clone();
        let before = envelopes.len();
        if assembler.push(segment, &mut envelopes).is_err() {
            return;
        }
        if self_contained && !payload.is_empty() {
            // What a self-contained segment held is whole envelopes: it encodes again into
            // one segment that decodes to the same payload. (No envelopes encode to no
            // segment at all.)
            assert_eq!(&envelopes[before..], &payload[..]);
            let mut again = BytesMut::new();
            SegmentEncoder::new(compression)
                .encode(&payload, &mut again)
                .expect("whole envelopes encode");
            let back = decoder
                .decode(&mut again)
                .expect("re-encoded segment decodes")
                .expect("re-encoded segment is whole");
            assert!(back.self_contained);
            assert_eq!(back.payload, payload);
        }
    }
    for_each_frame(Direction::Response, &envelopes, |_| {});
}

/// Any bytes as a stream of response frames: frame decoder, every response decoder (what
/// decodes must encode again to the same message), and `ColumnType::decode` on the input.
pub fn frame_response(data: &[u8]) {
    for_each_frame(Direction::Response, data, decode_response);
    let _ = ColumnType::decode(&mut Reader::new(data));
}

/// Decodes `data` as a stream of `direction` frames up to the first error or incomplete
/// frame, checks that each body is within the limit and as long as its header says, and
/// hands each frame to `check`.
fn for_each_frame(direction: Direction, data: &[u8], mut check: impl FnMut(&Frame)) {
    let decoder = FrameDecoder::new(direction).with_max_body_len(LIMIT);
    let mut buf = BytesMut::from(data);
    while let Ok(Some(frame)) = decoder.decode(&mut buf) {
        assert!(frame.body.len() <= LIMIT);
        assert_eq!(frame.body.len(), frame.header.length as usize);
        check(&frame);
    }
}

/// A frame's body, lz4-decompressed when the frame says so (`None` for a corrupt block);
/// never over the limit.
fn plain_body(frame: &Frame) -> Option<Bytes> {
    if !frame.header.flags.contains(Flags::COMPRESSION) {
        return Some(frame.body.clone());
    }
    let plain = Compression::Lz4.decompress(&frame.body, LIMIT).ok()?;
    assert!(plain.len() <= LIMIT);
    Some(plain)
}

fn decode_response(frame: &Frame) {
    let Some(body) = plain_body(frame) else {
        return;
    };
    let decoded_frame = Frame {
        header: FrameHeader {
            flags: frame.header.flags.without(Flags::COMPRESSION),
            length: body.len() as u32,
            ..frame.header
        },
        body,
    };
    if let Ok(decoded) = ResponseFrame::decode(&decoded_frame, None, LIMIT) {
        // Whatever decodes must encode again and decode to the same message.
        if let Ok(mut out) = reencode_response(&decoded, None) {
            let again = FrameDecoder::new(Direction::Response)
                .decode(&mut out)
                .expect("re-encoded frame is valid")
                .expect("re-encoded frame is whole");
            let back = ResponseFrame::decode(&again, None, usize::MAX).expect("re-decodes");
            assert_eq!(back, decoded);
        }
    }
}

/// Any bytes as a RESULT body: when it decodes as Rows, every row is walked with the lazy
/// reader and every cell decoded as a dynamic value and through the typed reader.
pub fn rows(data: &[u8]) {
    let frame = Frame {
        header: FrameHeader {
            version: ProtocolVersion::V4,
            direction: Direction::Response,
            flags: Flags::NONE,
            stream: 0,
            opcode: Opcode::Result,
            length: data.len() as u32,
        },
        body: Bytes::copy_from_slice(data),
    };
    let Ok(decoded) = ResponseFrame::decode(&frame, None, LIMIT) else {
        return;
    };
    let Response::Result(ResultBody::Rows(rows)) = decoded.response else {
        return;
    };
    // Bound the walk: a zero-column result may claim 2^31 empty rows.
    for row in rows.iter().take(4096) {
        let Ok(row) = row else { break };
        assert_eq!(row.len(), rows.metadata.columns_count);
        for (i, cell) in row.cells().enumerate() {
            if let (Some(col), Some(bytes)) = (rows.columns().get(i), cell) {
                if let Ok(v) = CqlValue::decode(&col.typ, bytes) {
                    // A decoded value encodes again.
                    let mut out = Vec::new();
                    let _ = v.encode(&col.typ, &mut out);
                }
            }
            let _ = row.get::<Option<CqlValue>>(i);
        }
        let _ = row.to_values();
    }
    if let Ok(typed) = rows.typed::<(Option<i32>, Option<&str>)>() {
        for r in typed.take(4096) {
            let _ = r;
        }
    }
}
