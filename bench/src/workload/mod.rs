//! Workloads: what the bench sends. A workload is a TOML file (format in
//! `bench/workloads/README.md`, examples beside it) or one of the built-ins (`read`, `write`,
//! `mixed`, `empty`, `timeseries`, `widerow`), compiled once with its parameters into
//! statements whose arguments are generator expressions ([`expr`]).
//!
//! Children: [`expr`], the generator expressions (parsed once, evaluated per iteration
//! without allocation); [`encode`], their values as the CQL bytes of a column type.
//!
//! Invariants:
//! - Everything per iteration is a pure function of the iteration number: which statement
//!   runs (by weight) and every argument, so two runs of the same workload send the same
//!   requests.
//! - Parameters are checked when compiling: an unknown `-P` name or a `${name}` with no
//!   value is an error, never an empty string in a statement.

pub mod encode;
pub mod expr;

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
    schema: Option<SchemaSpec>,
    load: Option<StatementSpec>,
    #[serde(default)]
    run: Vec<StatementSpec>,
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
    weight: Option<toml::Value>,
    count: Option<toml::Value>,
    /// `[[run]]` only: the load iteration whose row this statement reads (`--validate`).
    validate: Option<toml::Spanned<String>>,
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
    /// The run statements.
    pub run: Vec<Statement>,
    /// The weight of each of `run`, as the workload gives it.
    weights: Vec<f64>,
    /// Cumulative weights of `run`, scaled to `u64::MAX`.
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
    if let Ok(d) = units::duration_with_unit(t) {
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
        let subst = |cql: &str| -> Result<String, WorkloadError> {
            substitute(cql, &params).map_err(|param| WorkloadError::Param {
                name: name.clone(),
                param,
                message: "used as ${...} in a statement but not defined in [params]".into(),
            })
        };
        let compile_stmt = |s: &StatementSpec, default: &str, seed: u64| {
            let stmt_name = s.name.clone().unwrap_or_else(|| default.to_owned());
            let mut args = Vec::with_capacity(s.args.len());
            for (k, a) in s.args.iter().enumerate() {
                let site = mix(seed ^ (k as u64).wrapping_mul(0x9e37));
                args.push(Expr::compile(a.get_ref(), site, &lookup).map_err(|error| {
                    WorkloadError::Expr {
                        name: name.clone(),
                        line: line_of(text, a.span().start),
                        statement: stmt_name.clone(),
                        error,
                    }
                })?);
            }
            let validate = match &s.validate {
                Some(v) => Some(
                    Expr::compile(v.get_ref(), mix(seed ^ 0x7a11), &lookup).map_err(|error| {
                        WorkloadError::Expr {
                            name: name.clone(),
                            line: line_of(text, v.span().start),
                            statement: stmt_name.clone(),
                            error,
                        }
                    })?,
                ),
                None => None,
            };
            Ok::<_, WorkloadError>(Statement {
                name: stmt_name,
                cql: subst(s.statement.get_ref())?,
                args,
                line: line_of(text, s.statement.span().start),
                validate,
            })
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
        let mut weights = Vec::with_capacity(spec.run.len());
        for (k, r) in spec.run.iter().enumerate() {
            let s = compile_stmt(r, &format!("run{}", k + 1), 0x1000 + k as u64)?;
            let w = match &r.weight {
                Some(w) => constant(w, "weight", &s.name)?,
                None => 1.0,
            };
            if !(w >= 0.0 && w.is_finite()) {
                return Err(WorkloadError::Bind {
                    name,
                    statement: s.name,
                    message: format!("weight {w} is not a non-negative number"),
                });
            }
            weights.push(w);
            run.push(s);
        }
        if let (None, Some(s)) = (&load, run.iter().find(|s| s.validate.is_some())) {
            return Err(WorkloadError::Bind {
                name,
                statement: s.label(),
                message: "`validate` names the [load] iteration that wrote the row read, but \
                          the workload has no [load] section"
                    .into(),
            });
        }
        let total: f64 = weights.iter().sum();
        if run.is_empty() || total <= 0.0 {
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
            weights,
            thresholds,
        })
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

    /// The weight of run statement `k` as the workload gives it, and its share of all the
    /// run statements' weights (0 to 1: the fraction of iterations that run it); `None`
    /// past the last statement.
    pub fn weight(&self, k: usize) -> Option<(f64, f64)> {
        let total: f64 = self.weights.iter().sum();
        let w = *self.weights.get(k)?;
        Some((w, if total > 0.0 { w / total } else { 0.0 }))
    }

    /// Which run statement iteration `i` executes (by weight, a pure function of `i`).
    pub fn pick(&self, i: u64) -> usize {
        if self.run.len() == 1 {
            return 0;
        }
        let h = mix(i ^ 0x005e_ed0f_7e57);
        self.thresholds
            .iter()
            .position(|&t| h <= t)
            .unwrap_or(self.run.len() - 1)
    }
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
