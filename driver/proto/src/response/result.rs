//! RESULT (spec section 4.2.5): its kinds as one [`ResultBody`] (Void and Set_keyspace need
//! no type of their own), and the Prepared kind's fields ([`Prepared`]). The Rows kind's
//! reader is in `result_rows`, the Schema_change kind's in `schema_change`.

use bytes::Bytes;

use super::schema_change::SchemaChange;
use crate::metadata::{PreparedMetadata, RowsMetadata};
use crate::rows::Rows;

/// A RESULT Prepared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The id to EXECUTE with (zero-copy slice of the frame body).
    pub id: Bytes,
    /// The id of the result metadata, sent back with every EXECUTE: v5's, and v4's on a
    /// connection that turned on ScyllaDB's extension (`None` elsewhere).
    pub result_metadata_id: Option<Bytes>,
    /// Bind markers and partition-key indexes.
    pub metadata: PreparedMetadata,
    /// The columns an execution will return (may be empty with `no_metadata`).
    pub result_metadata: RowsMetadata,
}

/// A RESULT message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultBody {
    /// Nothing to return.
    Void,
    /// Rows, read lazily.
    Rows(Rows),
    /// `USE` succeeded.
    SetKeyspace(String),
    /// PREPARE succeeded (boxed: rare, and large enough to slow every move of a result).
    Prepared(Box<Prepared>),
    /// A schema-altering statement succeeded.
    SchemaChange(SchemaChange),
}
