//! The result of a statement: what the node returned, plus warnings and tracing id.

use std::net::SocketAddr;

use std::rc::Rc;

use bytes::Bytes;
use doppio_proto::deserialize::FromRow;
use doppio_proto::metadata::ColumnSpec;
use doppio_proto::response::ResultBody;
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
