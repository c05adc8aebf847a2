//! What can be wrong with a cassandra-stress profile: each a variant that names the file, and
//! the key, column, query or line at fault, found before anything connects.

use crate::workload::dist::DistError;

/// Why a profile could not be read or converted.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("cannot read profile {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A comma-separated list of profiles has an empty entry (`a.yaml,`).
    #[error("profiles `{list}`: an empty name in the comma-separated list")]
    EmptyPath {
        /// The list as given.
        list: String,
    },
    /// Two profiles of one run have the same specname, so their operations' names clash.
    #[error(
        "profiles {first} and {second} are both specname {specname}: give each profile of a \
         run a specname of its own"
    )]
    SameSpecname {
        /// The first file.
        first: String,
        /// The second file.
        second: String,
        /// Their specname.
        specname: String,
    },
    /// The YAML is malformed, or a top-level key is unknown or of the wrong kind.
    #[error("profile {origin}: {message}")]
    Yaml {
        /// The file.
        origin: String,
        /// The parser's message, with the line and column.
        message: String,
    },
    /// A key cassandra-stress does not know, inside `columnspec`, `insert` or a query.
    #[error("profile {origin}, line {line}: unknown key `{key}` in {place} (known: {known})")]
    UnknownKey {
        /// The file.
        origin: String,
        /// The line of the key (1-based; 0 when not found in the text).
        line: usize,
        /// The key.
        key: String,
        /// Where (`columnspec entry 2`, `insert`, `query simple1`).
        place: String,
        /// The keys accepted there.
        known: &'static str,
    },
    /// A required key is missing.
    #[error("profile {origin}: {key} is required{why}")]
    Missing {
        /// The file.
        origin: String,
        /// The key.
        key: &'static str,
        /// Why it is needed here (may be empty).
        why: String,
    },
    /// A distribution (or ratio) does not parse.
    #[error("profile {origin}, line {line}: {key}: {error}")]
    Distribution {
        /// The file.
        origin: String,
        /// The line of the value (0 when not found in the text).
        line: usize,
        /// The key holding it (`columnspec name.size`, `insert.partitions`).
        key: String,
        /// What is wrong.
        error: DistError,
    },
    /// A value is not one the key takes.
    #[error("profile {origin}, line {line}: {key}: {message}")]
    Value {
        /// The file.
        origin: String,
        /// The line (0 when not found in the text).
        line: usize,
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The table definition could not be read.
    #[error("profile {origin}: table_definition: {message}")]
    Table {
        /// The file.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// A query's bind markers do not match the table's columns or its fields.
    #[error("profile {origin}, line {line}, query {query}: {message}")]
    Query {
        /// The file.
        origin: String,
        /// The line of the query's `cql` (0 when not found in the text).
        line: usize,
        /// The query's name.
        query: String,
        /// What does not match.
        message: String,
    },
    /// A column the conversion cannot generate values for.
    #[error("profile {origin}: column {column} of type {cql_type}: {message}")]
    Column {
        /// The file.
        origin: String,
        /// The column.
        column: String,
        /// Its CQL type.
        cql_type: String,
        /// Why.
        message: String,
    },
}

/// The 1-based line of the first line of `text` that holds `key:` as a YAML key (after
/// indentation and an optional `- `), at or after line `from`; 0 when none does.
pub(crate) fn line_of_key(text: &str, key: &str, from: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, l)| {
            let t = l.trim_start();
            let t = t.strip_prefix("- ").map_or(t, str::trim_start);
            t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(0, |(n, _)| n + 1)
}
