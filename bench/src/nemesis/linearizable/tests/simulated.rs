//! Histories of a simulated register: processes make operations one after another on a few
//! keys; each operation that takes effect does so at a random moment of its interval (one of
//! unknown outcome maybe after the client gave up, or never) on a real register per key, and
//! gets the answer that register gives. Such histories are linearizable by construction;
//! with one read's answer corrupted they are not.

use std::collections::BTreeMap;

use super::super::key_history::{checked_ops, split_by_key};
use super::super::search::{search, Found};
use super::*;

/// How an operation of the simulation ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Answered,
    /// Outcome unknown; whether it took effect.
    Unknown(bool),
    Refused,
}

/// An operation planned before the register runs: who, which key, what, when, how it ends
/// and the moment it takes effect (if it does).
struct Plan {
    process: u32,
    key: i64,
    /// 0 read, 1 write, 2 compare-and-set.
    what: u8,
    invoke: u64,
    complete: u64,
    fate: Fate,
    effect_at: Option<u64>,
}

/// What the simulation made, beside the history: how many of each interesting case.
#[derive(Default)]
struct Seen {
    took_effect_unknown: usize,
    not_taken_unknown: usize,
    after_give_up: usize,
    cas_applied: usize,
    cas_not_applied: usize,
    overlapping: usize,
}

/// `unknown_in_20`: how many operations in 20 end with an unknown outcome (one more in 20 is
/// refused).
fn plan(
    rng: &mut fastrand::Rng,
    keys: i64,
    processes: u32,
    per_process: usize,
    unknown_in_20: u8,
) -> Vec<Plan> {
    let mut plans = Vec::new();
    for process in 0..processes {
        let mut t = rng.u64(0..20);
        for _ in 0..per_process {
            let key = rng.i64(0..keys);
            let what = match rng.u8(0..10) {
                0..=3 => 0,
                4..=6 => 1,
                _ => 2,
            };
            let invoke = t;
            let complete = t + rng.u64(1..=40);
            let fate = match rng.u8(0..20) {
                n if n < unknown_in_20 => Fate::Unknown(rng.bool()),
                n if n == unknown_in_20 => Fate::Refused,
                _ => Fate::Answered,
            };
            let effect_at = match fate {
                Fate::Answered => Some(rng.u64(invoke..=complete)),
                // The effect may land after the client stopped waiting.
                Fate::Unknown(true) => Some(rng.u64(invoke..=complete + 100)),
                Fate::Unknown(false) | Fate::Refused => None,
            };
            plans.push(Plan {
                process,
                key,
                what,
                invoke,
                complete,
                fate,
                effect_at,
            });
            t = complete + rng.u64(0..10);
        }
    }
    plans
}

/// A linearizable history: `processes` processes of `per_process` operations on `keys` keys,
/// `unknown_in_20` in 20 of unknown outcome.
fn simulate(
    seed: u64,
    keys: i64,
    processes: u32,
    per_process: usize,
    unknown_in_20: u8,
) -> (History, Seen) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let plans = plan(&mut rng, keys, processes, per_process, unknown_in_20);
    let mut order: Vec<usize> = (0..plans.len()).collect();
    // Effects in time order; operations without one after, given values no one reads.
    order.sort_by_key(|&i| (plans[i].effect_at.is_none(), plans[i].effect_at, i));
    let mut registers: BTreeMap<i64, Option<i64>> = BTreeMap::new();
    let mut written: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    let mut next_value = 1;
    let mut seen = Seen::default();
    let mut ops: Vec<Option<Op>> = vec![None; plans.len()];
    for i in order {
        let plan = &plans[i];
        let register = registers.entry(plan.key).or_default();
        let takes_effect = plan.effect_at.is_some();
        let (kind, answer) = match plan.what {
            0 => (OpKind::Read, Answer::Read { value: *register }),
            1 => {
                let value = next_value;
                next_value += 1;
                if takes_effect {
                    *register = Some(value);
                    written.entry(plan.key).or_default().push(value);
                }
                (OpKind::Write { value }, Answer::Written)
            }
            _ => {
                let earlier = written.get(&plan.key).map_or(&[][..], Vec::as_slice);
                let expected = match rng.u8(0..3) {
                    0 | 1 => *register,
                    _ if earlier.is_empty() => None,
                    _ => Some(earlier[rng.usize(0..earlier.len())]),
                };
                let new = next_value;
                next_value += 1;
                let applied = takes_effect && *register == expected;
                if applied {
                    *register = Some(new);
                    written.entry(plan.key).or_default().push(new);
                }
                if plan.fate == Fate::Answered {
                    if applied {
                        seen.cas_applied += 1;
                    } else {
                        seen.cas_not_applied += 1;
                    }
                }
                (OpKind::Cas { expected, new }, Answer::Cas { applied })
            }
        };
        let outcome = match plan.fate {
            Fate::Answered => Outcome::Ok(answer),
            Fate::Unknown(took) => {
                if took {
                    seen.took_effect_unknown += 1;
                    if plan.effect_at > Some(plan.complete) {
                        seen.after_give_up += 1;
                    }
                } else {
                    seen.not_taken_unknown += 1;
                }
                Outcome::Unknown {
                    reason: "timeout".to_owned(),
                }
            }
            Fate::Refused => Outcome::Failed {
                reason: "unavailable".to_owned(),
            },
        };
        ops[i] = Some(Op {
            process: plan.process,
            key: plan.key,
            kind,
            invoke_ns: plan.invoke,
            complete_ns: plan.complete,
            outcome,
        });
    }
    let mut ops: Vec<Op> = ops.into_iter().flatten().collect();
    ops.sort_by_key(|op| (op.invoke_ns, op.process));
    for (i, a) in ops.iter().enumerate() {
        seen.overlapping += ops[i + 1..]
            .iter()
            .filter(|b| b.key == a.key && b.invoke_ns <= a.complete_ns)
            .count();
    }
    (History::new(ops), seen)
}

/// The answered reads of a history.
fn answered_reads(history: &History) -> Vec<usize> {
    (0..history.ops.len())
        .filter(|&i| {
            let op = &history.ops[i];
            op.kind == OpKind::Read && matches!(op.outcome, Outcome::Ok(_))
        })
        .collect()
}

/// A read answered after a value was overwritten for certain: an answered write (or applied
/// compare-and-set) of value `v` completed before another answered one began, which
/// completed before the read began. Returns the read's position and `v`.
fn stale_candidate(history: &History) -> Option<(usize, i64)> {
    let written = |op: &Op| match (op.kind, &op.outcome) {
        (OpKind::Write { value }, Outcome::Ok(_)) => Some(value),
        (OpKind::Cas { new, .. }, Outcome::Ok(Answer::Cas { applied: true })) => Some(new),
        _ => None,
    };
    let ops = &history.ops;
    for r in answered_reads(history) {
        for first in ops {
            let Some(value) = written(first) else {
                continue;
            };
            let overwritten = ops.iter().any(|second| {
                second.key == first.key
                    && written(second).is_some()
                    && first.complete_ns < second.invoke_ns
                    && second.complete_ns < ops[r].invoke_ns
            });
            if first.key == ops[r].key && overwritten {
                return Some((r, value));
            }
        }
    }
    None
}

fn with_read(history: &History, read: usize, value: Option<i64>) -> History {
    let mut corrupted = history.clone();
    corrupted.ops[read].outcome = Outcome::Ok(Answer::Read { value });
    corrupted
}

/// Asserts that `history` fails on `read`'s key only, the prefix ending at `read`'s answer
/// and the core holding `read`; returns the core.
fn assert_caught(history: &History, read: usize, seed: u64) -> Vec<usize> {
    let report = check(history, &Limits::default()).unwrap();
    assert!(report.undecided.is_empty(), "seed {seed}: {report}");
    assert_eq!(report.violations.len(), 1, "seed {seed}: {report}");
    let violation = &report.violations[0];
    let op = &history.ops[read];
    assert_eq!(violation.key, op.key, "seed {seed}: {report}");
    assert_eq!(
        violation.cut_ns,
        Some(op.complete_ns),
        "seed {seed}: {report}"
    );
    let core = violation.core();
    assert!(core.contains(&read), "seed {seed}: {report}");
    core
}

/// Simulated linearizable histories (3 keys, 4 processes of 20 operations, answers unknown
/// or refused now and then) are always accepted; with one read's answer changed to a value
/// no one wrote they are rejected with that read alone as the core, and with one read's
/// answer changed to a value overwritten for certain before it began, rejected with that
/// read in the core. The simulations are checked to hold the cases that matter.
#[test]
fn simulated_registers_pass_and_corrupted_reads_fail() {
    let mut total = Seen::default();
    let mut stale_tested = 0;
    for seed in 0..30 {
        let (history, seen) = simulate(seed, 3, 4, 20, 2);
        assert_eq!(history.validate(), Ok(()));
        let report = check(&history, &Limits::default()).unwrap();
        assert!(report.passed(), "seed {seed}: {report}");
        total.took_effect_unknown += seen.took_effect_unknown;
        total.not_taken_unknown += seen.not_taken_unknown;
        total.after_give_up += seen.after_give_up;
        total.cas_applied += seen.cas_applied;
        total.cas_not_applied += seen.cas_not_applied;
        total.overlapping += seen.overlapping;

        let reads = answered_reads(&history);
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x5eed);
        let read = reads[rng.usize(0..reads.len())];
        let nowhere = with_read(&history, read, Some(-1));
        assert_eq!(assert_caught(&nowhere, read, seed), [read], "seed {seed}");

        if let Some((read, value)) = stale_candidate(&history) {
            if history.ops[read].outcome != Outcome::Ok(Answer::Read { value: Some(value) }) {
                assert_caught(&with_read(&history, read, Some(value)), read, seed);
                stale_tested += 1;
            }
        }
    }
    assert!(stale_tested >= 15, "{stale_tested} stale reads planted");
    assert!(total.took_effect_unknown >= 10 && total.not_taken_unknown >= 10);
    assert!(total.after_give_up >= 5);
    assert!(total.cas_applied >= 50 && total.cas_not_applied >= 50);
    assert!(total.overlapping >= 300);
}

/// The cache keeps the search's work proportional to the history's length when few
/// operations overlap and all are answered: a 360-operation history of one key and three
/// processes whose last read is corrupted makes the search explore every order it can,
/// within a few configurations per operation (without the cache, the orders of concurrent
/// operations multiply). Operations of unknown outcome stay open to the end, so each one
/// pending can double the configurations: the register workload keeps a key's history short.
#[test]
fn the_cache_keeps_a_long_search_proportional() {
    let (history, _) = simulate(7, 1, 3, 120, 0);
    let last_read = answered_reads(&history)
        .into_iter()
        .max_by_key(|&i| history.ops[i].complete_ns)
        .unwrap();
    let corrupted = with_read(&history, last_read, Some(-1));
    let indices = &split_by_key(&corrupted)[&0];
    let ops = checked_ops(&corrupted, indices, None);
    let searched = search(&ops, Limits::default().cache_bytes);
    assert_eq!(searched.found, Found::NotLinearizable);
    println!(
        "{} operations, {} configurations",
        ops.len(),
        searched.configurations
    );
    assert!(searched.configurations <= 20 * ops.len());
    assert_eq!(
        search(
            &checked_ops(&history, indices, None),
            Limits::default().cache_bytes
        )
        .found,
        Found::Linearizable
    );
}
