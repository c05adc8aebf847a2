//! The workload cassandra-stress's legacy commands (`write`, `read`, `mixed`) run, as doppio
//! TOML: keyspace `keyspace1` (or `-schema keyspace=`), table `standard1` with a 10-byte
//! `key blob` primary key and columns `"C0"`..`"C4"` (or `-col n=FIXED(k)`) of
//! `-col size=` bytes (default `FIXED(34)`), keys drawn from the population.

use std::fmt::Write as _;

use super::model::{Kind, StressLine};

/// cassandra-stress's key size, in bytes.
pub(crate) const KEY_SIZE: u32 = 10;
/// Its default value size distribution.
pub(crate) const DEFAULT_SIZE: &str = "FIXED(34)";
/// Its default columns per row.
pub(crate) const DEFAULT_COLUMNS: u32 = 5;
/// Its default keyspace.
pub(crate) const DEFAULT_KEYSPACE: &str = "keyspace1";
/// The seed of the key's bytes; a column's value is seeded `VALUE_SEED + column`.
const KEY_SEED: u32 = 1;
const VALUE_SEED: u32 = 100;
const SIZE_SEED: u32 = 200;

/// A TOML basic string of `s` (ASCII: only `"` and `\` need escaping).
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The argument generating column `c`'s value.
fn value_arg(size: &str, c: u32) -> String {
    let len = match size
        .strip_prefix("FIXED(")
        .and_then(|s| s.strip_suffix(')'))
    {
        Some(n) if n.chars().all(|ch| ch.is_ascii_digit()) => n.to_owned(),
        _ => format!("dist('{size}', hash(pk, {}))", SIZE_SEED + c),
    };
    format!("blob({len}, pk, {})", VALUE_SEED + c)
}

/// The workload's TOML for `line` (a legacy command; `population` its key distribution,
/// defaults resolved by the caller).
pub(crate) fn toml(line: &StressLine, population: &str) -> String {
    let ks = line
        .groups
        .schema
        .keyspace
        .as_deref()
        .unwrap_or(DEFAULT_KEYSPACE);
    let factor = line.groups.schema.factor.unwrap_or(1);
    let n = line.groups.columns.count.unwrap_or(DEFAULT_COLUMNS);
    let size = line.groups.columns.size.as_deref().unwrap_or(DEFAULT_SIZE);
    let cols: Vec<String> = (0..n).map(|c| format!("\"C{c}\"")).collect();
    let kind = &line.command.kind;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# cassandra-stress {}: {ks}.standard1 (bench/STRESS.md)",
        kind.name()
    );
    let _ = writeln!(t, "name = {}", quoted(&format!("stress-{}", kind.name())));
    let _ = writeln!(
        t,
        "description = {}\n",
        quoted(&format!(
            "cassandra-stress {} on {ks}.standard1",
            kind.name()
        ))
    );
    let keyspace = format!(
        "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', \
         'replication_factor': {factor}}}"
    );
    let table = format!(
        "CREATE TABLE IF NOT EXISTS {ks}.standard1 (key blob PRIMARY KEY, {})",
        cols.iter()
            .map(|c| format!("{c} blob"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        t,
        "[schema]\nstatements = [\n    {},\n    {},\n]\n",
        quoted(&keyspace),
        quoted(&table)
    );
    let _ = writeln!(
        t,
        "[vars]\n# The partition key's number, drawn from the population (-pop).\npk = {}\n",
        quoted(&format!("dist('{population}', i)"))
    );
    let key_arg = format!("blob({KEY_SIZE}, pk, {KEY_SEED})");
    let (write, read) = match kind {
        Kind::Write => (1.0, 0.0),
        Kind::Read => (0.0, 1.0),
        Kind::Mixed { write, read } => (*write, *read),
        Kind::User { .. } => (0.0, 0.0),
    };
    if write > 0.0 {
        let insert = format!(
            "INSERT INTO {ks}.standard1 (key, {}) VALUES (?{})",
            cols.join(", "),
            ", ?".repeat(cols.len())
        );
        let args: Vec<String> = std::iter::once(key_arg.clone())
            .chain((0..n).map(|c| value_arg(size, c)))
            .map(|a| quoted(&a))
            .collect();
        let _ = writeln!(
            t,
            "[[run]]\nname = \"write\"\nweight = {}\nstatement = {}\nidempotent = true\n\
             args = [{}]\n",
            quoted(&write.to_string()),
            quoted(&insert),
            args.join(", ")
        );
    }
    if read > 0.0 {
        let select = format!("SELECT * FROM {ks}.standard1 WHERE key = ?");
        let _ = writeln!(
            t,
            "[[run]]\nname = \"read\"\nweight = {}\nstatement = {}\nidempotent = true\nargs = [{}]",
            quoted(&read.to_string()),
            quoted(&select),
            quoted(&key_arg)
        );
    }
    t
}
