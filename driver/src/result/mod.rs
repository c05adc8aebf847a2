//! What a node answered: a statement's [`QueryResult`], and the one place where an answer
//! becomes a typed outcome (`result_of` for RESULT, `reply` for the other messages): an
//! ERROR becomes [`Error::Server`], anything the request does not expect becomes
//! [`Error::UnexpectedResponse`].
//!
//! A [`QueryResult`] is one pointer to its [`ResultParts`] in a box recycled per thread
//! (`recycle`): a result is handed up through every async level of the request path, and
//! moving a 200-byte value there cost a `memmove` per level (twelve per request, measured);
//! a pointer moves in a register, and the box costs no allocation once the thread has as
//! many spares as results alive at once.

mod recycle;

use std::cell::RefCell;
use std::net::SocketAddr;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;
use std::thread::LocalKey;

use bytes::Bytes;
use doppio_proto::deserialize::FromRow;
use doppio_proto::metadata::ColumnSpec;
use doppio_proto::response::{Response, ResponseFrame, ResultBody};
use doppio_proto::rows::RowsView;

use crate::connection::Connection;
use crate::error::Error;
use recycle::{Recyclable, Recycled, Spares};

/// A statement's result: its [`ResultParts`] (fields read through `Deref`, such as
/// `result.node` and `result.body`) behind one pointer.
pub struct QueryResult(Recycled<ResultParts>);

/// What a [`QueryResult`] holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultParts {
    /// The node that answered.
    pub node: SocketAddr,
    /// The RESULT body: rows, void, keyspace set, prepared, or schema change.
    pub body: ResultBody,
    /// Warnings the node attached.
    pub warnings: Vec<String>,
    /// Tracing session id, when tracing was asked for.
    pub tracing_id: Option<[u8; 16]>,
    /// The prepared statement's result columns, when the node sent rows without metadata
    /// (`skip_metadata`): the rows are read by these.
    pub(crate) columns: Option<Rc<[ColumnSpec]>>,
}

impl Default for ResultParts {
    fn default() -> Self {
        ResultParts {
            node: SocketAddr::from(([0, 0, 0, 0], 0)),
            body: ResultBody::Void,
            warnings: Vec::new(),
            tracing_id: None,
            columns: None,
        }
    }
}

thread_local! {
    static SPARE_RESULTS: RefCell<Spares<ResultParts>> = const { RefCell::new(Vec::new()) };
}

impl Recyclable for ResultParts {
    fn spares() -> &'static LocalKey<RefCell<Spares<Self>>> {
        &SPARE_RESULTS
    }

    fn clear(&mut self) {
        *self = ResultParts::default();
    }
}

impl QueryResult {
    /// A result of `parts`.
    pub fn new(parts: ResultParts) -> Self {
        QueryResult(Recycled::new(parts))
    }

    /// A result without rows (`Void`) from `node`.
    pub(crate) fn void(node: SocketAddr) -> Self {
        Self::new(ResultParts {
            node,
            ..ResultParts::default()
        })
    }

    /// What the result holds, taken out of it.
    pub fn into_parts(self) -> ResultParts {
        self.0.into_inner()
    }
}

impl Deref for QueryResult {
    type Target = ResultParts;

    #[inline]
    fn deref(&self) -> &ResultParts {
        &self.0
    }
}

impl DerefMut for QueryResult {
    #[inline]
    fn deref_mut(&mut self) -> &mut ResultParts {
        &mut self.0
    }
}

impl Clone for QueryResult {
    fn clone(&self) -> Self {
        Self::new(ResultParts::clone(self))
    }
}

impl PartialEq for QueryResult {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for QueryResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryResult")
            .field("node", &self.node)
            .field("body", &self.body)
            .field("warnings", &self.warnings)
            .field("tracing_id", &self.tracing_id)
            .field("columns", &self.columns)
            .finish()
    }
}

impl ResultParts {
    /// The rows, if the result has any, with the column specs to read them by (the node's,
    /// or for prepared statements the prepared result columns).
    pub fn rows(&self) -> Option<RowsView<'_>> {
        rows_in(&self.body, self.columns.as_deref())
    }

    /// Number of rows in this page (0 for results without rows).
    pub fn rows_count(&self) -> usize {
        self.rows().map_or(0, |r| r.len())
    }

    /// Where the next page starts, if there is one.
    #[inline]
    pub fn paging_state(&self) -> Option<&Bytes> {
        match &self.body {
            ResultBody::Rows(r) => r.metadata.paging_state.as_ref(),
            _ => None,
        }
    }

    /// True when rows came without metadata and the prepared columns we would read them by
    /// are not as many as the rows have (the table changed since it was prepared).
    pub(crate) fn stale_columns(&self) -> bool {
        match (&self.body, &self.columns) {
            (ResultBody::Rows(r), Some(c)) => {
                r.metadata.no_metadata && c.len() != r.metadata.columns_count
            }
            _ => false,
        }
    }

    /// The rows read as `T` (a tuple), column types checked once.
    pub fn typed_rows<'a, T: FromRow<'a>>(&'a self) -> Result<Vec<T>, Error> {
        typed_rows_in(self.rows())
    }

    /// For a conditional statement (LWT): whether it was applied (the `[applied]` column).
    pub fn applied(&self) -> Option<bool> {
        applied_in(self.rows()?)
    }
}

/// The rows of `body`, read by `columns` when the node sent them without metadata (a
/// prepared statement's result columns), else by the body's own.
pub(crate) fn rows_in<'a>(
    body: &'a ResultBody,
    columns: Option<&'a [ColumnSpec]>,
) -> Option<RowsView<'a>> {
    match body {
        ResultBody::Rows(r) => Some(match columns {
            Some(columns) if r.metadata.no_metadata => r.view_with(columns),
            _ => r.view(),
        }),
        _ => None,
    }
}

/// `rows` read as `T` (a tuple), column types checked once; none without rows.
pub(crate) fn typed_rows_in<'a, T: FromRow<'a>>(
    rows: Option<RowsView<'a>>,
) -> Result<Vec<T>, Error> {
    let Some(rows) = rows else {
        return Ok(Vec::new());
    };
    rows.typed::<T>()
        .map_err(Error::Deserialization)?
        .collect::<Result<Vec<T>, _>>()
        .map_err(Error::Deserialization)
}

/// The `[applied]` column of a conditional statement's first row.
pub(crate) fn applied_in(rows: RowsView<'_>) -> Option<bool> {
    let index = rows.columns().iter().position(|c| c.name == "[applied]")?;
    rows.iter().next()?.ok()?.get::<bool>(index).ok()
}

/// The RESULT in `frame` (the answer to a `request` sent on `conn`), or the ERROR it carries
/// as an [`Error`], its extension fields read as the connection negotiated them (the
/// rate-limit error: only on this cold arm).
#[inline]
pub(crate) fn result_of(
    conn: &Connection,
    mut frame: ResponseFrame,
    request: &'static str,
) -> Result<QueryResult, Error> {
    result_in(conn, &mut frame, request)
}

/// As [`result_of`], taking what it needs out of `frame` where it lies (left behind: a
/// `Void` body or a `Ready` message, and no warnings). The request path's: a decoded frame
/// handed on by value was copied once more each time (192 bytes; the release bench's
/// `Execute::poll` called `memcpy` for it twice per request, now not at all).
#[inline]
pub(crate) fn result_in(
    conn: &Connection,
    frame: &mut ResponseFrame,
    request: &'static str,
) -> Result<QueryResult, Error> {
    let node = conn.addr();
    // Matched here rather than through `reply`: this runs on every request, and handing
    // the `Response` through another function's result costs a copy of it (measured).
    if let Response::Result(body) = &mut frame.response {
        // Written into the (spare) box field by field: no copy of the whole result.
        let (warnings, tracing_id) = (&mut frame.warnings, frame.tracing_id);
        return Ok(QueryResult(Recycled::filled(|r: &mut ResultParts| {
            r.node = node;
            r.body = std::mem::replace(body, ResultBody::Void);
            r.warnings = std::mem::take(warnings);
            r.tracing_id = tracing_id;
        })));
    }
    match std::mem::replace(&mut frame.response, Response::Ready) {
        Response::Error(mut error) => {
            error.read_extension(&conn.extensions());
            Err(Error::Server { node, error })
        }
        other => Err(unexpected(node, request, &other)),
    }
}

/// `response` unless it is an ERROR, which becomes [`Error::Server`]. The caller matches the
/// messages its request expects and passes the others to [`unexpected`].
pub(crate) fn reply(node: SocketAddr, response: Response) -> Result<Response, Error> {
    match response {
        Response::Error(error) => Err(Error::Server { node, error }),
        other => Ok(other),
    }
}

/// The error of an answer that makes no sense for `request`.
pub(crate) fn unexpected(node: SocketAddr, request: &'static str, got: &Response) -> Error {
    Error::UnexpectedResponse {
        node,
        request,
        got: got.opcode().name(),
    }
}
