//! The server side: a request body read back into a [`Request`] (every message of section
//! 4.1), with its envelope ([`RequestFrame`]). An EXECUTE's result metadata id is read where
//! the connection carries one: in v5, and in v4 on a connection that turned on ScyllaDB's
//! extension ([`Request::decode_with`]).

use super::batch::{BatchType, DecodedBatchStatement};
use super::body::read_flags;
use super::prepare::prepare_flags;
use super::query::{
    decode_parameters, decode_v5_suffix, decode_values, query_flags, DecodedParameters,
};
use crate::consistency::Consistency;
use crate::error::{ProtoError, Result};
use crate::frame::{Direction, Flags, FrameHeader, Opcode};
use crate::version::MetadataIds;
use crate::wire::{self, Reader};

/// A request as decoded by a server, borrowing the frame body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request<'a> {
    /// STARTUP options.
    Startup(Vec<(&'a str, &'a str)>),
    /// OPTIONS.
    Options,
    /// AUTH_RESPONSE token.
    AuthResponse(Option<&'a [u8]>),
    /// REGISTER event types.
    Register(Vec<&'a str>),
    /// PREPARE.
    Prepare {
        /// The CQL text.
        query: &'a str,
        /// v5: the keyspace to prepare in.
        keyspace: Option<&'a str>,
    },
    /// QUERY text and parameters.
    Query(&'a str, DecodedParameters<'a>),
    /// EXECUTE.
    Execute {
        /// The prepared id.
        id: &'a [u8],
        /// The result metadata id the client knows (v5, and v4 with ScyllaDB's extension).
        result_metadata_id: Option<&'a [u8]>,
        /// Consistency, values and the rest.
        params: DecodedParameters<'a>,
    },
    /// BATCH.
    Batch {
        /// Logged, unlogged, counter.
        kind: BatchType,
        /// The statements.
        statements: Vec<DecodedBatchStatement<'a>>,
        /// Consistency level.
        consistency: Consistency,
        /// Serial consistency.
        serial_consistency: Option<Consistency>,
        /// Default timestamp.
        timestamp: Option<i64>,
        /// v5: the keyspace to run in.
        keyspace: Option<&'a str>,
        /// v5: "now" in seconds.
        now_in_seconds: Option<i32>,
    },
}

/// A request frame's envelope (spec section 4): only a custom payload for requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFrame<'a> {
    /// Tracing was asked for.
    pub tracing: bool,
    /// The custom payload, if the flag was set.
    pub custom_payload: Option<wire::BytesMap<'a>>,
    /// The message.
    pub request: Request<'a>,
}

impl<'a> Request<'a> {
    /// Decodes a request body (already decompressed) according to its header, on a
    /// connection without ScyllaDB's result metadata ids in v4 ([`Request::decode_with`]).
    pub fn decode(header: &FrameHeader, body: &'a [u8]) -> Result<RequestFrame<'a>> {
        Self::decode_with(header, body, MetadataIds::ByVersion)
    }

    /// Decodes a request body (already decompressed) according to its header, on a
    /// connection whose result metadata ids are `ids` (what its STARTUP turned on).
    pub fn decode_with(
        header: &FrameHeader,
        body: &'a [u8],
        ids: MetadataIds,
    ) -> Result<RequestFrame<'a>> {
        if header.direction != Direction::Request {
            return Err(ProtoError::WrongDirection {
                found: "response",
                expected: "request",
            });
        }
        let mut r = Reader::new(body);
        let custom_payload = if header.flags.contains(Flags::CUSTOM_PAYLOAD) {
            Some(r.read_bytes_map("custom payload")?)
        } else {
            None
        };
        let request = match header.opcode {
            Opcode::Startup => Request::Startup(r.read_string_map("STARTUP options")?),
            Opcode::Options => Request::Options,
            Opcode::AuthResponse => Request::AuthResponse(r.read_bytes("AUTH_RESPONSE token")?),
            Opcode::Register => Request::Register(r.read_string_list("REGISTER events")?.collect()),
            Opcode::Prepare => {
                let query = r.read_long_string("PREPARE query")?;
                let keyspace = if header.version.has_int_flags() {
                    let flags = r.read_int("PREPARE flags")? as u32;
                    (flags & prepare_flags::WITH_KEYSPACE != 0)
                        .then(|| r.read_string("PREPARE keyspace"))
                        .transpose()?
                } else {
                    None
                };
                Request::Prepare { query, keyspace }
            }
            Opcode::Query => {
                let q = r.read_long_string("QUERY text")?;
                Request::Query(q, decode_parameters(&mut r, header.version)?)
            }
            Opcode::Execute => {
                let id = r.read_short_bytes("prepared id")?;
                let result_metadata_id = header
                    .version
                    .has_metadata_ids(ids)
                    .then(|| r.read_short_bytes("result metadata id"))
                    .transpose()?;
                Request::Execute {
                    id,
                    result_metadata_id,
                    params: decode_parameters(&mut r, header.version)?,
                }
            }
            Opcode::Batch => {
                let kind = BatchType::from_byte(r.read_byte("batch type")?)?;
                let n = r.read_short("batch statement count")? as usize;
                // Each statement takes at least 5 bytes.
                let mut statements = Vec::with_capacity(n.min(r.remaining() / 5));
                // Names (flag 0x40) come after the statements: values are read unnamed, as
                // servers do (CASSANDRA-10246).
                for _ in 0..n {
                    let st = match r.read_byte("batch statement kind")? {
                        0 => {
                            let q = r.read_long_string("batch query")?;
                            DecodedBatchStatement::Query(q, decode_values(&mut r, false)?)
                        }
                        1 => {
                            let id = r.read_short_bytes("batch prepared id")?;
                            DecodedBatchStatement::Prepared(id, decode_values(&mut r, false)?)
                        }
                        k => {
                            return Err(ProtoError::InvalidValue {
                                what: "batch statement kind",
                                detail: format!("{k} is not 0 or 1"),
                            })
                        }
                    };
                    statements.push(st);
                }
                let consistency = Consistency::decode(&mut r)?;
                let flags = read_flags(&mut r, header.version, "batch flags")?;
                let serial_consistency = (flags & query_flags::SERIAL_CONSISTENCY != 0)
                    .then(|| Consistency::decode(&mut r))
                    .transpose()?;
                let timestamp = (flags & query_flags::DEFAULT_TIMESTAMP != 0)
                    .then(|| r.read_long("batch timestamp"))
                    .transpose()?;
                let (keyspace, now_in_seconds) = decode_v5_suffix(&mut r, flags)?;
                Request::Batch {
                    kind,
                    statements,
                    consistency,
                    serial_consistency,
                    timestamp,
                    keyspace,
                    now_in_seconds,
                }
            }
            other => {
                return Err(ProtoError::UnexpectedMessage {
                    found: other.name(),
                    expected: "a request",
                })
            }
        };
        r.expect_end(header.opcode.name())?;
        Ok(RequestFrame {
            tracing: header.flags.contains(Flags::TRACING),
            custom_payload,
            request,
        })
    }
}
