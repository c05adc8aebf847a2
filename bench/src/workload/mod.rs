//! Workloads: what the bench sends. A workload is a TOML file (format in
//! `bench/workloads/README.md`, examples beside it) or one of the built-ins (`read`, `write`,
//! `mixed`, `empty`, `timeseries`, `widerow`), compiled once with its parameters into
//! statements whose arguments are generator expressions ([`expr`]).
//!
//! Children: [`expr`], the generator expressions (parsed once, evaluated per iteration
//! without allocation); [`encode`], their values as the CQL bytes of a column type;
//! [`dist`], cassandra-stress's distributions (`UNIFORM(1..10)`, `~EXP(1..1k)`, ...), read and
//! sampled as pure functions, which expressions call as `dist('SPEC', x)`; [`profile`],
//! cassandra-stress user profiles read and converted into a workload's TOML
//! ([`Workload::from_profile`] compiles one in memory).
//!
//! Invariants:
//! - Everything per iteration is a pure function of the iteration number: which statement
//!   runs (by weight) and every argument, so two runs of the same workload send the same
//!   requests.
//! - Parameters are checked when compiling: an unknown `-P` name or a `${name}` with no
//!   value is an error, never an empty string in a statement.

pub mod dist;
pub mod encode;
pub mod expr;
pub mod profile;

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::units;

use self::encode::{compatible, CqlType};
use self::expr::{mix, Expr, ExprError, ParamValue};

/// Why a workload could not be read or compiled.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The file could not be read.
    #[error("cannot read workload {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown fields.
    #[error("workload {name}: {message}")]
    Format {
        /// Workload name or path.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A parameter is unknown, or its value is unusable.
    #[error("workload {name}: parameter {param}: {message}")]
    Param {
        /// Workload.
        name: String,
        /// The parameter.
        param: String,
        /// What is wrong.
        message: String,
    },
    /// An argument expression does not compile.
    #[error("workload {name}, line {line}, statement {statement}: {error}")]
    Expr {
        /// Workload.
        name: String,
        /// The line of the workload's text that holds the expression (1-based).
        line: usize,
        /// The statement's name.
        statement: String,
        /// The error, with its position.
        error: ExprError,
    },
    /// A cassandra-stress profile could not be read or converted.
    #[error(transparent)]
    Profile(#[from] profile::ProfileError),
    /// Arguments do not fit the statement's bind markers.
    #[error("workload {name}, statement {statement}: {message}")]
    Bind {
        /// Workload.
        name: String,
        /// The statement's name.
        statement: String,
        /// What does not fit.
        message: String,
    },
}

/// Compiles a workload's `[vars]`, each with the ones it names (in any order); a name that is
/// also a parameter, or vars that name each other in a circle, are errors.
fn compile_vars(
    name: &str,
    text: &str,
    specs: &BTreeMap<String, toml::Spanned<String>>,
    params: &BTreeMap<String, ParamValue>,
) -> Result<BTreeMap<String, Expr>, WorkloadError> {
    let lookup = |n: &str| params.get(n).cloned();
    let mut done: BTreeMap<String, Expr> = BTreeMap::new();
    for (k, v) in specs {
        if params.contains_key(k) || matches!(k.as_str(), "i" | "j" | "true" | "false" | "null") {
            return Err(WorkloadError::Format {
                name: name.to_owned(),
                message: format!(
                    "[vars] `{k}` (line {}) is already a parameter or a reserved name",
                    line_of(text, v.span().start)
                ),
            });
        }
    }
    // Each pass compiles the vars whose named vars are all compiled.
    while done.len() < specs.len() {
        let before = done.len();
        let mut last = None;
        for (k, (n, v)) in specs.iter().enumerate() {
            if done.contains_key(n) {
                continue;
            }
            let pending = |x: &str| specs.contains_key(x) && !done.contains_key(x);
            let var = |x: &str| done.get(x).cloned();
            let site = mix(0x7a25_0000 ^ k as u64);
            match Expr::compile_with(v.get_ref(), site, &lookup, &var) {
                Ok(e) => {
                    done.insert(n.clone(), e);
                }
                Err(error) => {
                    let waits = specs
                        .keys()
                        .any(|x| pending(x) && x != n && mentions(v.get_ref(), x));
                    if !waits || mentions(v.get_ref(), n) {
                        return Err(WorkloadError::Expr {
                            name: name.to_owned(),
                            line: line_of(text, v.span().start),
                            statement: format!("[vars] {n}"),
                            error,
                        });
                    }
                    last = Some((n.clone(), line_of(text, v.span().start)));
                }
            }
        }
        if done.len() == before {
            let (n, line) = last.unwrap_or_default();
            return Err(WorkloadError::Format {
                name: name.to_owned(),
                message: format!("[vars] `{n}` (line {line}) names itself through other vars"),
            });
        }
    }
    Ok(done)
}

/// Whether `expr` names the identifier `ident` (a whole word).
fn mentions(expr: &str, ident: &str) -> bool {
    expr.match_indices(ident).any(|(at, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before = expr[..at].chars().next_back().is_some_and(word);
        let after = expr[at + ident.len()..].chars().next().is_some_and(word);
        !before && !after
    })
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset)
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The built-in workloads, by name: the TOML files in `bench/workloads/`.
pub const BUILT_INS: &[(&str, &str)] = &[
    ("read", include_str!("../../workloads/read.toml")),
    ("write", include_str!("../../workloads/write.toml")),
    ("mixed", include_str!("../../workloads/mixed.toml")),
    ("empty", include_str!("../../workloads/empty.toml")),
    (
        "timeseries",
        include_str!("../../workloads/timeseries.toml"),
    ),
    ("widerow", include_str!("../../workloads/widerow.toml")),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    params: BTreeMap<String, toml::Value>,
    /// Named sub-expressions, usable in every argument (inlined where named).
    #[serde(default)]
    vars: BTreeMap<String, toml::Spanned<String>>,
    schema: Option<SchemaSpec>,
    load: Option<StatementSpec>,
    #[serde(default)]
    run: Vec<RunSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SchemaSpec {
    statements: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StatementSpec {
    name: Option<String>,
    /// With its place in the file, so that errors found later (at bind time) name the line.
    statement: toml::Spanned<String>,
    /// With their places in the file, so that an error can name the line.
    #[serde(default)]
    args: Vec<toml::Spanned<String>>,
    /// Accepted and ignored in `[load]` (as before `[[run]]` had its own table).
    #[allow(dead_code)]
    weight: Option<toml::Value>,
    count: Option<toml::Value>,
    /// `[[run]]` only: the load iteration whose row this statement reads (`--validate`).
    validate: Option<toml::Spanned<String>>,
    /// Its requests may be applied twice safely (`--retries` may resend one whose answer
    /// was lost).
    #[serde(default)]
    idempotent: bool,
}

/// A `[[run]]` entry: one statement, or `step`s run one after another in one iteration,
/// optionally sent together as one BATCH.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunSpec {
    name: Option<String>,
    statement: Option<toml::Spanned<String>>,
    #[serde(default)]
    args: Vec<toml::Spanned<String>>,
    weight: Option<toml::Value>,
    /// Accepted and ignored, as before sequences (a `[[run]]` runs for the phase's limit).
    #[allow(dead_code)]
    count: Option<toml::Value>,
    validate: Option<toml::Spanned<String>>,
    /// The run statement whose rows `validate` reads (default: the `[load]` statement).
    written_by: Option<toml::Spanned<String>>,
    #[serde(default)]
    idempotent: bool,
    /// `[[run.step]]` tables (or `step = [{...}, ...]`).
    #[serde(default)]
    step: Vec<StepSpec>,
    /// `logged`, `unlogged` or `counter`: the statements go as one BATCH.
    batch: Option<toml::Spanned<String>>,
    /// A batch of `repeat` copies of its statements, copy `k` with iteration `i * repeat + k`:
    /// an integer or an expression of parameters, as `weight`.
    repeat: Option<toml::Spanned<toml::Value>>,
}

/// One step of a `[[run]]` sequence (or one statement of its batch).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepSpec {
    name: Option<String>,
    statement: toml::Spanned<String>,
    #[serde(default)]
    args: Vec<toml::Spanned<String>>,
    validate: Option<toml::Spanned<String>>,
    written_by: Option<toml::Spanned<String>>,
    idempotent: Option<bool>,
}

/// One statement of a workload with its compiled argument generators.
#[derive(Debug, Clone)]
pub struct Statement {
    /// Its name in reports.
    pub name: String,
    /// The CQL text, parameters substituted.
    pub cql: String,
    /// One generator per bind marker.
    pub args: Vec<Expr>,
    /// The line of the workload's text where the statement is (0: not from a file).
    pub line: usize,
    /// A read whose returned row the load phase wrote: the load iteration that wrote it, as
    /// a generator over this statement's `i` (`validate = "hash(i) % rows"`). `--validate`
    /// compares the row with the load's generators at that iteration
    /// ([`crate::engine::validate`]).
    pub validate: Option<Expr>,
    /// With `validate`: the run statement (its index in [`Workload::run`]) that wrote the
    /// row read (`written_by = "NAME"`), its iteration as its own args see it (a batch's
    /// copy `k` of iteration `i`: `i * repeat + k`); `None`: the `[load]` statement.
    pub written_by: Option<usize>,
    /// Marked idempotent to the driver (`idempotent = true`): its requests may be retried
    /// after a lost answer.
    pub idempotent: bool,
    /// A conditional update (`IF NOT EXISTS`, `IF EXISTS`, `IF col = ...`: a lightweight
    /// transaction), whose answers' `[applied]` column is read.
    pub conditional: bool,
}

/// Whether `cql` is a conditional statement: it has the keyword `IF` outside quotes and
/// comments-free text (`CREATE ... IF NOT EXISTS` is a schema statement, never a run one).
pub fn is_conditional(cql: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut word = String::new();
    let mut found = false;
    for c in cql.chars().chain(std::iter::once(' ')) {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                word.clear();
            }
            None if c.is_alphanumeric() || c == '_' => word.push(c),
            None => {
                if word.eq_ignore_ascii_case("if") {
                    found = true;
                }
                word.clear();
            }
        }
    }
    found
}

/// How a BATCH is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    /// Logged (atomic, through the batch log).
    Logged,
    /// Unlogged.
    Unlogged,
    /// Counter updates.
    Counter,
}

impl BatchKind {
    /// Its name in workloads and reports.
    pub fn name(self) -> &'static str {
        match self {
            BatchKind::Logged => "logged",
            BatchKind::Unlogged => "unlogged",
            BatchKind::Counter => "counter",
        }
    }
}

/// How a `[[run]]` entry runs its statements in one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// One statement, one request.
    Single,
    /// Its steps one after another, each its own request; the iteration stops at the first
    /// step that fails.
    Sequence,
    /// Its statements (`repeat` copies of them) as one BATCH request.
    Batch(BatchKind),
}

/// A `[[run]]` entry: which of [`Workload::run`] it runs, how, and where its entries of the
/// per-statement records start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunGroup {
    /// Its name.
    pub name: String,
    /// Its statements: a range of [`Workload::run`] (the load phase: its one statement).
    pub statements: std::ops::Range<usize>,
    /// Single, sequence or batch.
    pub mode: RunMode,
    /// Copies of the statements in a batch (1 otherwise).
    pub repeat: u32,
    /// Its first entry in the per-statement records ([`Workload::entries`]): a single
    /// statement or a batch has one; a sequence one per step, then one for the whole.
    pub entry: usize,
}

impl RunGroup {
    /// The group of a phase of one statement (the load phase).
    pub fn single(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            statements: 0..1,
            mode: RunMode::Single,
            repeat: 1,
            entry: 0,
        }
    }

    /// Its number of entries in the per-statement records.
    pub fn entries(&self) -> usize {
        match self.mode {
            RunMode::Sequence => self.statements.len() + 1,
            RunMode::Single | RunMode::Batch(_) => 1,
        }
    }
}

/// What one entry of the per-statement records stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A statement's requests (a single one, or a step of a sequence).
    Statement,
    /// A batch's requests (one per iteration).
    Batch(BatchKind),
    /// A sequence's iterations: the whole sequence's latency, not requests.
    Sequence,
}

/// One entry of the per-statement records, as reports name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its name (`read`; `order.insert` for a step; `order` for a sequence or a batch).
    pub name: String,
    /// Its CQL (a batch's: its statements joined by `; `; a sequence's: its steps').
    pub cql: String,
    /// Its `[[run]]` entry (index into [`Workload::groups`]).
    pub group: usize,
    /// Statement, batch or sequence.
    pub kind: EntryKind,
    /// Its requests are conditional updates, whose `[applied]` is counted.
    pub conditional: bool,
}

impl Statement {
    /// Its name, with its line when it has one: `read (line 12)`.
    pub fn label(&self) -> String {
        if self.line > 0 {
            format!("{} (line {})", self.name, self.line)
        } else {
            self.name.clone()
        }
    }
}

/// The load phase: `count` iterations of one statement.
#[derive(Debug, Clone)]
pub struct Load {
    /// Iterations.
    pub count: u64,
    /// The statement.
    pub statement: Statement,
}

/// A compiled workload.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Its name.
    pub name: String,
    /// One line on what it does.
    pub description: String,
    /// Every parameter with the value in force, for reports.
    pub params: Vec<(String, String)>,
    /// Schema statements, in order.
    pub schema: Vec<String>,
    /// The load phase, if it has one.
    pub load: Option<Load>,
    /// The run statements, every `[[run]]` entry's in file order (a sequence's steps, a
    /// batch's statements).
    pub run: Vec<Statement>,
    /// The `[[run]]` entries, each over a range of `run`.
    pub groups: Vec<RunGroup>,
    /// The weight of each of `groups`, as the workload gives it.
    weights: Vec<f64>,
    /// Cumulative weights of `groups`, scaled to `u64::MAX`.
    thresholds: Vec<u64>,
}

/// A `-P name=value` override, parsed: integers (with k/M/G suffixes), floats, durations
/// (`10ms`, `2s`, `1m`: as integer milliseconds), or strings. Counts and durations are read
/// as the command line reads them ([`crate::units`]).
pub fn parse_param_value(text: &str) -> ParamValue {
    let t = text.trim();
    if let Ok(v) = t.replace('_', "").parse::<i64>() {
        return ParamValue::Int(v);
    }
    let (sign, magnitude) = match t.strip_prefix('-') {
        Some(m) => (-1, m),
        None => (1, t),
    };
    if let Some(v) = units::count(magnitude)
        .ok()
        .and_then(|n| i64::try_from(n).ok())
    {
        return ParamValue::Int(sign * v);
    }
    if let Ok(v) = t.parse::<f64>() {
        return ParamValue::Float(v);
    }
    if let Ok(d) = units::duration(t) {
        return ParamValue::Int((d.as_secs_f64() * 1e3).round() as i64);
    }
    ParamValue::Str(text.to_owned())
}

fn param_text(v: &ParamValue) -> String {
    match v {
        ParamValue::Int(i) => i.to_string(),
        ParamValue::Float(f) => f.to_string(),
        ParamValue::Str(s) => s.clone(),
    }
}

impl Workload {
    /// A built-in by name, or a TOML file by path, compiled with `overrides`.
    pub fn resolve(
        name_or_path: &str,
        overrides: &[(String, String)],
    ) -> Result<Self, WorkloadError> {
        if let Some((_, text)) = BUILT_INS.iter().find(|(n, _)| *n == name_or_path) {
            return Self::from_toml(name_or_path, text, overrides);
        }
        let text = std::fs::read_to_string(name_or_path).map_err(|source| WorkloadError::Io {
            path: name_or_path.to_owned(),
            source,
        })?;
        Self::from_toml(name_or_path, &text, overrides)
    }

    /// A cassandra-stress user profile (YAML) at `path`, converted to TOML in memory
    /// ([`profile::to_toml`]) and compiled with `overrides`.
    pub fn from_profile(path: &str, overrides: &[(String, String)]) -> Result<Self, WorkloadError> {
        let profiles = profile::Profile::read_all(path)?;
        let (toml, _) = profile::to_toml_all(&profiles)?;
        Self::from_toml(path, &toml, overrides)
    }

    /// Compiles a workload from TOML text; `origin` names it in errors.
    pub fn from_toml(
        origin: &str,
        text: &str,
        overrides: &[(String, String)],
    ) -> Result<Self, WorkloadError> {
        let spec: FileSpec = toml::from_str(text).map_err(|e| WorkloadError::Format {
            name: origin.to_owned(),
            message: e.to_string(),
        })?;
        let name = spec.name.clone().unwrap_or_else(|| origin.to_owned());
        let mut params: BTreeMap<String, ParamValue> = BTreeMap::new();
        for (k, v) in &spec.params {
            let value = match v {
                toml::Value::Integer(i) => ParamValue::Int(*i),
                toml::Value::Float(f) => ParamValue::Float(*f),
                toml::Value::String(s) => parse_param_value(s),
                toml::Value::Boolean(b) => ParamValue::Int(i64::from(*b)),
                other => {
                    return Err(WorkloadError::Param {
                        name,
                        param: k.clone(),
                        message: format!("unsupported default value {other}"),
                    })
                }
            };
            params.insert(k.clone(), value);
        }
        for (k, v) in overrides {
            if !params.contains_key(k) {
                let known: Vec<&str> = params.keys().map(String::as_str).collect();
                return Err(WorkloadError::Param {
                    name,
                    param: k.clone(),
                    message: format!("not a parameter of this workload (it has: {known:?})"),
                });
            }
            params.insert(k.clone(), parse_param_value(v));
        }
        let lookup = |n: &str| params.get(n).cloned();
        let vars = compile_vars(&name, text, &spec.vars, &params)?;
        let var = |n: &str| vars.get(n).cloned();
        let subst = |cql: &str| -> Result<String, WorkloadError> {
            substitute(cql, &params).map_err(|param| WorkloadError::Param {
                name: name.clone(),
                param,
                message: "used as ${...} in a statement but not defined in [params]".into(),
            })
        };
        let compile = |stmt_name: String,
                       statement: &toml::Spanned<String>,
                       args: &[toml::Spanned<String>],
                       validate: Option<&toml::Spanned<String>>,
                       idempotent: bool,
                       seed: u64| {
            let mut compiled = Vec::with_capacity(args.len());
            for (k, a) in args.iter().enumerate() {
                let site = mix(seed ^ (k as u64).wrapping_mul(0x9e37));
                compiled.push(
                    Expr::compile_with(a.get_ref(), site, &lookup, &var).map_err(|error| {
                        WorkloadError::Expr {
                            name: name.clone(),
                            line: line_of(text, a.span().start),
                            statement: stmt_name.clone(),
                            error,
                        }
                    })?,
                );
            }
            let validate = match validate {
                Some(v) => Some(
                    Expr::compile_with(v.get_ref(), mix(seed ^ 0x7a11), &lookup, &var).map_err(
                        |error| WorkloadError::Expr {
                            name: name.clone(),
                            line: line_of(text, v.span().start),
                            statement: stmt_name.clone(),
                            error,
                        },
                    )?,
                ),
                None => None,
            };
            let cql = subst(statement.get_ref())?;
            Ok::<_, WorkloadError>(Statement {
                name: stmt_name,
                conditional: is_conditional(&cql),
                cql,
                args: compiled,
                line: line_of(text, statement.span().start),
                validate,
                written_by: None,
                idempotent,
            })
        };
        let compile_stmt = |s: &StatementSpec, default: &str, seed: u64| {
            let stmt_name = s.name.clone().unwrap_or_else(|| default.to_owned());
            compile(
                stmt_name,
                &s.statement,
                &s.args,
                s.validate.as_ref(),
                s.idempotent,
                seed,
            )
        };
        let constant = |v: &toml::Value, what: &str, stmt: &str| -> Result<f64, WorkloadError> {
            let bad = |message: String| WorkloadError::Bind {
                name: name.clone(),
                statement: stmt.to_owned(),
                message,
            };
            match v {
                toml::Value::Integer(i) => Ok(*i as f64),
                toml::Value::Float(f) => Ok(*f),
                toml::Value::String(s) => {
                    let e =
                        Expr::compile(s, 0, &lookup).map_err(|e| bad(format!("{what}: {e}")))?;
                    match e.eval(0) {
                        Ok(expr::Value::Int(i)) => Ok(i as f64),
                        Ok(expr::Value::Float(f)) => Ok(f),
                        _ => Err(bad(format!("{what} must be a number"))),
                    }
                }
                other => Err(bad(format!("{what} must be a number, not {other}"))),
            }
        };
        let schema = match &spec.schema {
            Some(s) => s
                .statements
                .iter()
                .map(|c| subst(c))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        let load = match &spec.load {
            Some(l) => {
                let statement = compile_stmt(l, "load", 0x10ad)?;
                if statement.validate.is_some() {
                    return Err(WorkloadError::Format {
                        name,
                        message: "`validate` belongs to [[run]] statements that read what \
                                  [load] wrote, not to [load]"
                            .into(),
                    });
                }
                let count = match &l.count {
                    Some(c) => constant(c, "count", &statement.name)?,
                    None => {
                        return Err(WorkloadError::Format {
                            name,
                            message: "[load] needs a count".into(),
                        })
                    }
                };
                if !(count >= 0.0 && count.is_finite()) {
                    return Err(WorkloadError::Format {
                        name,
                        message: format!("load count {count} is not a non-negative number"),
                    });
                }
                Some(Load {
                    count: count as u64,
                    statement,
                })
            }
            None => None,
        };
        let mut run = Vec::with_capacity(spec.run.len());
        let mut groups = Vec::with_capacity(spec.run.len());
        let mut weights = Vec::with_capacity(spec.run.len());
        let mut entry = 0;
        // `written_by` names, resolved once every statement is known: (reader, name).
        let mut pending: Vec<(usize, toml::Spanned<String>)> = Vec::new();
        for (k, r) in spec.run.iter().enumerate() {
            let repeat = match &r.repeat {
                Some(n) => {
                    let what = r.name.clone().unwrap_or_else(|| format!("run{}", k + 1));
                    let value = constant(n.get_ref(), "repeat", &what)?;
                    // Not an integer: out of range below, with the value in the message.
                    let whole = if value.fract() == 0.0 && value.abs() < 1e15 {
                        value as i64
                    } else {
                        -1
                    };
                    Some((whole, line_of(text, n.span().start)))
                }
                None => None,
            };
            let at = RunPlace { index: k, repeat };
            let group = compile_run(&name, text, r, at, &compile, &mut run, entry)?;
            let writers = r.step.iter().map(|s| s.written_by.as_ref());
            let writers: Vec<_> = if r.step.is_empty() {
                vec![r.written_by.as_ref()]
            } else {
                writers.collect()
            };
            for (at, w) in group.statements.clone().zip(writers) {
                if let Some(w) = w {
                    pending.push((at, w.clone()));
                }
            }
            let w = match &r.weight {
                Some(w) => constant(w, "weight", &group.name)?,
                None => 1.0,
            };
            if !(w >= 0.0 && w.is_finite()) {
                return Err(WorkloadError::Bind {
                    name,
                    statement: group.name,
                    message: format!("weight {w} is not a non-negative number"),
                });
            }
            entry += group.entries();
            weights.push(w);
            groups.push(group);
        }
        resolve_writers(&name, text, &mut run, pending)?;
        let from_load = run
            .iter()
            .find(|s| s.validate.is_some() && s.written_by.is_none());
        if let (None, Some(s)) = (&load, from_load) {
            return Err(WorkloadError::Bind {
                name,
                statement: s.label(),
                message: "`validate` names the [load] iteration that wrote the row read, but \
                          the workload has no [load] section (or say which run statement \
                          wrote it: `written_by = \"NAME\"`)"
                    .into(),
            });
        }
        let total: f64 = weights.iter().sum();
        if groups.is_empty() || total <= 0.0 {
            return Err(WorkloadError::Format {
                name,
                message: "needs at least one [[run]] statement with a positive weight".into(),
            });
        }
        let mut acc = 0.0;
        let thresholds = weights
            .iter()
            .map(|w| {
                acc += w / total;
                if acc >= 1.0 {
                    u64::MAX
                } else {
                    (acc * u64::MAX as f64) as u64
                }
            })
            .collect();
        Ok(Self {
            description: spec.description.unwrap_or_default(),
            params: params
                .iter()
                .map(|(k, v)| (k.clone(), param_text(v)))
                .collect(),
            name,
            schema,
            load,
            run,
            groups,
            weights,
            thresholds,
        })
    }

    /// The entries of the per-statement records, in order: each `[[run]]` entry's (see
    /// [`RunGroup::entry`]).
    pub fn entries(&self) -> Vec<Entry> {
        let mut out = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
            let stmts = &self.run[group.statements.clone()];
            let joined = || {
                stmts
                    .iter()
                    .map(|s| s.cql.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let conditional = stmts.iter().any(|s| s.conditional);
            match group.mode {
                RunMode::Single => out.push(Entry {
                    name: stmts[0].name.clone(),
                    cql: stmts[0].cql.clone(),
                    group: g,
                    kind: EntryKind::Statement,
                    conditional,
                }),
                RunMode::Batch(kind) => out.push(Entry {
                    name: group.name.clone(),
                    cql: if group.repeat > 1 {
                        format!("{} (x{})", joined(), group.repeat)
                    } else {
                        joined()
                    },
                    group: g,
                    kind: EntryKind::Batch(kind),
                    conditional,
                }),
                RunMode::Sequence => {
                    for s in stmts {
                        out.push(Entry {
                            name: s.name.clone(),
                            cql: s.cql.clone(),
                            group: g,
                            kind: EntryKind::Statement,
                            conditional: s.conditional,
                        });
                    }
                    out.push(Entry {
                        name: group.name.clone(),
                        cql: joined(),
                        group: g,
                        kind: EntryKind::Sequence,
                        conditional: false,
                    });
                }
            }
        }
        out
    }

    /// The key space that `--loader K/N` splits into N slices: the `[load]` count (the rows
    /// the load phase writes; the built-ins' run statements read `hash(i) % rows` of them),
    /// else the integer parameter `rows`; `None` when the workload has neither.
    pub fn key_space(&self) -> Option<u64> {
        if let Some(l) = &self.load {
            return Some(l.count);
        }
        self.params
            .iter()
            .find(|(k, _)| k == "rows")
            .and_then(|(_, v)| units::count(v).ok())
    }

    /// The weight of `[[run]]` entry `k` (of [`Self::groups`]) as the workload gives it, and
    /// its share of all the entries' weights (0 to 1: the fraction of iterations that run
    /// it); `None` past the last entry.
    pub fn weight(&self, k: usize) -> Option<(f64, f64)> {
        let total: f64 = self.weights.iter().sum();
        let w = *self.weights.get(k)?;
        Some((w, if total > 0.0 { w / total } else { 0.0 }))
    }

    /// The statement whose generators made the row that validated `statement` reads: the
    /// run statement its `written_by` names, else the `[load]` statement.
    pub fn writer_of(&self, statement: &Statement) -> Option<&Statement> {
        match statement.written_by {
            Some(k) => self.run.get(k),
            None => self.load.as_ref().map(|l| &l.statement),
        }
    }

    /// Which `[[run]]` entry (of [`Self::groups`]) iteration `i` executes (by weight, a pure
    /// function of `i`). With single statements only, entry `k` is statement `k`.
    pub fn pick(&self, i: u64) -> usize {
        if self.groups.len() == 1 {
            return 0;
        }
        let h = mix(i ^ 0x005e_ed0f_7e57);
        self.thresholds
            .iter()
            .position(|&t| h <= t)
            .unwrap_or(self.groups.len() - 1)
    }
}

/// Sets each reader's [`Statement::written_by`] from the name its `written_by` gives: a run
/// statement of another name, the reader having a `validate`.
fn resolve_writers(
    workload: &str,
    text: &str,
    run: &mut [Statement],
    pending: Vec<(usize, toml::Spanned<String>)>,
) -> Result<(), WorkloadError> {
    for (reader, name) in pending {
        let line = line_of(text, name.span().start);
        let fail = |message: String| WorkloadError::Format {
            name: workload.to_owned(),
            message: format!("line {line}: {message}"),
        };
        let label = run[reader].name.clone();
        if run[reader].validate.is_none() {
            return Err(fail(format!(
                "{label}: `written_by` says which statement wrote the row that `validate` \
                 names, but {label} has no `validate`"
            )));
        }
        let wanted = name.get_ref();
        let Some(writer) = run.iter().position(|s| s.name == *wanted) else {
            let names: Vec<&str> = run.iter().map(|s| s.name.as_str()).collect();
            return Err(fail(format!(
                "{label}: written_by = \"{wanted}\" is no run statement (they are {names:?})"
            )));
        };
        if writer == reader {
            return Err(fail(format!(
                "{label}: written_by names the statement itself; name the one that wrote the \
                 row it reads"
            )));
        }
        run[reader].written_by = Some(writer);
    }
    Ok(())
}

/// Compiles one statement: its name, CQL, args, `validate`, `idempotent` and seed.
type CompileFn<'a> = dyn Fn(
        String,
        &toml::Spanned<String>,
        &[toml::Spanned<String>],
        Option<&toml::Spanned<String>>,
        bool,
        u64,
    ) -> Result<Statement, WorkloadError>
    + 'a;

/// The most statements a BATCH may hold (the protocol counts them in 16 bits).
const MAX_BATCH: usize = u16::MAX as usize;

/// Where a `[[run]]` entry is, and what its caller evaluated of it.
#[derive(Debug, Clone, Copy)]
struct RunPlace {
    /// Its position among the `[[run]]` entries (0-based).
    index: usize,
    /// Its `repeat`, evaluated (not an integer: -1), with the line it is on.
    repeat: Option<(i64, usize)>,
}

/// Compiles `[[run]]` entry `at.index` (`r`): its statements appended to `run`, its records
/// starting at entry `entry`.
fn compile_run(
    workload: &str,
    text: &str,
    r: &RunSpec,
    at: RunPlace,
    compile: &CompileFn<'_>,
    run: &mut Vec<Statement>,
    entry: usize,
) -> Result<RunGroup, WorkloadError> {
    let format = |line: Option<usize>, message: String| WorkloadError::Format {
        name: workload.to_owned(),
        message: match line {
            Some(l) => format!("line {l}: {message}"),
            None => message,
        },
    };
    let k = at.index;
    let group_name = r.name.clone().unwrap_or_else(|| format!("run{}", k + 1));
    let batch = match &r.batch {
        None => None,
        Some(b) => Some(match b.get_ref().as_str() {
            "logged" => BatchKind::Logged,
            "unlogged" => BatchKind::Unlogged,
            "counter" => BatchKind::Counter,
            other => {
                return Err(format(
                    Some(line_of(text, b.span().start)),
                    format!(
                        "[[run]] {group_name}: batch = \"{other}\" is not \"logged\", \
                         \"unlogged\" or \"counter\""
                    ),
                ))
            }
        }),
    };
    let first = run.len();
    let seed = 0x1000 + k as u64;
    if r.step.is_empty() {
        let Some(statement) = &r.statement else {
            return Err(format(
                None,
                format!("[[run]] {group_name} needs a `statement` or `[[run.step]]` tables"),
            ));
        };
        run.push(compile(
            group_name.clone(),
            statement,
            &r.args,
            r.validate.as_ref(),
            r.idempotent,
            seed,
        )?);
    } else {
        if let Some(s) = &r.statement {
            return Err(format(
                Some(line_of(text, s.span().start)),
                format!(
                    "[[run]] {group_name} has both a `statement` and steps: a sequence's \
                     statements are its [[run.step]] tables"
                ),
            ));
        }
        if let Some(a) = r
            .args
            .first()
            .or(r.validate.as_ref())
            .or(r.written_by.as_ref())
        {
            return Err(format(
                Some(line_of(text, a.span().start)),
                format!(
                    "[[run]] {group_name} has steps: `args`, `validate` and `written_by` \
                     belong to each [[run.step]]"
                ),
            ));
        }
        for (n, step) in r.step.iter().enumerate() {
            let step_name = step
                .name
                .clone()
                .unwrap_or_else(|| format!("step{}", n + 1));
            run.push(compile(
                format!("{group_name}.{step_name}"),
                &step.statement,
                &step.args,
                step.validate.as_ref(),
                step.idempotent.unwrap_or(r.idempotent),
                mix(seed) ^ (n as u64 + 1).wrapping_mul(0x5eb5),
            )?);
        }
    }
    let repeat = match at.repeat {
        None => 1,
        Some((n, line)) => {
            let line = Some(line);
            if batch.is_none() {
                return Err(format(
                    line,
                    format!(
                        "[[run]] {group_name}: `repeat` makes a batch of several rows; it \
                         needs `batch = \"logged\"`, \"unlogged\" or \"counter\""
                    ),
                ));
            }
            let statements = (run.len() - first) as i64;
            match u32::try_from(n) {
                Ok(r) if r >= 1 && i64::from(r) * statements <= MAX_BATCH as i64 => r,
                _ => {
                    return Err(format(
                        line,
                        format!(
                            "[[run]] {group_name}: repeat = {} is not between 1 and {} \
                             (a batch holds at most {MAX_BATCH} statements)",
                            n,
                            MAX_BATCH as i64 / statements.max(1)
                        ),
                    ))
                }
            }
        }
    };
    if batch.is_some() {
        if let Some(s) = run[first..].iter().find(|s| s.validate.is_some()) {
            return Err(WorkloadError::Bind {
                name: workload.to_owned(),
                statement: s.label(),
                message: "`validate` reads a statement's rows: not in a batch, which \
                          returns none"
                    .into(),
            });
        }
    }
    Ok(RunGroup {
        name: group_name,
        statements: first..run.len(),
        mode: match batch {
            Some(b) => RunMode::Batch(b),
            None if r.step.is_empty() => RunMode::Single,
            None => RunMode::Sequence,
        },
        repeat,
        entry,
    })
}

/// Replaces every `${name}` in `cql`; returns the first undefined name as the error.
fn substitute(cql: &str, params: &BTreeMap<String, ParamValue>) -> Result<String, String> {
    let mut out = String::with_capacity(cql.len());
    let mut rest = cql;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(after.to_owned());
        };
        let key = &after[..end];
        match params.get(key) {
            Some(v) => out.push_str(&param_text(v)),
            None => return Err(key.to_owned()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A statement's generators checked against its bind markers' types.
#[derive(Debug, Clone)]
pub struct BoundArgs {
    /// Per argument: its generator and the column type it is written as.
    pub args: Vec<(Expr, CqlType)>,
}

impl BoundArgs {
    /// Checks that `statement` has one generator per bind marker and that each generator's
    /// values fit the marker's type (`kinds`, from the driver's PREPARE result).
    pub fn bind(
        workload: &str,
        statement: &Statement,
        kinds: &[CqlType],
    ) -> Result<Self, WorkloadError> {
        let err = |message: String| WorkloadError::Bind {
            name: workload.to_owned(),
            statement: statement.label(),
            message,
        };
        if kinds.len() != statement.args.len() {
            return Err(err(format!(
                "the statement has {} bind markers but {} args are given",
                kinds.len(),
                statement.args.len()
            )));
        }
        let mut args = Vec::with_capacity(kinds.len());
        for (k, (e, kind)) in statement.args.iter().zip(kinds).enumerate() {
            let sample = e
                .eval(0)
                .map_err(|x| err(format!("argument {} (`{e}`): {x}", k + 1)))?;
            if let Err(why) = compatible(&sample, kind) {
                return Err(err(format!(
                    "argument {} (`{e}`) cannot be bound to its {kind} column: {why}",
                    k + 1
                )));
            }
            args.push((e.clone(), kind.clone()));
        }
        Ok(Self { args })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_compiles() {
        for (name, _) in BUILT_INS {
            let w = Workload::resolve(name, &[]).unwrap();
            assert_eq!(&w.name, name);
            assert!(!w.run.is_empty());
        }
        let read = Workload::resolve("read", &[("rows".into(), "10k".into())]).unwrap();
        assert_eq!(read.load.as_ref().unwrap().count, 10_000);
        assert!(
            read.schema[0].contains("'replication_factor': 1}"),
            "{}",
            read.schema[0]
        );
        assert!(read.schema[1].starts_with("CREATE TABLE IF NOT EXISTS doppio_bench.kv"));
    }

    #[test]
    fn vars_name_shared_sub_expressions() {
        let text = r#"
            [params]
            rows = 100
            [vars]
            b = "a * 2"
            a = "hash(i) % rows"
            r = "uniform(0, 1000000)"
            [[run]]
            statement = "SELECT * FROM t WHERE a = ? AND b = ? AND c = ?"
            args = ["a", "b", "r - r"]
        "#;
        let w = Workload::from_toml("t", text, &[]).unwrap();
        let args = &w.run[0].args;
        for i in 0..100 {
            let (expr::Value::Int(a), expr::Value::Int(b)) =
                (args[0].eval(i).unwrap(), args[1].eval(i).unwrap())
            else {
                panic!()
            };
            assert!((0..100).contains(&a) && b == 2 * a);
            assert_eq!(args[2].eval(i).unwrap(), expr::Value::Int(0));
        }
        let circle = "[vars]\na = \"b\"\nb = \"a + 1\"\n[[run]]\nstatement = \"x\"\n";
        let e = Workload::from_toml("t", circle, &[]).unwrap_err();
        assert!(e.to_string().contains("names itself"), "{e}");
        let clash = "[params]\nrows = 1\n[vars]\nrows = \"2\"\n[[run]]\nstatement = \"x\"\n";
        let e = Workload::from_toml("t", clash, &[]).unwrap_err();
        assert!(e.to_string().contains("already a parameter"), "{e}");
        let bad = "[vars]\na = \"nope + 1\"\n[[run]]\nstatement = \"x\"\n";
        let e = Workload::from_toml("t", bad, &[]).unwrap_err();
        assert!(
            e.to_string().contains("line 2") && e.to_string().contains("nope"),
            "{e}"
        );
    }

    #[test]
    fn parameters_are_checked() {
        let e = Workload::resolve("read", &[("rowz".into(), "1".into())]).unwrap_err();
        assert!(e.to_string().contains("rowz"), "{e}");
        let text = r#"
            [[run]]
            statement = "SELECT * FROM ${nope}.t"
        "#;
        let e = Workload::from_toml("t", text, &[]).unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
        let bad_field = "[[run]]\nstatement = \"x\"\nwieght = 2\n";
        assert!(
            Workload::from_toml("t", bad_field, &[]).is_err(),
            "typos are errors"
        );
    }

    #[test]
    fn written_by_names_the_run_statement_whose_rows_a_read_validates() {
        let text = r#"
            [load]
            count = 10
            statement = "INSERT INTO t (p, c) VALUES (?, ?)"
            args = ["i", "0"]
            [[run]]
            name = "fill"
            batch = "unlogged"
            repeat = 4
            statement = "INSERT INTO t (p, c, v) VALUES (?, ?, ?)"
            args = ["i / 4", "i % 4", "blob(8)"]
            [[run]]
            name = "check"
            statement = "SELECT * FROM t WHERE p = ? AND c = ?"
            args = ["i / 4", "i % 4"]
            validate = "i"
            written_by = "fill"
            [[run]]
            name = "old"
            statement = "SELECT * FROM t WHERE p = ? AND c = 0"
            args = ["i"]
            validate = "i"
        "#;
        let w = Workload::from_toml("t", text, &[]).unwrap();
        let named = |n: &str| w.run.iter().find(|s| s.name == n).unwrap();
        assert_eq!(w.writer_of(named("check")).unwrap().name, "fill");
        assert_eq!(w.writer_of(named("old")).unwrap().name, "load");
        // Without a [load], a run statement may still be the writer.
        let from = text.find("[[run]]").unwrap();
        let to = text.find("[[run]]\n            name = \"old\"").unwrap();
        let w = Workload::from_toml("t", &text[from..to], &[]).unwrap();
        assert!(w.load.is_none());
        assert_eq!(w.writer_of(&w.run[1]).unwrap().name, "fill");

        let fails = |text: &str, wanted: &[&str]| {
            let e = Workload::from_toml("t", text, &[]).unwrap_err().to_string();
            for w in wanted {
                assert!(e.contains(w), "{e:?} lacks {w:?}");
            }
        };
        let read = |extra: &str| {
            format!(
                "[[run]]\nname = \"fill\"\nstatement = \"INSERT INTO t (p) VALUES (?)\"\n\
                 args = [\"i\"]\n[[run]]\nname = \"check\"\n\
                 statement = \"SELECT * FROM t WHERE p = ?\"\nargs = [\"i\"]\n{extra}"
            )
        };
        fails(
            &read("validate = \"i\"\nwritten_by = \"fil\"\n"),
            &[
                "line 10",
                "written_by = \"fil\" is no run statement",
                "\"fill\"",
            ],
        );
        fails(
            &read("validate = \"i\"\nwritten_by = \"check\"\n"),
            &["names the statement itself"],
        );
        fails(
            &read("written_by = \"fill\"\n"),
            &["check has no `validate`"],
        );
        fails(
            &read("validate = \"i\"\n"),
            &["no [load] section", "written_by"],
        );
        fails(
            "[[run]]\nwritten_by = \"x\"\n[[run.step]]\nstatement = \"SELECT 1\"\n",
            &["`written_by` belong to each [[run.step]]"],
        );
    }

    #[test]
    fn the_key_space_is_the_load_count_else_the_rows_parameter() {
        let rows = [("rows".to_owned(), "10k".to_owned())];
        assert_eq!(
            Workload::resolve("read", &rows).unwrap().key_space(),
            Some(10_000)
        );
        assert_eq!(
            Workload::resolve("write", &rows).unwrap().key_space(),
            Some(10_000)
        );
        assert_eq!(Workload::resolve("empty", &[]).unwrap().key_space(), None);
    }

    #[test]
    fn weights_pick_statements_in_proportion() {
        let w = Workload::resolve("mixed", &[("read_ratio".into(), "0.25".into())]).unwrap();
        let n = 100_000u64;
        let reads = (0..n).filter(|&i| w.pick(i) == 0).count() as f64 / n as f64;
        assert!((reads - 0.25).abs() < 0.01, "{reads}");
        assert_eq!(w.pick(42), w.pick(42));
    }

    #[test]
    fn sequences_and_batches_compile_into_groups_and_entries() {
        let text = r#"
            [[run]]
            name = "read"
            statement = "SELECT * FROM t WHERE k = ?"
            args = ["i"]
            weight = 3

            [[run]]
            name = "order"
            idempotent = true
            [[run.step]]
            name = "insert"
            statement = "INSERT INTO t (k) VALUES (?) IF NOT EXISTS"
            args = ["i"]
            [[run.step]]
            name = "read"
            statement = "SELECT * FROM t WHERE k = ?"
            args = ["i"]
            idempotent = false

            [[run]]
            name = "fill"
            batch = "unlogged"
            repeat = 10
            statement = "INSERT INTO t (k) VALUES (?)"
            args = ["i"]
        "#;
        let w = Workload::from_toml("t", text, &[]).unwrap();
        assert_eq!(w.run.len(), 4);
        assert_eq!(w.groups.len(), 3);
        assert_eq!(w.groups[1].mode, RunMode::Sequence);
        assert_eq!(w.groups[1].statements, 1..3);
        assert_eq!(w.groups[2].mode, RunMode::Batch(BatchKind::Unlogged));
        assert_eq!((w.groups[2].repeat, w.groups[2].entry), (10, 4));
        assert!(
            w.run[1].idempotent && !w.run[2].idempotent,
            "a step overrides"
        );
        assert!(w.run[1].conditional && !w.run[2].conditional);
        let names: Vec<(String, EntryKind)> =
            w.entries().into_iter().map(|e| (e.name, e.kind)).collect();
        assert_eq!(
            names,
            vec![
                ("read".into(), EntryKind::Statement),
                ("order.insert".into(), EntryKind::Statement),
                ("order.read".into(), EntryKind::Statement),
                ("order".into(), EntryKind::Sequence),
                ("fill".into(), EntryKind::Batch(BatchKind::Unlogged)),
            ]
        );
        assert_eq!(w.weight(1), Some((1.0, 0.2)));
        // Bad ones name the line.
        let bad = "[[run]]\nbatch = \"atomic\"\nstatement = \"x\"\n";
        let e = Workload::from_toml("t", bad, &[]).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("atomic"), "{e}");
        let bad = "[[run]]\nstatement = \"x\"\nrepeat = 3\n";
        let e = Workload::from_toml("t", bad, &[]).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("batch"), "{e}");
        let bad = "[[run]]\nstatement = \"x\"\n[[run.step]]\nstatement = \"y\"\n";
        let e = Workload::from_toml("t", bad, &[]).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("steps"), "{e}");
        // `repeat` may be an expression of parameters, as `weight` and `count` are.
        let param = "[params]\nn = 4\n[[run]]\nbatch = \"unlogged\"\nrepeat = \"n * 2\"\n\
                     statement = \"x\"\n";
        let w = Workload::from_toml("t", param, &[]).unwrap();
        assert_eq!(w.groups[0].repeat, 8);
        let w = Workload::from_toml("t", param, &[("n".into(), "3".into())]).unwrap();
        assert_eq!(w.groups[0].repeat, 6);
        for bad in ["0", "0.75", "-1"] {
            let o = [("n".to_owned(), bad.to_owned())];
            let e = Workload::from_toml("t", param, &o).unwrap_err().to_string();
            assert!(e.contains("line 5") && e.contains("not between 1"), "{e}");
        }
    }

    #[test]
    fn conditional_statements_are_recognised() {
        assert!(is_conditional("INSERT INTO t (k) VALUES (?) IF NOT EXISTS"));
        assert!(is_conditional("UPDATE t SET v = ? WHERE k = ? if v = ?"));
        assert!(is_conditional("DELETE FROM t WHERE k = ? IF EXISTS"));
        assert!(!is_conditional("INSERT INTO t (k, v) VALUES (?, 'IF')"));
        assert!(!is_conditional("SELECT diff FROM t WHERE k = ?"));
    }

    #[test]
    fn param_values_parse_by_shape() {
        assert_eq!(parse_param_value("1_000"), ParamValue::Int(1000));
        assert_eq!(parse_param_value("5M"), ParamValue::Int(5_000_000));
        assert_eq!(parse_param_value("0.5"), ParamValue::Float(0.5));
        assert_eq!(parse_param_value("250ms"), ParamValue::Int(250));
        assert_eq!(parse_param_value("2s"), ParamValue::Int(2000));
        assert_eq!(parse_param_value("1m"), ParamValue::Int(60_000));
        assert_eq!(parse_param_value("1h"), ParamValue::Int(3_600_000));
        assert_eq!(parse_param_value("1.5ms"), ParamValue::Int(2));
        assert_eq!(parse_param_value("-5k"), ParamValue::Int(-5000));
        assert_eq!(parse_param_value("1.5k"), ParamValue::Int(1500));
        assert_eq!(parse_param_value("1e3"), ParamValue::Float(1000.0));
        assert_eq!(parse_param_value("ks1"), ParamValue::Str("ks1".into()));
    }

    #[test]
    fn binding_checks_counts_and_types() {
        use self::encode::CqlKind;
        let w = Workload::resolve("read", &[]).unwrap();
        let load = &w.load.as_ref().unwrap().statement;
        let t = |k: CqlKind| CqlType::Scalar(k);
        assert!(BoundArgs::bind("read", load, &[t(CqlKind::BigInt), t(CqlKind::Blob)]).is_ok());
        let e = BoundArgs::bind("read", load, &[t(CqlKind::BigInt)]).unwrap_err();
        assert!(e.to_string().contains("2 args"), "{e}");
        let e = BoundArgs::bind("read", load, &[t(CqlKind::Uuid), t(CqlKind::Blob)]).unwrap_err();
        assert!(e.to_string().contains("uuid"), "{e}");
    }
}
