//! What comes back through the door: [`OwnedResult`] (a node's result, `Send`) and
//! [`OwnedPage`] (one page of it and where the next starts).
//!
//! A shard's [`QueryResult`] is `!Send`: a prepared statement's rows come without metadata
//! and are read by the statement's result columns, shared with the statement by an `Rc`. An
//! `OwnedResult` holds the same frame body (`Bytes`, no copy) and those columns in an `Arc`,
//! which the shard makes once per statement and column change, not per answer (the shard's
//! side keeps it beside its `PreparedStatement`).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use doppio_proto::deserialize::FromRow;
use doppio_proto::metadata::ColumnSpec;
use doppio_proto::response::ResultBody;
use doppio_proto::rows::RowsView;

use crate::error::Error;
use crate::result::{applied_in, rows_in, typed_rows_in, QueryResult};
use crate::session::PagingState;

/// A node's result to a request made through the door: `Send`, owned, read as a
/// [`QueryResult`] is.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedResult {
    /// The node that answered.
    pub node: SocketAddr,
    /// The RESULT body: rows, void, keyspace set, prepared, or schema change.
    pub body: ResultBody,
    /// Warnings the node attached.
    pub warnings: Vec<String>,
    /// Tracing session id, when tracing was asked for.
    pub tracing_id: Option<[u8; 16]>,
    /// The prepared statement's result columns, when the rows came without metadata.
    columns: Option<Arc<[ColumnSpec]>>,
}

impl OwnedResult {
    /// `result` made `Send`; `columns` are its prepared result columns as an `Arc` (the
    /// shard's copy of the `Rc` the result holds), `None` for an unprepared statement.
    pub(super) fn new(result: QueryResult, columns: Option<Arc<[ColumnSpec]>>) -> Self {
        let parts = result.into_parts();
        Self {
            node: parts.node,
            body: parts.body,
            warnings: parts.warnings,
            tracing_id: parts.tracing_id,
            columns,
        }
    }

    /// The rows, if the result has any, with the column specs to read them by.
    pub fn rows(&self) -> Option<RowsView<'_>> {
        rows_in(&self.body, self.columns.as_deref())
    }

    /// Number of rows (0 for results without rows).
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

    /// The rows read as `T` (a tuple), column types checked once.
    pub fn typed_rows<'a, T: FromRow<'a>>(&'a self) -> Result<Vec<T>, Error> {
        typed_rows_in(self.rows())
    }

    /// For a conditional statement (LWT): whether it was applied (the `[applied]` column).
    pub fn applied(&self) -> Option<bool> {
        applied_in(self.rows()?)
    }
}

/// One page of a result from a `*_single_page` call through the door: its rows (it
/// dereferences to its [`OwnedResult`]) and where the next starts ([`OwnedPage::next`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedPage {
    result: OwnedResult,
}

impl OwnedPage {
    pub(super) fn new(result: OwnedResult) -> Self {
        Self { result }
    }

    /// Where the next page starts, or `None` if this was the last one.
    pub fn next(&self) -> Option<PagingState> {
        self.result
            .paging_state()
            .cloned()
            .map(PagingState::from_bytes)
    }

    /// Whether this was the last page.
    pub fn is_last(&self) -> bool {
        self.result.paging_state().is_none()
    }

    /// The page as the node's result.
    pub fn into_result(self) -> OwnedResult {
        self.result
    }
}

impl std::ops::Deref for OwnedPage {
    type Target = OwnedResult;

    fn deref(&self) -> &OwnedResult {
        &self.result
    }
}
