//! What every decoded request shares once its handler has its answer: the responder's
//! answer, the rules' look at the request, and the write (or what the rule that fired does
//! instead).

use std::rc::Rc;

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::consistency::Consistency;
use doppio_proto::frame::FrameHeader;
use doppio_proto::request::Request;
use doppio_proto::ProtocolVersion;

use crate::answer::{self, Answer};
use crate::conn::encode::put_message;
use crate::conn::react::react;
use crate::conn::state::Conn;
use crate::rules::Probe;
use crate::shard::ShardContext;

/// The responder's answer to `request` on this connection (`USE` sets its keyspace;
/// pre-encoded bodies come compressed when it uses lz4), in `version`, the request's, with
/// the result metadata ids the connection turned on.
pub(super) fn answer_of(
    conn: &Conn,
    ctx: &ShardContext,
    request: &Request<'_>,
    version: ProtocolVersion,
) -> Answer {
    let mut keyspace = conn.keyspace.borrow_mut();
    ctx.responder.borrow_mut().answer_with(
        request,
        &mut keyspace,
        conn.lz4.get(),
        version,
        conn.metadata_ids(),
    )
}

/// Writes `answer` to `request` (which arrived with `header`), or, when a rule matches the
/// request (`statement`: the text its rules look for), does what the rule says instead.
pub(super) fn send(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
    statement: Option<&str>,
    answer: Answer,
) {
    let stream = header.stream;
    let version = header.version;
    let id = match request {
        Request::Execute { id, .. } => Some(*id),
        _ => None,
    };
    let rule = {
        let mut matcher = ctx.matcher.borrow_mut();
        if matcher.is_empty() {
            None
        } else {
            matcher
                .check(&Probe {
                    opcode: header.opcode,
                    statement,
                    connection: conn.number,
                    node: ctx.node().index(),
                    elapsed: doppio_rt::now().saturating_duration_since(ctx.started),
                    serial_consistency: serial_of(request),
                })
                .map(|i| (i, matcher.rule(i).then.clone(), matcher.uniform()))
        }
    };
    let lz4 = conn.lz4.get();
    let ids = conn.metadata_ids();
    let write = move |out: &mut BytesMut, s: i16| match &answer {
        Answer::Body(b) => answer::put_body_frame(out, version, s, b, lz4),
        Answer::Message(m) => put_message(out, version, ids, s, m, lz4.then_some(Compression::Lz4)),
    };
    match rule {
        None => write(&mut conn.out.borrow_mut(), stream),
        Some((i, reaction, u)) => {
            ctx.fired(i, conn.number);
            // A v5 STARTUP's answer goes out before framing begins, even when delayed.
            let unframed = matches!(request, Request::Startup(_)) && version.has_segments();
            let elapsed = doppio_rt::now().saturating_duration_since(ctx.started);
            react(conn, stream, reaction, u, elapsed, id, unframed, write);
        }
    }
}

/// The serial consistency a QUERY, EXECUTE or BATCH carries.
pub(super) fn serial_of(request: &Request<'_>) -> Option<Consistency> {
    match request {
        Request::Query(_, p) | Request::Execute { params: p, .. } => p.params.serial_consistency,
        Request::Batch {
            serial_consistency, ..
        } => *serial_consistency,
        _ => None,
    }
}
