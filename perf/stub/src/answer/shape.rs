//! The configured result shape: rows of an ordinary SELECT, their size, and the type of
//! every bind marker.

use doppio_proto::types::ColumnType;

/// The result shape and bind-marker type the stub serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Rows of an ordinary SELECT.
    pub rows: usize,
    /// Bytes of the one blob column of each row.
    pub row_bytes: usize,
    /// The type reported for every bind marker of a prepared statement.
    pub bind_type: ColumnType,
}

impl Default for Shape {
    fn default() -> Self {
        Self {
            rows: 1,
            row_bytes: 8,
            bind_type: ColumnType::Blob,
        }
    }
}
