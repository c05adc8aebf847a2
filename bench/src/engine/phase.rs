//! A phase as every worker runs it: what it is ([`Phase`], [`PhaseSpec`]), what a backend
//! gives the engine to run one ([`PhaseRunner`]), each worker's run and its messages to the
//! coordinator ([`run_and_report`], [`Event`], with backpressure: [`SinkStall`]), and why a
//! phase failed ([`BackendError`], [`PhaseError`]).

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cycles::CycleRange;
use super::grid::ReleaseGrid;
use super::interval::IntervalSample;
use super::limit::Limit;
use super::plan::PhasePlan;
use super::schedule::RateSchedule;
use super::session::BenchSession;
use super::worker::{run_worker, WorkerEnd, WorkerSpec};
use crate::workload::Workload;

/// What a connected backend gives the engine to run a phase on its workers.
pub(crate) trait PhaseRunner: Send + Sync {
    /// The backend's name (in errors).
    fn name(&self) -> &'static str;
    /// Number of workers a phase runs on.
    fn workers(&self) -> usize;
    /// Prepares the phase's statements on every worker (so that the phase starts warm).
    fn prepare(&self, workload: &Arc<Workload>, phase: Phase) -> Result<(), BackendError>;
    /// Runs a phase on every worker, starting at `start`, sending events to `events`.
    /// Blocks until every worker has finished.
    fn run_phase(
        &self,
        workload: &Arc<Workload>,
        spec: PhaseSpec,
        start: Instant,
        events: mpsc::SyncSender<Event>,
    ) -> Result<(), BackendError>;
}

/// Why a backend failed as a whole (request errors are counted, not returned).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{driver}: {message}")]
pub struct BackendError {
    /// The backend.
    pub(crate) driver: &'static str,
    /// What failed.
    pub(crate) message: String,
}

/// Why a phase failed: before any request was sent (its statements could not be prepared or
/// their arguments do not fit), or while it ran.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum PhaseError {
    /// Preparing the phase's statements failed: nothing was sent.
    #[error(transparent)]
    Prepare(BackendError),
    /// The phase started and failed as a whole.
    #[error(transparent)]
    Run(BackendError),
}

/// A phase to run on every worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The workload's load statement, `count` iterations.
    Load,
    /// The workload's run statements by weight.
    Run,
}

/// What every worker gets for a phase.
#[derive(Debug, Clone)]
pub(crate) struct PhaseSpec {
    /// Load or run.
    pub(crate) phase: Phase,
    /// Total fibers across workers.
    pub(crate) concurrency: usize,
    /// The rate schedule of all workers together, if limited (each worker takes its share).
    pub(crate) rate: Option<Arc<RateSchedule>>,
    /// With a rate: the grid its requests are released on (see [`super::grid`]).
    pub(crate) grid: ReleaseGrid,
    /// When the phase ends.
    pub(crate) limit: Limit,
    /// Sample interval.
    pub(crate) interval: Duration,
    /// Record samples (false for warmup).
    pub(crate) record: bool,
    /// Stop when the node has been out of reach this long (see `WorkerSpec::max_outage`).
    pub(crate) max_outage: Option<Duration>,
    /// The iteration numbers this loader draws from (see `WorkerSpec::cycles`).
    pub(crate) cycles: Option<CycleRange>,
}

impl PhaseSpec {
    /// Worker `w` of `n`'s share of the fibers (at least one).
    pub(crate) fn concurrency_of(&self, w: usize, n: usize) -> usize {
        let base = self.concurrency / n;
        (base + usize::from(w < self.concurrency % n)).max(1)
    }

    /// What worker `worker` of `workers` runs of this phase, starting at `start`.
    pub(crate) fn worker_spec(&self, worker: usize, workers: usize, start: Instant) -> WorkerSpec {
        WorkerSpec {
            worker,
            workers,
            concurrency: self.concurrency_of(worker, workers),
            rate: self.rate.clone(),
            grid: self.grid,
            limit: self.limit,
            start,
            interval: self.interval,
            record: self.record,
            max_outage: self.max_outage,
            cycles: self.cycles,
        }
    }
}

/// One worker's whole phase on any backend: waits for the common start (so that sample
/// intervals line up across workers), runs, and reports its samples and its end.
pub(crate) async fn run_and_report<S: BenchSession>(
    session: &S,
    workload: &Workload,
    plan: &PhasePlan<S::Prepared, S::Batch>,
    wspec: &WorkerSpec,
    phase: Phase,
    events: mpsc::SyncSender<Event>,
) {
    let pick = |i: u64| match phase {
        Phase::Load => 0,
        Phase::Run => workload.pick(i),
    };
    session
        .sleep_until(&mut session.sleeper(), wspec.start)
        .await;
    let sink_events = events.clone();
    let mut stalled = SinkStall::default();
    // Each sample carries the requests sent to each node since the previous one (read once
    // per sample from the driver's per-node counters), so that the report shows routing
    // following the cluster: a node that joins, one that leaves (whose counters vanish
    // with it, after its last sample has been counted).
    let mut seen = session.node_requests();
    // Likewise the tablet misroutes (ScyllaDB), so that the samples show the warm-up.
    let mut misroutes = session.tablet_misroutes();
    let end = run_worker(session, &pick, plan, wspec, |mut s| {
        let now = session.node_requests();
        s.nodes = node_deltas(&seen, &now);
        seen = now;
        let now = session.tablet_misroutes();
        s.tablet_misroutes = now.map(|n| n.saturating_sub(misroutes.unwrap_or(0)));
        misroutes = now;
        stalled.send(&sink_events, Event::Sample(Box::new(s)));
    })
    .await;
    let _ = events.send(Event::Finished {
        worker: wspec.worker,
        end: Ok(end),
        stalled,
    });
}

/// Samples the coordinator may be behind by, all workers together, before a worker's next
/// sample blocks its thread until the coordinator catches up. Each sample holds two latency
/// histograms of about 270 KiB each (1 ns to 1 h at 3 significant digits), so this bounds
/// the queue to about 17 MiB, where an unbounded one grew by 370 MiB in a CI run whose
/// 2 ms sample intervals met a loaded machine. Blocking the worker is backpressure the
/// report names (see [`SinkStall`]).
pub(crate) const SAMPLE_BACKLOG: usize = 32;

/// How long a worker waited for room in the samples' channel: the coordinator (which merges
/// and spills each sample) fell [`SAMPLE_BACKLOG`] samples behind. Every request the worker
/// had in flight waited too, so the report warns when this is not zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SinkStall {
    /// Sends that found the channel full.
    pub(crate) times: u64,
    /// Time spent waiting in them.
    pub(crate) waited: Duration,
}

impl SinkStall {
    /// Sends `event`, waiting for room if the channel is full (and counting the wait).
    fn send(&mut self, events: &mpsc::SyncSender<Event>, event: Event) {
        match events.try_send(event) {
            Ok(()) | Err(mpsc::TrySendError::Disconnected(_)) => {}
            Err(mpsc::TrySendError::Full(event)) => {
                let from = Instant::now();
                // Blocks this worker's thread (its executor): backpressure, not a buffer.
                let _ = events.send(event);
                self.times += 1;
                self.waited += from.elapsed();
            }
        }
    }

    /// Adds another worker's stall.
    pub(crate) fn add(&mut self, other: SinkStall) {
        self.times += other.times;
        self.waited += other.waited;
    }
}

/// Requests per node between two readings of cumulative counters (nodes without any left
/// out; a node new in `now`, or whose counter went back, counts from 0).
fn node_deltas(before: &[(String, u64)], now: &[(String, u64)]) -> Vec<(String, u64)> {
    now.iter()
        .filter_map(|(node, n)| {
            let was = before
                .iter()
                .find(|(b, _)| b == node)
                .map_or(0, |(_, m)| *m);
            // Below the last reading: the node was removed and added again, with counters
            // that started from 0.
            let d = if *n >= was { n - was } else { *n };
            (d > 0).then(|| (node.clone(), d))
        })
        .collect()
}

/// A worker's messages to the coordinator.
#[derive(Debug)]
pub(crate) enum Event {
    /// A sample interval's record (boxed: the histograms make it large; one per interval).
    Sample(Box<IntervalSample>),
    /// The worker finished (or failed before starting).
    Finished {
        /// The worker.
        worker: usize,
        /// Its summary, or why it could not run.
        end: Result<WorkerEnd, BackendError>,
        /// How long its samples waited for the coordinator.
        stalled: SinkStall,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_per_node_between_readings() {
        let of = |v: &[(&str, u64)]| -> Vec<(String, u64)> {
            v.iter().map(|(a, n)| ((*a).to_owned(), *n)).collect()
        };
        // `a` sent 4 more, `b` left the cluster (gone from the reading), `c` joined, `d`
        // sent nothing new.
        let before = of(&[("a", 5), ("b", 3), ("d", 7)]);
        let now = of(&[("a", 9), ("c", 2), ("d", 7)]);
        assert_eq!(node_deltas(&before, &now), of(&[("a", 4), ("c", 2)]));
        // A counter that went back (a node re-added with fresh counters) counts from 0.
        assert_eq!(
            node_deltas(&of(&[("a", 9)]), &of(&[("a", 2)])),
            of(&[("a", 2)])
        );
    }

    #[test]
    fn a_full_samples_channel_blocks_the_worker_and_the_wait_is_counted() {
        let (tx, rx) = mpsc::sync_channel(1);
        let finished = |worker| Event::Finished {
            worker,
            end: Err(BackendError {
                driver: "test",
                message: String::new(),
            }),
            stalled: SinkStall::default(),
        };
        let mut stall = SinkStall::default();
        stall.send(&tx, finished(0));
        assert_eq!(stall, SinkStall::default(), "room for one: no wait");
        let (started, go) = mpsc::channel();
        let coordinator = std::thread::spawn(move || {
            go.recv().unwrap();
            std::thread::sleep(Duration::from_millis(20));
            rx.iter().count()
        });
        started.send(()).unwrap();
        // The channel holds one already: this send waits until the coordinator reads.
        stall.send(&tx, finished(1));
        assert_eq!(stall.times, 1);
        assert!(stall.waited > Duration::ZERO);
        drop(tx);
        assert_eq!(coordinator.join().unwrap(), 2, "nothing lost");
        let mut total = SinkStall::default();
        total.add(stall);
        total.add(stall);
        assert_eq!(total.times, 2);
    }
}
