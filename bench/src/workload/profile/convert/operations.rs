//! One profile's operations converted: the insert (a batch of rows, or one statement), each
//! query, the token range queries and the read-back of the insert's rows (`validate`), with
//! their vars, schema and notes.

use super::generator::strip_frozen;
use super::names::{cql_name, ident, insert_op, op_name, VALIDATE};
use super::shape::OperationVars;
use crate::workload::model::MAX_BATCH_STATEMENTS;
use crate::workload::profile::cql::{marker_columns, parse_table, qualify, ColumnKind};
use crate::workload::profile::error::ProfileError;
use crate::workload::profile::model::{BatchType, Fields, Profile};

/// What the conversion could not carry over, one line each (also written in the TOML).
pub(crate) type Notes = Vec<String>;

/// The largest BATCH the conversion writes (the protocol's limit).
const MAX_BATCH: u64 = MAX_BATCH_STATEMENTS as u64;

/// One `[[run]]` entry, as TOML.
pub(super) struct Run {
    pub(super) name: String,
    pub(super) comment: Vec<String>,
    pub(super) batch: Option<(&'static str, u64)>,
    pub(super) statement: String,
    pub(super) args: Vec<String>,
    /// A read of the row the run named here wrote at the iteration given (`validate`).
    pub(super) validates: Option<(&'static str, String)>,
    /// Its weight unless `-P` says otherwise: 1 for an insert, 0 for the rest.
    pub(super) weight: u8,
}

/// One profile converted, before it is written (alone, or beside others).
pub(super) struct ConvertedProfile {
    pub(super) schema: Vec<String>,
    pub(super) vars: Vec<(String, String)>,
    pub(super) runs: Vec<Run>,
    pub(super) notes: Notes,
    /// It has token range queries (which need the `ranges` parameter).
    pub(super) ranges: bool,
}

/// One profile converted; with a `scope` (its specname, beside other profiles), its
/// operations are `SCOPE.OP` and its vars `SCOPE_OP_...`.
pub(super) fn convert(
    profile: &Profile,
    scope: Option<&str>,
) -> Result<ConvertedProfile, ProfileError> {
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
    let mut shape = OperationVars::new(&insert_op(scope), &table, profile);
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
        let mut shape = OperationVars::new(&op(&q.name), &table, profile);
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
    Ok(ConvertedProfile {
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
