//! PREPARE: the responder prepares the statement (its answers encoded once), and a
//! conditional statement's metadata carries ScyllaDB's LWT mark when the connection
//! negotiated it.

use std::rc::Rc;

use doppio_proto::frame::FrameHeader;
use doppio_proto::request::Request;
use doppio_proto::response::{Response, ResultBody};

use crate::answer::Answer;
use crate::conn::handle::reply::{answer_of, send};
use crate::conn::state::Conn;
use crate::shard::ShardContext;
use crate::tables;

/// PREPARE of `text`.
pub(super) fn prepare(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
    text: &str,
) {
    let mut answer = answer_of(conn, ctx, request, header.version);
    // ScyllaDB's LWT mark: a conditional statement's prepared metadata carries the bit the
    // connection negotiated.
    if let (Answer::Message(Response::Result(ResultBody::Prepared(p))), Some(mask)) =
        (&mut answer, conn.extensions.get().lwt_mask)
    {
        if tables::is_conditional(text) {
            p.metadata.extension_flags |= i32::from_be_bytes(mask.to_be_bytes());
        }
    }
    send(conn, ctx, header, request, Some(text), answer);
}
