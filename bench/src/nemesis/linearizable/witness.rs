//! The smallest failing sub-history of a key found not linearizable, in two steps.
//!
//! 1. The shortest failing prefix: the earliest cut of the key's history (see
//!    [`super::key_history`]) that is already not linearizable. Cuts only grow worse with
//!    time (a cut of a linearizable history is linearizable), so a binary search over the
//!    moments answers arrived finds it; it ends at the answer that made the history fail.
//! 2. Its core: each answered operation of that prefix in turn is made optional (it may have
//!    taken effect within its interval, or never); if the prefix still fails, it stays so,
//!    since the failure does not depend on it. What stays answered is the core: operations
//!    that cannot be linearized together whatever the others did. Making an operation
//!    optional only allows more, so the core's failure is a failure of the whole history.
//!
//! A search that gives up counts as not failing: the prefix may come out longer and the core
//! larger, never wrong.

use crate::nemesis::history::History;

use super::key_history::{checked_ops, cut_points, CheckedOp};
use super::limits::Limits;
use super::search::{search, Found};

/// A key's smallest failing sub-history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Witness {
    /// Where the shortest failing prefix ends (`None`: no cut failed, the whole history is
    /// the prefix).
    pub(crate) cut_ns: Option<u64>,
    /// The prefix's operations (positions in the history), those pending at the cut
    /// included.
    pub(crate) prefix: Vec<usize>,
    /// The operations that cannot be linearized whatever the others did.
    pub(crate) core: Vec<usize>,
}

/// The smallest failing sub-history of the key whose operations are at `indices`, found not
/// linearizable as a whole.
pub(crate) fn witness(history: &History, indices: &[usize], limits: &Limits) -> Witness {
    let cuts = cut_points(history, indices);
    let fails = |cut: Option<u64>| {
        search(&checked_ops(history, indices, cut), limits.cache_bytes).found
            == Found::NotLinearizable
    };
    // The first failing cut is in lo..=hi; hi == cuts.len() stands for the whole history.
    let (mut lo, mut hi) = (0, cuts.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fails(cuts.get(mid).copied()) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let cut_ns = cuts.get(hi).copied();
    let mut ops = checked_ops(history, indices, cut_ns);
    let prefix = history_positions(indices, cut_ns, history);
    let core = core(&mut ops, limits);
    Witness {
        cut_ns,
        prefix,
        core,
    }
}

/// The operations at `indices` invoked by `cut` (failed ones included: they are shown).
fn history_positions(indices: &[usize], cut: Option<u64>, history: &History) -> Vec<usize> {
    indices
        .iter()
        .copied()
        .filter(|&index| {
            history
                .ops
                .get(index)
                .is_some_and(|op| cut.is_none_or(|cut| op.invoke_ns <= cut))
        })
        .collect()
}

/// Makes each answered operation optional in turn (the last `limits.core_ops` answered, the
/// latest first), keeping it so while `ops` still fails; returns the positions of those
/// that stay answered.
fn core(ops: &mut [CheckedOp], limits: &Limits) -> Vec<usize> {
    let mut answered: Vec<usize> = (0..ops.len()).filter(|&i| !ops[i].optional).collect();
    answered.sort_by_key(|&i| std::cmp::Reverse((ops[i].complete_ns, ops[i].index)));
    for &i in answered.iter().take(limits.core_ops) {
        ops[i].optional = true;
        if search(ops, limits.core_cache_bytes).found != Found::NotLinearizable {
            ops[i].optional = false;
        }
    }
    let mut core: Vec<usize> = ops
        .iter()
        .filter(|op| !op.optional)
        .map(|op| op.index)
        .collect();
    core.sort_unstable();
    core
}
