//! What every request shares: the [`RequestBody`] trait, the encoders that write one as a
//! whole frame (plain, v5 envelope, lz4-compressed v4), and the helpers of the fields several
//! messages carry (flags, counts, the v5-only error).

use bytes::{BufMut, BytesMut};

use crate::compression::Compression;
use crate::error::{ProtoError, Result};
use crate::frame::{patch_length, Direction, Flags, FrameHeader, Opcode, HEADER_LEN};
use crate::version::ProtocolVersion;
use crate::wire::Reader;

/// Writes a flags field: a `[byte]` in v4 (where no bit above 0x80 exists), an `[int]` in v5.
pub(super) fn put_flags(buf: &mut BytesMut, version: ProtocolVersion, flags: u32) -> Result<()> {
    if version.has_int_flags() {
        buf.put_u32(flags);
        return Ok(());
    }
    let byte = u8::try_from(flags).map_err(|_| ProtoError::InvalidValue {
        what: "query flags",
        detail: format!("0x{flags:x} needs protocol v5 (v4 flags are one byte)"),
    })?;
    buf.put_u8(byte);
    Ok(())
}

/// Reads a flags field written by [`put_flags`].
pub(super) fn read_flags(
    r: &mut Reader<'_>,
    version: ProtocolVersion,
    what: &'static str,
) -> Result<u32> {
    if version.has_int_flags() {
        Ok(r.read_int(what)? as u32)
    } else {
        Ok(u32::from(r.read_byte(what)?))
    }
}

/// The error for a v5-only field in a v4 message.
pub(super) fn v5_only(what: &'static str) -> ProtoError {
    ProtoError::InvalidValue {
        what,
        detail: "is a protocol v5 field (this connection speaks v4)".into(),
    }
}

/// A request body that can be written into a frame.
pub trait RequestBody {
    /// The message's opcode.
    fn opcode(&self) -> Opcode;
    /// Appends the body (without header or envelope) as `version` lays it out.
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()>;
}

/// Appends one whole protocol v4 request frame to `buf`: header, body, patched length.
/// [`encode_envelope`] with [`ProtocolVersion::V4`].
pub fn encode_request(
    buf: &mut BytesMut,
    stream: i16,
    flags: Flags,
    request: &impl RequestBody,
) -> Result<()> {
    encode_envelope(buf, ProtocolVersion::V4, stream, flags, request)
}

/// Appends one whole request frame (v5: envelope) of `version` to `buf`: header, body,
/// patched length. A v5 envelope goes into a segment ([`crate::segment`]) once the
/// connection is ready; before that (OPTIONS, STARTUP, AUTH_RESPONSE) it is sent bare.
///
/// Sending a custom payload is not supported yet: the `CUSTOM_PAYLOAD` flag is cleared so
/// the frame never announces a payload it does not carry.
///
/// On error, `buf` is truncated back to its length on entry.
pub fn encode_envelope(
    buf: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    flags: Flags,
    request: &impl RequestBody,
) -> Result<()> {
    let start = buf.len();
    let result = (|| {
        FrameHeader {
            version,
            direction: Direction::Request,
            flags: flags
                .without(Flags::COMPRESSION)
                .without(Flags::CUSTOM_PAYLOAD),
            stream,
            opcode: request.opcode(),
            length: 0,
        }
        .write_to(buf);
        request.encode_body(buf, version)?;
        finish_frame(buf, start)
    })();
    if result.is_err() {
        buf.truncate(start);
    }
    result
}

/// Like [`encode_request`] (protocol v4), with the body compressed. `scratch` holds the
/// uncompressed body (reused between calls, so only lz4's own output block is allocated).
/// v5 compresses segments, not envelopes ([`crate::segment`]).
pub fn encode_request_compressed(
    buf: &mut BytesMut,
    stream: i16,
    flags: Flags,
    request: &impl RequestBody,
    compression: Compression,
    scratch: &mut BytesMut,
) -> Result<()> {
    scratch.clear();
    request.encode_body(scratch, ProtocolVersion::V4)?;
    let start = buf.len();
    FrameHeader {
        version: ProtocolVersion::V4,
        direction: Direction::Request,
        flags: flags
            .with(Flags::COMPRESSION)
            .without(Flags::CUSTOM_PAYLOAD),
        stream,
        opcode: request.opcode(),
        length: 0,
    }
    .write_to(buf);
    let result = compression
        .compress(scratch, buf)
        .and_then(|()| finish_frame(buf, start));
    if result.is_err() {
        buf.truncate(start);
    }
    result
}

/// Patches the length of the frame that starts at `start` and ends at the buffer's end.
pub(super) fn finish_frame(buf: &mut BytesMut, start: usize) -> Result<()> {
    let body_len = buf.len() - start - HEADER_LEN;
    let len = u32::try_from(body_len)
        .ok()
        .filter(|l| (*l as usize) <= crate::frame::DEFAULT_MAX_BODY_LEN)
        .ok_or_else(|| ProtoError::TooLong {
            what: "request body",
            len: body_len,
            limit: crate::frame::DEFAULT_MAX_BODY_LEN,
        })?;
    patch_length(&mut buf[start..], len)
}

pub(super) fn count_u16(n: usize, what: &'static str) -> Result<u16> {
    u16::try_from(n).map_err(|_| ProtoError::TooLong {
        what,
        len: n,
        limit: u16::MAX as usize,
    })
}
