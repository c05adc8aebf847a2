//! One fiber's request loop ([`fiber`]): its iterations one after another, each due on the
//! schedule or when the one before ended, released on the grid, sent (a statement, a
//! sequence's steps, or a batch), validated, and recorded.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::time::{Duration, Instant};

use super::pause::pause_until;
use super::spec::WorkerSpec;
use super::validated::validated;
use crate::engine::clock::Clock;
use crate::engine::interval::IntervalSample;
use crate::engine::limit::Limit;
use crate::engine::outage::OutageWatch;
use crate::engine::plan::PhasePlan;
use crate::engine::recorder::Recorder;
use crate::engine::session::{Args, BatchArgs, BenchSession};
use crate::engine::validate::RowCheck;
use crate::workload::RunMode;

/// What a worker's fibers share: references into [`run_worker`](super::run_worker)'s frame,
/// copied into each fiber's future.
pub(super) struct Fibers<'a, S: BenchSession, F: FnMut(IntervalSample)> {
    pub(super) session: &'a S,
    pub(super) pick: &'a (dyn Fn(u64) -> usize + 'a),
    pub(super) plan: &'a PhasePlan<S::Prepared, S::Batch>,
    pub(super) spec: &'a WorkerSpec,
    pub(super) recorder: &'a RefCell<Recorder<F>>,
    pub(super) iterations: &'a Cell<u64>,
    pub(super) outage: &'a OutageWatch,
    pub(super) clock: &'a Clock,
    /// Fibers on the worker (at least 1).
    pub(super) fibers: usize,
}

/// Fiber `f` of the worker: its iterations `f`, `f + fibers`, `f + 2 fibers`, ... until the
/// phase's limit, an outage or an interrupt.
pub(super) fn fiber<'a, S, F>(
    shared: &'a Fibers<'a, S, F>,
    f: usize,
) -> impl Future<Output = ()> + 'a
where
    S: BenchSession,
    F: FnMut(IntervalSample),
{
    let Fibers {
        session,
        pick,
        plan,
        spec,
        recorder,
        iterations,
        outage,
        clock,
        fibers,
    } = *shared;
    // This fiber's place in the schedule: a few numbers, stepped once per request.
    let mut pacer = spec
        .rate
        .as_deref()
        .map(|s| s.pacer(spec.worker, spec.workers, f, fibers));
    let paced = pacer.is_some();
    async move {
        // Validation's expected cells, reused from request to request.
        let check = RowCheck::default();
        // The fiber's timer for its pauses, re-armed from request to request.
        let mut sleeper = session.sleeper();
        let mut j = f as u64;
        // When this fiber's last request ended: a time past, for `pause_until`, and
        // without a rate the due time of its next request.
        let mut last_done = clock.now();
        loop {
            if outage.stopped() || crate::interrupt::interrupted() {
                return;
            }
            let i = j * spec.workers as u64 + spec.worker as u64;
            // Without a rate a request is due when it is sent, which is when the fiber's
            // previous one ended: no clock read of its own.
            let due = match pacer.as_mut() {
                Some(p) => {
                    let at = p
                        .next_due()
                        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
                        .and_then(|offset| spec.start.checked_add(offset));
                    match at {
                        Some(at) => at,
                        None => {
                            // The rate stays 0 from here on: nothing more is due. A timed
                            // phase still lasts its time.
                            if let Limit::Time(d) = spec.limit {
                                if let Some(end) = spec.start.checked_add(d) {
                                    pause_until(session, &mut sleeper, end, Instant::now()).await;
                                }
                            }
                            return;
                        }
                    }
                }
                None => last_done,
            };
            let over = match spec.limit {
                Limit::Count(n) => i >= n,
                Limit::Time(d) => due.saturating_duration_since(spec.start) >= d,
            };
            if over {
                return;
            }
            let i = match spec.cycles {
                Some(range) => range.iteration(i),
                None => i,
            };
            let Some(group) = plan.groups.get(pick(i)) else {
                return;
            };
            let g = &group.group;
            let Some(members) = plan.statements.get(g.statements.clone()) else {
                return;
            };
            let sent = if paced {
                let release = spec.grid.release(spec.start, due);
                if !pause_until(session, &mut sleeper, release, last_done).await {
                    return;
                }
                let sent = clock.now();
                if spec.record {
                    recorder.borrow_mut().record_send(due, release, sent);
                }
                sent
            } else {
                due
            };
            let done = match (&g.mode, &group.batch) {
                (RunMode::Batch(_), Some(batch)) => {
                    let args = BatchArgs {
                        members,
                        iteration: i,
                        repeat: g.repeat,
                    };
                    let result = session.execute_batch(batch, args).await;
                    let done = clock.now();
                    outage.observe(done, &result);
                    if spec.record {
                        recorder
                            .borrow_mut()
                            .record(g.entry, due, sent, done, result);
                    }
                    done
                }
                _ => {
                    // One statement, or a sequence's steps one after another.
                    let (mut step_due, mut step_sent) = (due, sent);
                    let mut rows = 0u64;
                    let mut failed = None;
                    for (n, stmt) in members.iter().enumerate() {
                        if let Some(v) = &stmt.validation {
                            check.begin(v, i);
                        }
                        let result = session
                            .execute(
                                &stmt.prepared,
                                Args {
                                    bound: &stmt.args,
                                    iteration: i,
                                    check: stmt.validation.as_ref().map(|_| &check),
                                },
                            )
                            .await;
                        let result = match &stmt.validation {
                            Some(v) => validated(result, |rows| check.finish(v, rows)),
                            None => result,
                        };
                        let done = clock.now();
                        outage.observe(done, &result);
                        match &result {
                            Ok(a) => rows += a.rows,
                            Err(e) => failed = Some(e.kind),
                        }
                        if spec.record {
                            recorder.borrow_mut().record(
                                g.entry + n,
                                step_due,
                                step_sent,
                                done,
                                result,
                            );
                        }
                        (step_due, step_sent) = (done, done);
                        if failed.is_some() {
                            break;
                        }
                    }
                    if g.mode == RunMode::Sequence && spec.record {
                        let outcome = match failed {
                            Some(kind) => Err(kind),
                            None => Ok(rows),
                        };
                        recorder.borrow_mut().record_sequence(
                            g.entry + members.len(),
                            due,
                            step_due,
                            outcome,
                        );
                    }
                    step_due
                }
            };
            last_done = done;
            iterations.set(iterations.get() + 1);
            if let Limit::Time(d) = spec.limit {
                if done.saturating_duration_since(spec.start) >= d && !paced {
                    return;
                }
            }
            j += fibers as u64;
        }
    }
}
