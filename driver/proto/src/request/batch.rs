//! BATCH (spec section 4.1.7): several DML statements at once, from a slice ([`Batch`]) or
//! handed out one at a time ([`BatchOf`]), and a batch as a server decodes it.

use bytes::{BufMut, BytesMut};

use super::body::{count_u16, put_flags, RequestBody};
use super::query::{DecodedValues, QueryParameters};
use crate::consistency::Consistency;
use crate::error::{ProtoError, Result};
use crate::frame::Opcode;
use crate::metadata::ColumnSpec;
use crate::values::QueryValues;
use crate::version::ProtocolVersion;
use crate::wire;

/// The kind of a BATCH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BatchType {
    /// Logged (atomic through the batch log).
    #[default]
    Logged = 0,
    /// Unlogged.
    Unlogged = 1,
    /// Counter updates only.
    Counter = 2,
}

impl BatchType {
    pub(super) fn from_byte(b: u8) -> Result<Self> {
        match b {
            0 => Ok(BatchType::Logged),
            1 => Ok(BatchType::Unlogged),
            2 => Ok(BatchType::Counter),
            other => Err(ProtoError::InvalidValue {
                what: "batch type",
                detail: format!("{other} is not 0, 1 or 2"),
            }),
        }
    }
}

/// One statement of a BATCH: CQL text or a prepared id, and its values.
#[derive(Clone, Copy)]
pub enum BatchStatement<'a> {
    /// An unprepared statement.
    Query {
        /// CQL text.
        query: &'a str,
        /// Its values.
        values: &'a dyn QueryValues,
    },
    /// A prepared statement.
    Prepared {
        /// The prepared id.
        id: &'a [u8],
        /// Its values.
        values: &'a dyn QueryValues,
        /// Its bind markers, to check the values against.
        columns: Option<&'a [ColumnSpec]>,
    },
}

impl std::fmt::Debug for BatchStatement<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchStatement::Query { query, values } => f
                .debug_struct("Query")
                .field("query", query)
                .field("values", &values.count())
                .finish(),
            BatchStatement::Prepared { id, values, .. } => f
                .debug_struct("Prepared")
                .field("id", id)
                .field("values", &values.count())
                .finish(),
        }
    }
}

/// The statements of a BATCH, handed to the encoder one at a time (so that a caller whose
/// statements and values are computed per request needs no array of them).
pub trait BatchElements {
    /// How many statements.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with statement `k` (`0..len()`), which borrows from this call only.
    fn with_element(
        &self,
        k: usize,
        f: &mut dyn FnMut(&BatchStatement<'_>) -> Result<()>,
    ) -> Result<()>;
}

impl BatchElements for &[BatchStatement<'_>] {
    fn len(&self) -> usize {
        <[BatchStatement<'_>]>::len(self)
    }

    fn with_element(
        &self,
        k: usize,
        f: &mut dyn FnMut(&BatchStatement<'_>) -> Result<()>,
    ) -> Result<()> {
        match self.get(k) {
            Some(st) => f(st),
            None => Err(ProtoError::InvalidValue {
                what: "batch statement",
                detail: format!("no statement {k} of {}", <[_]>::len(self)),
            }),
        }
    }
}

/// BATCH: several DML statements at once.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    /// Logged, unlogged or counter.
    pub kind: BatchType,
    /// The statements.
    pub statements: &'a [BatchStatement<'a>],
    /// Consistency level.
    pub consistency: Consistency,
    /// Serial consistency for conditional statements.
    pub serial_consistency: Option<Consistency>,
    /// Default timestamp in microseconds.
    pub timestamp: Option<i64>,
    /// v5: the keyspace to run in, instead of the connection's.
    pub keyspace: Option<&'a str>,
    /// v5: "now" for the batch, in seconds since the epoch.
    pub now_in_seconds: Option<i32>,
}

impl RequestBody for Batch<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Batch
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        BatchOf {
            kind: self.kind,
            statements: &self.statements,
            consistency: self.consistency,
            serial_consistency: self.serial_consistency,
            timestamp: self.timestamp,
            keyspace: self.keyspace,
            now_in_seconds: self.now_in_seconds,
        }
        .encode_body(buf, version)
    }
}

/// BATCH of statements handed out one at a time ([`BatchElements`]): the same message as
/// [`Batch`], for a caller that has no slice of them.
#[derive(Clone, Copy)]
pub struct BatchOf<'a> {
    /// Logged, unlogged or counter.
    pub kind: BatchType,
    /// The statements.
    pub statements: &'a dyn BatchElements,
    /// Consistency level.
    pub consistency: Consistency,
    /// Serial consistency for conditional statements.
    pub serial_consistency: Option<Consistency>,
    /// Default timestamp in microseconds.
    pub timestamp: Option<i64>,
    /// v5: the keyspace to run in, instead of the connection's.
    pub keyspace: Option<&'a str>,
    /// v5: "now" for the batch, in seconds since the epoch.
    pub now_in_seconds: Option<i32>,
}

impl RequestBody for BatchOf<'_> {
    fn opcode(&self) -> Opcode {
        Opcode::Batch
    }
    fn encode_body(&self, buf: &mut BytesMut, version: ProtocolVersion) -> Result<()> {
        // The suffix is laid out as QUERY's (without page size and paging state).
        let suffix = QueryParameters {
            serial_consistency: self.serial_consistency,
            timestamp: self.timestamp,
            keyspace: self.keyspace,
            now_in_seconds: self.now_in_seconds,
            ..QueryParameters::default()
        };
        suffix.check(version)?;
        buf.put_u8(self.kind as u8);
        buf.put_u16(count_u16(self.statements.len(), "batch statement count")?);
        for k in 0..self.statements.len() {
            self.statements
                .with_element(k, &mut |st| write_batch_statement(st, buf))?;
        }
        self.consistency.encode(buf);
        put_flags(buf, version, suffix.flags(&()))?;
        suffix.encode_suffix(buf)
    }
}

impl std::fmt::Debug for BatchOf<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchOf")
            .field("kind", &self.kind)
            .field("statements", &self.statements.len())
            .field("consistency", &self.consistency)
            .field("serial_consistency", &self.serial_consistency)
            .field("timestamp", &self.timestamp)
            .field("keyspace", &self.keyspace)
            .field("now_in_seconds", &self.now_in_seconds)
            .finish()
    }
}

/// One statement of a BATCH: its kind byte, its text or id, and its values.
fn write_batch_statement(st: &BatchStatement<'_>, buf: &mut BytesMut) -> Result<()> {
    let (values, columns) = match st {
        BatchStatement::Query { query, values } => {
            buf.put_u8(0);
            wire::put_long_string(buf, query, "batch query")?;
            (*values, None)
        }
        BatchStatement::Prepared {
            id,
            values,
            columns,
        } => {
            buf.put_u8(1);
            wire::put_short_bytes(buf, id, "batch prepared id")?;
            (*values, *columns)
        }
    };
    if values.has_names() {
        return Err(ProtoError::InvalidValue {
            what: "batch values",
            detail: "named values do not work in BATCH (CASSANDRA-10246)".into(),
        });
    }
    buf.put_u16(count_u16(values.count(), "batch value count")?);
    values.write_values(columns, buf)
}

/// A BATCH statement as decoded by a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodedBatchStatement<'a> {
    /// CQL text and values.
    Query(&'a str, DecodedValues<'a>),
    /// Prepared id and values.
    Prepared(&'a [u8], DecodedValues<'a>),
}
