//! Fault rules as data: a condition on a request paired with a reaction.
//!
//! ```toml
//! seed = 7                          # randomness of probabilities and delays (repeatable)
//!
//! [[rule]]
//! name = "slow reads"               # shown in the log and in fire counts
//! when = { opcode = "EXECUTE", statement = "SELECT", probability = 0.1 }
//! then = { delay = { exponential = "2ms" } }
//!
//! [[rule]]
//! name = "overloaded"
//! when = { every = 100, after = "1s", until = "5s" }
//! then = { error = { code = "overloaded", message = "try later" } }
//! ```
//!
//! Conditions (all given ones must hold; none means every request): `opcode` (OPTIONS,
//! STARTUP, REGISTER, QUERY, PREPARE, EXECUTE, BATCH), `statement` (a substring of the
//! QUERY/PREPARE text, or of the prepared statement's text for EXECUTE), `connection` (the
//! Nth connection the stub accepted, from 1), `node` (the node of a cluster stub the request
//! reached, from 0; a single stub is node 0), `every` (every Nth request that met the other
//! conditions), `probability`, a time window `after`/`until` since the stub started, and
//! `serial_consistency` (the level a QUERY, EXECUTE or BATCH carries, `SERIAL` or
//! `LOCAL_SERIAL`, or `none`: what a client actually sent).
//!
//! Reactions: `delay` (`fixed`, `uniform = ["1ms", "5ms"]`, `exponential` mean, or
//! `ramp = ["1ms", "5ms"], over = "20s"`: a drift, the delay growing steadily from the first
//! to the second over that long since the stub started, then staying; by equal steps, or with
//! `growth = "geometric"` by an equal factor per second, so that answers slow by the same
//! share in every stretch of the run), `error`
//! (any CQL error code by name or number, with its required fields filled in), `stall`
//! (the connection stops answering and reading for a duration), `"drop"` (the connection is
//! closed), `malformed` (`bad_version`, `oversized_length`, `truncated`, `corrupt_lz4`,
//! `bad_body`, each a broken frame in place of the answer), `"wrong_stream"` (the answer carries a stream id
//! the client never used), `rate_limit = { op = "read" | "write", rejected_by_coordinator }`
//! (ScyllaDB's rate-limit error on a connection that turned that extension on, Config_error
//! on others, as ScyllaDB does).
//!
//! Durations (`after`, `until`, delays, `stall`) read as the bench reads its options (the
//! crate `doppio-units`): a number with its unit (`500us`, `2ms`, `1.5s`, `2m`, `1h30m`); a
//! bare number is refused with a hint.
//!
//! Invariant: the first rule whose condition holds decides; a request matches at most one.

use std::time::Duration;

use doppio_proto::consistency::Consistency;
use doppio_proto::frame::Opcode;
use doppio_proto::response::ErrorCode;
use doppio_proto::scylla_extensions::{RateLimitError, RateLimitedOp};
use serde::Deserialize;

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

/// A delay distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delay {
    /// Always this long.
    Fixed(Duration),
    /// Uniform between the two.
    Uniform(Duration, Duration),
    /// Exponential with this mean.
    Exponential(Duration),
    /// A drift: `from` when the stub starts, growing linearly to `to` at `over` after it,
    /// then `to`.
    Ramp {
        /// The delay at the start.
        from: Duration,
        /// The delay from `over` on.
        to: Duration,
        /// How long the growth takes.
        over: Duration,
        /// By an equal factor per second (`growth = "geometric"`) rather than equal steps.
        geometric: bool,
    },
}

impl Delay {
    /// A delay drawn with `u`, uniform in [0, 1), `elapsed` after the stub started.
    pub fn sample(&self, u: f64, elapsed: Duration) -> Duration {
        match *self {
            Delay::Fixed(d) => d,
            Delay::Ramp {
                from,
                to,
                over,
                geometric,
            } => {
                let done = if over.is_zero() {
                    1.0
                } else {
                    (elapsed.as_secs_f64() / over.as_secs_f64()).min(1.0)
                };
                let (from_s, to_s) = (from.as_secs_f64(), to.as_secs_f64());
                let now = if geometric {
                    from_s * (to_s / from_s).powf(done)
                } else {
                    from_s + (to_s - from_s) * done
                };
                Duration::from_secs_f64(now.max(0.0))
            }
            Delay::Uniform(a, b) => a + (b.saturating_sub(a)).mul_f64(u),
            Delay::Exponential(mean) => mean.mul_f64(-(1.0 - u).max(f64::MIN_POSITIVE).ln()),
        }
    }
}

/// How a malformed frame is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// A version byte of no protocol.
    BadVersion,
    /// A body length beyond any limit (2 GiB - 1).
    OversizedLength,
    /// A header announcing more body than is sent, then the connection is closed.
    Truncated,
    /// The compression flag on a body that is not lz4.
    CorruptLz4,
    /// A well-formed frame whose RESULT body is not: a result kind no protocol defines.
    /// The frame layer accepts it; only decoding the message fails.
    BadBody,
}

/// What the stub does instead of (or before) answering.
#[derive(Debug, Clone, PartialEq)]
pub enum Reaction {
    /// Answer after a delay (the connection's other answers are not held up).
    Delay(Delay),
    /// Answer with an ERROR.
    Error {
        /// The code.
        code: ErrorCode,
        /// The message.
        message: String,
    },
    /// Stop answering and reading this connection for the duration, then go on.
    Stall(Duration),
    /// Close the connection at once.
    Drop,
    /// Send a broken frame instead of the answer.
    Malformed(Malformed),
    /// Answer on a stream id the client never used.
    WrongStream,
    /// ScyllaDB's rate-limit error (its protocol extension), when the connection turned the
    /// extension on; Config_error otherwise, as ScyllaDB falls back.
    RateLimit(RateLimitError),
}

/// When a rule applies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Condition {
    /// The request's opcode.
    pub opcode: Option<Opcode>,
    /// A substring of the statement text.
    pub statement: Option<String>,
    /// The connection's number (1 = the first accepted).
    pub connection: Option<u64>,
    /// The node of a cluster stub the request reached (0 = the first; a single stub is 0).
    pub node: Option<u8>,
    /// Every Nth matching request.
    pub every: Option<u64>,
    /// Probability of applying to a matching request.
    pub probability: Option<f64>,
    /// Not before this long after the stub started.
    pub after: Option<Duration>,
    /// Not after this long after the stub started.
    pub until: Option<Duration>,
    /// The serial consistency the request carries (`Some(None)`: none).
    pub serial_consistency: Option<Option<Consistency>>,
}

/// One rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its name.
    pub name: String,
    /// When it applies.
    pub when: Condition,
    /// What it does.
    pub then: Reaction,
}

/// Rules and the seed of their randomness.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    /// The rules, in order.
    pub rules: Vec<Rule>,
    /// Seed of the random choices (probabilities, delays).
    pub seed: u64,
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
fn parse_duration(text: &str) -> Result<Duration, String> {
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

/// What a request looks like to the rules.
#[derive(Debug, Clone, Copy)]
pub struct Probe<'a> {
    /// Its opcode.
    pub opcode: Opcode,
    /// Its statement text, if any.
    pub statement: Option<&'a str>,
    /// Its connection's number.
    pub connection: u64,
    /// The node it reached (0 for a single stub).
    pub node: u8,
    /// Time since the stub started.
    pub elapsed: Duration,
    /// The serial consistency a QUERY, EXECUTE or BATCH carries.
    pub serial_consistency: Option<Consistency>,
}

/// One shard's rule state: per-rule match counts and a random generator.
#[derive(Debug)]
pub struct Matcher {
    rules: std::sync::Arc<Rules>,
    seen: Vec<u64>,
    rng: u64,
}

impl Matcher {
    /// A matcher for shard `shard`.
    pub fn new(rules: std::sync::Arc<Rules>, shard: usize) -> Self {
        let n = rules.rules.len();
        let rng = (rules.seed ^ 0x9e37_79b9_7f4a_7c15).wrapping_add(shard as u64 * 0x2545_f491) | 1;
        Self {
            rules,
            seen: vec![0; n],
            rng,
        }
    }

    /// True if there are no rules (the hot path skips matching).
    pub fn is_empty(&self) -> bool {
        self.rules.rules.is_empty()
    }

    /// A uniform number in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The first rule that applies to `probe`, by index.
    pub fn check(&mut self, probe: &Probe<'_>) -> Option<usize> {
        for i in 0..self.rules.rules.len() {
            let c = &self.rules.rules[i].when;
            if c.opcode.is_some_and(|o| o != probe.opcode)
                || c.connection.is_some_and(|n| n != probe.connection)
                || c.node.is_some_and(|n| n != probe.node)
                || c.after.is_some_and(|a| probe.elapsed < a)
                || c.until.is_some_and(|u| probe.elapsed > u)
                || c.serial_consistency
                    .is_some_and(|s| s != probe.serial_consistency)
            {
                continue;
            }
            if let Some(s) = &c.statement {
                if !probe.statement.is_some_and(|t| t.contains(s.as_str())) {
                    continue;
                }
            }
            self.seen[i] += 1;
            if c.every.is_some_and(|n| self.seen[i] % n != 0) {
                continue;
            }
            if let Some(p) = c.probability {
                if self.uniform() >= p {
                    continue;
                }
            }
            return Some(i);
        }
        None
    }

    /// Rule `i`.
    pub fn rule(&self, i: usize) -> &Rule {
        &self.rules.rules[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
seed = 7

[[rule]]
name = "slow reads"
when = { opcode = "EXECUTE", statement = "SELECT", probability = 0.5 }
then = { delay = { exponential = "2ms" } }

[[rule]]
name = "overloaded"
when = { every = 3, after = "1s", until = "5s" }
then = { error = { code = "overloaded", message = "try later" } }

[[rule]]
when = { connection = 2 }
then = "drop"

[[rule]]
then = { malformed = "bad_version" }
"#;

    #[test]
    fn the_documented_example_parses() {
        let r = Rules::parse(EXAMPLE).unwrap();
        assert_eq!(r.seed, 7);
        assert_eq!(r.rules.len(), 4);
        assert_eq!(
            r.rules[0].then,
            Reaction::Delay(Delay::Exponential(Duration::from_millis(2)))
        );
        assert_eq!(r.rules[0].when.opcode, Some(Opcode::Execute));
        assert!(matches!(
            r.rules[1].then,
            Reaction::Error {
                code: ErrorCode::Overloaded,
                ..
            }
        ));
        assert_eq!(r.rules[2].name, "rule 3");
        assert_eq!(r.rules[2].then, Reaction::Drop);
        assert_eq!(r.rules[3].then, Reaction::Malformed(Malformed::BadVersion));
    }

    #[test]
    fn bad_files_say_which_rule_and_what() {
        for (text, expect) in [
            ("[[rule]]\nthen = \"explode\"", "unknown reaction"),
            (
                "[[rule]]\nname = \"x\"\nwhen = { opcode = \"FOO\" }\nthen = \"drop\"",
                "x: unknown opcode",
            ),
            (
                "[[rule]]\nwhen = { every = 0 }\nthen = \"drop\"",
                "at least 1",
            ),
            (
                "[[rule]]\nthen = { error = { code = \"nope\" } }",
                "unknown error code",
            ),
            (
                "[[rule]]\nthen = { delay = { fixed = \"3 parsecs\" } }",
                "`parsecs` is not a unit of time",
            ),
            (
                "[[rule]]\nthen = { stall = \"1s\", malformed = \"truncated\" }",
                "exactly one",
            ),
            (
                "[[rule]]\nthen = { delay = { ramp = [\"1ms\", \"5ms\"] } }",
                "both ramp",
            ),
            (
                "[[rule]]\nthen = { delay = { over = \"1s\" } }",
                "both ramp",
            ),
            (
                "[[rule]]\nthen = { delay = { fixed = \"1ms\", ramp = [\"1ms\", \"5ms\"], over = \"1s\" } }",
                "exactly one of fixed, uniform, exponential, ramp",
            ),
            (
                "[[rule]]\nthen = { delay = { ramp = [\"1ms\", \"5\"], over = \"1s\" } }",
                "unit",
            ),
            (
                "[[rule]]\nthen = { delay = { ramp = [\"0ms\", \"5ms\"], over = \"1s\", growth = \"geometric\" } }",
                "above 0 at both ends",
            ),
            (
                "[[rule]]\nthen = { delay = { ramp = [\"1ms\", \"5ms\"], over = \"1s\", growth = \"cubic\" } }",
                "unknown growth `cubic`",
            ),
            (
                "[[rule]]\nthen = { delay = { fixed = \"1ms\", growth = \"geometric\" } }",
                "growth belongs to a ramp",
            ),
        ] {
            let e = Rules::parse(text).unwrap_err().to_string();
            assert!(e.contains(expect), "{text}: {e}");
        }
    }

    #[test]
    fn a_ramp_delay_drifts_from_its_first_to_its_second_bound_then_stays() {
        let rules = Rules::parse(
            "[[rule]]\nthen = { delay = { ramp = [\"1ms\", \"5ms\"], over = \"4s\" } }",
        )
        .unwrap();
        let Reaction::Delay(d) = rules.rules[0].then else {
            panic!("not a delay: {:?}", rules.rules[0].then);
        };
        let at = |ms: u64| d.sample(0.3, Duration::from_millis(ms));
        assert_eq!(at(0), Duration::from_millis(1));
        assert_eq!(at(2000), Duration::from_millis(3));
        assert_eq!(at(4000), Duration::from_millis(5));
        assert_eq!(at(60_000), Duration::from_millis(5));
        // A ramp may slow down as well as speed up, and one over no time is its end at once.
        let down = Delay::Ramp {
            from: Duration::from_millis(4),
            to: Duration::ZERO,
            over: Duration::from_secs(2),
            geometric: false,
        };
        assert_eq!(
            down.sample(0.9, Duration::from_secs(1)),
            Duration::from_millis(2)
        );
        let instant = Delay::Ramp {
            from: Duration::ZERO,
            to: Duration::from_millis(7),
            over: Duration::ZERO,
            geometric: false,
        };
        assert_eq!(
            instant.sample(0.0, Duration::ZERO),
            Duration::from_millis(7)
        );
        // Geometric: 2 ms to 32 ms over 4 s doubles every second.
        let rules = Rules::parse(
            "[[rule]]\nthen = { delay = { ramp = [\"2ms\", \"32ms\"], over = \"4s\", growth = \"geometric\" } }",
        )
        .unwrap();
        let Reaction::Delay(g) = rules.rules[0].then else {
            panic!("not a delay");
        };
        for (s, ms) in [
            (0, 2.0),
            (1, 4.0),
            (2, 8.0),
            (3, 16.0),
            (4, 32.0),
            (9, 32.0),
        ] {
            let d = g.sample(0.5, Duration::from_secs(s)).as_secs_f64() * 1e3;
            assert!((d - ms).abs() < 1e-6, "{s} s: {d} ms");
        }
    }

    #[test]
    fn a_node_condition_selects_the_requests_that_reached_that_node() {
        let r = Rules::parse(
            "[[rule]]\nname = \"n1\"\nwhen = { node = 1 }\nthen = { error = { code = \"overloaded\" } }\n",
        )
        .unwrap();
        assert_eq!(r.rules[0].when.node, Some(1));
        let mut m = Matcher::new(std::sync::Arc::new(r), 0);
        let at = |node| Probe {
            opcode: Opcode::Query,
            statement: Some("SELECT 1"),
            connection: 1,
            node,
            elapsed: Duration::ZERO,
            serial_consistency: None,
        };
        assert_eq!(m.check(&at(0)), None);
        assert_eq!(m.check(&at(1)), Some(0));
        assert_eq!(m.check(&at(2)), None);
    }

    #[test]
    fn conditions_select_requests_and_every_counts_matches() {
        let r = std::sync::Arc::new(Rules::parse(EXAMPLE).unwrap());
        let mut m = Matcher::new(r, 0);
        let probe = |opcode, statement, elapsed| Probe {
            opcode,
            statement,
            connection: 1,
            node: 0,
            elapsed: Duration::from_secs(elapsed),
            serial_consistency: None,
        };
        // Before 1 s, a QUERY matches only the catch-all malformed rule.
        assert_eq!(m.check(&probe(Opcode::Query, Some("SELECT 1"), 0)), Some(3));
        // Within the window, every third matching request is overloaded.
        let hits: Vec<_> = (0..6)
            .map(|_| m.check(&probe(Opcode::Query, None, 2)))
            .collect();
        assert_eq!(
            hits.iter().filter(|h| **h == Some(1)).count(),
            2,
            "{hits:?}"
        );
        // Probability 0.5 over many EXECUTEs of a SELECT: about half are delayed.
        let delayed = (0..2000)
            .filter(|_| m.check(&probe(Opcode::Execute, Some("SELECT v"), 0)) == Some(0))
            .count();
        assert!((800..1200).contains(&delayed), "{delayed}");
        let d = Delay::Uniform(Duration::from_millis(1), Duration::from_millis(3));
        assert_eq!(d.sample(0.5, Duration::ZERO), Duration::from_millis(2));
        assert!(
            Delay::Exponential(Duration::from_millis(2)).sample(0.0, Duration::ZERO)
                == Duration::ZERO
        );
    }

    #[test]
    fn durations_read_as_the_bench_reads_them() {
        let ms = Duration::from_millis;
        for (text, want) in [
            ("20us", Duration::from_micros(20)),
            ("20µs", Duration::from_micros(20)),
            ("2ms", ms(2)),
            ("5 ms", ms(5)),
            ("1.5s", ms(1500)),
            ("2m", ms(120_000)),
            ("1h30m", ms(5_400_000)),
        ] {
            assert_eq!(parse_duration(text), Ok(want), "{text}");
        }
        for bad in ["", "-1s", "-1", "1k", "soon", "0.5", "1M"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.contains("is not a duration"), "{e}");
        }
        // A bare number says how to write it.
        let e = parse_duration("2").unwrap_err();
        assert!(e.contains("`2s` or `2ms`"), "{e}");
    }

    #[test]
    fn rate_limit_reactions_read_their_operation() {
        let r = Rules::parse(
            "[[rule]]\nthen = { rate_limit = { op = \"write\", rejected_by_coordinator = true } }\n\
             [[rule]]\nthen = { rate_limit = { op = \"READ\" } }",
        )
        .unwrap();
        assert_eq!(
            r.rules[0].then,
            Reaction::RateLimit(RateLimitError {
                op: RateLimitedOp::Write,
                rejected_by_coordinator: true
            })
        );
        assert_eq!(
            r.rules[1].then,
            Reaction::RateLimit(RateLimitError {
                op: RateLimitedOp::Read,
                rejected_by_coordinator: false
            })
        );
        let e = Rules::parse("[[rule]]\nthen = { rate_limit = { op = \"scan\" } }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("rate_limit op `scan` (read or write)"), "{e}");
    }

    #[test]
    fn error_codes_are_known_by_name() {
        assert_eq!(
            error_code_named("read_timeout"),
            Some(ErrorCode::ReadTimeout)
        );
        assert_eq!(
            error_code_named("is_bootstrapping"),
            Some(ErrorCode::IsBootstrapping)
        );
        assert_eq!(error_code_named("unprepared"), Some(ErrorCode::Unprepared));
        assert_eq!(error_code_named("bogus"), None);
    }
}
