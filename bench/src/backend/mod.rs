//! The backends behind one interface: doppio (one shard per core, on glommio or on doppio's
//! own io_uring runtime, the latter also in SQPOLL mode: the same driver on two event loops)
//! and scylla-rust-driver (a tokio runtime), and the null backend (no driver: the engine's own
//! floor). The engine ([`crate::engine`]) runs the same workload on any; this module drives a
//! phase and gathers its samples.
//!
//! Children: [`doppio`] (doppio on glommio or on its own io_uring runtime, one shard per
//! core) and [`scylla`] (scylla-rust-driver on a tokio runtime); each maps the bench's
//! neutral types (consistency, values, outcomes) to its driver's. [`null`]: requests that
//! complete at once without I/O, on doppio's io_uring runtime (what the engine itself costs
//! per request). [`settings`]: the driver
//! settings both take (serial consistency, compression, retry backoff, data center and
//! rack), and the refusal of one a backend cannot honour.
//!
//! Fairness of cores: every backend's threads that do request work are pinned to the same
//! cores, [`ConnectOptions::pinned_cores`] (0..threads), unless `--no-pin`.

pub mod doppio;
pub mod null;
pub mod scylla;
pub mod settings;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::collect::{Collector, Sample};
use crate::engine::cycles::CycleRange;
use crate::engine::schedule::RateSchedule;
use crate::engine::spill::SpilledSamples;
use crate::engine::statements::{merge_totals, StatementTotals};
use crate::engine::{
    run_worker, BenchSession, IntervalSample, Limit, Plan, PlanGroup, PlanStatement, WorkerEnd,
    WorkerSpec,
};
use crate::stats::LatencyHistogram;
use crate::workload::encode::CqlType;
use crate::workload::{BatchKind, BoundArgs, RunGroup, RunMode, Statement, Workload};
pub use settings::{
    Compression, Locality, RetryBackoff, SerialConsistency, SettingError, TlsOptions,
};

/// Which driver runs the workload.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Driver {
    /// doppio on glommio.
    #[serde(rename = "doppio")]
    Doppio,
    /// doppio on its own io_uring runtime.
    #[serde(rename = "doppio-uring")]
    DoppioUring,
    /// doppio on its own io_uring runtime in SQPOLL mode (a kernel thread per shard takes
    /// the submissions; see [`SqPollOptions`]).
    #[serde(rename = "doppio-uring-sqpoll")]
    DoppioUringSqpoll,
    /// scylla-rust-driver on tokio.
    #[serde(rename = "scylla")]
    Scylla,
    /// No driver: requests complete at once without I/O (the engine's own cost).
    #[serde(rename = "null")]
    Null,
}

impl Driver {
    /// Its name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Doppio => "doppio",
            Driver::DoppioUring => "doppio-uring",
            Driver::DoppioUringSqpoll => "doppio-uring-sqpoll",
            Driver::Scylla => "scylla",
            Driver::Null => "null",
        }
    }

    /// Parses `doppio`, `doppio-uring`, `doppio-uring-sqpoll`, `scylla` or `null`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "doppio" => Ok(Driver::Doppio),
            "doppio-uring" => Ok(Driver::DoppioUring),
            "doppio-uring-sqpoll" => Ok(Driver::DoppioUringSqpoll),
            "scylla" => Ok(Driver::Scylla),
            "null" => Ok(Driver::Null),
            other => Err(format!(
                "unknown driver `{other}` (doppio, doppio-uring, doppio-uring-sqpoll, scylla \
                 or null)"
            )),
        }
    }
}

/// The SQPOLL mode of `doppio-uring-sqpoll` (`--sqpoll-idle`, `--sqpoll-cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SqPollOptions {
    /// How long each shard's kernel submission thread polls an empty queue before it
    /// sleeps.
    pub idle: Duration,
    /// The core those threads are pinned to (`None`: the kernel places them on any online
    /// core).
    pub cpu: Option<u32>,
}

/// A consistency level, parsed once for every backend (each maps it to its driver's type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Consistency {
    /// `ANY`.
    Any,
    /// `ONE`.
    One,
    /// `TWO`.
    Two,
    /// `THREE`.
    Three,
    /// `QUORUM`.
    Quorum,
    /// `ALL`.
    All,
    /// `LOCAL_QUORUM`.
    LocalQuorum,
    /// `EACH_QUORUM`.
    EachQuorum,
    /// `LOCAL_ONE`.
    LocalOne,
}

impl Consistency {
    /// Every level, in the order the protocol numbers them.
    pub const ALL: [Consistency; 9] = [
        Consistency::Any,
        Consistency::One,
        Consistency::Two,
        Consistency::Three,
        Consistency::Quorum,
        Consistency::All,
        Consistency::LocalQuorum,
        Consistency::EachQuorum,
        Consistency::LocalOne,
    ];

    /// Its name as CQL spells it (`LOCAL_ONE`).
    pub fn name(self) -> &'static str {
        match self {
            Consistency::Any => "ANY",
            Consistency::One => "ONE",
            Consistency::Two => "TWO",
            Consistency::Three => "THREE",
            Consistency::Quorum => "QUORUM",
            Consistency::All => "ALL",
            Consistency::LocalQuorum => "LOCAL_QUORUM",
            Consistency::EachQuorum => "EACH_QUORUM",
            Consistency::LocalOne => "LOCAL_ONE",
        }
    }

    /// Parses a name in any case (`local_one`, `LOCAL_ONE`).
    pub fn parse(name: &str) -> Result<Self, String> {
        let wanted = name.trim().to_ascii_uppercase();
        Self::ALL
            .into_iter()
            .find(|c| c.name() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|c| c.name()).collect();
                format!("unknown consistency `{name}` ({})", names.join(", "))
            })
    }
}

/// How to connect, shared by both backends.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ConnectOptions {
    /// Nodes to connect to.
    pub nodes: Vec<SocketAddr>,
    /// Worker threads (doppio: shards, one per core; scylla: tokio worker threads).
    pub threads: usize,
    /// Connections per node (doppio: per shard; scylla: per node, its pool size).
    pub connections: usize,
    /// Consistency level.
    pub consistency: Consistency,
    /// Request timeout.
    pub request_timeout: Duration,
    /// Retries per request on errors the retry policy allows.
    pub retries: u32,
    /// Compression of frame bodies.
    pub compression: Compression,
    /// User name, if the cluster wants credentials.
    pub username: Option<String>,
    /// Password (never written to reports).
    #[serde(skip)]
    pub password: Option<crate::secret::Secret>,
    /// Pin every backend's threads that do request work to cores 0..threads (doppio's
    /// shards, scylla's tokio workers and bench workers).
    pub pin: bool,
    /// doppio: spin this long before parking an idle shard.
    pub spin_before_park: Option<Duration>,
    /// Rows per result page, the same for every backend (a longer result is paged through).
    pub page_size: i32,
    /// Neither iterate nor decode result rows: only count them (protocol-overhead studies).
    pub discard_results: bool,
    /// Serial consistency sent with every request.
    pub serial_consistency: SerialConsistency,
    /// Local data center and preferred rack of the load-balancing policy.
    pub locality: Locality,
    /// Delay before each retry (`None`: each driver retries at once).
    pub retry_backoff: Option<RetryBackoff>,
    /// The CQL protocol version asked for (4 or 5; `None`: each backend's newest the node
    /// offers).
    pub protocol: Option<u8>,
    /// TLS to the nodes (`None`: plaintext).
    pub tls: Option<TlsOptions>,
    /// The SQPOLL mode of `doppio-uring-sqpoll` (the other backends ignore it).
    pub sqpoll: SqPollOptions,
}

impl ConnectOptions {
    /// The core of each worker, in worker order: 0..threads (doppio runs one shard per
    /// entry, pinned or not).
    pub fn worker_cores(&self) -> Vec<usize> {
        (0..self.threads.max(1)).collect()
    }

    /// The cores every backend pins its request threads to: [`Self::worker_cores`], or none
    /// with `--no-pin`.
    pub fn pinned_cores(&self) -> Vec<usize> {
        if self.pin {
            self.worker_cores()
        } else {
            Vec::new()
        }
    }
}

/// Refuses the settings `driver` cannot honour (before anything connects), naming the
/// backend and the option.
pub fn check_settings(driver: Driver, options: &ConnectOptions) -> Result<(), SettingError> {
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => {
            doppio::check_settings(driver, options)
        }
        Driver::Scylla => scylla::check_settings(options),
        // Nothing is sent: every driver setting is moot, none is refused.
        Driver::Null => Ok(()),
    }
}

/// The newest CQL protocol version `driver` speaks (`None`: it speaks none, the null
/// backend).
pub fn newest_protocol(driver: Driver) -> Option<u8> {
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => Some(5),
        Driver::Scylla => Some(4),
        Driver::Null => None,
    }
}

/// The version a run of `drivers` pins when `--protocol` is not given: the newest that all
/// of them speak when they differ (v4 when scylla-rust-driver is among them), so that every
/// backend of a comparison does the same framing work; `None` (each backend negotiates the
/// newest the node offers) when they agree.
pub fn common_protocol(drivers: &[Driver]) -> Option<u8> {
    let newest = drivers.iter().filter_map(|&d| newest_protocol(d));
    let (oldest, most) = (newest.clone().min()?, newest.max()?);
    (oldest < most).then_some(oldest)
}

/// The page size of commands without `--page-size` (`schema`, `load`), and its default.
pub const DEFAULT_PAGE_SIZE: i32 = 5000;

/// Why a backend failed as a whole (request errors are counted, not returned).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{driver}: {message}")]
pub struct BackendError {
    /// The backend.
    pub driver: &'static str,
    /// What failed.
    pub message: String,
}

/// Why a phase failed: before any request was sent (its statements could not be prepared or
/// their arguments do not fit), or while it ran.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PhaseError {
    /// Preparing the phase's statements failed: nothing was sent.
    #[error(transparent)]
    Prepare(BackendError),
    /// The phase started and failed as a whole.
    #[error(transparent)]
    Run(BackendError),
}

/// A phase to run on every worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The workload's load statement, `count` iterations.
    Load,
    /// The workload's run statements by weight.
    Run,
}

/// What every worker gets for a phase.
#[derive(Debug, Clone)]
pub struct PhaseSpec {
    /// Load or run.
    pub phase: Phase,
    /// Total fibers across workers.
    pub concurrency: usize,
    /// The rate schedule of all workers together, if limited (each worker takes its share).
    pub rate: Option<Arc<RateSchedule>>,
    /// When the phase ends.
    pub limit: Limit,
    /// Sample interval.
    pub interval: Duration,
    /// Record samples (false for warmup).
    pub record: bool,
    /// Stop when the node has been out of reach this long (see `WorkerSpec::max_outage`).
    pub max_outage: Option<Duration>,
    /// The iteration numbers this loader draws from (see `WorkerSpec::cycles`).
    pub cycles: Option<CycleRange>,
}

impl PhaseSpec {
    /// Worker `w` of `n`'s share of the fibers (at least one).
    pub fn concurrency_of(&self, w: usize, n: usize) -> usize {
        let base = self.concurrency / n;
        (base + usize::from(w < self.concurrency % n)).max(1)
    }

    /// What worker `worker` of `workers` runs of this phase, starting at `start`.
    pub fn worker_spec(&self, worker: usize, workers: usize, start: Instant) -> WorkerSpec {
        WorkerSpec {
            worker,
            workers,
            concurrency: self.concurrency_of(worker, workers),
            rate: self.rate.clone(),
            limit: self.limit,
            start,
            interval: self.interval,
            record: self.record,
            max_outage: self.max_outage,
            cycles: self.cycles,
        }
    }
}

/// The statements a phase runs: the workload's run statements, or its load statement.
pub fn phase_statements(
    workload: &Workload,
    phase: Phase,
    driver: &'static str,
) -> Result<Vec<Statement>, BackendError> {
    match phase {
        Phase::Run => Ok(workload.run.clone()),
        Phase::Load => match &workload.load {
            Some(l) => Ok(vec![l.statement.clone()]),
            None => Err(BackendError {
                driver,
                message: format!("workload {} has no [load] section", workload.name),
            }),
        },
    }
}

/// A phase's plan from its prepared statements (as [`phase_statements`] lists them): the
/// workload's `[[run]]` entries (the load phase: its one statement), each batch entry's
/// batch made once by `make_batch` from its kind and its statements.
pub fn assemble_plan<P, B>(
    workload: &Workload,
    phase: Phase,
    statements: Vec<PlanStatement<P>>,
    mut make_batch: impl FnMut(&RunGroup, BatchKind, &[PlanStatement<P>]) -> Result<B, BackendError>,
) -> Result<Plan<P, B>, BackendError> {
    let groups = match phase {
        Phase::Run => workload.groups.clone(),
        Phase::Load => vec![RunGroup::single("load")],
    };
    let mut plan = Vec::with_capacity(groups.len());
    for group in groups {
        let batch = match group.mode {
            RunMode::Batch(kind) => {
                let members = statements.get(group.statements.clone()).unwrap_or(&[]);
                Some(make_batch(&group, kind, members)?)
            }
            RunMode::Single | RunMode::Sequence => None,
        };
        plan.push(PlanGroup { group, batch });
    }
    Ok(Plan {
        statements,
        groups: plan,
    })
}

/// A prepared statement with its generators checked against the markers' `kinds`, and its
/// validation compiled against `shape` (given for a statement with `validate`: see
/// [`crate::engine::validate`]).
pub fn plan_statement<P>(
    workload: &Workload,
    statement: &Statement,
    prepared: P,
    kinds: &[CqlType],
    shape: Option<&crate::engine::validate::Shape>,
    driver: &'static str,
) -> Result<PlanStatement<P>, BackendError> {
    let err = |message: String| BackendError { driver, message };
    let args = BoundArgs::bind(&workload.name, statement, kinds).map_err(|e| err(e.to_string()))?;
    let validation = match (shape, &workload.load) {
        (Some(shape), Some(load)) => {
            crate::engine::validate::Validation::compile(statement, &load.statement, shape)
                .map_err(|m| err(format!("statement {}: {m}", statement.label())))?
        }
        _ => None,
    };
    Ok(PlanStatement {
        prepared,
        args,
        validation,
    })
}

/// One worker's whole phase on any backend: waits for the common start (so that sample
/// intervals line up across workers), runs, and reports its samples and its end.
pub async fn run_and_report<S: BenchSession>(
    session: &S,
    workload: &Workload,
    plan: &Plan<S::Prepared, S::Batch>,
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
    let end = run_worker(session, &pick, plan, wspec, |mut s| {
        let now = session.node_requests();
        s.nodes = node_deltas(&seen, &now);
        seen = now;
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
pub const SAMPLE_BACKLOG: usize = 32;

/// How long a worker waited for room in the samples' channel: the coordinator (which merges
/// and spills each sample) fell [`SAMPLE_BACKLOG`] samples behind. Every request the worker
/// had in flight waited too, so the report warns when this is not zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkStall {
    /// Sends that found the channel full.
    pub times: u64,
    /// Time spent waiting in them.
    pub waited: Duration,
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
    pub fn add(&mut self, other: SinkStall) {
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
pub enum Event {
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

/// Driver-side counters of a backend (doppio only: scylla-rust-driver does not expose them).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DriverCounters {
    /// Requests written.
    pub requests: u64,
    /// Flushes (one write of coalesced frames each).
    pub flushes: u64,
    /// Reads from the sockets.
    pub reads: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Retries the retry policy asked for (each request counted once however many).
    #[serde(default)]
    pub retries: u64,
    /// Statements prepared again on a node that had forgotten them (UNPREPARED).
    #[serde(default)]
    pub reprepares: u64,
    /// Requests sent to each node (address), retries and speculative ones included.
    #[serde(default)]
    pub nodes: BTreeMap<String, u64>,
    /// Requests sent to each ScyllaDB shard of each node (address: one count per shard),
    /// from the driver's per-connection counters grouped by the shard each connection
    /// landed on; empty for nodes without ScyllaDB shards (Cassandra).
    #[serde(default)]
    pub scylla_shards: BTreeMap<String, Vec<u64>>,
    /// doppio on its own io_uring runtime: its shards' `io_uring_enter` calls by reason
    /// (`None` on glommio).
    #[serde(default)]
    pub uring_enters: Option<UringEnters>,
}

/// `io_uring_enter` calls of doppio's own runtime (every shard), by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UringEnters {
    /// Every enter (at most one per loop turn).
    pub total: u64,
    /// Enters that waited: the shard had nothing to run (or, under SQPOLL, waited for room
    /// in a full submission queue).
    pub waiting: u64,
    /// Enters that woke the SQPOLL thread (it slept with submissions queued); a waiting
    /// enter may carry it too.
    pub sq_wakeup: u64,
    /// Enters that did not wait, made to flush a completion-queue overflow.
    pub cq_overflow: u64,
}

impl UringEnters {
    /// What was counted from `before` to `self`.
    pub fn since(&self, before: &UringEnters) -> UringEnters {
        UringEnters {
            total: self.total.saturating_sub(before.total),
            waiting: self.waiting.saturating_sub(before.waiting),
            sq_wakeup: self.sq_wakeup.saturating_sub(before.sq_wakeup),
            cq_overflow: self.cq_overflow.saturating_sub(before.cq_overflow),
        }
    }

    /// Both counts added.
    pub fn plus(&self, o: &UringEnters) -> UringEnters {
        UringEnters {
            total: self.total + o.total,
            waiting: self.waiting + o.waiting,
            sq_wakeup: self.sq_wakeup + o.sq_wakeup,
            cq_overflow: self.cq_overflow + o.cq_overflow,
        }
    }
}

/// Adds `counts` to `total` element by element (growing it as needed).
pub fn add_counts(total: &mut Vec<u64>, counts: &[u64]) {
    if total.len() < counts.len() {
        total.resize(counts.len(), 0);
    }
    for (t, n) in total.iter_mut().zip(counts) {
        *t += n;
    }
}

/// A connected backend.
pub trait Backend: Send + Sync {
    /// Which driver.
    fn driver(&self) -> Driver;
    /// Number of workers a phase runs on.
    fn workers(&self) -> usize;
    /// Runs statements one after another (schema), failing on the first error.
    fn execute_all(&self, statements: &[String]) -> Result<(), BackendError>;
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
    /// Driver-side counters so far, if the driver has them.
    fn counters(&self) -> Option<DriverCounters>;
    /// The cores this backend's request threads are pinned to (empty: not pinned).
    fn thread_cores(&self) -> Vec<usize>;
    /// The CQL protocol version the backend's connections speak, if known.
    fn protocol_version(&self) -> Option<u8>;
    /// The io_uring setup flags of doppio's own runtime's rings (`SQPOLL|SINGLE_ISSUER|...`);
    /// `None` for other event loops.
    fn uring_setup_flags(&self) -> Option<String> {
        None
    }
    /// Closes connections and stops threads.
    fn shutdown(&self);
}

/// Connects the chosen backend.
pub fn connect(driver: Driver, options: &ConnectOptions) -> Result<Arc<dyn Backend>, BackendError> {
    // The engine's clock calibrates once per process (up to 200 ms): here, before any phase
    // is measured.
    crate::engine::clock::calibrate();
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => {
            Ok(Arc::new(doppio::DoppioBackend::connect(options, driver)?))
        }
        Driver::Scylla => Ok(Arc::new(scylla::ScyllaBackend::connect(options)?)),
        Driver::Null => Ok(Arc::new(null::NullBackend::connect(options)?)),
    }
}

/// What a phase produced.
#[derive(Debug, Clone, Default)]
pub struct PhaseOutcome {
    /// Merged samples, one per interval, written out as they come (bounded memory).
    pub samples: SpilledSamples,
    /// Errors of every sample.
    pub errors: u64,
    /// Latency from the due time of the phase's successes (every sample's merged in).
    pub latency: LatencyHistogram,
    /// Service time of the phase's successes.
    pub service: LatencyHistogram,
    /// Wall time from the phase start to the last worker's end.
    pub elapsed: Duration,
    /// Iterations run by all workers.
    pub iterations: u64,
    /// First message of each error kind.
    pub first_errors: Vec<(&'static str, String)>,
    /// Workers that could not run, with why.
    pub failed_workers: Vec<String>,
    /// Why the phase stopped before its limit (the node went away), if it did; the samples
    /// hold everything measured up to then.
    pub aborted: Option<String>,
    /// Wall-clock time of the phase's start (the instant its sample intervals count from).
    pub started_at: Option<std::time::SystemTime>,
    /// Per statement of the phase (by index): its record, all workers merged.
    pub statements: Vec<StatementTotals>,
    /// How long workers waited for the coordinator to take their samples, all together.
    pub stalled: SinkStall,
    /// Requests sent to each node over the phase (the samples' counts added up: a node that
    /// left the cluster during the phase keeps what it was sent).
    pub requests_by_node: BTreeMap<String, u64>,
}

/// Runs a phase on `backend` and collects it; `on_sample` sees each merged sample as soon
/// as every worker is past it (progress display, LOG lines).
pub fn drive_phase(
    backend: &Arc<dyn Backend>,
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
fn run_prepared_phase(
    backend: &Arc<dyn Backend>,
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
                driver: backend.driver().name(),
                message: format!("cannot start the phase thread: {e}"),
            })?
    };
    let mut collector = Collector::new(
        workers,
        spec.interval,
        crate::engine::last_interval(spec.limit, spec.interval),
    )
    .with_schedule(spec.rate.clone());
    let mut outcome = PhaseOutcome {
        started_at: Some(started_at),
        samples: SpilledSamples::new().map_err(|e| BackendError {
            driver: backend.driver().name(),
            message: format!("cannot make the samples' spill file: {e}"),
        })?,
        ..PhaseOutcome::default()
    };
    // Each released sample's histograms go to the spill file; the phase's totals are merged
    // here, so memory stays flat however many samples the phase has.
    let driver = backend.driver().name();
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
                            if !outcome.first_errors.iter().any(|(x, _)| *x == k) {
                                outcome.first_errors.push((k, m));
                            }
                        }
                        if outcome.aborted.is_none() {
                            outcome.aborted = end.aborted;
                        }
                        merge_totals(&mut outcome.statements, &end.statements);
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
        driver: backend.driver().name(),
        message: "the phase thread panicked".into(),
    })?;
    ran?;
    if !outcome.failed_workers.is_empty() && outcome.iterations == 0 {
        return Err(BackendError {
            driver: backend.driver().name(),
            message: outcome.failed_workers.join("; "),
        });
    }
    Ok(outcome)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn backends_compared_in_one_run_speak_the_newest_protocol_they_all_speak() {
        use Driver::*;
        assert_eq!(common_protocol(&[Doppio, DoppioUring, Scylla]), Some(4));
        assert_eq!(common_protocol(&[DoppioUring, Scylla]), Some(4));
        assert_eq!(common_protocol(&[Doppio, DoppioUring]), None);
        assert_eq!(common_protocol(&[Scylla]), None);
        assert_eq!(common_protocol(&[]), None);
        // The null backend speaks no protocol: it changes nothing.
        assert_eq!(common_protocol(&[Null, Scylla, Doppio]), Some(4));
        assert_eq!(common_protocol(&[Null, Doppio]), None);
    }

    /// Connection options for tests: one unpinned thread, every setting at its default.
    pub(crate) fn options() -> ConnectOptions {
        ConnectOptions {
            nodes: vec![SocketAddr::from(([127, 0, 0, 1], 9042))],
            threads: 1,
            connections: 1,
            consistency: Consistency::LocalOne,
            request_timeout: Duration::from_secs(5),
            retries: 0,
            compression: Compression::None,
            username: None,
            password: None,
            pin: false,
            spin_before_park: None,
            page_size: DEFAULT_PAGE_SIZE,
            discard_results: false,
            serial_consistency: SerialConsistency::LocalSerial,
            locality: Locality::default(),
            retry_backoff: None,
            protocol: None,
            tls: None,
            sqpoll: SqPollOptions {
                idle: crate::cli::DEFAULT_SQPOLL_IDLE,
                cpu: None,
            },
        }
    }

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

    #[test]
    fn consistency_names_parse_in_any_case_and_round_trip() {
        for c in Consistency::ALL {
            assert_eq!(Consistency::parse(c.name()), Ok(c));
            assert_eq!(Consistency::parse(&c.name().to_ascii_lowercase()), Ok(c));
        }
        assert_eq!(Consistency::parse(" local_one "), Ok(Consistency::LocalOne));
        let e = Consistency::parse("SOME").unwrap_err();
        assert!(
            e.contains("unknown consistency `SOME`") && e.contains("LOCAL_QUORUM"),
            "{e}"
        );
    }
}
