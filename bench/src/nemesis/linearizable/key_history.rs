//! One key's operations in the search's terms (P-compositionality: a history of independent
//! registers is linearizable exactly when each key's own history is, so each key is checked
//! alone).
//!
//! Each operation becomes a [`Step`] of the register with its interval. A failed operation
//! did not happen and is left out. An operation whose outcome is unknown becomes *optional*
//! with an *open* completion: it may have taken effect at any time after its invoke, or never;
//! a read of unknown outcome constrains nothing and is left out.
//!
//! The history *as seen at a cut* (a moment) is what an observer then knew: operations
//! invoked after the cut are left out, and those not yet completed at the cut are of unknown
//! outcome. If a history is linearizable, so is every cut of it; so the earliest cut that is
//! not is the shortest failing prefix.

use std::collections::BTreeMap;

use crate::nemesis::history::{Answer, History, Op, OpKind, Outcome};

use super::register::Step;

/// One operation as the search sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckedOp {
    /// Its position in the history.
    pub(crate) index: usize,
    /// What it does to the register, with its answer if known.
    pub(crate) step: Step,
    /// When it was invoked.
    pub(crate) invoke_ns: u64,
    /// When it completed; `None`: open, its effect may come at any time after its invoke.
    pub(crate) complete_ns: Option<u64>,
    /// Whether it may never have taken effect (its outcome unknown, or the witness search
    /// asking whether it matters).
    pub(crate) optional: bool,
}

/// The positions of each key's operations in `history`, in history order.
pub(crate) fn split_by_key(history: &History) -> BTreeMap<i64, Vec<usize>> {
    let mut keys: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (index, op) in history.ops.iter().enumerate() {
        keys.entry(op.key).or_default().push(index);
    }
    keys
}

/// The operations at `indices` (one key's) as seen at `cut` (`None`: the whole history), in
/// the search's terms. The history is expected valid ([`History::validate`]): an answer of
/// another kind than its operation is taken for no answer.
pub(crate) fn checked_ops(
    history: &History,
    indices: &[usize],
    cut: Option<u64>,
) -> Vec<CheckedOp> {
    indices
        .iter()
        .filter_map(|&index| {
            let op = history.ops.get(index)?;
            checked_op(index, op, cut)
        })
        .collect()
}

fn checked_op(index: usize, op: &Op, cut: Option<u64>) -> Option<CheckedOp> {
    if cut.is_some_and(|cut| op.invoke_ns > cut) {
        return None;
    }
    let answer = match op.outcome {
        Outcome::Failed { .. } => return None,
        Outcome::Ok(answer) if cut.is_none_or(|cut| op.complete_ns <= cut) => Some(answer),
        Outcome::Ok(_) | Outcome::Unknown { .. } => None,
    };
    let step = match (op.kind, answer) {
        (OpKind::Write { value }, _) => Step::Write(value),
        (OpKind::Cas { expected, new }, answer) => Step::Cas {
            expected,
            new,
            applied: match answer {
                Some(Answer::Cas { applied }) => Some(applied),
                _ => None,
            },
        },
        (OpKind::Read, Some(Answer::Read { value })) => Step::Read(value),
        (OpKind::Read, _) => return None,
    };
    let known = answer.is_some();
    Some(CheckedOp {
        index,
        step,
        invoke_ns: op.invoke_ns,
        complete_ns: known.then_some(op.complete_ns),
        optional: !known,
    })
}

/// The moments a cut may be made at: the completion of each operation answered, sorted,
/// each once. A cut between two of them sees no more answers than the earlier one.
pub(crate) fn cut_points(history: &History, indices: &[usize]) -> Vec<u64> {
    let mut cuts: Vec<u64> = indices
        .iter()
        .filter_map(|&index| history.ops.get(index))
        .filter(|op| matches!(op.outcome, Outcome::Ok(_)))
        .map(|op| op.complete_ns)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}
