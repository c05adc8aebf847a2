//! EXECUTE: the hot path answers a known statement of at most one row from its encoded body,
//! read in place (no decoding, allocation, lock or atomic without rules): with metadata, without
//! (`skip_metadata`), or, when the connection carries result metadata ids and the one sent is
//! not the statement's (its table was altered), with `METADATA_CHANGED`, the new id and the
//! columns. One that may need paging, or an unknown id, is decoded and answered as the other
//! requests are.

use std::rc::Rc;

use bytes::BytesMut;
use doppio_proto::frame::{FrameHeader, Opcode};
use doppio_proto::request::Request;
use doppio_proto::scylla_extensions::{TABLETS_PAYLOAD_KEY, TABLETS_V2_PAYLOAD_KEY};

use crate::answer;
use crate::conn::handle::fields::{execute_first_value, execute_head};
use crate::conn::handle::placement::place;
use crate::conn::handle::reply::{answer_of, send, serial_of};
use crate::conn::react::react;
use crate::conn::state::Conn;
use crate::rules::Probe;
use crate::shard::ShardContext;

/// Answers the EXECUTE `body` (arrived with `header`; on a connection with tablets routing v2,
/// with tablet version block `block`, taken off `body`) from its statement's encoded body,
/// after counting where it landed; false when its statement is unknown or may need paging
/// (it is then decoded and answered by [`execute`]).
pub(super) fn from_encoded_body(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    body: &[u8],
    block: Option<u8>,
) -> bool {
    let stream = header.stream;
    let version = header.version;
    let node = ctx.node();
    let ids = conn.metadata_ids();
    let tablet_payload = place(conn, ctx, body, version, block);
    // Recorded when the statement is one this node knows: the EXECUTE reached a node
    // that could run it, whatever its answer (dropped, stalled, an error). One answered
    // UNPREPARED ran nowhere, and its client rightly sends it again once prepared.
    if ctx.records_values() {
        let known = execute_head(body, version, ids)
            .is_some_and(|head| ctx.responder.borrow().lookup(head.id).is_some());
        if known {
            if let Some(v) = execute_first_value(body, version, ids) {
                ctx.record_value(v);
            }
        }
    }
    if let Some(head) = execute_head(body, version, ids) {
        let (id, skip_metadata, sent_id) = (head.id, head.skip_metadata, head.result_metadata_id);
        let responder = ctx.responder.borrow();
        if let Some(entry) = responder.lookup(id).filter(|e| !e.pageable()) {
            let lz4 = conn.lz4.get();
            let mut matcher = ctx.matcher.borrow_mut();
            let rule = if matcher.is_empty() {
                None
            } else {
                matcher.check(&Probe {
                    opcode: Opcode::Execute,
                    statement: Some(&entry.text),
                    connection: conn.number,
                    node: node.index(),
                    elapsed: doppio_rt::now().saturating_duration_since(ctx.started),
                    // Only with rules: the hot path without them decodes no parameters.
                    serial_consistency: Request::decode_with(header, body, ids)
                        .ok()
                        .and_then(|r| serial_of(&r.request)),
                })
            };
            match rule {
                None => {
                    let mut out = conn.out.borrow_mut();
                    match tablet_payload {
                        None => answer::put_body_frame(
                            &mut out,
                            version,
                            stream,
                            entry.body(skip_metadata, sent_id, lz4),
                            lz4,
                        ),
                        // A misroute (or under v2 a stale block): the rare path, which
                        // encodes the payload.
                        Some((layout, (k, epoch), v2)) => answer::put_body_frame_with_payload(
                            &mut out,
                            version,
                            stream,
                            entry.body(skip_metadata, sent_id, false),
                            (
                                if v2 {
                                    TABLETS_V2_PAYLOAD_KEY
                                } else {
                                    TABLETS_PAYLOAD_KEY
                                },
                                &layout.payload(k, epoch, v2),
                            ),
                            lz4,
                        ),
                    }
                }
                Some(i) => {
                    let elapsed = doppio_rt::now().saturating_duration_since(ctx.started);
                    let reaction = matcher.rule(i).then.clone();
                    let delay_u = matcher.uniform();
                    drop(matcher);
                    ctx.fired(i, conn.number);
                    let body = entry.body(skip_metadata, sent_id, lz4).clone();
                    drop(responder);
                    react(
                        conn,
                        stream,
                        reaction,
                        delay_u,
                        elapsed,
                        Some(id),
                        false, // an EXECUTE's answer
                        move |out: &mut BytesMut, s| {
                            answer::put_body_frame(out, version, s, &body, lz4)
                        },
                    );
                }
            }
            return true;
        }
    }
    false
}

/// A decoded EXECUTE of the statement `id` (one that may need paging, or unknown: UNPREPARED).
pub(super) fn execute(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
    id: &[u8],
) {
    let statement: Option<String> = ctx.responder.borrow().lookup(id).map(|e| e.text.clone());
    let answer = answer_of(conn, ctx, request, header.version);
    send(conn, ctx, header, request, statement.as_deref(), answer);
}
