//! One request frame: its version accepted (or refused), its body decompressed, an EXECUTE's
//! tablet version block split off on a connection with tablets routing v2 (a body without
//! one refused with a PROTOCOL_ERROR), then the request answered by the function of its
//! opcode.

use std::rc::Rc;

use bytes::Bytes;
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Flags, FrameHeader, Opcode};
use doppio_proto::request::Request;

use crate::answer;
use crate::conn::handle::fields::split_tablet_block;
use crate::conn::handle::{batch, execute, handshake, prepare, query};
use crate::conn::state::{Conn, MAX_BODY};
use crate::shard::ShardContext;

/// Answers one request frame.
pub(crate) fn handle(conn: &Rc<Conn>, ctx: &ShardContext, header: &FrameHeader, raw: &[u8]) {
    if !accept_version(conn, ctx, header) {
        return;
    }
    let decompressed;
    let body: &[u8] = if header.flags.contains(Flags::COMPRESSION) {
        match decompress(conn, header, raw) {
            Some(b) => {
                decompressed = b;
                &decompressed
            }
            None => return,
        }
    } else {
        raw
    };
    // Tablets routing v2: every EXECUTE ends with its tablet version block, read here and
    // taken off the body (the rest of the stub reads EXECUTE as ever).
    let mut block = None;
    let body = if header.opcode == Opcode::Execute && conn.extensions.get().tablets_routing_v2 {
        let payload = header.flags.contains(Flags::CUSTOM_PAYLOAD);
        match split_tablet_block(body, header.version, conn.metadata_ids(), payload) {
            Ok((rest, b)) => {
                block = Some(b);
                rest
            }
            Err(e) => {
                let mut out = conn.out.borrow_mut();
                conn.put(
                    &mut out,
                    header.stream,
                    &answer::protocol_error(e.to_string()),
                );
                return;
            }
        }
    } else {
        body
    };
    // The hot path: EXECUTE of a known statement, answered from its encoded body (one that
    // may need paging is decoded in full below).
    if header.opcode == Opcode::Execute
        && execute::from_encoded_body(conn, ctx, header, body, block)
    {
        return;
    }
    let request = match Request::decode_with(header, body, conn.metadata_ids()) {
        Ok(r) => r,
        Err(e) => {
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                header.stream,
                &answer::protocol_error(format!("bad {}: {e}", header.opcode)),
            );
            return;
        }
    };
    let request = request.request;
    match &request {
        Request::Startup(options) => handshake::startup(conn, ctx, header, &request, options),
        Request::Options => handshake::options(conn, ctx, header, &request),
        Request::Register(_) => handshake::register(conn, ctx, header, &request),
        Request::AuthResponse(_) => handshake::auth_response(conn, ctx, header, &request),
        Request::Query(text, _) => query::query(conn, ctx, header, &request, text),
        Request::Prepare { query: text, .. } => prepare::prepare(conn, ctx, header, &request, text),
        Request::Execute { id, .. } => execute::execute(conn, ctx, header, &request, id),
        Request::Batch { .. } => batch::batch(conn, ctx, header, &request),
    }
}

/// Whether the frame's version is one the stub speaks; until a STARTUP settles the
/// connection's version, answers are written in the request's. A refused one is answered.
fn accept_version(conn: &Conn, ctx: &ShardContext, header: &FrameHeader) -> bool {
    let stream = header.stream;
    if !conn.settled.get() {
        let newest = ctx.responder.borrow().newest_protocol();
        if header.version > newest {
            // As Cassandra does: refused in a version the stub speaks, naming those.
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                stream,
                &answer::protocol_error(format!(
                    "Invalid or unsupported protocol version ({}); the stub speaks up to {newest}",
                    header.version.number()
                )),
            );
            return false;
        }
        conn.version.set(header.version);
    }
    true
}

/// The lz4 body `raw` of a compressed frame, decompressed; `None` (answered with a
/// PROTOCOL_ERROR) when no compression was agreed or it is no lz4.
fn decompress(conn: &Conn, header: &FrameHeader, raw: &[u8]) -> Option<Bytes> {
    let stream = header.stream;
    if !conn.lz4.get() {
        let mut out = conn.out.borrow_mut();
        conn.put(
            &mut out,
            stream,
            &answer::protocol_error("a compressed frame, but no compression was agreed"),
        );
        return None;
    }
    match Compression::Lz4.decompress(raw, MAX_BODY) {
        Ok(b) => Some(b),
        Err(e) => {
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                stream,
                &answer::protocol_error(format!("bad lz4 body: {e}")),
            );
            None
        }
    }
}
