//! RESULT frames around a body encoded already: the EXECUTE hot path's, and a misrouted
//! request's with ScyllaDB's tablet routing in its custom payload.

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, FrameHeader, Opcode};
use doppio_proto::ProtocolVersion;

/// Appends a RESULT frame carrying a pre-encoded `body` on `stream`.
#[inline]
pub fn put_body_frame(
    out: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    body: &[u8],
    compressed: bool,
) {
    let flags = if compressed {
        Flags::COMPRESSION
    } else {
        Flags::NONE
    };
    put_result_frame(out, version, stream, flags, body);
}

/// A RESULT frame: its header with `flags`, then `content` as it is.
fn put_result_frame(
    out: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    flags: Flags,
    content: &[u8],
) {
    FrameHeader {
        version,
        direction: Direction::Response,
        flags,
        stream,
        opcode: Opcode::Result,
        length: content.len() as u32,
    }
    .write_to(out);
    out.extend_from_slice(content);
}

/// A RESULT frame of the uncompressed `body` with a custom payload of one entry (`key`,
/// `value`) before it, compressed whole when `compressed` (ScyllaDB's tablet routing on a
/// misrouted request: a rare path, which allocates).
pub fn put_body_frame_with_payload(
    out: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    body: &[u8],
    (key, value): (&str, &[u8]),
    compressed: bool,
) {
    let mut plain = BytesMut::with_capacity(body.len() + key.len() + value.len() + 8);
    // A key under 64 KiB and a value of a few hundred bytes: nothing can fail.
    let _ = doppio_proto::wire::put_bytes_map(&mut plain, &[(key, Some(value))], "payload");
    plain.extend_from_slice(body);
    let mut flags = Flags::CUSTOM_PAYLOAD;
    let content = if compressed {
        flags = flags.with(Flags::COMPRESSION);
        let mut packed = BytesMut::new();
        let _ = Compression::Lz4.compress(&plain, &mut packed);
        packed
    } else {
        plain
    };
    put_result_frame(out, version, stream, flags, &content);
}
