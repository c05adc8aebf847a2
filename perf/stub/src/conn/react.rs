//! Fault actions: what a fired rule does instead of (or to) a request's answer: delay it,
//! answer an ERROR, stall or drop the connection, break the frame, or use another stream.

use std::rc::Rc;

use bytes::BytesMut;
use doppio_proto::frame::{Direction, Flags, FrameHeader, Opcode};
use doppio_proto::response::{ErrorCode, ErrorDetail, ErrorResponse, Response};
use doppio_proto::scylla_extensions::{Extensions, RateLimitError};

use crate::conn::state::Conn;
use crate::rules::{Malformed, Reaction};

/// ScyllaDB's answer to an operation over its partition's rate limit: the rate-limit error
/// with its fields where the connection turned the extension on, Config_error otherwise.
fn rate_limit_error(limit: RateLimitError, extensions: Extensions) -> Response {
    let message = "Per-partition rate limit reached (doppio-stub)".to_owned();
    let (code, detail) = match extensions.rate_limit_code {
        Some(code) => (ErrorCode::Other(code), ErrorDetail::RateLimit(limit)),
        None => (ErrorCode::ConfigError, ErrorDetail::None),
    };
    Response::Error(Box::new(ErrorResponse {
        code,
        message,
        detail,
    }))
}

/// The ERROR a rule asks for, with the fields its code requires.
fn injected_error(code: ErrorCode, message: &str, id: Option<&[u8]>) -> Response {
    use doppio_proto::consistency::Consistency::One;
    let detail = match code {
        ErrorCode::Unavailable => ErrorDetail::Unavailable {
            consistency: One,
            required: 1,
            alive: 0,
        },
        ErrorCode::WriteTimeout => ErrorDetail::WriteTimeout {
            consistency: One,
            received: 0,
            block_for: 1,
            write_type: "SIMPLE".into(),
            contentions: None,
        },
        ErrorCode::ReadTimeout => ErrorDetail::ReadTimeout {
            consistency: One,
            received: 0,
            block_for: 1,
            data_present: false,
        },
        ErrorCode::ReadFailure => ErrorDetail::ReadFailure {
            consistency: One,
            received: 0,
            block_for: 1,
            failures: 1,
            reasons: Vec::new(),
            data_present: false,
        },
        ErrorCode::WriteFailure => ErrorDetail::WriteFailure {
            consistency: One,
            received: 0,
            block_for: 1,
            failures: 1,
            reasons: Vec::new(),
            write_type: "SIMPLE".into(),
        },
        ErrorCode::FunctionFailure => ErrorDetail::FunctionFailure {
            keyspace: "stub".into(),
            function: "f".into(),
            arg_types: Vec::new(),
        },
        ErrorCode::AlreadyExists => ErrorDetail::AlreadyExists {
            keyspace: "stub".into(),
            table: "t".into(),
        },
        ErrorCode::Unprepared => ErrorDetail::Unprepared {
            id: bytes::Bytes::copy_from_slice(id.unwrap_or(&[0; 16])),
        },
        _ => ErrorDetail::None,
    };
    Response::Error(Box::new(ErrorResponse {
        code,
        message: message.to_owned(),
        detail,
    }))
}

/// Carries out a rule's reaction for the request on `stream`, `elapsed` after the stub
/// started (a drifting delay's time); `write` encodes the normal answer on a given stream.
/// `unframed`: the answer is a v5 STARTUP's, which goes out before segment framing begins
/// (a delayed one too: the client sends nothing else until it has it).
#[allow(clippy::too_many_arguments)] // one call site; each argument is a different fact
pub(super) fn react(
    conn: &Rc<Conn>,
    stream: i16,
    reaction: Reaction,
    u: f64,
    elapsed: std::time::Duration,
    id: Option<&[u8]>,
    unframed: bool,
    write: impl FnOnce(&mut BytesMut, i16) + 'static,
) {
    match reaction {
        Reaction::Delay(d) => {
            let delay = d.sample(u, elapsed);
            let mut answer = BytesMut::new();
            write(&mut answer, stream);
            // A weak handle: the connection may close meanwhile.
            let out = Rc::downgrade(conn);
            doppio_rt::spawn_local(async move {
                doppio_rt::sleep(delay).await;
                if let Some(conn) = out.upgrade() {
                    if !conn.closed.get() {
                        let mut out = conn.out.borrow_mut();
                        out.extend_from_slice(&answer);
                        if unframed {
                            conn.unframed.set(out.len());
                        }
                        drop(out);
                        conn.wake_flusher();
                    }
                }
            })
            .detach();
        }
        Reaction::Error { code, message } => {
            let mut out = conn.out.borrow_mut();
            conn.put(&mut out, stream, &injected_error(code, &message, id));
        }
        Reaction::RateLimit(limit) => {
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                stream,
                &rate_limit_error(limit, conn.extensions.get()),
            );
        }
        Reaction::Stall(d) => {
            let until = doppio_rt::now() + d;
            if conn.stalled_until.get().is_none_or(|t| t < until) {
                conn.stalled_until.set(Some(until));
            }
            write(&mut conn.out.borrow_mut(), stream);
        }
        Reaction::Drop => conn.close(),
        Reaction::WrongStream => {
            let other = if stream == i16::MAX {
                i16::MAX - 1
            } else {
                i16::MAX
            };
            write(&mut conn.out.borrow_mut(), other);
        }
        Reaction::Malformed(kind) => {
            let mut guard = conn.out.borrow_mut();
            let out: &mut BytesMut = &mut guard;
            let version = conn.version.get();
            let header = |flags, length| FrameHeader {
                version,
                direction: Direction::Response,
                flags,
                stream,
                opcode: Opcode::Result,
                length,
            };
            match kind {
                Malformed::BadVersion => {
                    let at = out.len();
                    header(Flags::NONE, 4).write_to(out);
                    out[at] = 0x7f;
                    out.extend_from_slice(&[0, 0, 0, 1]);
                }
                Malformed::OversizedLength => {
                    header(Flags::NONE, i32::MAX as u32).write_to(out);
                }
                Malformed::Truncated => {
                    header(Flags::NONE, 100).write_to(out);
                    out.extend_from_slice(&[0, 0, 0, 2, 0, 0]);
                    conn.close_after_flush.set(true);
                }
                Malformed::CorruptLz4 => {
                    // An uncompressed length of 100, then bytes that are no lz4 block.
                    header(Flags::COMPRESSION, 12).write_to(out);
                    out.extend_from_slice(&[0, 0, 0, 100, 0xff, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0]);
                }
                Malformed::BadBody => {
                    header(Flags::NONE, 4).write_to(out);
                    out.extend_from_slice(&0x7777_i32.to_be_bytes());
                }
            }
        }
    }
}
