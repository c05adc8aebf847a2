//! What a node answered: a statement's [`QueryResult`], and the one place where an answer
//! becomes a typed outcome (`result_of` for RESULT, `reply` for the other messages): an
//! ERROR becomes [`Error::Server`], anything the request does not expect becomes
//! [`Error::UnexpectedResponse`].

use std::net::SocketAddr;
use std::rc::Rc;

use bytes::Bytes;
use doppio_proto::deserialize::FromRow;
use doppio_proto::metadata::ColumnSpec;
use doppio_proto::response::{Response, ResponseFrame, ResultBody};
use doppio_proto::rows::RowsView;

use crate::error::Error;

/// A statement's result.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
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

impl QueryResult {
    /// The rows, if the result has any, with the column specs to read them by (the node's,
    /// or for prepared statements the prepared result columns).
    pub fn rows(&self) -> Option<RowsView<'_>> {
        match &self.body {
            ResultBody::Rows(r) => Some(match &self.columns {
                Some(columns) if r.metadata.no_metadata => r.view_with(columns),
                _ => r.view(),
            }),
            _ => None,
        }
    }

    /// Number of rows in this page (0 for results without rows).
    pub fn rows_count(&self) -> usize {
        self.rows().map_or(0, |r| r.len())
    }

    /// Where the next page starts, if there is one.
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
        let Some(rows) = self.rows() else {
            return Ok(Vec::new());
        };
        rows.typed::<T>()
            .map_err(Error::Deserialization)?
            .collect::<Result<Vec<T>, _>>()
            .map_err(Error::Deserialization)
    }

    /// For a conditional statement (LWT): whether it was applied (the `[applied]` column).
    pub fn applied(&self) -> Option<bool> {
        let rows = self.rows()?;
        let index = rows.columns().iter().position(|c| c.name == "[applied]")?;
        rows.iter().next()?.ok()?.get::<bool>(index).ok()
    }
}

/// The RESULT in `frame` (the answer to a `request` sent to `node`), or the ERROR it carries
/// as an [`Error`].
pub(crate) fn result_of(
    node: SocketAddr,
    frame: ResponseFrame,
    request: &'static str,
) -> Result<QueryResult, Error> {
    // Matched here rather than through `reply`: this runs on every request, and handing
    // the `Response` through another function's result costs a copy of it (measured).
    match frame.response {
        Response::Result(body) => Ok(QueryResult {
            node,
            body,
            warnings: frame.warnings,
            tracing_id: frame.tracing_id,
            columns: None,
        }),
        Response::Error(error) => Err(Error::Server { node, error }),
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
