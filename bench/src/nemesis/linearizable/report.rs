//! What the linearizability check found, and its text: per key found not linearizable, the
//! smallest failing sub-history, its operations in time order with the core marked.

use std::fmt;

use serde::Serialize;

use crate::nemesis::history::Op;

/// The check of every key's history.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Linearizability {
    /// Keys checked.
    pub(crate) keys: usize,
    /// Operations the search placed (failed operations and reads of unknown outcome are not
    /// placed: they constrain nothing).
    pub(crate) ops: usize,
    /// The keys whose history is not linearizable, by key.
    pub(crate) violations: Vec<Violation>,
    /// The keys whose search gave up, by key.
    pub(crate) undecided: Vec<Undecided>,
}

impl Linearizability {
    /// Whether every key was found linearizable.
    pub(crate) fn passed(&self) -> bool {
        self.violations.is_empty() && self.undecided.is_empty()
    }
}

/// A key whose history is not linearizable, with its smallest failing sub-history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Violation {
    /// The key.
    pub(crate) key: i64,
    /// Where the shortest failing prefix of its history ends (monotonic nanoseconds; `None`:
    /// only the whole history fails).
    pub(crate) cut_ns: Option<u64>,
    /// That prefix's operations in time order, the core marked.
    pub(crate) prefix: Vec<WitnessOp>,
}

impl Violation {
    /// The positions in the history of the core's operations: those that cannot be
    /// linearized whatever the others did.
    pub(crate) fn core(&self) -> Vec<usize> {
        self.prefix
            .iter()
            .filter(|op| op.in_core)
            .map(|op| op.index)
            .collect()
    }
}

/// One operation of a failing prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct WitnessOp {
    /// Its position in the history.
    pub(crate) index: usize,
    /// The operation, as recorded.
    pub(crate) op: Op,
    /// Whether its answer came after the cut (so the prefix does not know it).
    pub(crate) pending_at_cut: bool,
    /// Whether it is in the core.
    pub(crate) in_core: bool,
}

/// A key whose search gave up (its cache of configurations reached its bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Undecided {
    /// The key.
    pub(crate) key: i64,
    /// Its operations placed.
    pub(crate) ops: usize,
    /// The configurations explored when it gave up.
    pub(crate) configurations: usize,
}

/// A prefix longer than this prints its core only.
const PRINTED: usize = 40;

impl fmt::Display for Linearizability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed() { "passed" } else { "FAILED" };
        writeln!(
            f,
            "linearizability: {verdict}: {} checked, {} placed; {} not linearizable, {} undecided",
            Count(self.keys, "key"),
            Count(self.ops, "operation"),
            self.violations.len(),
            self.undecided.len()
        )?;
        for violation in &self.violations {
            write!(f, "{violation}")?;
        }
        for undecided in &self.undecided {
            writeln!(
                f,
                "key {}: undecided, the search gave up after {} configurations of its {} \
                 operations",
                undecided.key, undecided.configurations, undecided.ops
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let start = self
            .prefix
            .iter()
            .map(|op| op.op.invoke_ns)
            .min()
            .unwrap_or(0);
        let core = self.prefix.iter().filter(|op| op.in_core).count();
        let end = match self.cut_ns {
            Some(cut) => format!("ends at {}", Since(start, cut)),
            None => "is the whole history".to_owned(),
        };
        writeln!(
            f,
            "key {}: NOT linearizable. Its shortest failing prefix {end} (times from its first \
             invoke) and holds {}; the {core} marked * cannot be linearized whatever the \
             others did:",
            self.key,
            Count(self.prefix.len(), "operation"),
        )?;
        let printed = self
            .prefix
            .iter()
            .filter(|op| op.in_core || self.prefix.len() <= PRINTED);
        for op in printed {
            let mark = if op.in_core { '*' } else { ' ' };
            let end = if op.pending_at_cut {
                "pending at the cut".to_owned()
            } else {
                Since(start, op.op.complete_ns).to_string()
            };
            writeln!(
                f,
                "  {mark} op #{} process {} [{} .. {end}] {}",
                op.index,
                op.op.process,
                Since(start, op.op.invoke_ns),
                op.op.describe()
            )?;
        }
        if self.prefix.len() > PRINTED {
            let rest = Count(self.prefix.len() - core, "operation");
            writeln!(f, "  (and {rest} not in the core)")?;
        }
        Ok(())
    }
}

/// A count and its noun, `1 key`, `2 keys`.
struct Count(usize, &'static str);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.0 == 1 { "" } else { "s" };
        write!(f, "{} {}{plural}", self.0, self.1)
    }
}

/// A moment as the time since the start, in milliseconds to the nanosecond.
struct Since(u64, u64);

impl fmt::Display for Since {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.1.saturating_sub(self.0);
        write!(f, "+{}.{:06} ms", ns / 1_000_000, ns % 1_000_000)
    }
}
