//! A workload's TOML compiled ([`Workload::from_toml`]): parameters, vars, schema, the
//! `[load]` statement and every `[[run]]` entry, with their weights.

use std::collections::BTreeMap;

use super::error::WorkloadError;
use super::expr::{self, mix, Expr, ParamValue};
use super::model::{is_conditional, Load, Statement, Workload};
use super::params::{param_text, parse_param_value, substitute};
use super::run::{compile_run, resolve_writers, RunPlace};
use super::spec::{line_of, FileSpec, StatementSpec};
use super::vars::compile_vars;

impl Workload {
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
}
