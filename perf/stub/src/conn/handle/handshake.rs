//! The handshake and control requests: STARTUP (compression, the ScyllaDB extensions it
//! turns on, the connection's version and framing settled), OPTIONS (SUPPORTED, with the
//! emulated ScyllaDB shard's options), REGISTER and AUTH_RESPONSE.

use std::rc::Rc;

use doppio_proto::frame::FrameHeader;
use doppio_proto::request::Request;
use doppio_proto::response::Response;
use doppio_proto::segment::SegmentCompression;

use crate::answer::{self, Answer};
use crate::conn::handle::reply::{answer_of, send};
use crate::conn::state::Conn;
use crate::shard::ShardContext;

/// STARTUP with `options`: READY (or AUTHENTICATE); compression, if asked for, applies from
/// the next frame on, and the connection's version is settled (v5: segments from then on).
pub(super) fn startup(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
    options: &[(&str, &str)],
) {
    let stream = header.stream;
    let version = header.version;
    // STARTUP: compression, if asked for, applies from the next frame on.
    let mut start_lz4 = false;
    if let Some(e) = ctx.scylla() {
        conn.extensions
            .set(e.config.extensions.accepted_in_startup(options));
    }
    match options
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("COMPRESSION"))
    {
        Some((_, v)) if v.eq_ignore_ascii_case("lz4") => start_lz4 = true,
        Some((_, v)) => {
            let mut out = conn.out.borrow_mut();
            conn.put(
                &mut out,
                stream,
                &answer::protocol_error(format!("compression {v} is not supported (lz4 is)")),
            );
            return;
        }
        None => {}
    }
    let answer = answer_of(conn, ctx, request, version);
    send(conn, ctx, header, request, None, answer);
    // The version is settled; v5 frames everything after this answer in segments, and
    // compresses segments rather than envelopes.
    conn.settled.set(true);
    if version.has_segments() {
        conn.segments.set(Some(if start_lz4 {
            SegmentCompression::Lz4
        } else {
            SegmentCompression::None
        }));
        conn.unframed.set(conn.out.borrow().len());
    } else if start_lz4 {
        conn.lz4.set(true);
    }
}

/// OPTIONS: SUPPORTED, with the `SCYLLA_*` options of the connection's emulated ScyllaDB
/// shard when the emulation is on.
pub(super) fn options(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
) {
    let mut answer = answer_of(conn, ctx, request, header.version);
    if let (Answer::Message(Response::Supported(options)), Some(shard), Some(e)) =
        (&mut answer, conn.scylla_shard, ctx.scylla())
    {
        options.extend(e.supported(shard));
    }
    send(conn, ctx, header, request, None, answer);
}

/// REGISTER: READY; the connection is sent the events it named from now on (a cluster's
/// node: `crate::conn::watch`).
pub(super) fn register(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
) {
    if let Request::Register(names) = request {
        conn.events
            .set(conn.events.get() | crate::events::kinds_named(names.iter().copied()));
    }
    let answer = answer_of(conn, ctx, request, header.version);
    send(conn, ctx, header, request, None, answer);
}

/// AUTH_RESPONSE: AUTH_SUCCESS, whatever the credentials.
pub(super) fn auth_response(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
) {
    let answer = answer_of(conn, ctx, request, header.version);
    send(conn, ctx, header, request, None, answer);
}
