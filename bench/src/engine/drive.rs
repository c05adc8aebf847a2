//! The coordinator's side of a phase: [`drive_phase`] starts it on a backend's workers,
//! merges their samples as they come (each merged sample shown to the caller, then written
//! to its spill file) and adds up the phase's [`PhaseOutcome`].

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::collect::{Collector, Sample};
use super::interval::last_interval;
use super::phase::{
    BackendError, Event, PhaseError, PhaseRunner, PhaseSpec, SinkStall, SAMPLE_BACKLOG,
};
use super::spill::SpilledSamples;
use super::statements::{merge_totals, StatementTotals};
use crate::stats::LatencyHistogram;
use crate::workload::Workload;

/// What a phase produced.
#[derive(Debug, Clone, Default)]
pub(crate) struct PhaseOutcome {
    /// Merged samples, one per interval, written out as they come (bounded memory).
    pub(crate) samples: SpilledSamples,
    /// Errors of every sample.
    pub(crate) errors: u64,
    /// Latency from the due time of the phase's successes (every sample's merged in).
    pub(crate) latency: LatencyHistogram,
    /// Service time of the phase's successes.
    pub(crate) service: LatencyHistogram,
    /// Wall time from the phase start to the last worker's end.
    pub(crate) elapsed: Duration,
    /// Iterations run by all workers.
    pub(crate) iterations: u64,
    /// First message of each error kind, by the kind's name (the report's key).
    pub(crate) first_errors: Vec<(&'static str, String)>,
    /// Workers that could not run, with why.
    pub(crate) failed_workers: Vec<String>,
    /// Why the phase stopped before its limit (the node went away), if it did; the samples
    /// hold everything measured up to then.
    pub(crate) aborted: Option<String>,
    /// Wall-clock time of the phase's start (the instant its sample intervals count from).
    pub(crate) started_at: Option<std::time::SystemTime>,
    /// Per statement of the phase (by index): its record, all workers merged.
    pub(crate) statements: Vec<StatementTotals>,
    /// How long workers waited for the coordinator to take their samples, all together.
    pub(crate) stalled: SinkStall,
    /// Requests sent to each node over the phase (the samples' counts added up: a node that
    /// left the cluster during the phase keeps what it was sent).
    pub(crate) requests_by_node: BTreeMap<String, u64>,
    /// `--waterfall`: the timed requests' stages, all workers merged (`None`: none timed).
    pub(crate) waterfall: Option<super::waterfall::Waterfall>,
    /// A recorded paced phase: how late each iteration was sent, all workers merged
    /// (`None` without a rate).
    pub(crate) send_lateness: Option<super::lateness::SendLateness>,
}

/// Runs a phase on `backend` and collects it; `on_sample` sees each merged sample as soon
/// as every worker is past it (progress display, LOG lines).
pub(crate) fn drive_phase<R: PhaseRunner + ?Sized + 'static>(
    backend: &Arc<R>,
    workload: &Arc<Workload>,
    spec: PhaseSpec,
    on_sample: impl FnMut(&Sample),
) -> Result<PhaseOutcome, PhaseError> {
    backend
        .prepare(workload, spec.phase)
        .map_err(PhaseError::Prepare)?;
    run_prepared_phase(backend, workload, spec, on_sample).map_err(PhaseError::Run)
}

/// [`drive_phase`] once the phase's statements are prepared.
fn run_prepared_phase<R: PhaseRunner + ?Sized + 'static>(
    backend: &Arc<R>,
    workload: &Arc<Workload>,
    spec: PhaseSpec,
    mut on_sample: impl FnMut(&Sample),
) -> Result<PhaseOutcome, BackendError> {
    let (tx, rx) = mpsc::sync_channel(SAMPLE_BACKLOG);
    let workers = backend.workers();
    // A short margin so that every worker is parked on its first due time together.
    let start = Instant::now() + Duration::from_millis(5);
    let started_at = std::time::SystemTime::now() + Duration::from_millis(5);
    let runner = {
        let runner_backend = backend.clone();
        let workload = workload.clone();
        std::thread::Builder::new()
            .name("doppio-bench-phase".into())
            .spawn({
                let spec = spec.clone();
                move || runner_backend.run_phase(&workload, spec, start, tx)
            })
            .map_err(|e| BackendError {
                driver: backend.name(),
                message: format!("cannot start the phase thread: {e}"),
            })?
    };
    let mut collector = Collector::new(
        workers,
        spec.interval,
        last_interval(spec.limit, spec.interval),
    )
    .with_schedule(spec.rate.clone());
    let mut outcome = PhaseOutcome {
        started_at: Some(started_at),
        samples: SpilledSamples::new().map_err(|e| BackendError {
            driver: backend.name(),
            message: format!("cannot make the samples' spill file: {e}"),
        })?,
        ..PhaseOutcome::default()
    };
    // Each released sample's histograms go to the spill file; the phase's totals are merged
    // here, so memory stays flat however many samples the phase has.
    let driver = backend.name();
    let keep = |outcome: &mut PhaseOutcome, merged: Sample| -> Result<(), BackendError> {
        outcome.latency.merge(&merged.latency);
        outcome.service.merge(&merged.service);
        for (node, n) in &merged.nodes {
            *outcome.requests_by_node.entry(node.clone()).or_default() += n;
        }
        outcome.errors += merged.error_count();
        outcome.samples.push(&merged).map_err(|e| BackendError {
            driver,
            message: format!("cannot write a sample to its spill file: {e}"),
        })
    };
    let mut finished = 0;
    // Ends when every worker has finished, or when the runner dropped its sender.
    while finished < workers {
        let Ok(event) = rx.recv() else { break };
        match event {
            Event::Sample(s) => {
                for merged in collector.add(*s) {
                    on_sample(&merged);
                    keep(&mut outcome, merged)?;
                }
            }
            Event::Finished {
                worker,
                end,
                stalled,
            } => {
                finished += 1;
                outcome.stalled.add(stalled);
                // Not `collector.finish` yet: the last, partial interval waits for the
                // phase's end so that its length is known.
                match end {
                    Ok(end) => {
                        outcome.iterations += end.iterations;
                        outcome.elapsed = outcome.elapsed.max(end.elapsed);
                        for (k, m) in end.first_errors {
                            let k = k.as_str();
                            if !outcome.first_errors.iter().any(|(x, _)| *x == k) {
                                outcome.first_errors.push((k, m));
                            }
                        }
                        if outcome.aborted.is_none() {
                            outcome.aborted = end.aborted;
                        }
                        merge_totals(&mut outcome.statements, &end.statements);
                        if let Some(w) = &end.waterfall {
                            outcome
                                .waterfall
                                .get_or_insert_with(Default::default)
                                .merge(w);
                        }
                        if let Some(l) = &end.lateness {
                            outcome
                                .send_lateness
                                .get_or_insert_with(Default::default)
                                .merge(l);
                        }
                    }
                    Err(e) => outcome.failed_workers.push(format!("worker {worker}: {e}")),
                }
            }
        }
    }
    // Late samples (sent before Finished but read after it) and the last partial interval.
    while let Ok(Event::Sample(s)) = rx.try_recv() {
        for merged in collector.add(*s) {
            on_sample(&merged);
            keep(&mut outcome, merged)?;
        }
    }
    for w in 0..workers {
        collector.finish(w);
    }
    for merged in collector.release(Some(outcome.elapsed)) {
        on_sample(&merged);
        keep(&mut outcome, merged)?;
    }
    let ran = runner.join().map_err(|_| BackendError {
        driver: backend.name(),
        message: "the phase thread panicked".into(),
    })?;
    ran?;
    if !outcome.failed_workers.is_empty() && outcome.iterations == 0 {
        return Err(BackendError {
            driver: backend.name(),
            message: outcome.failed_workers.join("; "),
        });
    }
    Ok(outcome)
}
