//! The rules file read: its TOML shape, the names of opcodes, error codes, serial
//! consistencies and reactions, durations in the bench's grammar, and every mistake named
//! with its rule.

use std::time::Duration;

use doppio_proto::consistency::Consistency;
use doppio_proto::frame::Opcode;
use doppio_proto::response::ErrorCode;
use doppio_proto::scylla_extensions::{RateLimitError, RateLimitedOp};
use serde::Deserialize;

use crate::rules::model::{Condition, Delay, Malformed, Reaction, Rule, Rules};

/// Why a rules file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The file could not be read.
    #[error("cannot read rules file {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The TOML is malformed or names something unknown.
    #[error("rules: {0}")]
    Format(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRules {
    #[serde(default)]
    seed: u64,
    #[serde(default, rename = "rule")]
    rules: Vec<FileRule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRule {
    name: Option<String>,
    #[serde(default)]
    when: FileCondition,
    then: FileReaction,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCondition {
    opcode: Option<String>,
    statement: Option<String>,
    connection: Option<u64>,
    node: Option<u8>,
    every: Option<u64>,
    probability: Option<f64>,
    after: Option<String>,
    until: Option<String>,
    serial_consistency: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum FileReaction {
    Word(String),
    Table(Box<FileReactionTable>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileReactionTable {
    delay: Option<FileDelay>,
    error: Option<FileError>,
    stall: Option<String>,
    malformed: Option<String>,
    rate_limit: Option<FileRateLimit>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRateLimit {
    op: String,
    #[serde(default)]
    rejected_by_coordinator: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDelay {
    fixed: Option<String>,
    uniform: Option<[String; 2]>,
    exponential: Option<String>,
    ramp: Option<[String; 2]>,
    over: Option<String>,
    growth: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileError {
    code: toml::Value,
    message: Option<String>,
}

/// Parses a duration in the bench's grammar (the crate `doppio-units`): a number with its
/// unit (`500us`, `2ms`, `1.5s`, `2m`, `1h30m`); a bare number is refused with a hint.
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    doppio_units::duration(text).map_err(|e| e.to_string())
}

/// `SERIAL`, `LOCAL_SERIAL` (any case), or `none` for a request that carries none.
fn serial_named(name: &str) -> Result<Option<Consistency>, String> {
    if name.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    match name.parse::<Consistency>() {
        Ok(c) if c.is_serial() => Ok(Some(c)),
        _ => Err(format!(
            "unknown serial consistency `{name}` (SERIAL, LOCAL_SERIAL or none)"
        )),
    }
}

fn opcode_named(name: &str) -> Result<Opcode, String> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "OPTIONS" => Opcode::Options,
        "STARTUP" => Opcode::Startup,
        "REGISTER" => Opcode::Register,
        "QUERY" => Opcode::Query,
        "PREPARE" => Opcode::Prepare,
        "EXECUTE" => Opcode::Execute,
        "BATCH" => Opcode::Batch,
        "AUTH_RESPONSE" => Opcode::AuthResponse,
        other => return Err(format!("unknown opcode `{other}`")),
    })
}

/// An error code by its name (`read_timeout`, `overloaded`, ...; spaces or dashes work too).
pub fn error_code_named(name: &str) -> Option<ErrorCode> {
    let wanted = name.to_ascii_lowercase().replace(['-', '_'], " ");
    (0..0x3000)
        .map(ErrorCode::from_code)
        .filter(|c| !matches!(c, ErrorCode::Other(_)))
        .find(|c| c.name() == wanted)
}

fn reaction(r: FileReaction) -> Result<Reaction, String> {
    match r {
        FileReaction::Word(w) => match w.as_str() {
            "drop" => Ok(Reaction::Drop),
            "wrong_stream" => Ok(Reaction::WrongStream),
            other => Err(format!(
                "unknown reaction `{other}` (a table such as {{ delay = ... }}, or \"drop\", \
                 \"wrong_stream\")"
            )),
        },
        FileReaction::Table(t) => {
            let t = *t;
            let given = [
                t.delay.is_some(),
                t.error.is_some(),
                t.stall.is_some(),
                t.malformed.is_some(),
                t.rate_limit.is_some(),
            ];
            if given.iter().filter(|g| **g).count() != 1 {
                return Err(
                    "`then` needs exactly one of delay, error, stall, malformed, rate_limit".into(),
                );
            }
            if let Some(r) = t.rate_limit {
                let op = match r.op.to_ascii_lowercase().as_str() {
                    "read" => RateLimitedOp::Read,
                    "write" => RateLimitedOp::Write,
                    other => return Err(format!("rate_limit op `{other}` (read or write)")),
                };
                return Ok(Reaction::RateLimit(RateLimitError {
                    op,
                    rejected_by_coordinator: r.rejected_by_coordinator,
                }));
            }
            if let Some(d) = t.delay {
                if d.ramp.is_some() != d.over.is_some() {
                    return Err("a ramp delay needs both ramp = [FROM, TO] and over".into());
                }
                if let (Some([a, b]), Some(over)) = (&d.ramp, &d.over) {
                    if d.fixed.is_some() || d.uniform.is_some() || d.exponential.is_some() {
                        return Err(
                            "delay needs exactly one of fixed, uniform, exponential, ramp".into(),
                        );
                    }
                    let (from, to) = (parse_duration(a)?, parse_duration(b)?);
                    let geometric = match d.growth.as_deref() {
                        None | Some("linear") => false,
                        Some("geometric") if from.is_zero() || to.is_zero() => {
                            return Err("a geometric ramp needs delays above 0 at both ends".into())
                        }
                        Some("geometric") => true,
                        Some(other) => {
                            return Err(format!("unknown growth `{other}` (linear or geometric)"))
                        }
                    };
                    return Ok(Reaction::Delay(Delay::Ramp {
                        from,
                        to,
                        over: parse_duration(over)?,
                        geometric,
                    }));
                }
                if d.growth.is_some() {
                    return Err("growth belongs to a ramp delay".into());
                }
                let delay = match (d.fixed, d.uniform, d.exponential) {
                    (Some(f), None, None) => Delay::Fixed(parse_duration(&f)?),
                    (None, Some([a, b]), None) => {
                        let (a, b) = (parse_duration(&a)?, parse_duration(&b)?);
                        if b < a {
                            return Err("uniform delay: the second bound is below the first".into());
                        }
                        Delay::Uniform(a, b)
                    }
                    (None, None, Some(m)) => Delay::Exponential(parse_duration(&m)?),
                    _ => {
                        return Err(
                            "delay needs exactly one of fixed, uniform, exponential, ramp".into(),
                        )
                    }
                };
                return Ok(Reaction::Delay(delay));
            }
            if let Some(e) = t.error {
                let code = match &e.code {
                    toml::Value::String(s) => {
                        error_code_named(s).ok_or_else(|| format!("unknown error code `{s}`"))?
                    }
                    toml::Value::Integer(n) => i32::try_from(*n)
                        .map(ErrorCode::from_code)
                        .map_err(|_| format!("error code {n} is out of range"))?,
                    other => return Err(format!("error code {other} is not a name or number")),
                };
                return Ok(Reaction::Error {
                    code,
                    message: e
                        .message
                        .unwrap_or_else(|| format!("injected by doppio-stub ({code:?})")),
                });
            }
            if let Some(s) = t.stall {
                return Ok(Reaction::Stall(parse_duration(&s)?));
            }
            let m = t.malformed.unwrap_or_default();
            Ok(Reaction::Malformed(match m.as_str() {
                "bad_version" => Malformed::BadVersion,
                "oversized_length" => Malformed::OversizedLength,
                "truncated" => Malformed::Truncated,
                "corrupt_lz4" => Malformed::CorruptLz4,
                "bad_body" => Malformed::BadBody,
                other => {
                    return Err(format!(
                        "unknown malformation `{other}` (bad_version, oversized_length, \
                         truncated, corrupt_lz4, bad_body)"
                    ))
                }
            }))
        }
    }
}

impl Rules {
    /// Parses rules from TOML text.
    pub fn parse(text: &str) -> Result<Self, RulesError> {
        let file: FileRules =
            toml::from_str(text).map_err(|e| RulesError::Format(e.to_string()))?;
        let mut rules = Vec::new();
        for (i, r) in file.rules.into_iter().enumerate() {
            let name = r.name.unwrap_or_else(|| format!("rule {}", i + 1));
            let at = |e: String| RulesError::Format(format!("{name}: {e}"));
            let w = r.when;
            if w.every == Some(0) {
                return Err(at("`every` must be at least 1".into()));
            }
            if w.probability.is_some_and(|p| !(0.0..=1.0).contains(&p)) {
                return Err(at("`probability` must be between 0 and 1".into()));
            }
            let when = Condition {
                opcode: w
                    .opcode
                    .as_deref()
                    .map(opcode_named)
                    .transpose()
                    .map_err(at)?,
                statement: w.statement,
                connection: w.connection,
                node: w.node,
                every: w.every,
                probability: w.probability,
                after: w
                    .after
                    .as_deref()
                    .map(parse_duration)
                    .transpose()
                    .map_err(at)?,
                until: w
                    .until
                    .as_deref()
                    .map(parse_duration)
                    .transpose()
                    .map_err(at)?,
                serial_consistency: w
                    .serial_consistency
                    .as_deref()
                    .map(serial_named)
                    .transpose()
                    .map_err(at)?,
            };
            let then = reaction(r.then).map_err(at)?;
            rules.push(Rule { name, when, then });
        }
        Ok(Self {
            rules,
            seed: file.seed,
        })
    }

    /// Reads and parses a rules file.
    pub fn load(path: &std::path::Path) -> Result<Self, RulesError> {
        let text = std::fs::read_to_string(path).map_err(|source| RulesError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }
}
