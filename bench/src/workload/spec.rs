//! The workload file as read: its TOML tables, every value that an error may point at kept
//! with its place in the text ([`line_of`] turns a place into a line).

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileSpec {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) params: BTreeMap<String, toml::Value>,
    /// Named sub-expressions, usable in every argument (inlined where named).
    #[serde(default)]
    pub(super) vars: BTreeMap<String, toml::Spanned<String>>,
    pub(super) schema: Option<SchemaSpec>,
    pub(super) load: Option<StatementSpec>,
    #[serde(default)]
    pub(super) run: Vec<RunSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SchemaSpec {
    pub(super) statements: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StatementSpec {
    pub(super) name: Option<String>,
    /// With its place in the file, so that errors found later (at bind time) name the line.
    pub(super) statement: toml::Spanned<String>,
    /// With their places in the file, so that an error can name the line.
    #[serde(default)]
    pub(super) args: Vec<toml::Spanned<String>>,
    /// Accepted and ignored in `[load]` (as before `[[run]]` had its own table).
    #[allow(dead_code)]
    pub(super) weight: Option<toml::Value>,
    pub(super) count: Option<toml::Value>,
    /// `[[run]]` only: the load iteration whose row this statement reads (`--validate`).
    pub(super) validate: Option<toml::Spanned<String>>,
    /// Its requests may be applied twice safely (`--retries` may resend one whose answer
    /// was lost).
    #[serde(default)]
    pub(super) idempotent: bool,
}

/// A `[[run]]` entry: one statement, or `step`s run one after another in one iteration,
/// optionally sent together as one BATCH.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RunSpec {
    pub(super) name: Option<String>,
    pub(super) statement: Option<toml::Spanned<String>>,
    #[serde(default)]
    pub(super) args: Vec<toml::Spanned<String>>,
    pub(super) weight: Option<toml::Value>,
    /// Accepted and ignored, as before sequences (a `[[run]]` runs for the phase's limit).
    #[allow(dead_code)]
    pub(super) count: Option<toml::Value>,
    pub(super) validate: Option<toml::Spanned<String>>,
    /// The run statement whose rows `validate` reads (default: the `[load]` statement).
    pub(super) written_by: Option<toml::Spanned<String>>,
    #[serde(default)]
    pub(super) idempotent: bool,
    /// `[[run.step]]` tables (or `step = [{...}, ...]`).
    #[serde(default)]
    pub(super) step: Vec<StepSpec>,
    /// `logged`, `unlogged` or `counter`: the statements go as one BATCH.
    pub(super) batch: Option<toml::Spanned<String>>,
    /// A batch of `repeat` copies of its statements, copy `k` with iteration `i * repeat + k`:
    /// an integer or an expression of parameters, as `weight`.
    pub(super) repeat: Option<toml::Spanned<toml::Value>>,
}

/// One step of a `[[run]]` sequence (or one statement of its batch).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StepSpec {
    pub(super) name: Option<String>,
    pub(super) statement: toml::Spanned<String>,
    #[serde(default)]
    pub(super) args: Vec<toml::Spanned<String>>,
    pub(super) validate: Option<toml::Spanned<String>>,
    pub(super) written_by: Option<toml::Spanned<String>>,
    pub(super) idempotent: Option<bool>,
}

/// The 1-based line of byte `offset` in `text`.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset)
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
