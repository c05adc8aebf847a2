//! What one worker runs ([`WorkerSpec`]) and what it returns at the end of a phase
//! ([`WorkerEnd`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::cycles::CycleRange;
use crate::engine::error_kind::ErrorKind;
use crate::engine::grid::ReleaseGrid;
use crate::engine::lateness::SendLateness;
use crate::engine::limit::Limit;
use crate::engine::schedule::RateSchedule;
use crate::engine::statements::StatementTotals;

/// What one worker runs.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    /// This worker's index.
    pub worker: usize,
    /// Number of workers.
    pub workers: usize,
    /// Fibers on this worker.
    pub concurrency: usize,
    /// The rate schedule of all workers together, if limited: this worker takes
    /// `1 / workers` of it.
    pub rate: Option<Arc<RateSchedule>>,
    /// With a rate: where requests are released (each at the first grid point at or after
    /// its due time; latency still counts from the due time).
    pub grid: ReleaseGrid,
    /// When the phase ends.
    pub limit: Limit,
    /// The phase's start, shared by all workers (sample intervals line up).
    pub start: Instant,
    /// Length of a sample interval.
    pub interval: Duration,
    /// Record results (false during warmup).
    pub record: bool,
    /// Stop the phase when, for this long, no request succeeded and the failures were lost
    /// connections (the node went away); `None` never stops.
    pub max_outage: Option<Duration>,
    /// The iteration numbers this loader draws from (`None`: 0, 1, 2, ...).
    pub cycles: Option<CycleRange>,
}

/// What a worker returns at the end of a phase.
#[derive(Debug, Clone, Default)]
pub struct WorkerEnd {
    /// Iterations run.
    pub iterations: u64,
    /// The first message of each error kind seen.
    pub(crate) first_errors: Vec<(ErrorKind, String)>,
    /// When the last request finished.
    pub(crate) elapsed: Duration,
    /// Why the worker stopped before its limit (the node went away), if it did.
    pub(crate) aborted: Option<String>,
    /// Per statement of the plan (by index): its record over the phase (empty when the
    /// phase was not recorded).
    pub(crate) statements: Vec<StatementTotals>,
    /// `--waterfall`: the stages of the requests the backend timed (`None`: none was;
    /// boxed: the worker's message that carries it stays small).
    pub(crate) waterfall: Option<Box<crate::engine::waterfall::Waterfall>>,
    /// With a rate, when recording: how late each iteration was sent, over the phase
    /// (boxed: the worker's message that carries it stays small).
    pub(crate) lateness: Option<Box<SendLateness>>,
}
