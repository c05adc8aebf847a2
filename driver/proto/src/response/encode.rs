//! The server side: a whole response frame written with its envelope ([`Envelope`]),
//! compressed in v4 when asked.

use bytes::{BufMut, BytesMut};

use super::message::Response;
use crate::compression::Compression;
use crate::error::{ProtoError, Result};
use crate::frame::{patch_length, Direction, Flags, FrameHeader, HEADER_LEN};
use crate::version::{MetadataIds, ProtocolVersion};
use crate::wire;

/// Custom-payload entries to encode: keys and values (`None` for null).
pub type PayloadEntries<'a> = &'a [(&'a str, Option<&'a [u8]>)];

/// The envelope of a response being encoded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Envelope<'a> {
    /// The protocol version (v4 unless set).
    pub version: ProtocolVersion,
    /// Whether the connection turned on ScyllaDB's result metadata ids in v4 (PREPARED and a
    /// Rows result's `METADATA_CHANGED` carry them then; not unless set).
    pub metadata_ids: MetadataIds,
    /// Tracing session id.
    pub tracing_id: Option<[u8; 16]>,
    /// Warnings.
    pub warnings: &'a [&'a str],
    /// Custom payload.
    pub custom_payload: Option<PayloadEntries<'a>>,
}

/// Appends a whole response frame: header, envelope, body, patched length; compressed when
/// `compression` is given (v4 only: v5 compresses segments). On error `buf` is truncated
/// back to its length on entry.
pub fn encode_response(
    buf: &mut BytesMut,
    stream: i16,
    envelope: &Envelope<'_>,
    response: &Response,
    compression: Option<Compression>,
) -> Result<()> {
    let start = buf.len();
    let result = (|| {
        let mut flags = Flags::NONE;
        if envelope.tracing_id.is_some() {
            flags = flags.with(Flags::TRACING);
        }
        if !envelope.warnings.is_empty() {
            flags = flags.with(Flags::WARNING);
        }
        if envelope.custom_payload.is_some() {
            flags = flags.with(Flags::CUSTOM_PAYLOAD);
        }
        if compression.is_some() {
            if envelope.version.has_segments() {
                return Err(ProtoError::InvalidValue {
                    what: "envelope compression",
                    detail: "protocol v5 compresses segments, not envelopes".into(),
                });
            }
            flags = flags.with(Flags::COMPRESSION);
        }
        FrameHeader {
            version: envelope.version,
            direction: Direction::Response,
            flags,
            stream,
            opcode: response.opcode(),
            length: 0,
        }
        .write_to(buf);
        let write_body = |out: &mut BytesMut| -> Result<()> {
            if let Some(id) = envelope.tracing_id {
                out.put_slice(&id);
            }
            if !envelope.warnings.is_empty() {
                wire::put_string_list(out, envelope.warnings.iter().copied(), "warnings")?;
            }
            if let Some(p) = envelope.custom_payload {
                wire::put_bytes_map(out, p, "custom payload")?;
            }
            response.encode_body(out, envelope.version, envelope.metadata_ids)
        };
        match compression {
            None => write_body(buf)?,
            Some(c) => {
                // The server side compresses through a scratch buffer (not a client hot path).
                let mut plain = BytesMut::new();
                write_body(&mut plain)?;
                c.compress(&plain, buf)?;
            }
        }
        let len = buf.len() - start - HEADER_LEN;
        let len = u32::try_from(len).map_err(|_| ProtoError::TooLong {
            what: "response body",
            len,
            limit: u32::MAX as usize,
        })?;
        patch_length(&mut buf[start..], len)
    })();
    if result.is_err() {
        buf.truncate(start);
    }
    result
}
