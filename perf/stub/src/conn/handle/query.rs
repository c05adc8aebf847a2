//! QUERY: the responder's answer (Set_keyspace for `USE`, rows of a SELECT, paged, Void
//! otherwise), the rules matching its text.

use std::rc::Rc;

use doppio_proto::frame::FrameHeader;
use doppio_proto::request::Request;

use crate::conn::handle::reply::{answer_of, send};
use crate::conn::state::Conn;
use crate::shard::ShardContext;

/// QUERY of `text`.
pub(super) fn query(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
    text: &str,
) {
    let answer = answer_of(conn, ctx, request, header.version);
    send(conn, ctx, header, request, Some(text), answer);
}
