//! What one attempt of a request needs on every path (the general one of `request` and
//! `plan`, and the EXECUTE future of `execute`): the attempt the caller already made
//! ([`FirstAttempt`]), whether an EXECUTE is written from its template, decoding an
//! answer in place, and whether the node had forgotten the statement.

use doppio_proto::frame::Frame;
use doppio_proto::response::{ErrorCode, ResponseFrame};

use super::config::StatementOptions;
use super::prepared::PreparedStatement;
use crate::connection::Connection;
use crate::error::Error;
use crate::result::QueryResult;
use crate::routing::ring::NodeIndex;

/// The first attempt of a request, already made by the caller: on node `index` of the
/// placement's view, over `conn`, with `result`.
pub(super) struct FirstAttempt {
    pub(super) index: NodeIndex,
    pub(super) conn: Connection,
    pub(super) result: Result<QueryResult, Error>,
}

/// Whether an EXECUTE of `prepared` with `options` on `conn` is written from the
/// statement's template: default options (idempotent or not), no body compression, and a
/// template in the connection's protocol version.
pub(super) fn templated(
    prepared: &PreparedStatement,
    options: &StatementOptions<'_>,
    conn: &Connection,
) -> bool {
    let defaults = *options == StatementOptions::default()
        || *options
            == (StatementOptions {
                idempotent: true,
                ..StatementOptions::default()
            });
    defaults
        && conn.compression().is_none()
        && prepared.inner.template.borrow().version() == conn.version()
}

/// The answer `frame` to a request on `conn`, decoded in place (not through
/// `Connection::decode`'s result: one copy of the decoded frame less per request); an
/// undecodable answer closes the connection.
#[inline]
pub(super) fn decode_answer(conn: &Connection, frame: &Frame) -> Result<ResponseFrame, Error> {
    ResponseFrame::decode(frame, None, conn.config().max_frame_body)
        .map_err(|e| Error::from_request(conn.addr(), conn.undecodable(frame, e)))
}

/// Whether the node had forgotten the statement: UNPREPARED, or rows without metadata whose
/// prepared result columns are stale (the table changed since).
pub(super) fn forgotten(result: &Result<QueryResult, Error>) -> bool {
    match result {
        Err(e) => e.server_code() == Some(ErrorCode::Unprepared),
        Ok(r) => r.stale_columns(),
    }
}
