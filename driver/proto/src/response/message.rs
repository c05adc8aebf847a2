//! [`Response`]: every message of section 4.2 as one enum, with its opcode and its body
//! encoded (READY, AUTHENTICATE, SUPPORTED, AUTH_CHALLENGE and AUTH_SUCCESS need no type of
//! their own: their fields are the variants').

use bytes::{BufMut, Bytes, BytesMut};

use super::error::ErrorResponse;
use super::event::Event;
use super::result::ResultBody;
use crate::error::{ProtoError, Result};
use crate::frame::Opcode;
use crate::version::{MetadataIds, ProtocolVersion};
use crate::wire;

/// A response message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// ERROR (boxed: rare, and large enough to slow every move of a `Response`).
    Error(Box<ErrorResponse>),
    /// READY.
    Ready,
    /// AUTHENTICATE with the server's authenticator class.
    Authenticate(String),
    /// SUPPORTED options.
    Supported(Vec<(String, Vec<String>)>),
    /// RESULT.
    Result(ResultBody),
    /// EVENT.
    Event(Event),
    /// AUTH_CHALLENGE token.
    AuthChallenge(Option<Bytes>),
    /// AUTH_SUCCESS final token.
    AuthSuccess(Option<Bytes>),
}

impl Response {
    /// The message's opcode.
    pub fn opcode(&self) -> Opcode {
        match self {
            Response::Error(_) => Opcode::Error,
            Response::Ready => Opcode::Ready,
            Response::Authenticate(_) => Opcode::Authenticate,
            Response::Supported(_) => Opcode::Supported,
            Response::Result(_) => Opcode::Result,
            Response::Event(_) => Opcode::Event,
            Response::AuthChallenge(_) => Opcode::AuthChallenge,
            Response::AuthSuccess(_) => Opcode::AuthSuccess,
        }
    }

    /// Appends the message body (no envelope) as `version` lays it out on a connection whose
    /// result metadata ids are `ids` (PREPARED's id and a Rows result's new one are refused
    /// where the connection carries none, and PREPARED's is required where it does).
    pub fn encode_body(
        &self,
        buf: &mut BytesMut,
        version: ProtocolVersion,
        ids: MetadataIds,
    ) -> Result<()> {
        let metadata_ids = version.has_metadata_ids(ids);
        match self {
            Response::Error(e) => e.encode(buf, version),
            Response::Ready => Ok(()),
            Response::Authenticate(class) => wire::put_string(buf, class, "authenticator class"),
            Response::Supported(opts) => wire::put_string_multimap(buf, opts, "SUPPORTED options"),
            Response::Result(res) => match res {
                ResultBody::Void => {
                    buf.put_i32(0x0001);
                    Ok(())
                }
                ResultBody::Rows(rows) => {
                    if rows.metadata.new_metadata_id.is_some() && !metadata_ids {
                        return Err(ProtoError::InvalidValue {
                            what: "Rows METADATA_CHANGED",
                            detail: "does not exist in protocol v4 without SCYLLA_USE_METADATA_ID"
                                .into(),
                        });
                    }
                    buf.put_i32(0x0002);
                    rows.metadata.encode(buf)?;
                    buf.put_i32(i32::try_from(rows.rows_count).map_err(|_| {
                        ProtoError::TooLong {
                            what: "rows count",
                            len: rows.rows_count,
                            limit: i32::MAX as usize,
                        }
                    })?);
                    buf.put_slice(&rows.content);
                    Ok(())
                }
                ResultBody::SetKeyspace(ks) => {
                    buf.put_i32(0x0003);
                    wire::put_string(buf, ks, "keyspace")
                }
                ResultBody::Prepared(p) => {
                    buf.put_i32(0x0004);
                    wire::put_short_bytes(buf, &p.id, "prepared id")?;
                    match (&p.result_metadata_id, metadata_ids) {
                        (Some(rid), true) => {
                            wire::put_short_bytes(buf, rid, "result metadata id")?;
                        }
                        (None, false) => {}
                        (_, required) => {
                            return Err(ProtoError::InvalidValue {
                                what: "PREPARED result metadata id",
                                detail: match (required, version.has_v5_fields()) {
                                    (true, true) => "is required in protocol v5".into(),
                                    (true, false) => {
                                        "is required in v4 with SCYLLA_USE_METADATA_ID on".into()
                                    }
                                    _ => "does not exist in protocol v4 without \
                                          SCYLLA_USE_METADATA_ID"
                                        .into(),
                                },
                            })
                        }
                    }
                    p.metadata.encode(buf)?;
                    p.result_metadata.encode(buf)
                }
                ResultBody::SchemaChange(c) => {
                    buf.put_i32(0x0005);
                    c.encode(buf)
                }
            },
            Response::Event(ev) => match ev {
                Event::TopologyChange { change, node } | Event::StatusChange { change, node } => {
                    let kind = if matches!(ev, Event::TopologyChange { .. }) {
                        "TOPOLOGY_CHANGE"
                    } else {
                        "STATUS_CHANGE"
                    };
                    wire::put_string(buf, kind, "event type")?;
                    wire::put_string(buf, change, "change")?;
                    wire::put_inet(buf, *node);
                    Ok(())
                }
                Event::SchemaChange(c) => {
                    wire::put_string(buf, "SCHEMA_CHANGE", "event type")?;
                    c.encode(buf)
                }
            },
            Response::AuthChallenge(t) => wire::put_bytes(buf, t.as_deref(), "auth challenge"),
            Response::AuthSuccess(t) => wire::put_bytes(buf, t.as_deref(), "auth success"),
        }
    }
}
