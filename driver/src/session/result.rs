//! The result of a statement: what the node returned, plus warnings and tracing id.

use std::net::SocketAddr;

use bytes::Bytes;
use doppio_proto::deserialize::FromRow;
use doppio_proto::response::ResultBody;
use doppio_proto::rows::Rows;

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
}

impl QueryResult {
    /// The rows, if the result has any.
    pub fn rows(&self) -> Option<&Rows> {
        match &self.body {
            ResultBody::Rows(r) => Some(r),
            _ => None,
        }
    }

    /// Number of rows in this page (0 for results without rows).
    pub fn rows_count(&self) -> usize {
        self.rows().map_or(0, |r| r.rows_count)
    }

    /// Where the next page starts, if there is one.
    pub fn paging_state(&self) -> Option<&Bytes> {
        self.rows().and_then(|r| r.metadata.paging_state.as_ref())
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
