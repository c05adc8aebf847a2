//! BATCH: Void, the rules seeing its serial consistency.

use std::rc::Rc;

use doppio_proto::frame::FrameHeader;
use doppio_proto::request::Request;

use crate::conn::handle::reply::{answer_of, send};
use crate::conn::state::Conn;
use crate::shard::ShardContext;

/// BATCH.
pub(super) fn batch(
    conn: &Rc<Conn>,
    ctx: &ShardContext,
    header: &FrameHeader,
    request: &Request<'_>,
) {
    let answer = answer_of(conn, ctx, request, header.version);
    send(conn, ctx, header, request, None, answer);
}
