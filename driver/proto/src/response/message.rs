//! [`Response`]: every message of section 4.2 as one enum, with its opcode and its body
//! encoded (READY, AUTHENTICATE, SUPPORTED, AUTH_CHALLENGE and AUTH_SUCCESS need no type of
//! their own: their fields are the variants').

use bytes::{BufMut, Bytes, BytesMut};

use super::error::ErrorResponse;
use super::event::Event;
use super::result::ResultBody;
use crate::error::{ProtoError, Result};
use crate::frame::Opcode;
use crate::version::ProtocolVersion;
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

    /// Appends the message body (no envelope) as `version` lays it out.
    pub fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
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
                    match (&p.result_metadata_id, version.has_v5_fields()) {
                        (Some(rid), true) => {
                            wire::put_short_bytes(buf, rid, "result metadata id")?;
                        }
                        (None, false) => {}
                        (_, v5) => {
                            return Err(ProtoError::InvalidValue {
                                what: "PREPARED result metadata id",
                                detail: if v5 {
                                    "is required in protocol v5".into()
                                } else {
                                    "does not exist in protocol v4".into()
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
