//! Result and prepared metadata: the column specifications of spec sections 4.2.5.2 and
//! 4.2.5.4, shared by RESULT Rows, RESULT Prepared and the row reader.
//!
//! The structs are owned (decoded once per result or per prepared statement, then reused);
//! the rows themselves stay in the frame body and are read lazily by the row reader.

use bytes::Bytes;

use crate::types::ColumnType;

/// One column of a result or one bind marker of a prepared statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Keyspace of the column's table.
    pub keyspace: String,
    /// Table of the column.
    pub table: String,
    /// Column name (or alias, or bind marker name).
    pub name: String,
    /// Column type.
    pub typ: ColumnType,
}

/// Flag bits of `<flags>` in rows metadata (spec section 4.2.5.2).
pub mod rows_flags {
    /// Only one table spec is sent, before the columns.
    pub const GLOBAL_TABLES_SPEC: i32 = 0x0001;
    /// More pages follow; `<paging_state>` is present.
    pub const HAS_MORE_PAGES: i32 = 0x0002;
    /// No column specs follow (the client asked for `skip_metadata`).
    pub const NO_METADATA: i32 = 0x0004;
}

/// The metadata of a RESULT Rows (and of the result part of a RESULT Prepared).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowsMetadata {
    /// Number of columns in each row (present even with `NO_METADATA`).
    pub columns_count: usize,
    /// Paging state to fetch the next page, when `HAS_MORE_PAGES` was set.
    pub paging_state: Option<Bytes>,
    /// Column specs; empty when the server sent `NO_METADATA`.
    pub columns: Vec<ColumnSpec>,
    /// True when the server sent `NO_METADATA` (the client must know the columns).
    pub no_metadata: bool,
}

/// The bind-marker metadata of a RESULT Prepared (spec section 4.2.5.4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreparedMetadata {
    /// For each partition-key column, the index of the bind marker that carries it,
    /// in partition-key order (used for token-aware routing).
    pub pk_indexes: Vec<u16>,
    /// The bind markers, in order.
    pub columns: Vec<ColumnSpec>,
}
