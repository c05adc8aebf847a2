//! The report of a nemesis run (`nemesis.json`): the seed and the schedule with each
//! fault's actual times, what the writes came to, their errors by kind, check (a) and the
//! verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::nemesis::acked_writes::AckedWrites;
use crate::nemesis::history::{History, OpKind, Outcome};
use crate::nemesis::schedule::{Fault, Schedule};

/// One fault as it was carried out (times: nanoseconds from the run's start, the clock of
/// the history).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FaultRecord {
    /// The fault as the schedule drew it (its planned start and heal).
    pub(crate) fault: Fault,
    /// When the script was asked to bring the nodes down.
    pub(crate) started_ns: Option<u64>,
    /// When it had (the nodes were down).
    pub(crate) down_ns: Option<u64>,
    /// When the script was asked to bring them back.
    pub(crate) heal_started_ns: Option<u64>,
    /// When it had (resumed, or restarted and answering).
    pub(crate) healed_ns: Option<u64>,
    /// Why the fault could not be applied or healed, if it could not.
    pub(crate) error: Option<String>,
}

impl FaultRecord {
    /// A fault not carried out yet.
    pub(crate) fn planned(fault: Fault) -> Self {
        Self {
            fault,
            started_ns: None,
            down_ns: None,
            heal_started_ns: None,
            healed_ns: None,
            error: None,
        }
    }

    /// Whether its nodes went down and came back.
    pub(crate) fn applied(&self) -> bool {
        self.down_ns.is_some() && self.healed_ns.is_some() && self.error.is_none()
    }
}

/// What the writes came to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Counts {
    /// Writes sent.
    pub(crate) writes: usize,
    /// Acknowledged by the cluster.
    pub(crate) acknowledged: usize,
    /// Refused by it.
    pub(crate) failed: usize,
    /// Of unknown outcome.
    pub(crate) unknown: usize,
    /// Acknowledged and not read back.
    pub(crate) lost: usize,
    /// Refused and yet read back.
    pub(crate) refused_but_present: usize,
    /// Of unknown outcome and read back.
    pub(crate) unknown_found: usize,
    /// Whose key could not be read back.
    pub(crate) unverified: usize,
    /// Values read back that no write wrote.
    pub(crate) unwritten: usize,
}

impl Counts {
    /// The counts of `history` and of its check.
    pub(crate) fn of(history: &History, check: &AckedWrites) -> Self {
        let mut counts = Self::default();
        for op in &history.ops {
            if !matches!(op.kind, OpKind::Write { .. }) {
                continue;
            }
            counts.writes += 1;
            match op.outcome {
                Outcome::Ok(_) => counts.acknowledged += 1,
                Outcome::Failed { .. } => counts.failed += 1,
                Outcome::Unknown { .. } => counts.unknown += 1,
            }
        }
        counts.lost = check.lost.len();
        counts.refused_but_present = check.failed_but_present.len();
        counts.unknown_found = check.unknown.found;
        counts.unverified = check.unverified;
        counts.unwritten = check.unwritten.len();
        counts
    }
}

/// The failed operations of `history` by their reason (the bench's error kind).
pub(crate) fn errors_by_kind(history: &History) -> BTreeMap<String, u64> {
    let mut by_kind = BTreeMap::new();
    for op in &history.ops {
        if let Outcome::Failed { reason } | Outcome::Unknown { reason } = &op.outcome {
            *by_kind.entry(reason.clone()).or_insert(0) += 1;
        }
    }
    by_kind
}

/// `nemesis.json`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct NemesisReport {
    /// The schedule's seed.
    pub(crate) seed: u64,
    /// The backend.
    pub(crate) driver: &'static str,
    /// The contact point.
    pub(crate) node: String,
    /// The keyspace and the run's table.
    pub(crate) table: String,
    /// Writes in flight at once.
    pub(crate) concurrency: usize,
    /// The keys the values went to.
    pub(crate) keys: i64,
    /// The run's length (seconds): writes and faults.
    pub(crate) duration_s: f64,
    /// The schedule drawn.
    pub(crate) schedule: Schedule,
    /// Each fault as it was carried out.
    pub(crate) faults: Vec<FaultRecord>,
    /// How many faults went down and came back.
    pub(crate) faults_applied: usize,
    /// What the writes came to.
    pub(crate) counts: Counts,
    /// Failed and unknown writes by the bench's error kind.
    pub(crate) errors_by_kind: BTreeMap<String, u64>,
    /// Check (a) in full (the lost writes listed).
    pub(crate) acked_writes: AckedWrites,
    /// Keys the read-back could not read, with the last error.
    pub(crate) unread_keys: BTreeMap<i64, String>,
    /// How long healing took (seconds), and why it failed if it did.
    pub(crate) heal_s: f64,
    /// Why the cluster could not be made whole, if it could not.
    pub(crate) heal_error: Option<String>,
    /// The history file, beside the report.
    pub(crate) history: String,
    /// Whether the run passed: every fault applied and healed, the cluster whole, check (a)
    /// passed.
    pub(crate) passed: bool,
}

impl NemesisReport {
    /// What failed, in a few words (`None`: it passed).
    pub(crate) fn failure(&self) -> Option<String> {
        let mut why = Vec::new();
        if !self.acked_writes.passed() {
            why.push(format!(
                "{} acknowledged writes lost, {} refused but present, {} values never written",
                self.counts.lost, self.counts.refused_but_present, self.counts.unwritten
            ));
        }
        if let Some(fault) = self.faults.iter().find_map(|f| f.error.as_deref()) {
            why.push(format!("a fault failed: {fault}"));
        }
        if let Some(heal) = &self.heal_error {
            why.push(heal.clone());
        }
        (!why.is_empty()).then(|| why.join("; "))
    }
}
