//! Result and prepared metadata: the column specifications of spec sections 4.2.5.2 and
//! 4.2.5.4, shared by RESULT Rows, RESULT Prepared and the row reader.
//!
//! The structs are owned (decoded once per result or per prepared statement, then reused);
//! the rows themselves stay in the frame body and are read lazily by the row reader.

use std::sync::Arc;

use bytes::{BufMut, Bytes};

use crate::error::{ProtoError, Result};
use crate::wire::{self, Reader};

use crate::types::ColumnType;

/// One column of a result or one bind marker of a prepared statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Keyspace of the column's table (shared: a global table spec is stored once per
    /// result, not copied into every column).
    pub keyspace: Arc<str>,
    /// Table of the column (shared likewise).
    pub table: Arc<str>,
    /// Column name (or alias, or bind marker name).
    pub name: String,
    /// Column type.
    pub typ: ColumnType,
}

impl ColumnSpec {
    /// The column `name` of `keyspace.table`, of type `typ`.
    pub fn new(keyspace: &str, table: &str, name: &str, typ: ColumnType) -> Self {
        Self {
            keyspace: keyspace.into(),
            table: table.into(),
            name: name.into(),
            typ,
        }
    }
}

/// Flag bits of `<flags>` in rows metadata (spec section 4.2.5.2).
pub mod rows_flags {
    /// Only one table spec is sent, before the columns.
    pub const GLOBAL_TABLES_SPEC: i32 = 0x0001;
    /// More pages follow; `<paging_state>` is present.
    pub const HAS_MORE_PAGES: i32 = 0x0002;
    /// No column specs follow (the client asked for `skip_metadata`).
    pub const NO_METADATA: i32 = 0x0004;
    /// The result metadata changed; `<new_metadata_id>` follows the paging state (v5, and
    /// v4 with ScyllaDB's `SCYLLA_USE_METADATA_ID`).
    pub const METADATA_CHANGED: i32 = 0x0008;
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
    /// `METADATA_CHANGED` (v5, and v4 with ScyllaDB's extension): the new result metadata id
    /// to EXECUTE with from now on (boxed: rare, and every result carries this struct).
    pub new_metadata_id: Option<Box<Bytes>>,
}

/// The bind-marker metadata of a RESULT Prepared (spec section 4.2.5.4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreparedMetadata {
    /// For each partition-key column, the index of the bind marker that carries it,
    /// in partition-key order (used for token-aware routing).
    pub pk_indexes: Vec<u16>,
    /// The bind markers, in order.
    pub columns: Vec<ColumnSpec>,
    /// Flag bits of the metadata beyond the specification's (`Global_tables_spec` is implied
    /// by the columns): a protocol extension's, such as ScyllaDB's LWT mark
    /// ([`crate::scylla_extensions::Extensions::is_lwt`]). 0 from Cassandra.
    pub extension_flags: i32,
}

/// Reads an `[int]` count and checks it is not negative and could fit in what is left
/// (each element needs at least `min_size` bytes), before anything is reserved.
pub(crate) fn read_count(r: &mut Reader<'_>, what: &'static str, min_size: usize) -> Result<usize> {
    let n = r.read_int(what)?;
    let n = usize::try_from(n).map_err(|_| ProtoError::InvalidLength {
        what,
        len: n.into(),
    })?;
    if n.saturating_mul(min_size) > r.remaining() {
        return Err(ProtoError::Truncated {
            what,
            needed: n.saturating_mul(min_size),
            available: r.remaining(),
        });
    }
    Ok(n)
}

fn read_col_specs(
    r: &mut Reader<'_>,
    global: Option<(&str, &str)>,
    count: usize,
) -> Result<Vec<ColumnSpec>> {
    // One allocation for a global spec, shared by every column (no amplification: a long
    // name repeated over many columns costs its length once).
    let global = global.map(|(k, t)| (Arc::<str>::from(k), Arc::<str>::from(t)));
    // Reserve only what the input can hold (each spec takes at least 4 bytes).
    let mut columns = Vec::with_capacity(count.min(r.remaining() / 4));
    for _ in 0..count {
        let (keyspace, table) = match &global {
            Some((k, t)) => (k.clone(), t.clone()),
            None => (
                Arc::from(r.read_string("column keyspace")?),
                Arc::from(r.read_string("column table")?),
            ),
        };
        let name = r.read_string("column name")?.to_owned();
        let typ = crate::types::ColumnType::decode(r)?;
        columns.push(ColumnSpec {
            keyspace,
            table,
            name,
            typ,
        });
    }
    Ok(columns)
}

/// True if every column has the same keyspace and table (so a global table spec can be used).
fn common_table(columns: &[ColumnSpec]) -> Option<(&str, &str)> {
    let first = columns.first()?;
    columns
        .iter()
        .all(|c| c.keyspace == first.keyspace && c.table == first.table)
        .then_some((&*first.keyspace, &*first.table))
}

fn write_col_specs(buf: &mut impl BufMut, columns: &[ColumnSpec], global: bool) -> Result<()> {
    if global {
        if let Some((k, t)) = common_table(columns) {
            wire::put_string(buf, k, "global keyspace")?;
            wire::put_string(buf, t, "global table")?;
        }
    }
    for c in columns {
        if !global {
            wire::put_string(buf, &c.keyspace, "column keyspace")?;
            wire::put_string(buf, &c.table, "column table")?;
        }
        wire::put_string(buf, &c.name, "column name")?;
        c.typ.encode(buf)?;
    }
    Ok(())
}

fn count_i32(n: usize, what: &'static str) -> Result<i32> {
    i32::try_from(n).map_err(|_| ProtoError::TooLong {
        what,
        len: n,
        limit: i32::MAX as usize,
    })
}

impl RowsMetadata {
    /// Reads `<metadata>` of a Rows result (spec section 4.2.5.2). The paging state is a
    /// zero-copy slice of `body`, which `r` must be reading. `metadata_ids` says whether the
    /// connection carries result metadata ids
    /// ([`ProtocolVersion::has_metadata_ids`](crate::ProtocolVersion::has_metadata_ids)):
    /// without them `METADATA_CHANGED` is not a flag of the protocol, and is refused rather
    /// than guessed at.
    ///
    /// Allocates the column specs (names and types) once per result.
    #[inline]
    pub fn decode(r: &mut Reader<'_>, body: &bytes::Bytes, metadata_ids: bool) -> Result<Self> {
        let flags = r.read_int("rows metadata flags")?;
        let columns_count = r.read_int("columns count")?;
        let columns_count =
            usize::try_from(columns_count).map_err(|_| ProtoError::InvalidLength {
                what: "columns count",
                len: columns_count.into(),
            })?;
        let paging_state = if flags & rows_flags::HAS_MORE_PAGES != 0 {
            r.read_bytes("paging state")?.map(|s| body.slice_ref(s))
        } else {
            None
        };
        let no_metadata = flags & rows_flags::NO_METADATA != 0;
        let new_metadata_id = if flags & rows_flags::METADATA_CHANGED != 0 {
            if !metadata_ids {
                return Err(ProtoError::InvalidValue {
                    what: "rows metadata flags",
                    detail: "METADATA_CHANGED in v4 without SCYLLA_USE_METADATA_ID (no result \
                             metadata ids on this connection)"
                        .into(),
                });
            }
            if no_metadata {
                return Err(ProtoError::InvalidValue {
                    what: "rows metadata flags",
                    detail: "METADATA_CHANGED with NO_METADATA (the new columns must be sent)"
                        .into(),
                });
            }
            let id = r.read_short_bytes("new result metadata id")?;
            Some(Box::new(body.slice_ref(id)))
        } else {
            None
        };
        let columns = if no_metadata {
            Vec::new()
        } else {
            let global = if flags & rows_flags::GLOBAL_TABLES_SPEC != 0 {
                Some((
                    r.read_string("global keyspace")?,
                    r.read_string("global table")?,
                ))
            } else {
                None
            };
            // A column spec takes at least 4 bytes (name and type id).
            if columns_count.saturating_mul(4) > r.remaining() {
                return Err(ProtoError::Truncated {
                    what: "column specs",
                    needed: columns_count.saturating_mul(4),
                    available: r.remaining(),
                });
            }
            read_col_specs(r, global, columns_count)?
        };
        Ok(Self {
            columns_count,
            paging_state,
            columns,
            no_metadata,
            new_metadata_id,
        })
    }

    /// Writes `<metadata>`, with a global table spec when all columns share one table.
    ///
    /// Without metadata but with columns, the flag is set all the same (nothing follows it
    /// then): Cassandra keeps it from the statement's own metadata, whose columns share one
    /// table for any SELECT, and leaves it off when there are no columns (an INSERT's
    /// PREPARED). So what doppio-proto writes (the stub's answers) is what Cassandra sends,
    /// byte for byte (`captured_fixtures.rs` and `captured_v5_fixtures.rs` hold both).
    pub fn encode(&self, buf: &mut impl BufMut) -> Result<()> {
        let global = if self.no_metadata {
            self.columns_count > 0
        } else {
            common_table(&self.columns).is_some()
        };
        let mut flags = 0;
        if global {
            flags |= rows_flags::GLOBAL_TABLES_SPEC;
        }
        if self.paging_state.is_some() {
            flags |= rows_flags::HAS_MORE_PAGES;
        }
        if self.no_metadata {
            flags |= rows_flags::NO_METADATA;
        }
        if self.new_metadata_id.is_some() {
            flags |= rows_flags::METADATA_CHANGED;
        }
        buf.put_i32(flags);
        let count = if self.no_metadata {
            self.columns_count
        } else {
            self.columns.len()
        };
        buf.put_i32(count_i32(count, "columns count")?);
        if let Some(p) = &self.paging_state {
            wire::put_bytes(buf, Some(p), "paging state")?;
        }
        if let Some(id) = &self.new_metadata_id {
            wire::put_short_bytes(buf, id, "new result metadata id")?;
        }
        if !self.no_metadata {
            write_col_specs(buf, &self.columns, global)?;
        }
        Ok(())
    }
}

impl PreparedMetadata {
    /// Reads the bind-marker `<metadata>` of a Prepared result (spec section 4.2.5.4).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        let flags = r.read_int("prepared metadata flags")?;
        let columns_count = read_count(r, "bind marker count", 4)?;
        let pk_count = read_count(r, "partition key count", 2)?;
        let mut pk_indexes = Vec::with_capacity(pk_count);
        for _ in 0..pk_count {
            let i = r.read_short("partition key index")?;
            if i as usize >= columns_count {
                return Err(ProtoError::InvalidValue {
                    what: "partition key index",
                    detail: format!("{i} is past the {columns_count} bind markers"),
                });
            }
            pk_indexes.push(i);
        }
        let global = if flags & rows_flags::GLOBAL_TABLES_SPEC != 0 {
            Some((
                r.read_string("global keyspace")?,
                r.read_string("global table")?,
            ))
        } else {
            None
        };
        let columns = read_col_specs(r, global, columns_count)?;
        Ok(Self {
            pk_indexes,
            columns,
            extension_flags: flags & !rows_flags::GLOBAL_TABLES_SPEC,
        })
    }

    /// Writes the bind-marker `<metadata>`.
    pub fn encode(&self, buf: &mut impl BufMut) -> Result<()> {
        let global = common_table(&self.columns).is_some();
        let spec_flags = if global {
            rows_flags::GLOBAL_TABLES_SPEC
        } else {
            0
        };
        buf.put_i32(spec_flags | (self.extension_flags & !rows_flags::GLOBAL_TABLES_SPEC));
        buf.put_i32(count_i32(self.columns.len(), "bind marker count")?);
        buf.put_i32(count_i32(self.pk_indexes.len(), "partition key count")?);
        for i in &self.pk_indexes {
            buf.put_u16(*i);
        }
        write_col_specs(buf, &self.columns, global)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_metadata_reads_alike_with_or_without_the_global_flag_and_writes_it_as_cassandra() {
        let decode = |flags: i32| {
            let mut bytes = Vec::new();
            bytes.extend_from_slice(&flags.to_be_bytes());
            bytes.extend_from_slice(&2i32.to_be_bytes());
            let body = Bytes::from(bytes);
            RowsMetadata::decode(&mut Reader::new(&body), &body, false).expect("decodes")
        };
        let bare = decode(rows_flags::NO_METADATA);
        assert_eq!(
            bare,
            decode(rows_flags::NO_METADATA | rows_flags::GLOBAL_TABLES_SPEC)
        );
        assert!(bare.no_metadata && bare.columns.is_empty());
        assert_eq!(bare.columns_count, 2);
        let mut out = Vec::new();
        bare.encode(&mut out).expect("encodes");
        assert_eq!(out[..4], 5i32.to_be_bytes(), "global | no_metadata");
        // No columns (an INSERT's PREPARED): no global flag.
        let mut out = Vec::new();
        RowsMetadata {
            no_metadata: true,
            ..RowsMetadata::default()
        }
        .encode(&mut out)
        .expect("encodes");
        assert_eq!(out[..4], 4i32.to_be_bytes(), "no_metadata alone");
    }
}
