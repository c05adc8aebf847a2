//! A cassandra-stress user profile as doppio holds it once read: every key typed, every
//! distribution parsed, every default filled in as cassandra-stress fills it.

use crate::workload::dist::{Distribution, Ratio};

/// A user profile.
#[derive(Debug, Clone)]
pub(crate) struct Profile {
    /// The file it came from (or the name given for a text).
    pub(crate) origin: String,
    /// `specname`: its name in reports (default `KEYSPACE.TABLE`).
    pub(crate) specname: String,
    /// `keyspace`.
    pub(crate) keyspace: String,
    /// `keyspace_definition`: the CREATE KEYSPACE statement, when given.
    pub(crate) keyspace_definition: Option<String>,
    /// `table`.
    pub(crate) table: String,
    /// `table_definition`: the CREATE TABLE statement, when given.
    pub(crate) table_definition: Option<String>,
    /// `extra_definitions`: more schema statements, run after the table's.
    pub(crate) extra_definitions: Vec<String>,
    /// `columnspec`, one entry per column named there, in file order.
    pub(crate) columns: Vec<ColumnSpec>,
    /// `insert`.
    pub(crate) insert: InsertSpec,
    /// `queries`, by name (lower case, as cassandra-stress looks them up), in name order.
    pub(crate) queries: Vec<QuerySpec>,
    /// `token_range_queries`, by name, in name order.
    pub(crate) token_range_queries: Vec<TokenRangeSpec>,
}

/// The defaults of a column not named in `columnspec`, or of a key an entry leaves out.
pub(crate) mod defaults {
    /// A value's size (text and blob length, collection element count).
    pub(crate) const SIZE: &str = "UNIFORM(4..8)";
    /// A column's distinct values.
    pub(crate) const POPULATION: &str = "UNIFORM(1..100B)";
    /// A clustering column's values per value of the column before it.
    pub(crate) const CLUSTER: &str = "FIXED(1)";
    /// Partitions per insert batch.
    pub(crate) const PARTITIONS: &str = "FIXED(1)";
    /// The share of a partition's rows an insert writes.
    pub(crate) const SELECT: &str = "FIXED(1)/1";
    /// The share of a row's columns an insert fills.
    pub(crate) const ROW_POPULATION: &str = "FIXED(1)/1";
}

/// One `columnspec` entry.
#[derive(Debug, Clone)]
pub(crate) struct ColumnSpec {
    /// `name`.
    pub(crate) name: String,
    /// `size`: a value's length (text, blob) or element count (collections).
    pub(crate) size: Distribution,
    /// `population`: the distribution of a value's identity, so the count of distinct values.
    pub(crate) population: Distribution,
    /// `cluster`: for a clustering column, its count of values under each value of the
    /// column before it.
    pub(crate) cluster: Distribution,
}

impl ColumnSpec {
    /// A column's spec with every default.
    pub(crate) fn defaults(name: &str) -> Self {
        let d = |s: &str| Distribution::parse(s).unwrap_or_else(|_| unreachable!("{s}"));
        Self {
            name: name.to_owned(),
            size: d(defaults::SIZE),
            population: d(defaults::POPULATION),
            cluster: d(defaults::CLUSTER),
        }
    }
}

/// A BATCH's kind, as `batchtype` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchType {
    /// `LOGGED` (cassandra-stress's default).
    Logged,
    /// `UNLOGGED`.
    Unlogged,
    /// `COUNTER`.
    Counter,
}

/// `insert`.
#[derive(Debug, Clone)]
pub(crate) struct InsertSpec {
    /// `partitions`: partitions per batch.
    pub(crate) partitions: Distribution,
    /// `select`: the share of each partition's rows a batch writes.
    pub(crate) select: Ratio,
    /// `row-population`: the share of each row's columns written.
    pub(crate) row_population: Ratio,
    /// `batchtype`, when given.
    pub(crate) batchtype: Option<BatchType>,
}

/// Where a query's bind values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fields {
    /// `samerow`: every value from one row.
    SameRow,
    /// `multirow` (the default): each value from any row of the partition.
    MultiRow,
}

/// One entry of `queries`.
#[derive(Debug, Clone)]
pub(crate) struct QuerySpec {
    /// Its name (lower case).
    pub(crate) name: String,
    /// `cql`.
    pub(crate) cql: String,
    /// `fields`.
    pub(crate) fields: Fields,
    /// `consistencyLevel`, upper case, when given.
    pub(crate) consistency: Option<String>,
    /// `serialConsistencyLevel`, upper case, when given.
    pub(crate) serial_consistency: Option<String>,
    /// The line of its `cql` key in the file (0: not found).
    pub(crate) line: usize,
}

/// One entry of `token_range_queries`.
#[derive(Debug, Clone)]
pub(crate) struct TokenRangeSpec {
    /// Its name (lower case).
    pub(crate) name: String,
    /// `columns`: the columns to read (`*` or a comma list).
    pub(crate) columns: String,
    /// `page_size` (default 5000).
    pub(crate) page_size: u32,
}
