//! The client side: a response frame read into a [`ResponseFrame`], its envelope (tracing id,
//! warnings, custom payload: spec sections 2.2 and 4) and its message, decompressing the body
//! when its flag says so. PREPARED's and Rows' result metadata ids are read where the
//! connection carries them: in v5, and in v4 on a connection that turned on ScyllaDB's
//! extension ([`ResponseFrame::decode_with`]).

use bytes::Bytes;

use super::error::ErrorResponse;
use super::event::Event;
use super::message::Response;
use super::result::{Prepared, ResultBody};
use super::result_rows::{read_rows, RowsAt};
use super::schema_change::SchemaChange;
use crate::compression::Compression;
use crate::error::{ProtoError, Result};
use crate::frame::{Direction, Flags, Frame, FrameHeader, Opcode};
use crate::metadata::{PreparedMetadata, RowsMetadata};
use crate::rows::Rows;
use crate::version::{MetadataIds, ProtocolVersion};
use crate::wire::Reader;

/// A decoded response frame: stream, envelope and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseFrame {
    /// The protocol version of its header.
    pub version: ProtocolVersion,
    /// The stream id of the request this answers (-1 for events).
    pub stream: i16,
    /// Tracing session id, when tracing was asked for.
    pub tracing_id: Option<[u8; 16]>,
    /// Warnings the server attached.
    pub warnings: Vec<String>,
    /// Custom payload, if any.
    pub custom_payload: Option<Vec<(String, Option<Bytes>)>>,
    /// The message.
    pub response: Response,
}

/// Returns the frame's body, decompressed if its flag says so.
///
/// Fails if the flag is set and nothing was negotiated.
pub fn frame_body(
    frame: &Frame,
    compression: Option<Compression>,
    max_len: usize,
) -> Result<Bytes> {
    if frame.header.flags.contains(Flags::COMPRESSION) {
        match compression {
            Some(c) => c.decompress(&frame.body, max_len),
            None => Err(ProtoError::UnexpectedCompression),
        }
    } else {
        Ok(frame.body.clone())
    }
}

/// A frame body the decoder reads from and cuts the rows content out of. Borrowed today
/// (each zero-copy slice takes a reference); an owned body that hands the rows its own
/// reference was measured slower (the larger result was copied out of the decoder).
trait BodySource {
    fn bytes(&self) -> &Bytes;
    /// The body from `offset` to its end.
    fn tail(self, offset: usize) -> Bytes;
}

impl BodySource for &Bytes {
    #[inline]
    fn bytes(&self) -> &Bytes {
        self
    }
    #[inline]
    fn tail(self, offset: usize) -> Bytes {
        self.slice(offset..)
    }
}

/// A decoded message, or a Rows result whose content is still to be cut from the body.
enum Decoded {
    Message(Response),
    Rows(RowsAt),
}

impl ResponseFrame {
    /// Decodes a response frame on a connection without ScyllaDB's result metadata ids in v4
    /// ([`ResponseFrame::decode_with`]). `compression` is what STARTUP negotiated; `max_len`
    /// bounds a decompressed body.
    #[inline]
    pub fn decode(frame: &Frame, compression: Option<Compression>, max_len: usize) -> Result<Self> {
        Self::decode_with(frame, compression, max_len, MetadataIds::ByVersion)
    }

    /// Decodes a response frame on a connection whose result metadata ids are `ids` (what its
    /// STARTUP turned on). `compression` is what STARTUP negotiated; `max_len` bounds a
    /// decompressed body.
    #[inline]
    pub fn decode_with(
        frame: &Frame,
        compression: Option<Compression>,
        max_len: usize,
        ids: MetadataIds,
    ) -> Result<Self> {
        if frame.header.flags.contains(Flags::COMPRESSION) {
            let body = frame_body(frame, compression, max_len)?;
            Self::decode_body(&frame.header, &body, ids)
        } else {
            // Borrow the body: no refcount traffic but the rows content's slice.
            Self::decode_body(&frame.header, &frame.body, ids)
        }
    }

    #[inline(always)]
    fn decode_body(
        header: &FrameHeader,
        source: impl BodySource,
        ids: MetadataIds,
    ) -> Result<Self> {
        if header.direction != Direction::Response {
            return Err(ProtoError::WrongDirection {
                found: "request",
                expected: "response",
            });
        }
        let flags = header.flags;
        let opcode = header.opcode;
        let metadata_ids = header.version.has_metadata_ids(ids);
        let body = source.bytes();
        let mut r = Reader::new(body);
        let tracing_id = if flags.contains(Flags::TRACING) {
            Some(r.read_uuid("tracing id")?)
        } else {
            None
        };
        let warnings = if flags.contains(Flags::WARNING) {
            r.read_string_list("warnings")?.map(str::to_owned).collect()
        } else {
            Vec::new()
        };
        let custom_payload = if flags.contains(Flags::CUSTOM_PAYLOAD) {
            Some(
                r.read_bytes_map("custom payload")?
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.map(|v| body.slice_ref(v))))
                    .collect(),
            )
        } else {
            None
        };
        let decoded = match opcode {
            Opcode::Error => Decoded::Message(Response::Error(Box::new(ErrorResponse::decode(
                &mut r,
                body,
                header.version,
            )?))),
            Opcode::Ready => Decoded::Message(Response::Ready),
            Opcode::Authenticate => Decoded::Message(Response::Authenticate(
                r.read_string("authenticator class")?.to_owned(),
            )),
            Opcode::Supported => Decoded::Message(Response::Supported(
                r.read_string_multimap("SUPPORTED options")?
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
                    .collect(),
            )),
            Opcode::Result => match r.read_int("result kind")? {
                0x0001 => Decoded::Message(Response::Result(ResultBody::Void)),
                0x0002 => Decoded::Rows(read_rows(&mut r, body, metadata_ids)?),
                0x0003 => Decoded::Message(Response::Result(ResultBody::SetKeyspace(
                    r.read_string("keyspace")?.to_owned(),
                ))),
                0x0004 => {
                    let id = body.slice_ref(r.read_short_bytes("prepared id")?);
                    let result_metadata_id = metadata_ids
                        .then(|| r.read_short_bytes("result metadata id"))
                        .transpose()?
                        .map(|rid| body.slice_ref(rid));
                    let metadata = PreparedMetadata::decode(&mut r)?;
                    let result_metadata = RowsMetadata::decode(&mut r, body, metadata_ids)?;
                    Decoded::Message(Response::Result(ResultBody::Prepared(Box::new(Prepared {
                        id,
                        result_metadata_id,
                        metadata,
                        result_metadata,
                    }))))
                }
                0x0005 => Decoded::Message(Response::Result(ResultBody::SchemaChange(
                    SchemaChange::decode(&mut r)?,
                ))),
                other => {
                    return Err(ProtoError::InvalidValue {
                        what: "result kind",
                        detail: format!("0x{other:04x}"),
                    })
                }
            },
            Opcode::Event => {
                Decoded::Message(Response::Event(match r.read_string("event type")? {
                    "TOPOLOGY_CHANGE" => Event::TopologyChange {
                        change: r.read_string("topology change")?.to_owned(),
                        node: r.read_inet("node address")?,
                    },
                    "STATUS_CHANGE" => Event::StatusChange {
                        change: r.read_string("status change")?.to_owned(),
                        node: r.read_inet("node address")?,
                    },
                    "SCHEMA_CHANGE" => Event::SchemaChange(SchemaChange::decode(&mut r)?),
                    other => {
                        return Err(ProtoError::InvalidValue {
                            what: "event type",
                            detail: format!("{other:?}"),
                        })
                    }
                }))
            }
            Opcode::AuthChallenge => Decoded::Message(Response::AuthChallenge(
                r.read_bytes("auth challenge")?.map(|t| body.slice_ref(t)),
            )),
            Opcode::AuthSuccess => Decoded::Message(Response::AuthSuccess(
                r.read_bytes("auth success")?.map(|t| body.slice_ref(t)),
            )),
            other => {
                return Err(ProtoError::UnexpectedMessage {
                    found: other.name(),
                    expected: "a response",
                })
            }
        };
        r.expect_end(opcode.name())?;
        let response = match decoded {
            Decoded::Message(m) => m,
            Decoded::Rows(at) => Response::Result(ResultBody::Rows(Rows {
                metadata: at.metadata,
                rows_count: at.rows_count,
                content: source.tail(at.offset),
            })),
        };
        Ok(Self {
            version: header.version,
            stream: header.stream,
            tracing_id,
            warnings,
            custom_payload,
            response,
        })
    }
}
