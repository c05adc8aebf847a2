//! A profile turned into a doppio TOML workload that a user can read and edit: its schema
//! qualified with the keyspace, one `[[run]]` for the insert and one per query (weights
//! `ops_NAME`, cassandra-stress's `ops(...)`), and generators that give every column the
//! value sizes and distinct-value counts of its `columnspec`. How each key becomes TOML, and
//! where doppio's reading differs from cassandra-stress's, is in bench/PROFILES.md.
//!
//! The model: an operation visits partition `p = dist(population, x)`; partition `p` has
//! `n_d = dist(CLUSTER_d, hash(p, d))` values of clustering column `d` under each value of
//! the one before, so `rows = n_1 * ... * n_m` rows, row `r` being the mixed-radix digits of
//! `r`; a column's value identity is drawn from its `population` with a key made of `p` (and
//! the row's digit, or the row, for clustering and regular columns), and its value (text
//! length, collection size) from that identity: a function of the identity alone, the same
//! in the insert and in every query.

use std::fmt::Write as _;

use super::cql::{marker_columns, parse_table, qualify, Column, ColumnKind, Table};
use super::error::ProfileError;
use super::model::{BatchType, ColumnSpec, Fields, Profile};
use crate::workload::dist::Shape as DistShape;

/// What the conversion could not carry over, one line each (also written in the TOML).
pub type Notes = Vec<String>;

/// The largest BATCH the conversion writes (the protocol's limit).
const MAX_BATCH: u64 = 65_535;

/// The default of the `population` parameter: the partitions operations visit.
pub const DEFAULT_POPULATION: &str = "UNIFORM(1..1M)";

/// The default count of token ranges a token range query walks.
const DEFAULT_RANGES: u32 = 256;
/// The name of the operation that reads back and checks the insert's rows (`--validate`).
pub const VALIDATE: &str = "validate";

/// The parameter that weighs operation `op` of a converted profile (`ops_insert`,
/// `ops_sensors_insert` for `sensors.insert`): what `ops(op=w)` sets.
pub fn weight_param(op: &str) -> String {
    format!("ops_{}", ident(op))
}

/// The name of operation `op` of a profile converted with `scope` (its specname, beside
/// other profiles): `op`, or `SCOPE.op`.
pub fn op_name(scope: Option<&str>, op: &str) -> String {
    match scope {
        Some(s) => format!("{s}.{op}"),
        None => op.to_owned(),
    }
}

/// The name of the insert of a profile converted with `scope`: `insert`, or `SCOPE.insert`.
pub fn insert_op(scope: Option<&str>) -> String {
    op_name(scope, "insert")
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A CQL name as a generator's var name: letters, digits and `_`.
fn ident(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A spec's distribution as a string literal inside an expression.
fn lit(d: &impl std::fmt::Display) -> String {
    format!("'{d}'")
}

/// A sample of `d` keyed by `x`: the constant itself when `d` has one value (`FIXED(n)`,
/// cassandra-stress's default `cluster`), so that nothing is sampled per request for it.
fn sample(d: &crate::workload::dist::Distribution, x: &str) -> String {
    if d.min == d.max {
        d.min.to_string()
    } else {
        format!("dist({}, {x})", lit(d))
    }
}

/// The generator of a value of `ty` from identity expression `v`, with `size` its length
/// or element count and `salt` the column's own seed.
fn value_of(ty: &str, v: &str, size: &str, salt: u64) -> Result<String, String> {
    let ty = strip_frozen(ty);
    let scalar = |t: &str, v: &str| -> Option<String> {
        Some(match t {
            "text" | "varchar" | "ascii" => format!("text({size}, {v}, {salt})"),
            "blob" => format!("blob({size}, {v}, {salt})"),
            "bigint" | "varint" | "counter" | "timestamp" => v.to_owned(),
            "int" => format!("{v} % 2147483647"),
            "smallint" => format!("{v} % 32767"),
            "tinyint" => format!("{v} % 127"),
            "date" => format!("{v} % 1000000"),
            "time" => format!("{v} % 86400000000000"),
            "boolean" => format!("{v} % 2"),
            "float" | "double" => format!("float({v} % 16777216)"),
            "uuid" | "timeuuid" => format!("uuid({v}, {salt})"),
            _ => return None,
        })
    };
    if let Some(s) = scalar(ty, v) {
        return Ok(s);
    }
    let inner = |prefix: &str| ty.strip_prefix(prefix).and_then(|t| t.strip_suffix('>'));
    // Elements: identity hash(v, j), 8 characters or bytes for text and blob.
    let element = |t: &str, offset: u64| -> Result<String, String> {
        let t = strip_frozen(t);
        let e = format!("hash({v}, j + {offset})");
        let e = match t {
            "text" | "varchar" | "ascii" => format!("text(8, {e}, {salt})"),
            "blob" => format!("blob(8, {e}, {salt})"),
            _ => scalar(t, &e).ok_or_else(|| format!("no generator for elements of type {t}"))?,
        };
        Ok(e)
    };
    if let Some(t) = inner("list<") {
        return Ok(format!("list({size}, {})", element(t, 1)?));
    }
    if let Some(t) = inner("set<") {
        return Ok(format!("set({size}, {})", element(t, 1)?));
    }
    if let Some(kv) = inner("map<") {
        let (k, val) = split_pair(kv).ok_or("a map type without two parts")?;
        return Ok(format!(
            "map({size}, {}, {})",
            element(k, 1)?,
            element(val, 1_000_001)?
        ));
    }
    Err(
        "no generator for this type yet (inet, decimal, duration, tuples, user types and \
         vectors are not converted)"
            .into(),
    )
}

fn strip_frozen(t: &str) -> &str {
    t.strip_prefix("frozen<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(t)
}

/// `K,V` of a map's parameters, split at the comma outside angle brackets.
fn split_pair(kv: &str) -> Option<(&str, &str)> {
    let mut depth = 0;
    for (k, c) in kv.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => return Some((&kv[..k], &kv[k + 1..])),
            _ => {}
        }
    }
    None
}

/// The vars of one operation: its partition, its rows' shape, its row, and each column's
/// identity, named with the operation's prefix.
struct Shape<'a> {
    prefix: String,
    table: &'a Table,
    specs: Vec<ColumnSpec>,
    vars: Vec<(String, String)>,
}

impl<'a> Shape<'a> {
    fn new(prefix: &str, table: &'a Table, profile: &Profile) -> Self {
        let specs = table
            .columns
            .iter()
            .map(|c| {
                profile
                    .columns
                    .iter()
                    .find(|s| s.name == c.name)
                    .cloned()
                    .unwrap_or_else(|| ColumnSpec::defaults(&c.name))
            })
            .collect();
        Self {
            prefix: ident(prefix),
            table,
            specs,
            vars: Vec::new(),
        }
    }

    fn var(&mut self, name: &str, expr: String) -> String {
        let full = format!("{}_{name}", self.prefix);
        self.vars.push((full.clone(), expr));
        full
    }

    fn clustering(&self) -> Vec<(usize, &Column)> {
        self.table
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind == ColumnKind::Clustering)
            .collect()
    }

    /// Declares the partition `p` (from `key`) and the per-level counts and row count;
    /// returns the names of the counts and of the row count.
    fn partition(&mut self, key: String) -> (String, Vec<String>, Option<String>) {
        let p = self.var("p", format!("dist(population, {key})"));
        let mut counts = Vec::new();
        for (d, (n, _)) in self.clustering().into_iter().enumerate() {
            let count = sample(&self.specs[n].cluster, &format!("hash({p}, {})", d + 1));
            counts.push((d, count));
        }
        let counts: Vec<String> = counts
            .into_iter()
            .map(|(d, count)| self.var(&format!("n{}", d + 1), count))
            .collect();
        let rows = (!counts.is_empty()).then(|| self.var("rows", counts.join(" * ")));
        (p, counts, rows)
    }

    /// Declares the clustering digits of row `r`; returns their names.
    fn digits(&mut self, r: &str, counts: &[String], tag: &str) -> Vec<String> {
        let mut out = Vec::new();
        for d in 0..counts.len() {
            let below = &counts[d + 1..];
            let expr = if below.is_empty() {
                format!("{r} % {}", counts[d])
            } else {
                format!("{r} / ({}) % {}", below.join(" * "), counts[d])
            };
            out.push(self.var(&format!("c{}{tag}", d + 1), expr));
        }
        out
    }

    /// The value of column `n` for partition `p`, clustering digits `digits` and row `r`.
    fn value(
        &mut self,
        n: usize,
        p: &str,
        digits: &[String],
        r: Option<&str>,
        tag: &str,
        origin: &str,
    ) -> Result<String, ProfileError> {
        let column = &self.table.columns[n];
        let spec = &self.specs[n];
        let salt = 1_000 + n as u64;
        let base = format!("hash({p}, {salt})");
        // A SEQ population counts: its n-th value, n the partition, the row's digit or the
        // row, so that consecutive rows get consecutive values (a time series' clock).
        let seq = spec.population.shape == DistShape::Seq;
        let digit = || {
            let d = self.table.columns[..n]
                .iter()
                .filter(|c| c.kind == ColumnKind::Clustering)
                .count();
            digits[d].clone()
        };
        let key = match (column.kind, r) {
            (ColumnKind::PartitionKey | ColumnKind::Static, _) if seq => p.to_owned(),
            (ColumnKind::PartitionKey | ColumnKind::Static, _) => base,
            (ColumnKind::Clustering, _) if seq => digit(),
            (ColumnKind::Clustering, _) => format!("hash({}, {base})", digit()),
            (ColumnKind::Regular, Some(r)) if seq => r.to_owned(),
            (ColumnKind::Regular, Some(r)) => format!("hash({r}, {base})"),
            (ColumnKind::Regular, None) if seq => p.to_owned(),
            (ColumnKind::Regular, None) => base,
        };
        let identity = sample(&spec.population, &key);
        let size = sample(&spec.size, &format!("hash(ID, {salt})"));
        let (ty, cname) = (column.cql_type.clone(), column.name.clone());
        let id = self.var(&format!("{}{tag}", ident(&cname)), identity);
        let size = size.replace("ID", &id);
        value_of(&ty, &id, &size, salt).map_err(|message| ProfileError::Column {
            origin: origin.to_owned(),
            column: cname,
            cql_type: ty,
            message,
        })
    }
}

/// One `[[run]]` entry, as TOML.
struct Run {
    name: String,
    comment: Vec<String>,
    batch: Option<(&'static str, u64)>,
    statement: String,
    args: Vec<String>,
    /// A read of the row the run named here wrote at the iteration given (`validate`).
    validates: Option<(&'static str, String)>,
    /// Its weight unless `-P` says otherwise: 1 for an insert, 0 for the rest.
    weight: u8,
}

/// One profile converted, before it is written (alone, or beside others).
struct Part {
    schema: Vec<String>,
    vars: Vec<(String, String)>,
    runs: Vec<Run>,
    notes: Notes,
    /// It has token range queries (which need the `ranges` parameter).
    ranges: bool,
}

/// The profile as a TOML workload, and what it could not carry over.
pub fn to_toml(profile: &Profile) -> Result<(String, Notes), ProfileError> {
    to_toml_all(std::slice::from_ref(profile))
}

/// Several profiles as one TOML workload (cassandra-stress's `profile=a.yaml,b.yaml`): each
/// profile's operations named `SPECNAME.OP` (weights `ops_SPECNAME_OP`, every insert 1),
/// its vars prefixed likewise, the schemas one after another; `population` and `ranges`
/// are shared, as cassandra-stress's `-pop` is. One profile converts as [`to_toml`] does,
/// its operations unprefixed.
pub fn to_toml_all(profiles: &[Profile]) -> Result<(String, Notes), ProfileError> {
    let scoped = profiles.len() > 1;
    let mut parts = Vec::with_capacity(profiles.len());
    for (k, p) in profiles.iter().enumerate() {
        if let Some(other) = profiles[..k]
            .iter()
            .find(|o| ident(&o.specname) == ident(&p.specname))
        {
            return Err(ProfileError::SameSpecname {
                first: other.origin.clone(),
                second: p.origin.clone(),
                specname: p.specname.clone(),
            });
        }
        let mut part = convert(p, scoped.then_some(p.specname.as_str()))?;
        if scoped {
            for n in &mut part.notes {
                *n = format!("{}: {n}", p.specname);
            }
        }
        parts.push(part);
    }
    let mut schema = Vec::new();
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut runs = Vec::new();
    let mut notes = Vec::new();
    let mut ranges = false;
    for part in parts {
        // Profiles of one keyspace each define it: once is enough.
        for statement in part.schema {
            if !schema.contains(&statement) {
                schema.push(statement);
            }
        }
        for v in part.vars {
            // The token ring's vars are the same for every profile.
            if !vars.iter().any(|(name, _)| *name == v.0) {
                vars.push(v);
            }
        }
        runs.extend(part.runs);
        notes.extend(part.notes);
        ranges |= part.ranges;
    }
    let toml = write(profiles, &schema, &vars, &runs, &notes, ranges);
    Ok((toml, notes))
}

/// One profile converted; with a `scope` (its specname, beside other profiles), its
/// operations are `SCOPE.OP` and its vars `SCOPE_OP_...`.
fn convert(profile: &Profile, scope: Option<&str>) -> Result<Part, ProfileError> {
    let op = |name: &str| op_name(scope, name);
    let origin = profile.origin.as_str();
    let Some(definition) = &profile.table_definition else {
        return Err(ProfileError::Missing {
            origin: origin.to_owned(),
            key: "table_definition",
            why: " to convert: doppio reads the table's columns from it, not from the node".into(),
        });
    };
    let table = parse_table(definition).map_err(|message| ProfileError::Table {
        origin: origin.to_owned(),
        message,
    })?;
    if !table.name.eq_ignore_ascii_case(&profile.table) {
        return Err(ProfileError::Table {
            origin: origin.to_owned(),
            message: format!(
                "it creates table {}, but `table` is {}",
                table.name, profile.table
            ),
        });
    }
    for spec in &profile.columns {
        if table.column(&spec.name).is_none() {
            return Err(ProfileError::Table {
                origin: origin.to_owned(),
                message: format!(
                    "columnspec names {}, which is not a column of table {}",
                    spec.name, table.name
                ),
            });
        }
    }
    let ks = &profile.keyspace;
    let mut notes: Notes = Vec::new();
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut runs: Vec<Run> = Vec::new();

    // The insert.
    let insert = &profile.insert;
    let fixed = |d: &crate::workload::dist::Distribution| d.min == d.max;
    let per_batch = insert.partitions.mean().round().max(1.0) as u64;
    if !fixed(&insert.partitions) {
        notes.push(format!(
            "insert.partitions {}: every batch holds {per_batch} partitions (its mean)",
            insert.partitions
        ));
    }
    let mut shape = Shape::new(&insert_op(scope), &table, profile);
    let mean_rows: f64 = shape
        .clustering()
        .iter()
        .map(|&(n, _)| shape.specs[n].cluster.mean().max(1.0))
        .product();
    let rows_per = (insert.select.mean() * mean_rows).round().max(1.0) as u64;
    let variable_rows = shape
        .clustering()
        .iter()
        .any(|&(n, _)| !fixed(&shape.specs[n].cluster));
    if !fixed(&insert.select.dist) || variable_rows {
        notes.push(format!(
            "insert.select {} over {mean_rows:.1} rows per partition on average: every batch \
             writes {rows_per} consecutive rows of each partition (from a random first row, \
             wrapping; a smaller partition has some written twice)",
            insert.select.dist
        ));
    }
    if insert.row_population.dist.min != insert.row_population.dist.max
        || insert.row_population.mean() < 1.0
    {
        notes.push(format!(
            "insert.row-population {}/{} is not applied: every column is written",
            insert.row_population.dist, insert.row_population.divisor
        ));
    }
    let mut k = per_batch.saturating_mul(rows_per);
    if k > MAX_BATCH {
        notes.push(format!(
            "a batch of {k} rows is cut to {MAX_BATCH} (the protocol's limit)"
        ));
        k = MAX_BATCH;
    }
    let rows_per = rows_per.min(k);
    let counter = table.columns.iter().any(|c| c.cql_type == "counter");
    let batch_kind = match insert.batchtype {
        Some(BatchType::Unlogged) => "unlogged",
        Some(BatchType::Counter) => "counter",
        Some(BatchType::Logged) => "logged",
        None if counter => "counter",
        None => "logged",
    };
    let batched = k > 1 || insert.batchtype.is_some();
    let (batch_no, slot) = if batched {
        (
            shape.var("b", format!("i / {k}")),
            if per_batch > 1 {
                format!(" * {per_batch} + i % {k} / {rows_per}")
            } else {
                String::new()
            },
        )
    } else {
        ("i".into(), String::new())
    };
    let (p, counts, rows) = shape.partition(format!("{batch_no}{slot}"));
    let r = rows.as_ref().map(|rows| {
        let step = if rows_per > 1 {
            format!(" + i % {rows_per}")
        } else {
            String::new()
        };
        shape.var("r", format!("(hash({batch_no}{slot}, 1){step}) % {rows}"))
    });
    let digits = match &r {
        Some(r) => shape.digits(r, &counts, ""),
        None => Vec::new(),
    };
    let key_only = table
        .columns
        .iter()
        .all(|c| matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering));
    let mut set = Vec::new();
    let mut set_args = Vec::new();
    // The columns a read-back can compare: every column but those the insert adds to
    // (counters and lists grow each time a row is written again).
    let mut checkable = Vec::new();
    let mut key_names = Vec::new();
    let mut key_args = Vec::new();
    for (n, c) in table.columns.iter().enumerate() {
        let v = shape.value(n, &p, &digits, r.as_deref(), "", origin)?;
        let name = cql_name(&c.name);
        match c.kind {
            ColumnKind::PartitionKey | ColumnKind::Clustering => {
                checkable.push(name.clone());
                key_names.push(name);
                key_args.push(v);
            }
            _ => {
                let t = strip_frozen(&c.cql_type);
                let adds = c.cql_type == "counter"
                    || (!c.cql_type.starts_with("frozen<")
                        && (t.starts_with("list<") || t.starts_with("set<")));
                // A set takes the same elements again; a counter or a list grows.
                if !adds || t.starts_with("set<") {
                    checkable.push(name.clone());
                }
                set.push(if adds {
                    format!("{name} = {name} + ?")
                } else {
                    format!("{name} = ?")
                });
                set_args.push(v);
            }
        }
    }
    let target = format!("{ks}.{}", cql_name(&table.name));
    let key_where: Vec<String> = key_names.iter().map(|n| format!("{n} = ?")).collect();
    let validate = Run {
        name: op(VALIDATE),
        comment: vec![
            "validate: reads back row i of the insert's rows (copy i % repeat of its operation \
             i / repeat) and,"
                .into(),
            "with --validate, compares it with what the insert wrote: run it after the insert, \
             for at most as many operations as the insert wrote rows"
                .into(),
        ],
        batch: None,
        statement: format!(
            "SELECT {} FROM {target} WHERE {}",
            checkable.join(", "),
            key_where.join(" AND ")
        ),
        args: key_args.clone(),
        validates: Some(("i", insert_op(scope))),
        weight: 0,
    };
    let (statement, args) = if key_only {
        let marks = vec!["?"; key_names.len()].join(", ");
        (
            format!(
                "INSERT INTO {target} ({}) VALUES ({marks})",
                key_names.join(", ")
            ),
            key_args,
        )
    } else {
        (
            format!(
                "UPDATE {target} SET {} WHERE {}",
                set.join(", "),
                key_where.join(" AND ")
            ),
            set_args.into_iter().chain(key_args).collect(),
        )
    };
    vars.append(&mut shape.vars);
    runs.push(Run {
        name: insert_op(scope),
        comment: vec![format!(
            "insert: {} of {per_batch} partition(s) x {rows_per} row(s)",
            if batched {
                format!("a {batch_kind} batch")
            } else {
                "one statement".into()
            }
        )],
        batch: batched.then_some((batch_kind, k)),
        statement,
        args,
        validates: None,
        weight: 1,
    });

    // The queries.
    for q in &profile.queries {
        let cols = marker_columns(&q.cql).map_err(|message| ProfileError::Query {
            origin: origin.to_owned(),
            line: q.line,
            query: q.name.clone(),
            message,
        })?;
        let mut shape = Shape::new(&op(&q.name), &table, profile);
        let (p, counts, rows) = shape.partition("i".into());
        let mut comment = vec![format!(
            "query {}: fields {}",
            q.name,
            if q.fields == Fields::SameRow {
                "samerow"
            } else {
                "multirow"
            }
        )];
        for (what, level) in [
            ("consistencyLevel", &q.consistency),
            ("serialConsistencyLevel", &q.serial_consistency),
        ] {
            if let Some(level) = level {
                let note = format!(
                    "query {}: {what} {level} is not applied (every statement runs at the \
                     run's --consistency / --serial-consistency)",
                    q.name
                );
                comment.push(note.clone());
                notes.push(note);
            }
        }
        let mut args = Vec::with_capacity(cols.len());
        for (m, c) in cols.iter().enumerate() {
            let Some(n) = table.columns.iter().position(|t| &t.name == c) else {
                return Err(ProfileError::Query {
                    origin: origin.to_owned(),
                    line: q.line,
                    query: q.name.clone(),
                    message: format!(
                        "bind marker {} stands for {c}, which is not a column of table {}",
                        m + 1,
                        table.name
                    ),
                });
            };
            // samerow: one row for every marker; multirow: a row of its own per marker.
            let tag = if q.fields == Fields::SameRow {
                String::new()
            } else {
                format!("_{}", m + 1)
            };
            let seed = if q.fields == Fields::SameRow {
                2
            } else {
                10 + m as u64
            };
            let (r, digits) = match &rows {
                Some(rows) => {
                    let name = format!("r{tag}");
                    let full = format!("{}_{name}", shape.prefix);
                    let r = if shape.vars.iter().any(|(v, _)| *v == full) {
                        full
                    } else {
                        shape.var(&name, format!("hash(i, {seed}) % {rows}"))
                    };
                    let existing: Vec<String> = (1..=counts.len())
                        .map(|d| format!("{}_c{d}{tag}", shape.prefix))
                        .collect();
                    let digits = if shape.vars.iter().any(|(v, _)| Some(v) == existing.first()) {
                        existing
                    } else {
                        shape.digits(&r, &counts, &tag)
                    };
                    (Some(r), digits)
                }
                None => (None, Vec::new()),
            };
            let exists = format!("{}_{}{tag}", shape.prefix, ident(c));
            if shape.vars.iter().any(|(v, _)| *v == exists) {
                // Already declared for this row (a column named twice in a samerow query).
                shape.vars.retain(|(v, _)| *v != exists);
            }
            args.push(shape.value(n, &p, &digits, r.as_deref(), &tag, origin)?);
        }
        vars.append(&mut shape.vars);
        runs.push(Run {
            name: op(&q.name),
            comment,
            batch: None,
            statement: qualify(&q.cql, ks),
            args,
            validates: None,
            weight: 0,
        });
    }

    // Token range queries: the ring cut into `ranges` slices, one per iteration.
    if !profile.token_range_queries.is_empty() {
        vars.push((
            "token_step".into(),
            "9223372036854775807 / ranges * 2".into(),
        ));
        vars.push((
            "token_lo".into(),
            "-9223372036854775807 + i % ranges * token_step".into(),
        ));
    }
    for t in &profile.token_range_queries {
        let keys: Vec<String> = table
            .of(ColumnKind::PartitionKey)
            .map(|c| cql_name(&c.name))
            .collect();
        let token = format!("token({})", keys.join(", "));
        runs.push(Run {
            name: op(&t.name),
            comment: vec![format!(
                "token range query {}: a slice of the ring per request (page_size {} in \
                 cassandra-stress; doppio pages with --page-size)",
                t.name, t.page_size
            )],
            batch: None,
            statement: format!(
                "SELECT {} FROM {target} WHERE {token} > ? AND {token} <= ?",
                t.columns.trim()
            ),
            args: vec!["token_lo".into(), "token_lo + token_step".into()],
            validates: None,
            weight: 0,
        });
    }
    // The read-back of the insert's rows, unless an operation of the profile has its name.
    if runs
        .iter()
        .any(|r| r.name.eq_ignore_ascii_case(&op(VALIDATE)))
    {
        notes.push(format!(
            "no `{VALIDATE}` operation is added: the profile has an operation of that name"
        ));
    } else {
        runs.push(validate);
    }

    // Schema.
    let mut schema = Vec::new();
    if let Some(k) = &profile.keyspace_definition {
        schema.push(qualify(k, ks));
    }
    schema.push(qualify(definition, ks));
    for e in &profile.extra_definitions {
        schema.push(qualify(e, ks));
    }
    let vars = used_vars(vars, &runs);
    Ok(Part {
        schema,
        vars,
        runs,
        notes,
        ranges: !profile.token_range_queries.is_empty(),
    })
}

/// The vars some argument names, directly or through another var (declared before their
/// users, so one pass from the end finds them all): a query that binds no clustering column
/// needs no row.
fn used_vars(vars: Vec<(String, String)>, runs: &[Run]) -> Vec<(String, String)> {
    let names = |text: &str, name: &str| {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| w == name)
    };
    let mut keep = vec![false; vars.len()];
    for k in (0..vars.len()).rev() {
        let name = &vars[k].0;
        keep[k] = runs.iter().flat_map(|r| &r.args).any(|a| names(a, name))
            || vars
                .iter()
                .zip(&keep)
                .skip(k + 1)
                .any(|((_, e), &kept)| kept && names(e, name));
    }
    vars.into_iter()
        .zip(keep)
        .filter_map(|(v, kept)| kept.then_some(v))
        .collect()
}

/// A column's name as CQL needs it: quoted unless lower-case letters, digits and `_`.
fn cql_name(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

fn write(
    profiles: &[Profile],
    schema: &[String],
    vars: &[(String, String)],
    runs: &[Run],
    notes: &Notes,
    ranges: bool,
) -> String {
    let origins: Vec<&str> = profiles.iter().map(|p| p.origin.as_str()).collect();
    let origins = origins.join(", ");
    let first = runs.first().map_or("insert", |r| r.name.as_str());
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Converted by `doppio profile convert` from the cassandra-stress profile{} {origins}.",
        if profiles.len() > 1 { "s" } else { "" }
    );
    let _ = writeln!(
        t,
        "# How each key became what follows, and where doppio reads one differently:\n\
         # bench/PROFILES.md. Run: doppio schema -w THIS.toml; doppio run -w THIS.toml \
         -P {}=1 ...",
        weight_param(first)
    );
    for n in notes {
        let _ = writeln!(t, "# note: {n}");
    }
    let names: Vec<&str> = profiles.iter().map(|p| p.specname.as_str()).collect();
    let _ = writeln!(t, "name = {}", quote(&names.join("+")));
    let _ = writeln!(
        t,
        "description = {}",
        quote(&format!(
            "cassandra-stress profile{} {origins}",
            if profiles.len() > 1 { "s" } else { "" }
        ))
    );
    let _ = writeln!(t, "\n[params]");
    let _ = writeln!(
        t,
        "population = {}   # the partitions operations visit (cassandra-stress -pop dist=...)",
        quote(DEFAULT_POPULATION)
    );
    for r in runs {
        let _ = writeln!(
            t,
            "{} = {}   # the weight of `{}` (cassandra-stress ops({}=...))",
            weight_param(&r.name),
            r.weight,
            r.name,
            r.name
        );
    }
    if ranges {
        let _ = writeln!(
            t,
            "ranges = {DEFAULT_RANGES}   # slices of the token ring the token range queries walk"
        );
    }
    let _ = writeln!(t, "\n[vars]");
    for (name, expr) in vars {
        let _ = writeln!(t, "{name} = {}", quote(expr));
    }
    let _ = writeln!(t, "\n[schema]\nstatements = [");
    for s in schema {
        let _ = writeln!(t, "    {},", quote(s));
    }
    let _ = writeln!(t, "]");
    for r in runs {
        let _ = writeln!(t);
        for c in &r.comment {
            let _ = writeln!(t, "# {c}");
        }
        let _ = writeln!(t, "[[run]]");
        let _ = writeln!(t, "name = {}", quote(&r.name));
        let _ = writeln!(t, "weight = {}", quote(&weight_param(&r.name)));
        if let Some((kind, repeat)) = r.batch {
            let _ = writeln!(t, "batch = {}", quote(kind));
            let _ = writeln!(t, "repeat = {repeat}");
        }
        let _ = writeln!(t, "statement = {}", quote(&r.statement));
        let args: Vec<String> = r.args.iter().map(|a| quote(a)).collect();
        let _ = writeln!(t, "args = [{}]", args.join(", "));
        if let Some((row, writer)) = &r.validates {
            let _ = writeln!(t, "validate = {}", quote(row));
            let _ = writeln!(t, "written_by = {}", quote(writer));
        }
    }
    t
}
