//! Check (a) of a nemesis run: no acknowledged write is lost. Every write the servers
//! acknowledged (at `QUORUM`) must be read back (at `ALL`, after the faults healed).
//!
//! The workload this checks writes a distinct value for every write and never overwrites:
//! each write adds its value to its key (a row per value, or an element of a set), so the
//! read-back of a key returns every value that reached it. Then, per write:
//! - acknowledged and read back: kept; acknowledged and not read back: **lost**;
//! - outcome unknown (a timeout, a lost connection): it may or may not have happened, so it
//!   is counted apart, found or not found, and never as lost;
//! - failed (the server said it did not happen) yet read back: the server was wrong, listed;
//! - its key not in the read-back (that read failed): unverified, not lost.
//!
//! A value read back that no write of the history wrote is listed too: it came from nowhere.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde::Serialize;

use super::history::{History, OpKind, Outcome};

/// What the final read-back found: for each key read, every value it holds. A key the
/// read-back could not read is absent, which is not the same as read and empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ReadBack {
    keys: BTreeMap<i64, BTreeSet<i64>>,
}

impl ReadBack {
    /// A read-back that has read no key yet.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Records that `key` was read and held these values (none: read and empty).
    pub(crate) fn record(&mut self, key: i64, values: impl IntoIterator<Item = i64>) {
        self.keys.entry(key).or_default().extend(values);
    }

    /// The values read for `key`, or `None` if it was not read.
    fn values(&self, key: i64) -> Option<&BTreeSet<i64>> {
        self.keys.get(&key)
    }
}

/// One write of the history, as the report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct WriteRef {
    /// Its position in the history.
    pub(crate) index: usize,
    /// The worker that made it.
    pub(crate) process: u32,
    /// Its key.
    pub(crate) key: i64,
    /// Its value.
    pub(crate) value: i64,
    /// When its answer came (monotonic nanoseconds).
    pub(crate) complete_ns: u64,
}

/// Writes of one kind of outcome, split by whether the read-back found them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Tally {
    /// Read back.
    pub(crate) found: usize,
    /// Not read back.
    pub(crate) not_found: usize,
}

/// A value read back that no write wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Unwritten {
    /// The key it was read from.
    pub(crate) key: i64,
    /// The value.
    pub(crate) value: i64,
}

/// What check (a) found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct AckedWrites {
    /// Acknowledged writes whose key was read back.
    pub(crate) acknowledged: usize,
    /// Acknowledged writes not read back: lost.
    pub(crate) lost: Vec<WriteRef>,
    /// Writes whose outcome was unknown, by whether they were read back (not lost either way).
    pub(crate) unknown: Tally,
    /// Writes the server refused, yet read back.
    pub(crate) failed_but_present: Vec<WriteRef>,
    /// Writes the server refused and that are indeed absent.
    pub(crate) failed_absent: usize,
    /// Writes (of any outcome) whose key the read-back did not read.
    pub(crate) unverified: usize,
    /// Values read back that no write of the history wrote.
    pub(crate) unwritten: Vec<Unwritten>,
}

impl AckedWrites {
    /// Whether nothing is wrong: no lost write, no refused write present, no value from
    /// nowhere.
    pub(crate) fn passed(&self) -> bool {
        self.lost.is_empty() && self.failed_but_present.is_empty() && self.unwritten.is_empty()
    }
}

/// Why the writes of a history cannot be checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AckedWritesError {
    /// Two writes wrote the same value to the same key, so the read-back cannot tell which
    /// of them arrived.
    #[error(
        "ops #{first} and #{second} both write {value} to key {key}: the check needs a distinct \
         value per write"
    )]
    SameValueTwice {
        /// The key.
        key: i64,
        /// The value.
        value: i64,
        /// The first write's position in the history.
        first: usize,
        /// The second's.
        second: usize,
    },
}

/// Checks every write of `history` against `read_back` (reads and compare-and-sets in the
/// history are not this check's and are passed over).
pub(crate) fn check(
    history: &History,
    read_back: &ReadBack,
) -> Result<AckedWrites, AckedWritesError> {
    let mut report = AckedWrites::default();
    let mut written: HashMap<(i64, i64), usize> = HashMap::new();
    for (index, op) in history.ops.iter().enumerate() {
        let OpKind::Write { value } = op.kind else {
            continue;
        };
        if let Some(&first) = written.get(&(op.key, value)) {
            return Err(AckedWritesError::SameValueTwice {
                key: op.key,
                value,
                first,
                second: index,
            });
        }
        written.insert((op.key, value), index);
        let Some(values) = read_back.values(op.key) else {
            report.unverified += 1;
            continue;
        };
        let found = values.contains(&value);
        let write = WriteRef {
            index,
            process: op.process,
            key: op.key,
            value,
            complete_ns: op.complete_ns,
        };
        match (&op.outcome, found) {
            (Outcome::Ok(_), true) => report.acknowledged += 1,
            (Outcome::Ok(_), false) => {
                report.acknowledged += 1;
                report.lost.push(write);
            }
            (Outcome::Unknown { .. }, true) => report.unknown.found += 1,
            (Outcome::Unknown { .. }, false) => report.unknown.not_found += 1,
            (Outcome::Failed { .. }, true) => report.failed_but_present.push(write),
            (Outcome::Failed { .. }, false) => report.failed_absent += 1,
        }
    }
    for (&key, values) in &read_back.keys {
        for &value in values {
            if !written.contains_key(&(key, value)) {
                report.unwritten.push(Unwritten { key, value });
            }
        }
    }
    Ok(report)
}

/// How many of a list the text prints before "and N more".
const LISTED: usize = 20;

impl fmt::Display for AckedWrites {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed() { "passed" } else { "FAILED" };
        writeln!(
            f,
            "acknowledged writes: {verdict}: {} acknowledged, {} lost; unknown outcome: {} found, \
             {} not found; refused: {} absent, {} present; unverified (key not read back): {}",
            self.acknowledged,
            self.lost.len(),
            self.unknown.found,
            self.unknown.not_found,
            self.failed_absent,
            self.failed_but_present.len(),
            self.unverified,
        )?;
        list(f, "lost", &self.lost)?;
        list(f, "refused but present", &self.failed_but_present)?;
        for unwritten in self.unwritten.iter().take(LISTED) {
            writeln!(
                f,
                "  read back but never written: key {} value {}",
                unwritten.key, unwritten.value
            )?;
        }
        more(f, self.unwritten.len())
    }
}

fn list(f: &mut fmt::Formatter<'_>, what: &str, writes: &[WriteRef]) -> fmt::Result {
    for write in writes.iter().take(LISTED) {
        writeln!(
            f,
            "  {what}: op #{} (process {}) key {} value {}, answered at {} ns",
            write.index, write.process, write.key, write.value, write.complete_ns
        )?;
    }
    more(f, writes.len())
}

fn more(f: &mut fmt::Formatter<'_>, listed: usize) -> fmt::Result {
    if listed > LISTED {
        writeln!(f, "  ... and {} more", listed - LISTED)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
