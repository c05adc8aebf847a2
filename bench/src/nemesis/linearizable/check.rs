//! The check of (b): every key's history searched for a linearization, and for each key
//! without one its smallest failing sub-history.

use crate::nemesis::history::{History, HistoryError, Outcome};

use super::key_history::{checked_ops, split_by_key};
use super::limits::Limits;
use super::report::{Linearizability, Undecided, Violation, WitnessOp};
use super::search::{search, Found};
use super::witness::witness;

/// Checks that `history` is linearizable as a set of compare-and-set registers, one per key
/// (absent at first), within `limits`. An error only for a history no run records.
pub(crate) fn check(history: &History, limits: &Limits) -> Result<Linearizability, HistoryError> {
    history.validate()?;
    let mut report = Linearizability::default();
    for (key, indices) in split_by_key(history) {
        let ops = checked_ops(history, &indices, None);
        report.keys += 1;
        report.ops += ops.len();
        let searched = search(&ops, limits.cache_bytes);
        match searched.found {
            Found::Linearizable => {}
            Found::GaveUp => report.undecided.push(Undecided {
                key,
                ops: ops.len(),
                configurations: searched.configurations,
            }),
            Found::NotLinearizable => {
                report
                    .violations
                    .push(violation(history, key, &indices, limits));
            }
        }
    }
    Ok(report)
}

fn violation(history: &History, key: i64, indices: &[usize], limits: &Limits) -> Violation {
    let found = witness(history, indices, limits);
    let mut prefix: Vec<WitnessOp> = found
        .prefix
        .iter()
        .filter_map(|&index| {
            let op = history.ops.get(index)?;
            let answered = matches!(op.outcome, Outcome::Ok(_));
            Some(WitnessOp {
                index,
                op: op.clone(),
                pending_at_cut: answered && found.cut_ns.is_some_and(|cut| op.complete_ns > cut),
                in_core: found.core.contains(&index),
            })
        })
        .collect();
    prefix.sort_by_key(|op| (op.op.invoke_ns, op.index));
    Violation {
        key,
        cut_ns: found.cut_ns,
        prefix,
    }
}
