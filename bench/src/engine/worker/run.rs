//! One worker's share of a phase ([`run_worker`]): its recorder, clock and outage watch set
//! up, its fibers run to the end, and what it returns gathered.

use std::cell::{Cell, RefCell};

use super::fiber::{fiber, Fibers};
use super::spec::{WorkerEnd, WorkerSpec};
use crate::engine::clock::Clock;
use crate::engine::interval::{interval_end, last_interval, IntervalSample};
use crate::engine::lateness::SendLateness;
use crate::engine::outage::OutageWatch;
use crate::engine::plan::PhasePlan;
use crate::engine::recorder::Recorder;
use crate::engine::session::BenchSession;
use crate::engine::statements::{StatementCounts, StatementTotals};
use crate::stats::LatencyHistogram;

/// Runs one worker's share of a phase: its fibers run the plan's entry `pick(i)` (its
/// statement, its sequence of steps, or its batch) for each of its iterations `i` until
/// `spec.limit`. Each completed sample interval is handed to `sink` (on this thread) as soon
/// as a later one starts, and the last partial one at the end.
///
/// A sequence's steps run one after another with the same `i`; each is a request of its own
/// entry, its latency from the end of the step before (the first step's from the
/// iteration's due time). The first step that fails ends the iteration: its error is
/// counted on that step and on the sequence's entry, the later steps are not sent. The
/// sequence's entry gets one latency per successful iteration, from its due time to the end
/// of its last step.
pub async fn run_worker<S, F>(
    session: &S,
    pick: &(dyn Fn(u64) -> usize + '_),
    plan: &PhasePlan<S::Prepared, S::Batch>,
    spec: &WorkerSpec,
    sink: F,
) -> WorkerEnd
where
    S: BenchSession,
    F: FnMut(IntervalSample),
{
    let entries = plan.sequence_entries();
    let recorder = RefCell::new(Recorder {
        spec_worker: spec.worker,
        start: spec.start,
        interval: spec.interval,
        last_index: last_interval(spec.limit, spec.interval),
        current: 0,
        current_end: interval_end(
            spec.start,
            spec.interval,
            0,
            last_interval(spec.limit, spec.interval),
        ),
        paced: spec.rate.is_some(),
        requests: 0,
        rows: 0,
        errors: Vec::new(),
        latency: LatencyHistogram::new(),
        service: LatencyHistogram::new(),
        lateness_ns: 0,
        // Preallocated once per phase (one histogram per statement), only when recording.
        statements: vec![StatementCounts::default(); if spec.record { entries.len() } else { 0 }],
        statement_totals: if spec.record {
            (0..entries.len())
                .map(|_| StatementTotals::default())
                .collect()
        } else {
            Vec::new()
        },
        statement_latency: if spec.record {
            (0..entries.len())
                .map(|_| LatencyHistogram::new())
                .collect()
        } else {
            Vec::new()
        },
        sequence: entries,
        first_messages: Vec::new(),
        waterfall: None,
        // One histogram per phase (not per interval), made once, only when paced.
        send_lateness: (spec.record && spec.rate.is_some()).then(SendLateness::default),
        sink,
    });
    let iterations = Cell::new(0u64);
    let outage = OutageWatch::new(spec.max_outage);
    let fibers = spec.concurrency.max(1);
    // Without a rate, the time-stamp counter (see `clock`); with one, the monotonic clock
    // the due times are on.
    let clock = Clock::new(spec.rate.is_some());
    let clock = &clock;
    let shared = Fibers {
        session,
        pick,
        plan,
        spec,
        recorder: &recorder,
        iterations: &iterations,
        outage: &outage,
        clock,
        fibers,
    };
    session
        .run_fibers((0..fibers).map(|f| fiber(&shared, f)).collect::<Vec<_>>())
        .await;
    let elapsed = spec.start.elapsed();
    let mut rec = recorder.into_inner();
    if spec.record {
        rec.flush(true);
    }
    WorkerEnd {
        iterations: iterations.get(),
        first_errors: rec.first_messages,
        elapsed,
        aborted: outage.into_verdict(),
        statements: rec.statement_totals,
        waterfall: rec.waterfall.map(Box::new),
        lateness: rec.send_lateness.map(Box::new),
    }
}
