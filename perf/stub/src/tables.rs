//! The system tables the stub serves, so that drivers connect to it unmodified.
//!
//! Drivers read `system.local`, `system.peers(_v2)` and `system_schema.*` while they connect
//! (topology, schema version, keyspaces and their replication, tables, columns, types). The
//! single stub describes itself as the only node of a one-node cluster: one `system.local`
//! row, no peers, and the keyspaces `system` and `system_schema` (LocalStrategy); a node of
//! a cluster ([`node_tables`]) lists the other nodes in `system.peers` and
//! `system.peers_v2`; an emulated ScyllaDB node also has `system_schema.scylla_keyspaces`
//! (the keyspaces in tablets). Every table lists its columns with the types Cassandra 5.0
//! gives them; a SELECT gets the columns it names (or all of them for `*`), in its order,
//! from the rows of the table (WHERE clauses are not evaluated: drivers read
//! `system.local`, its one row, by key, and the peers whole).
//!
//! Invariant: a SELECT of a known table is answered only if every column it names exists;
//! an unknown column is an INVALID error naming it, as Cassandra would say.

use std::net::SocketAddr;

use doppio_proto::types::ColumnType;
use doppio_proto::value::CqlValue;

/// One column of a system table.
#[derive(Debug, Clone)]
pub struct Column {
    /// Name.
    pub name: &'static str,
    /// Type.
    pub typ: ColumnType,
}

/// A system table: keyspace, name, columns, rows (values in column order; `None` is null).
#[derive(Debug, Clone)]
pub struct Table {
    /// Keyspace.
    pub keyspace: &'static str,
    /// Table name.
    pub name: &'static str,
    /// Columns.
    pub columns: Vec<Column>,
    /// Rows.
    pub rows: Vec<Vec<Option<CqlValue>>>,
}

fn col(name: &'static str, typ: ColumnType) -> Column {
    Column { name, typ }
}

fn text(s: &str) -> Option<CqlValue> {
    Some(CqlValue::Text(s.to_owned()))
}

fn set_of_text() -> ColumnType {
    ColumnType::Set(Box::new(ColumnType::Varchar))
}

fn list_of_text() -> ColumnType {
    ColumnType::List(Box::new(ColumnType::Varchar))
}

fn map_text_text() -> ColumnType {
    ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(ColumnType::Varchar))
}

/// Lists `keyspace` in `system_schema.keyspaces` of `tables` with `replication` (its map
/// without the class) under strategy `class`.
fn add_keyspace(tables: &mut [Table], keyspace: &str, class: &str, replication: &[(&str, String)]) {
    if let Some(t) = schema_table(tables, "keyspaces") {
        let class = (
            CqlValue::Text("class".into()),
            CqlValue::Text(format!("org.apache.cassandra.locator.{class}")),
        );
        let options = replication
            .iter()
            .map(|(k, v)| (CqlValue::Text((*k).into()), CqlValue::Text(v.clone())));
        t.rows.push(vec![
            text(keyspace),
            Some(CqlValue::Boolean(true)),
            Some(CqlValue::Map(
                std::iter::once(class).chain(options).collect(),
            )),
        ]);
    }
}

/// Lists `keyspace` in `system_schema.keyspaces` of `tables` with SimpleStrategy and
/// `replication_factor` (1 for the single stub, which owns the whole ring).
pub fn add_simple_keyspace(tables: &mut [Table], keyspace: &str, replication_factor: u8) {
    let rf = [("replication_factor", replication_factor.to_string())];
    add_keyspace(tables, keyspace, "SimpleStrategy", &rf);
}

/// Lists `keyspace` in `system_schema.keyspaces` of `tables` with NetworkTopologyStrategy
/// and `replication`: each data center's name and replication factor.
pub fn add_network_topology_keyspace(
    tables: &mut [Table],
    keyspace: &str,
    replication: &[(String, u8)],
) {
    let rf: Vec<(&str, String)> = replication
        .iter()
        .map(|(dc, rf)| (dc.as_str(), rf.to_string()))
        .collect();
    add_keyspace(tables, keyspace, "NetworkTopologyStrategy", &rf);
}

/// Adds ScyllaDB's `system_schema.scylla_keyspaces` to `tables`, empty: the keyspaces laid
/// out in tablets are listed there (a node without tablets has the table with no such row).
pub fn add_scylla_keyspaces(tables: &mut Vec<Table>) {
    tables.push(empty(
        "scylla_keyspaces",
        vec![
            col("keyspace_name", ColumnType::Varchar),
            col("initial_tablets", ColumnType::Int),
            col("storage_options", map_text_text()),
            col("storage_type", ColumnType::Varchar),
        ],
    ));
}

/// Table `name` of `system_schema` among `tables`, if they have it.
fn schema_table<'a>(tables: &'a mut [Table], name: &str) -> Option<&'a mut Table> {
    tables
        .iter_mut()
        .find(|t| t.keyspace == "system_schema" && t.name == name)
}

/// A table of `system_schema` with `columns` and no row.
fn empty(name: &'static str, columns: Vec<Column>) -> Table {
    Table {
        keyspace: "system_schema",
        name,
        columns,
        rows: Vec::new(),
    }
}

/// Lists `keyspace` as ScyllaDB lists a keyspace in tablets: NetworkTopologyStrategy with
/// `replication_factor` replicas in the stub's data center, and a row of
/// `system_schema.scylla_keyspaces` (added by [`add_scylla_keyspaces`]) whose
/// `initial_tablets` is `initial_tablets`.
pub fn add_tablet_keyspace(
    tables: &mut [Table],
    keyspace: &str,
    replication_factor: u8,
    initial_tablets: u32,
) {
    let rf = [(DATA_CENTER, replication_factor.to_string())];
    add_keyspace(tables, keyspace, "NetworkTopologyStrategy", &rf);
    if let Some(t) = schema_table(tables, "scylla_keyspaces") {
        t.rows.push(vec![
            text(keyspace),
            Some(CqlValue::Int(
                i32::try_from(initial_tablets).unwrap_or(i32::MAX),
            )),
            Some(CqlValue::Map(Vec::new())),
            text("LOCAL"),
        ]);
    }
}

/// The stub's fixed identity: host id and schema version (any constant UUIDs do).
pub const HOST_ID: [u8; 16] = *b"doppio-stub-host";
/// The schema version every node reports.
pub const SCHEMA_VERSION: [u8; 16] = *b"doppio-stub-schm";
/// The Cassandra release every node says it runs.
const RELEASE_VERSION: &str = "5.0.6";

/// One node as the system tables describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
    /// Where clients reach it (its native-transport address and port).
    pub addr: SocketAddr,
    /// Its host id.
    pub host_id: [u8; 16],
    /// The tokens it owns.
    pub tokens: Vec<i64>,
    /// Its data center.
    pub data_center: String,
    /// Its rack.
    pub rack: String,
}

/// The data center every node of the stub is in.
pub const DATA_CENTER: &str = "datacenter1";
/// The rack every node of the stub is in.
pub const RACK: &str = "rack1";

fn tokens_value(tokens: &[i64]) -> Option<CqlValue> {
    Some(CqlValue::Set(
        tokens
            .iter()
            .map(|t| CqlValue::Text(t.to_string()))
            .collect(),
    ))
}

/// The system tables of a single stub listening on `addr`: one node owning the whole ring.
pub fn system_tables(addr: SocketAddr) -> Vec<Table> {
    let local = NodeRow {
        addr,
        host_id: HOST_ID,
        // One node owns the whole ring.
        tokens: vec![0],
        data_center: DATA_CENTER.to_owned(),
        rack: RACK.to_owned(),
    };
    node_tables(&local, &[])
}

/// The system tables of node `local` of a cluster whose other nodes are `others`.
pub fn node_tables(local: &NodeRow, others: &[NodeRow]) -> Vec<Table> {
    let addr = local.addr;
    let (local_dc, local_rack) = (local.data_center.as_str(), local.rack.as_str());
    let ip = addr.ip();
    let local = Table {
        keyspace: "system",
        name: "local",
        columns: vec![
            col("key", ColumnType::Varchar),
            col("bootstrapped", ColumnType::Varchar),
            col("broadcast_address", ColumnType::Inet),
            col("broadcast_port", ColumnType::Int),
            col("cluster_name", ColumnType::Varchar),
            col("cql_version", ColumnType::Varchar),
            col("data_center", ColumnType::Varchar),
            col("host_id", ColumnType::Uuid),
            col("listen_address", ColumnType::Inet),
            col("listen_port", ColumnType::Int),
            col("native_protocol_version", ColumnType::Varchar),
            col("partitioner", ColumnType::Varchar),
            col("rack", ColumnType::Varchar),
            col("release_version", ColumnType::Varchar),
            col("rpc_address", ColumnType::Inet),
            col("rpc_port", ColumnType::Int),
            col("schema_version", ColumnType::Uuid),
            col("tokens", set_of_text()),
        ],
        rows: vec![vec![
            text("local"),
            text("COMPLETED"),
            Some(CqlValue::Inet(ip)),
            Some(CqlValue::Int(7000)),
            text("doppio-stub"),
            text("3.4.7"),
            text(local_dc),
            Some(CqlValue::Uuid(local.host_id)),
            Some(CqlValue::Inet(ip)),
            Some(CqlValue::Int(7000)),
            text("5"),
            text("org.apache.cassandra.dht.Murmur3Partitioner"),
            text(local_rack),
            text(RELEASE_VERSION),
            Some(CqlValue::Inet(ip)),
            Some(CqlValue::Int(i32::from(addr.port()))),
            Some(CqlValue::Uuid(SCHEMA_VERSION)),
            tokens_value(&local.tokens),
        ]],
    };
    let peers = Table {
        keyspace: "system",
        name: "peers",
        columns: vec![
            col("peer", ColumnType::Inet),
            col("data_center", ColumnType::Varchar),
            col("host_id", ColumnType::Uuid),
            col("preferred_ip", ColumnType::Inet),
            col("rack", ColumnType::Varchar),
            col("release_version", ColumnType::Varchar),
            col("rpc_address", ColumnType::Inet),
            col("schema_version", ColumnType::Uuid),
            col("tokens", set_of_text()),
        ],
        rows: others
            .iter()
            .map(|p| {
                vec![
                    Some(CqlValue::Inet(p.addr.ip())),
                    text(&p.data_center),
                    Some(CqlValue::Uuid(p.host_id)),
                    None,
                    text(&p.rack),
                    text(RELEASE_VERSION),
                    Some(CqlValue::Inet(p.addr.ip())),
                    Some(CqlValue::Uuid(SCHEMA_VERSION)),
                    tokens_value(&p.tokens),
                ]
            })
            .collect(),
    };
    let peers_v2 = Table {
        keyspace: "system",
        name: "peers_v2",
        columns: vec![
            col("peer", ColumnType::Inet),
            col("peer_port", ColumnType::Int),
            col("data_center", ColumnType::Varchar),
            col("host_id", ColumnType::Uuid),
            col("native_address", ColumnType::Inet),
            col("native_port", ColumnType::Int),
            col("preferred_ip", ColumnType::Inet),
            col("preferred_port", ColumnType::Int),
            col("rack", ColumnType::Varchar),
            col("release_version", ColumnType::Varchar),
            col("schema_version", ColumnType::Uuid),
            col("tokens", set_of_text()),
        ],
        rows: others
            .iter()
            .map(|p| {
                vec![
                    Some(CqlValue::Inet(p.addr.ip())),
                    Some(CqlValue::Int(7000)),
                    text(&p.data_center),
                    Some(CqlValue::Uuid(p.host_id)),
                    Some(CqlValue::Inet(p.addr.ip())),
                    Some(CqlValue::Int(i32::from(p.addr.port()))),
                    None,
                    None,
                    text(&p.rack),
                    text(RELEASE_VERSION),
                    Some(CqlValue::Uuid(SCHEMA_VERSION)),
                    tokens_value(&p.tokens),
                ]
            })
            .collect(),
    };
    let local_strategy = || {
        Some(CqlValue::Map(vec![(
            CqlValue::Text("class".into()),
            CqlValue::Text("org.apache.cassandra.locator.LocalStrategy".into()),
        )]))
    };
    let keyspaces = Table {
        keyspace: "system_schema",
        name: "keyspaces",
        columns: vec![
            col("keyspace_name", ColumnType::Varchar),
            col("durable_writes", ColumnType::Boolean),
            col("replication", map_text_text()),
        ],
        rows: vec![
            vec![
                text("system"),
                Some(CqlValue::Boolean(true)),
                local_strategy(),
            ],
            vec![
                text("system_schema"),
                Some(CqlValue::Boolean(true)),
                local_strategy(),
            ],
        ],
    };
    vec![
        local,
        peers,
        peers_v2,
        keyspaces,
        empty(
            "tables",
            vec![
                col("keyspace_name", ColumnType::Varchar),
                col("table_name", ColumnType::Varchar),
                col("id", ColumnType::Uuid),
                col("comment", ColumnType::Varchar),
            ],
        ),
        empty(
            "views",
            vec![
                col("keyspace_name", ColumnType::Varchar),
                col("view_name", ColumnType::Varchar),
                col("base_table_name", ColumnType::Varchar),
                col("id", ColumnType::Uuid),
            ],
        ),
        empty(
            "columns",
            vec![
                col("keyspace_name", ColumnType::Varchar),
                col("table_name", ColumnType::Varchar),
                col("column_name", ColumnType::Varchar),
                col("clustering_order", ColumnType::Varchar),
                col("column_name_bytes", ColumnType::Blob),
                col("kind", ColumnType::Varchar),
                col("position", ColumnType::Int),
                col("type", ColumnType::Varchar),
            ],
        ),
        empty(
            "types",
            vec![
                col("keyspace_name", ColumnType::Varchar),
                col("type_name", ColumnType::Varchar),
                col("field_names", list_of_text()),
                col("field_types", list_of_text()),
            ],
        ),
        empty(
            "functions",
            vec![
                col("keyspace_name", ColumnType::Varchar),
                col("function_name", ColumnType::Varchar),
                col("argument_types", list_of_text()),
                col("argument_names", list_of_text()),
                col("body", ColumnType::Varchar),
                col("language", ColumnType::Varchar),
                col("return_type", ColumnType::Varchar),
                col("called_on_null_input", ColumnType::Boolean),
            ],
        ),
        empty(
            "aggregates",
            vec![
                col("keyspace_name", ColumnType::Varchar),
                col("aggregate_name", ColumnType::Varchar),
                col("argument_types", list_of_text()),
                col("final_func", ColumnType::Varchar),
                col("initcond", ColumnType::Varchar),
                col("return_type", ColumnType::Varchar),
                col("state_func", ColumnType::Varchar),
                col("state_type", ColumnType::Varchar),
            ],
        ),
        empty(
            "indexes",
            vec![
                col("keyspace_name", ColumnType::Varchar),
                col("table_name", ColumnType::Varchar),
                col("index_name", ColumnType::Varchar),
                col("kind", ColumnType::Varchar),
                col("options", map_text_text()),
            ],
        ),
        empty(
            "triggers",
            vec![
                col("keyspace_name", ColumnType::Varchar),
                col("table_name", ColumnType::Varchar),
                col("trigger_name", ColumnType::Varchar),
                col("options", map_text_text()),
            ],
        ),
    ]
}

/// What a SELECT asks for, as far as the stub needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Select<'a> {
    /// The selected column names (`["*"]` for all), as written (unquoted, lower-cased).
    pub columns: Vec<String>,
    /// The keyspace, if the table name is qualified.
    pub keyspace: Option<&'a str>,
    /// The table.
    pub table: &'a str,
}

/// Parses `SELECT cols FROM [ks.]table ...`; `None` for anything else.
pub fn parse_select(cql: &str) -> Option<Select<'_>> {
    let trimmed = cql.trim_start();
    let head = trimmed.get(..6)?;
    if !head.eq_ignore_ascii_case("select") {
        return None;
    }
    let rest = &trimmed[6..];
    let lower = rest.to_ascii_lowercase();
    let from = find_word(&lower, "from")?;
    let columns: Vec<String> = rest[..from]
        .split(',')
        .map(|c| {
            let c = c.trim();
            // `expr AS alias` selects the alias's name.
            let c = match c.to_ascii_lowercase().find(" as ") {
                Some(i) => c[i + 4..].trim().to_owned(),
                None => c.to_owned(),
            };
            c.trim_matches('"').to_ascii_lowercase()
        })
        .filter(|c| !c.is_empty())
        .collect();
    let after = rest[from + 4..].trim_start();
    let end = after
        .find(|ch: char| ch.is_whitespace() || ch == ';')
        .unwrap_or(after.len());
    let name = &after[..end];
    let (keyspace, table) = match name.split_once('.') {
        Some((k, t)) => (Some(k.trim_matches('"')), t.trim_matches('"')),
        None => (None, name.trim_matches('"')),
    };
    if table.is_empty() || columns.is_empty() {
        return None;
    }
    Some(Select {
        columns,
        keyspace,
        table,
    })
}

/// The table an INSERT, UPDATE or DELETE modifies, as `(keyspace if qualified, table)`
/// (`INSERT INTO [ks.]t`, `UPDATE [ks.]t`, `DELETE ... FROM [ks.]t`); `None` for anything
/// else.
pub fn modified_table(cql: &str) -> Option<(Option<&str>, &str)> {
    let trimmed = cql.trim_start();
    let verb_end = trimmed
        .find(|c: char| c.is_whitespace())
        .unwrap_or(trimmed.len());
    let verb = &trimmed[..verb_end];
    let lower = trimmed.to_ascii_lowercase();
    let after = if verb.eq_ignore_ascii_case("update") {
        verb_end
    } else if verb.eq_ignore_ascii_case("insert") {
        find_word(&lower, "into")? + 4
    } else if verb.eq_ignore_ascii_case("delete") {
        find_word(&lower, "from")? + 4
    } else {
        return None;
    };
    let rest = trimmed[after..].trim_start();
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .unwrap_or(rest.len());
    let (keyspace, table) = match rest[..end].split_once('.') {
        Some((k, t)) => (Some(k.trim_matches('"')), t.trim_matches('"')),
        None => (None, rest[..end].trim_matches('"')),
    };
    (!table.is_empty()).then_some((keyspace, table))
}

/// The byte offset of `word` in `text` as a whole word.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let at = from + i;
        let before = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let end = at + word.len();
        let after = end >= bytes.len() || !bytes[end].is_ascii_alphanumeric();
        if before && after {
            return Some(at);
        }
        from = end;
    }
    None
}

/// Finds the system table a SELECT reads (the keyspace defaults to `session_keyspace`).
pub fn find_table<'t>(
    tables: &'t [Table],
    select: &Select<'_>,
    session_keyspace: Option<&str>,
) -> Option<&'t Table> {
    let ks = select.keyspace.or(session_keyspace)?;
    tables
        .iter()
        .find(|t| t.keyspace.eq_ignore_ascii_case(ks) && t.name.eq_ignore_ascii_case(select.table))
}

/// A SELECT names a column its table does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Undefined column name {column} in table {keyspace}.{table}")]
pub struct UndefinedColumn {
    /// The column the SELECT named.
    pub column: String,
    /// The table's keyspace.
    pub keyspace: &'static str,
    /// The table.
    pub table: &'static str,
}

/// The columns of `table` a SELECT names, in its order; the first unknown one is an error
/// (worded as Cassandra words it, which is what the stub answers with).
pub fn project(table: &Table, select: &Select<'_>) -> Result<Vec<usize>, UndefinedColumn> {
    if select.columns.iter().any(|c| c == "*") {
        return Ok((0..table.columns.len()).collect());
    }
    select
        .columns
        .iter()
        .map(|c| {
            table
                .columns
                .iter()
                .position(|tc| tc.name == c)
                .ok_or_else(|| UndefinedColumn {
                    column: c.clone(),
                    keyspace: table.keyspace,
                    table: table.name,
                })
        })
        .collect()
}

/// Whether `cql` is a conditional statement (a lightweight transaction): an INSERT, UPDATE
/// or DELETE with an `IF` clause (`IF NOT EXISTS`, `IF EXISTS`, `IF col = ...`), the
/// statements ScyllaDB marks with its LWT bit. Words are compared case-insensitively;
/// string literals are not looked into.
pub fn is_conditional(cql: &str) -> bool {
    let mut words = cql
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ';')
        .filter(|w| !w.is_empty());
    let modifies = words.next().is_some_and(|w| {
        ["INSERT", "UPDATE", "DELETE"]
            .iter()
            .any(|k| w.eq_ignore_ascii_case(k))
    });
    let mut in_literal = false;
    modifies
        && words.any(|w| {
            // A word inside a string literal is not a keyword.
            if w.matches('\'').count() % 2 == 1 {
                in_literal = !in_literal;
                return false;
            }
            !in_literal && w.eq_ignore_ascii_case("IF")
        })
}

/// Counts the bind markers (`?`) of a statement, outside quoted strings and names.
pub fn count_markers(cql: &str) -> usize {
    let mut n = 0;
    let mut quote: Option<char> = None;
    for ch in cql.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(ch),
            (None, '?') => n += 1,
            _ => {}
        }
    }
    n
}

#[cfg(test)]
#[path = "tables_tests.rs"]
mod tests;
