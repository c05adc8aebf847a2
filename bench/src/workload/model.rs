//! The compiled workload: its statements with their generators, its `[[run]]` entries
//! (single, sequence, batch) and the per-statement records they make, and what it answers
//! per iteration (which entry runs, the key space, who wrote a validated row).

use super::expr::{mix, Expr};
use crate::units;

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
    /// (`crate::engine::validate`).
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
pub(crate) fn is_conditional(cql: &str) -> bool {
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

/// The most statements a BATCH may hold (the protocol counts them in 16 bits).
pub(crate) const MAX_BATCH_STATEMENTS: u16 = u16::MAX;

/// How a BATCH is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum BatchKind {
    /// Logged (atomic, through the batch log).
    Logged,
    /// Unlogged.
    Unlogged,
    /// Counter updates.
    Counter,
}

impl BatchKind {
    /// Its name in workloads and reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BatchKind::Logged => "logged",
            BatchKind::Unlogged => "unlogged",
            BatchKind::Counter => "counter",
        }
    }
}

/// How a `[[run]]` entry runs its statements in one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunMode {
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
    pub(crate) statements: std::ops::Range<usize>,
    /// Single, sequence or batch.
    pub(crate) mode: RunMode,
    /// Copies of the statements in a batch (1 otherwise).
    pub repeat: u32,
    /// Its first entry in the per-statement records ([`Workload::entries`]): a single
    /// statement or a batch has one; a sequence one per step, then one for the whole.
    pub(crate) entry: usize,
}

impl RunGroup {
    /// The group of a phase of one statement (the load phase).
    pub(crate) fn single(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            statements: 0..1,
            mode: RunMode::Single,
            repeat: 1,
            entry: 0,
        }
    }

    /// Its number of entries in the per-statement records.
    pub(crate) fn entries(&self) -> usize {
        match self.mode {
            RunMode::Sequence => self.statements.len() + 1,
            RunMode::Single | RunMode::Batch(_) => 1,
        }
    }
}

/// What one entry of the per-statement records stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A statement's requests (a single one, or a step of a sequence).
    Statement,
    /// A batch's requests (one per iteration).
    Batch(BatchKind),
    /// A sequence's iterations: the whole sequence's latency, not requests.
    Sequence,
}

/// One entry of the per-statement records, as reports name it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// Its name (`read`; `order.insert` for a step; `order` for a sequence or a batch).
    pub(crate) name: String,
    /// Its CQL (a batch's: its statements joined by `; `; a sequence's: its steps').
    pub(crate) cql: String,
    /// Its `[[run]]` entry (index into [`Workload::groups`]).
    pub(crate) group: usize,
    /// Statement, batch or sequence.
    pub(crate) kind: EntryKind,
    /// Its requests are conditional updates, whose `[applied]` is counted.
    pub(crate) conditional: bool,
}

impl Statement {
    /// Its name, with its line when it has one: `read (line 12)`.
    pub(crate) fn label(&self) -> String {
        if self.line > 0 {
            format!("{} (line {})", self.name, self.line)
        } else {
            self.name.clone()
        }
    }
}

/// The load phase: `count` iterations of one statement.
#[derive(Debug, Clone)]
pub(crate) struct Load {
    /// Iterations.
    pub(crate) count: u64,
    /// The statement.
    pub(crate) statement: Statement,
}

/// A compiled workload.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Its name.
    pub(crate) name: String,
    /// One line on what it does.
    pub(crate) description: String,
    /// Every parameter with the value in force, for reports.
    pub(crate) params: Vec<(String, String)>,
    /// Schema statements, in order.
    pub(crate) schema: Vec<String>,
    /// The load phase, if it has one.
    pub(crate) load: Option<Load>,
    /// The run statements, every `[[run]]` entry's in file order (a sequence's steps, a
    /// batch's statements).
    pub run: Vec<Statement>,
    /// The `[[run]]` entries, each over a range of `run`.
    pub groups: Vec<RunGroup>,
    /// The weight of each of `groups`, as the workload gives it.
    pub(super) weights: Vec<f64>,
    /// Cumulative weights of `groups`, scaled to `u64::MAX`.
    pub(super) thresholds: Vec<u64>,
}

impl Workload {
    /// The entries of the per-statement records, in order: each `[[run]]` entry's (see
    /// [`RunGroup::entry`]).
    pub(crate) fn entries(&self) -> Vec<Entry> {
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
    pub(crate) fn key_space(&self) -> Option<u64> {
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
    pub(crate) fn weight(&self, k: usize) -> Option<(f64, f64)> {
        let total: f64 = self.weights.iter().sum();
        let w = *self.weights.get(k)?;
        Some((w, if total > 0.0 { w / total } else { 0.0 }))
    }

    /// The statement whose generators made the row that validated `statement` reads: the
    /// run statement its `written_by` names, else the `[load]` statement.
    pub(crate) fn writer_of(&self, statement: &Statement) -> Option<&Statement> {
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
