//! The rows of a RESULT Rows, kept in the frame body and read lazily.

use bytes::Bytes;

use crate::metadata::RowsMetadata;

/// A RESULT Rows: its metadata, and its rows still encoded in the frame body.
///
/// Invariant: `content` is a zero-copy slice of the received frame body holding exactly
/// `<rows_content>`; nothing in it has been validated beyond its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    /// Column specs, paging state and flags.
    pub metadata: RowsMetadata,
    /// `<rows_count>` as the server sent it.
    pub rows_count: usize,
    /// `<rows_content>`: `rows_count` rows of `metadata.columns_count` `[bytes]` each.
    pub content: Bytes,
}
