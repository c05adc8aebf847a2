//! The backend-neutral engine: runs a workload's statements at a concurrency and an optional
//! rate on one worker (a doppio shard, or one worker of the scylla backend on its runtime)
//! and records what happened.
//!
//! Children: [`clock`], the clock of each request's end (the CPU's time-stamp counter
//! without a rate, where it is invariant); [`collect`], the coordinator's side: workers'
//! interval samples merged into one sample per interval; [`cycles`], the range of iteration
//! numbers a loader draws from (`--cycles`, `--loader`); [`phase`], a phase as every worker
//! runs it (its spec, what a backend gives the engine to run it: [`phase::PhaseRunner`], the
//! workers' messages); [`drive`], the coordinator's side of a phase (started on a backend's
//! workers, samples merged and spilled, its outcome); [`plan`], a phase's plan from the
//! workload and a backend's prepared statements; [`schedule`], the rate schedule
//! (`-r`) and each iteration's due time; [`statements`], what each run statement did (per
//! interval counts, per phase histograms), beside the totals; [`spill`], released samples
//! with their histograms written to a temporary file, so that a run of any length keeps
//! memory bounded; [`validate`], `--validate`'s comparison of returned rows with what the
//! load wrote.
//!
//! A worker runs `concurrency` fibers: futures joined inside the worker's one task, not a
//! task each. Fiber `f` of a worker with `C` fibers runs the worker's iterations `f`,
//! `f + C`, `f + 2C`, ...; worker `w` of `N` owns the global iterations `j * N + w`. No
//! counter is shared, so fibers never wait for each other, and every iteration number runs
//! exactly once. These are the phase's ordinals; with a [`cycles::CycleRange`] ordinal `o`
//! runs the iteration number `START + o % len` instead of `o`.
//!
//! No coordinated omission: with a rate schedule ([`schedule`]; a constant rate `r` is the
//! simplest), iteration `j` of a worker of `N` is due where the schedule's integral reaches
//! `j * N` (`start + j * N / r` at a constant rate). A fiber sleeps until its iteration is
//! due, and latency is measured from that due time, so a slow answer that delays the next
//! requests shows up in their latency. The service time (from the moment the request was
//! actually sent) is kept beside it. Without a rate, both are the same, and a fiber's next
//! request is due when its previous one ended: one clock read per request (its end is the
//! next one's start), so a latency includes the engine's own bookkeeping between the two
//! (tens of nanoseconds: `--driver null` measures it). The service histogram of such a run
//! is then the latency histogram itself, copied once per sample interval rather than
//! recorded twice per request.
//!
//! Invariants:
//! - Per request the engine allocates nothing: arguments are encoded straight into the
//!   driver's buffer, histograms are preallocated and rotated once per sample interval.
//! - Per request it reads the clock once without a rate (the end: the CPU's time-stamp
//!   counter where it is invariant, [`clock`]), twice with one (the send after the fiber's
//!   pause, the end: the monotonic clock), records one latency histogram (two with a
//!   rate: latency and service time), and finds its sample interval by comparing the end
//!   with the current interval's end (no division).
//! - Errors are never lost: each is counted by kind, with the first message of each kind.
//! - Every request is counted in the totals and in its statement's entry (indexed by the
//!   statement's position in the plan), so the statements' counts add up to the totals.

pub mod clock;
pub mod collect;
pub mod cycles;
pub mod drive;
pub mod phase;
pub mod plan;
pub mod schedule;
pub mod spill;
pub mod statements;
pub mod validate;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::stats::LatencyHistogram;
use crate::units::{self, UnitError};
use crate::workload::{BoundArgs, RunGroup, RunMode};
use statements::{StatementCounts, StatementTotals};

/// How long a phase lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// For this long.
    Time(Duration),
    /// For this many iterations (all workers together).
    Count(u64),
}

impl Limit {
    /// Parses a count (`1000`, `10k`, `1M`: see [`crate::units::count`]) or else a time
    /// with its unit (`30s`, `500ms`, `2m`, `1h`: [`crate::units::duration`]).
    pub fn parse(text: &str) -> Result<Self, UnitError> {
        if let Ok(n) = units::count(text) {
            return Ok(Limit::Count(n));
        }
        units::duration(text)
            .map(Limit::Time)
            .map_err(|_| UnitError::Limit {
                text: text.to_owned(),
            })
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Time(d) => write!(f, "{:.3}s", d.as_secs_f64()),
            Limit::Count(n) => write!(f, "{n} iterations"),
        }
    }
}

/// A failed request as the engine sees it: a short kind for counting, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// Short, stable kind (`timeout`, `overloaded`, `unavailable`, `connection`, ...).
    pub kind: &'static str,
    /// The driver's message.
    pub message: String,
}

/// What a successful request returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Answer {
    /// Result rows of all its pages.
    pub rows: u64,
    /// A conditional update (lightweight transaction) that was not applied: its result's
    /// `[applied]` column is false. Read only for conditional statements.
    pub not_applied: bool,
}

impl Answer {
    /// An answer of `rows` rows, applied.
    pub fn rows(rows: u64) -> Self {
        Self {
            rows,
            not_applied: false,
        }
    }
}

/// What a backend offers a worker: executing a prepared statement with generated arguments,
/// a BATCH of them, and sleeping on its runtime's timer.
pub trait BenchSession {
    /// A prepared statement of this backend.
    type Prepared;
    /// A batch of prepared statements of this backend, built once per phase.
    type Batch;

    /// Executes `prepared` with the arguments of iteration `args.iteration`: every page of
    /// its result, each consumed as the run asks (every row decoded, or only counted).
    /// Returns the rows of all its pages (and, for a conditional statement, whether it was
    /// applied).
    fn execute(
        &self,
        prepared: &Self::Prepared,
        args: Args<'_>,
    ) -> impl Future<Output = Result<Answer, RequestError>>;

    /// Sends `batch` as one BATCH request with the arguments `args` gives each of its
    /// elements.
    fn execute_batch(
        &self,
        batch: &Self::Batch,
        args: BatchArgs<'_, Self::Prepared>,
    ) -> impl Future<Output = Result<Answer, RequestError>>;

    /// What a fiber keeps for its pauses (with a rate), made once per fiber by
    /// [`BenchSession::sleeper`]: a runtime whose timers cost an allocation each keeps one
    /// there and re-arms it, so that pacing allocates nothing per request.
    type Sleeper;

    /// A fiber's sleeper (once per fiber and phase, never per request).
    fn sleeper(&self) -> Self::Sleeper;

    /// Sleeps until `deadline` on the backend's runtime, with the fiber's sleeper.
    fn sleep_until(
        &self,
        sleeper: &mut Self::Sleeper,
        deadline: Instant,
    ) -> impl Future<Output = ()>;

    /// Requests this worker's session has sent to each node (address) so far, retries
    /// included; read once per sample, never per request. Empty (the default) for a driver
    /// that does not count them.
    fn node_requests(&self) -> Vec<(String, u64)> {
        Vec::new()
    }

    /// Runs a worker's fibers (its fixed set of request loops) to completion. The default
    /// polls them together in one future (`join_all`, whose wake-ups go through reference
    /// counts and a ready queue shared by atomics); a backend whose runtime has cheaper local
    /// tasks runs each fiber as one of those instead. Called once per phase, never per
    /// request.
    fn run_fibers<Fut: Future<Output = ()>>(&self, fibers: Vec<Fut>) -> impl Future<Output = ()> {
        async move {
            futures_util::future::join_all(fibers).await;
        }
    }
}

/// The arguments of one iteration of one statement, encoded on demand into the driver's
/// buffer (each backend implements its driver's value-writing trait for this).
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    /// The statement's generators and column kinds.
    pub bound: &'a BoundArgs,
    /// The iteration.
    pub iteration: u64,
    /// With `--validate`, for a statement that names the row it reads: the check each
    /// returned row's raw cells go through (see [`validate`]).
    pub check: Option<&'a validate::RowCheck>,
}

/// The elements of one BATCH: `repeat` copies of its statements, copy `k` with the
/// arguments of iteration `iteration * repeat + k` (so that `i / repeat`-style keys of the
/// copies fall in one partition), in the order copy 0's statements, copy 1's, ...
#[derive(Debug)]
pub struct BatchArgs<'a, P> {
    /// The batch's statements.
    pub members: &'a [PlanStatement<P>],
    /// The iteration.
    pub iteration: u64,
    /// Copies of the statements.
    pub repeat: u32,
}

impl<P> Clone for BatchArgs<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for BatchArgs<'_, P> {}

impl<'a, P> BatchArgs<'a, P> {
    /// Its number of elements.
    pub fn len(&self) -> usize {
        self.members.len() * self.repeat as usize
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `n`: its statement and its arguments (`None` past the last).
    pub fn element(&self, n: usize) -> Option<(&'a PlanStatement<P>, Args<'a>)> {
        let m = self.members.len();
        if m == 0 || n >= self.len() {
            return None;
        }
        let member = &self.members[n % m];
        let copy = (n / m) as u64;
        Some((
            member,
            Args {
                bound: &member.args,
                iteration: self
                    .iteration
                    .wrapping_mul(u64::from(self.repeat))
                    .wrapping_add(copy),
                check: None,
            },
        ))
    }
}

/// A phase's plan: its prepared statements, and the `[[run]]` entries that run them (the
/// load phase: one entry of its one statement).
#[derive(Debug)]
pub struct Plan<P, B> {
    /// The statements, as [`crate::workload::Workload::run`] orders them.
    pub statements: Vec<PlanStatement<P>>,
    /// The entries, picked by weight per iteration.
    pub groups: Vec<PlanGroup<B>>,
}

/// A `[[run]]` entry of a plan.
#[derive(Debug)]
pub struct PlanGroup<B> {
    /// Which statements, how, and its per-statement record entries.
    pub group: RunGroup,
    /// Its batch (a batch entry only), built once per phase.
    pub batch: Option<B>,
}

impl<P, B> Plan<P, B> {
    /// The plan of a phase of single statements, one entry each (tests).
    pub fn singles(statements: Vec<PlanStatement<P>>) -> Self {
        let groups = (0..statements.len())
            .map(|k| PlanGroup {
                group: RunGroup {
                    statements: k..k + 1,
                    entry: k,
                    ..RunGroup::single("")
                },
                batch: None,
            })
            .collect();
        Self { statements, groups }
    }

    /// Per entry of the per-statement records: whether it is a sequence's (its
    /// iterations, not requests).
    pub fn sequence_entries(&self) -> Vec<bool> {
        let mut out = Vec::new();
        for g in &self.groups {
            let n = g.group.entries();
            if out.len() < g.group.entry + n {
                out.resize(g.group.entry + n, false);
            }
            if g.group.mode == RunMode::Sequence {
                out[g.group.entry + n - 1] = true;
            }
        }
        out
    }
}

/// A prepared run statement: the backend's handle plus its checked generators.
#[derive(Debug)]
pub struct PlanStatement<P> {
    /// The backend's prepared statement.
    pub prepared: P,
    /// Its arguments.
    pub args: BoundArgs,
    /// How its rows are validated (`--validate` and a `validate` in the workload).
    pub validation: Option<validate::Validation>,
}

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
    pub rate: Option<Arc<schedule::RateSchedule>>,
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
    pub cycles: Option<cycles::CycleRange>,
}

/// Error kinds that mean the node is out of reach (as both backends name them).
pub const NODE_GONE_KINDS: [&str; 3] = ["connection_broken", "no_connection", "closed"];

/// Watches one worker's outcomes for an outage: a stretch with no success in which requests
/// fail because the connection is gone. Other errors (timeouts, overloaded, ...) neither
/// start nor end an outage: a stalled or busy node is measured, not abandoned.
#[derive(Debug)]
struct OutageWatch {
    limit: Option<Duration>,
    /// The first node-gone failure since the last success.
    since: Cell<Option<Instant>>,
    /// Why the worker stopped, once it has.
    verdict: RefCell<Option<String>>,
    /// Whether it has (`verdict` is set): read by every fiber before every request, a
    /// plain flag rather than a `RefCell` borrow.
    stopped: Cell<bool>,
}

impl OutageWatch {
    fn observe<T>(&self, now: Instant, result: &Result<T, RequestError>) {
        let Some(limit) = self.limit else { return };
        match result {
            Ok(_) => self.since.set(None),
            Err(e) if NODE_GONE_KINDS.contains(&e.kind) => {
                let since = match self.since.get() {
                    Some(t) => t,
                    None => {
                        self.since.set(Some(now));
                        now
                    }
                };
                let lasted = now.saturating_duration_since(since);
                if lasted >= limit && !self.stopped.get() {
                    self.stopped.set(true);
                    *self.verdict.borrow_mut() = Some(format!(
                        "the node went away: no request succeeded for {:.1} s and every \
                         failure was a lost connection (last: {})",
                        lasted.as_secs_f64(),
                        e.message
                    ));
                }
            }
            Err(_) => {}
        }
    }

    fn stopped(&self) -> bool {
        self.stopped.get()
    }
}

/// One worker's record of one sample interval.
#[derive(Debug, Clone)]
pub struct IntervalSample {
    /// The worker.
    pub worker: usize,
    /// Interval number since the phase start.
    pub index: u64,
    /// Requests completed (successes and errors).
    pub requests: u64,
    /// Result rows of the successful requests (all their pages).
    pub rows: u64,
    /// Errors by kind.
    pub errors: Vec<(&'static str, u64)>,
    /// Latency from the due time (coordinated-omission corrected), successes only.
    pub latency: LatencyHistogram,
    /// Service time from the actual send, successes only.
    pub service: LatencyHistogram,
    /// Sum of how late requests were sent after their due time, ns (rate-limited only).
    pub lateness_ns: u64,
    /// Per statement of the plan (by index): its counts in the interval.
    pub statements: Vec<StatementCounts>,
    /// The worker's last sample of the phase (its interval may be cut short).
    pub last: bool,
    /// Requests the worker's session sent to each node (address) since its previous sample,
    /// read when the sample is handed over (empty for a backend that does not count them).
    pub nodes: Vec<(String, u64)>,
}

/// Per-worker state shared by its fibers (a `RefCell`: fibers run on one thread, one at a
/// time, and never hold the borrow across an await).
struct Recorder<F: FnMut(IntervalSample)> {
    spec_worker: usize,
    start: Instant,
    interval: Duration,
    /// The last interval of a timed phase: answers that arrive after the phase's end (sent
    /// before it) are counted in it rather than in a sliver of an interval of their own.
    last_index: Option<u64>,
    current: u64,
    /// When the current interval ends (`None`: never, the last one of a timed phase): a
    /// request that ended before it belongs to it, found with one comparison.
    current_end: Option<Instant>,
    /// A rate-limited phase: the service time (from the send) differs from the latency
    /// (from the due time) and is recorded on its own; otherwise they are equal, and the
    /// service histogram is the latency histogram, copied once per interval in `flush`.
    paced: bool,
    requests: u64,
    rows: u64,
    errors: Vec<(&'static str, u64)>,
    latency: LatencyHistogram,
    service: LatencyHistogram,
    lateness_ns: u64,
    /// The current interval's counts per statement (one entry per plan statement).
    statements: Vec<StatementCounts>,
    /// The current interval's latency per statement (one entry per plan statement): a
    /// request's latency is recorded here only, and added to `latency` and to its
    /// statement's phase histogram once per interval (in `flush`), so that a request costs
    /// one histogram record as without statements.
    statement_latency: Vec<LatencyHistogram>,
    /// The phase's record per statement (one entry per plan statement).
    statement_totals: Vec<StatementTotals>,
    /// Per entry: a sequence's (its latency is not a request's: not in the totals').
    sequence: Vec<bool>,
    /// The first message of each error kind.
    first_messages: Vec<(&'static str, String)>,
    sink: F,
}

impl<F: FnMut(IntervalSample)> Recorder<F> {
    fn rotate_to(&mut self, index: u64) {
        while self.current < index {
            self.flush(false);
            self.current += 1;
        }
    }

    fn flush(&mut self, last: bool) {
        for (k, (h, totals)) in self
            .statement_latency
            .iter_mut()
            .zip(self.statement_totals.iter_mut())
            .enumerate()
        {
            if !self.sequence.get(k).copied().unwrap_or(false) {
                self.latency.merge(h);
            }
            totals.latency.merge(h);
            h.clear();
        }
        let sample = IntervalSample {
            worker: self.spec_worker,
            index: self.current,
            requests: std::mem::take(&mut self.requests),
            rows: std::mem::take(&mut self.rows),
            errors: std::mem::take(&mut self.errors),
            // One fresh histogram per interval per worker (not per request); without a rate
            // the service times are the latencies (sent when due).
            service: if self.paced {
                std::mem::take(&mut self.service)
            } else {
                self.latency.clone()
            },
            latency: std::mem::take(&mut self.latency),
            lateness_ns: std::mem::take(&mut self.lateness_ns),
            // One copy per interval per worker (not per request); the counts restart at 0.
            statements: self.statements.clone(),
            last,
            // Filled by the sink, which knows the session (`phase::run_and_report`).
            nodes: Vec::new(),
        };
        self.statements.fill(StatementCounts::default());
        (self.sink)(sample);
    }

    /// Moves to the interval `done` falls in: nothing to do while it is before the current
    /// interval's end (the usual case: one comparison per request).
    #[inline]
    fn rotate_for(&mut self, done: Instant) {
        if self.current_end.is_none_or(|end| done < end) {
            return;
        }
        let mut index = (done.saturating_duration_since(self.start).as_nanos()
            / self.interval.as_nanos().max(1)) as u64;
        if let Some(last) = self.last_index {
            index = index.min(last);
        }
        self.rotate_to(index);
        self.current_end = interval_end(self.start, self.interval, self.current, self.last_index);
    }

    /// Records one iteration of the sequence of entry `entry`: its latency from the
    /// iteration's due time to its last step's end and its steps' rows, or the kind of the
    /// error that stopped it. Not a request: the totals are its steps'.
    fn record_sequence(
        &mut self,
        entry: usize,
        due: Instant,
        done: Instant,
        outcome: Result<u64, &'static str>,
    ) {
        self.rotate_for(done);
        let (Some(counts), Some(totals), Some(h)) = (
            self.statements.get_mut(entry),
            self.statement_totals.get_mut(entry),
            self.statement_latency.get_mut(entry),
        ) else {
            return;
        };
        counts.requests += 1;
        totals.requests += 1;
        match outcome {
            Ok(rows) => {
                let latency = done.saturating_duration_since(due).as_nanos() as u64;
                counts.rows += rows;
                counts.latency_sum_ns = counts.latency_sum_ns.saturating_add(latency);
                totals.rows += rows;
                h.record(latency);
            }
            Err(kind) => {
                counts.errors += 1;
                totals.count_error(kind);
            }
        }
    }

    /// Records the outcome of a request of entry `statement` of the per-statement records.
    fn record(
        &mut self,
        statement: usize,
        due: Instant,
        sent: Instant,
        done: Instant,
        result: Result<Answer, RequestError>,
    ) {
        self.rotate_for(done);
        self.requests += 1;
        if self.paced {
            self.lateness_ns += sent.saturating_duration_since(due).as_nanos() as u64;
        }
        // Both hold one entry per plan statement (none when not recording), and `statement`
        // indexes the plan.
        let mut own = self
            .statements
            .get_mut(statement)
            .zip(self.statement_totals.get_mut(statement));
        if let Some((counts, totals)) = own.as_mut() {
            counts.requests += 1;
            totals.requests += 1;
        }
        match result {
            Ok(Answer { rows, not_applied }) => {
                let latency = done.saturating_duration_since(due).as_nanos() as u64;
                self.rows += rows;
                if self.paced {
                    self.service
                        .record(done.saturating_duration_since(sent).as_nanos() as u64);
                }
                // Into the statement's interval histogram, which `flush` adds to the
                // totals' (the totals' own when the statement has no entry).
                match (own, self.statement_latency.get_mut(statement)) {
                    (Some((counts, totals)), Some(h)) => {
                        counts.rows += rows;
                        counts.latency_sum_ns = counts.latency_sum_ns.saturating_add(latency);
                        totals.rows += rows;
                        totals.not_applied += u64::from(not_applied);
                        h.record(latency);
                    }
                    _ => self.latency.record(latency),
                }
            }
            Err(e) => {
                if let Some((counts, totals)) = own {
                    counts.errors += 1;
                    totals.count_error(e.kind);
                }
                match self.errors.iter_mut().find(|(k, _)| *k == e.kind) {
                    Some((_, n)) => *n += 1,
                    None => self.errors.push((e.kind, 1)),
                }
                if !self.first_messages.iter().any(|(k, _)| *k == e.kind) {
                    self.first_messages.push((e.kind, e.message));
                }
            }
        }
    }
}

/// The answer of `result` when it is one (the default otherwise).
fn result_answer(result: &Result<Answer, RequestError>) -> Answer {
    result.as_ref().copied().unwrap_or_default()
}

/// The last sample interval of a phase limited by time (the one its end falls in), into
/// which answers that arrive after the end are counted; `None` for a counted phase.
pub fn last_interval(limit: Limit, interval: Duration) -> Option<u64> {
    match limit {
        Limit::Time(d) => Some(interval_ending_at(d, interval)),
        Limit::Count(_) => None,
    }
}

/// The index of the interval of length `interval` in which the time `end` (from the phase's
/// start) falls, an end exactly on a boundary belonging to the interval it closes.
pub fn interval_ending_at(end: Duration, interval: Duration) -> u64 {
    (end.as_nanos().div_ceil(interval.as_nanos().max(1)) as u64).saturating_sub(1)
}

/// When interval `index` (of length `interval`, from `start`) ends: `None` when it is the
/// phase's last (`last`), which takes every later answer, or past what an `Instant` holds.
fn interval_end(
    start: Instant,
    interval: Duration,
    index: u64,
    last: Option<u64>,
) -> Option<Instant> {
    if last.is_some_and(|l| index >= l) {
        return None;
    }
    let n = u32::try_from(index.checked_add(1)?).ok()?;
    start.checked_add(interval.max(Duration::from_nanos(1)).checked_mul(n)?)
}

/// What a worker returns at the end of a phase.
#[derive(Debug, Clone, Default)]
pub struct WorkerEnd {
    /// Iterations run.
    pub iterations: u64,
    /// The first message of each error kind seen.
    pub first_errors: Vec<(&'static str, String)>,
    /// When the last request finished.
    pub elapsed: Duration,
    /// Why the worker stopped before its limit (the node went away), if it did.
    pub aborted: Option<String>,
    /// Per statement of the plan (by index): its record over the phase (empty when the
    /// phase was not recorded).
    pub statements: Vec<StatementTotals>,
}

/// Sleeps until `deadline`, in steps of at most [`PAUSE_STEP`] so that an interrupt ends a
/// long wait (a schedule's part at rate 0, a low rate); false when interrupted. `passed` is
/// a time known to be past (or about now), so that the usual short wait reads no clock.
async fn pause_until<S: BenchSession>(
    session: &S,
    sleeper: &mut S::Sleeper,
    deadline: Instant,
    passed: Instant,
) -> bool {
    if deadline <= passed + PAUSE_STEP {
        session.sleep_until(sleeper, deadline).await;
        return true;
    }
    loop {
        let step = Instant::now() + PAUSE_STEP;
        if deadline <= step {
            session.sleep_until(sleeper, deadline).await;
            return true;
        }
        session.sleep_until(sleeper, step).await;
        if crate::interrupt::interrupted() {
            return false;
        }
    }
}

/// The longest sleep between two looks at the interrupt flag while a fiber waits.
const PAUSE_STEP: Duration = Duration::from_millis(100);

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
    plan: &Plan<S::Prepared, S::Batch>,
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
        sink,
    });
    let iterations = Cell::new(0u64);
    let outage = OutageWatch {
        limit: spec.max_outage,
        since: Cell::new(None),
        verdict: RefCell::new(None),
        stopped: Cell::new(false),
    };
    let fibers = spec.concurrency.max(1);
    // Without a rate, the time-stamp counter (see `clock`); with one, the monotonic clock
    // the due times are on.
    let clock = clock::Clock::new(spec.rate.is_some());
    let clock = &clock;
    let fiber = |f: usize| {
        let recorder = &recorder;
        let iterations = &iterations;
        let outage = &outage;
        // This fiber's place in the schedule: a few numbers, stepped once per request.
        let mut pacer = spec
            .rate
            .as_deref()
            .map(|s| s.pacer(spec.worker, spec.workers, f, fibers));
        let paced = pacer.is_some();
        async move {
            // Validation's expected cells, reused from request to request.
            let check = validate::RowCheck::default();
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
                                        pause_until(session, &mut sleeper, end, Instant::now())
                                            .await;
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
                    if !pause_until(session, &mut sleeper, due, last_done).await {
                        return;
                    }
                    clock.now()
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
                                Some(v) => {
                                    let answer = result_answer(&result);
                                    check
                                        .finish(v, result.map(|a| a.rows))
                                        .map(|rows| Answer { rows, ..answer })
                                }
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
    };
    session
        .run_fibers((0..fibers).map(fiber).collect::<Vec<_>>())
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
        aborted: outage.verdict.into_inner(),
        statements: rec.statement_totals,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeSet;

    use super::*;
    use crate::workload::{BoundArgs, Statement};

    /// A backend whose requests take `delay(i)` on the executor's timer and record `i`.
    struct Mock<D: Fn(u64) -> Duration> {
        delay: D,
        seen: RefCell<Vec<u64>>,
    }

    impl<D: Fn(u64) -> Duration> BenchSession for Mock<D> {
        type Prepared = ();
        type Batch = ();
        type Sleeper = ();

        fn sleeper(&self) {}

        async fn execute_batch(
            &self,
            _: &(),
            args: BatchArgs<'_, ()>,
        ) -> Result<Answer, RequestError> {
            for n in 0..args.len() {
                if let Some((_, a)) = args.element(n) {
                    self.seen.borrow_mut().push(a.iteration);
                }
            }
            doppio::rt::sleep((self.delay)(args.iteration)).await;
            Ok(Answer::default())
        }

        async fn execute(&self, _: &(), args: Args<'_>) -> Result<Answer, RequestError> {
            self.seen.borrow_mut().push(args.iteration);
            doppio::rt::sleep((self.delay)(args.iteration)).await;
            if args.iteration % 50 == 49 {
                return Err(RequestError {
                    kind: "overloaded",
                    message: format!("iteration {}", args.iteration),
                });
            }
            // Iteration i answers i % 3 rows; iterations divisible by 7 are not applied.
            Ok(Answer {
                rows: args.iteration % 3,
                not_applied: args.iteration % 7 == 0,
            })
        }

        async fn sleep_until(&self, _: &mut (), deadline: Instant) {
            let now = Instant::now();
            if deadline > now {
                doppio::rt::sleep(deadline - now).await;
            }
        }
    }

    fn plan() -> Vec<PlanStatement<()>> {
        let statement = Statement {
            name: "s".into(),
            cql: "SELECT".into(),
            args: Vec::new(),
            line: 0,
            validate: None,
            idempotent: false,
            conditional: false,
        };
        vec![PlanStatement {
            prepared: (),
            args: BoundArgs::bind("t", &statement, &[]).unwrap(),
            validation: None,
        }]
    }

    fn spec(worker: usize, workers: usize, fibers: usize, rate: Option<f64>, n: u64) -> WorkerSpec {
        WorkerSpec {
            worker,
            workers,
            concurrency: fibers,
            rate: rate.map(|r| Arc::new(schedule::RateSchedule::steady(r))),
            limit: Limit::Count(n),
            start: Instant::now(),
            interval: Duration::from_millis(100),
            record: true,
            max_outage: None,
            cycles: None,
        }
    }

    /// Runs `f` on an executor of doppio's default runtime (the engine itself knows none).
    fn on_executor<T, F, Fut>(f: F) -> T
    where
        T: Send + 'static,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = T> + 'static,
    {
        doppio::rt::run_on(doppio::rt::Runtime::default(), "engine-test", f).unwrap()
    }

    #[test]
    fn every_iteration_runs_once_across_workers_and_fibers_and_errors_are_counted() {
        let (seen, samples) = on_executor(|| async {
            let mock = Mock {
                delay: |_| Duration::from_micros(200),
                seen: RefCell::new(Vec::new()),
            };
            let plan = Plan::singles(plan());
            let mut samples = Vec::new();
            for w in 0..2 {
                let s = spec(w, 2, 3, None, 301);
                let end = run_worker(&mock, &|_| 0, &plan, &s, |x| samples.push(x)).await;
                // Iterations 49, 99, ... are odd: all on worker 1, which keeps the first.
                let expected = if w == 1 {
                    vec![("overloaded", "iteration 49".to_string())]
                } else {
                    vec![]
                };
                assert_eq!(end.first_errors, expected);
            }
            (mock.seen.into_inner(), samples)
        });
        let unique: BTreeSet<u64> = seen.iter().copied().collect();
        assert_eq!(seen.len(), 301, "no iteration twice");
        assert_eq!(unique, (0..301).collect(), "every iteration once");
        let requests: u64 = samples.iter().map(|s| s.requests).sum();
        let errors: u64 = samples
            .iter()
            .flat_map(|s| s.errors.iter())
            .map(|(_, n)| n)
            .sum();
        assert_eq!(requests, 301);
        assert_eq!(errors, 6, "iterations 49, 99, ..., 299 failed");
        let rows: u64 = samples.iter().map(|s| s.rows).sum();
        let failed_rows: u64 = (0..301).filter(|i| i % 50 == 49).map(|i| i % 3).sum();
        let all_rows: u64 = (0..301).map(|i| i % 3).sum();
        assert_eq!(rows, all_rows - failed_rows, "rows of successes only");
        let latencies: u64 = samples.iter().map(|s| s.latency.count()).sum();
        assert_eq!(latencies, 301 - 6, "latency of successes only");
    }

    #[test]
    fn each_request_counts_in_its_statement_and_the_statements_add_up_to_the_totals() {
        // Two statements: iterations divisible by 3 run statement 1, the others statement 0.
        // Iterations 49, 99, ... fail: 99, 249 (divisible by 3) in statement 1.
        let (end, samples) = on_executor(|| async {
            let mock = Mock {
                delay: |_| Duration::from_micros(100),
                seen: RefCell::new(Vec::new()),
            };
            let mut statements = plan();
            statements.extend(self::plan());
            let plan = Plan::singles(statements);
            let mut samples = Vec::new();
            let s = spec(0, 1, 4, None, 300);
            let pick = |i: u64| usize::from(i % 3 == 0);
            let end = run_worker(&mock, &pick, &plan, &s, |x| samples.push(x)).await;
            (end, samples)
        });
        let failed = |k: usize| {
            (0..300u64)
                .filter(|i| i % 50 == 49 && usize::from(i % 3 == 0) == k)
                .count() as u64
        };
        assert_eq!(end.statements.len(), 2);
        assert_eq!(end.statements[1].requests, 100);
        assert_eq!(end.statements[0].requests, 200);
        for (k, t) in end.statements.iter().enumerate() {
            assert_eq!(t.error_count(), failed(k), "statement {k}");
            assert_eq!(t.latency.count(), t.requests - failed(k));
            let rows: u64 = (0..300u64)
                .filter(|i| usize::from(i % 3 == 0) == k && i % 50 != 49)
                .map(|i| i % 3)
                .sum();
            assert_eq!(t.rows, rows, "statement {k}");
            let per_interval: u64 = samples.iter().map(|s| s.statements[k].requests).sum();
            assert_eq!(per_interval, t.requests, "intervals add up, statement {k}");
            let errors: u64 = samples.iter().map(|s| s.statements[k].errors).sum();
            assert_eq!(errors, failed(k));
        }
        assert_eq!(end.statements[1].errors, vec![("overloaded", 2)]);
        let total: u64 = samples.iter().map(|s| s.requests).sum();
        assert_eq!(total, 300);
    }

    #[test]
    fn a_sequence_runs_its_steps_in_order_and_stops_at_the_first_failure() {
        // Steps 0 and 1 of one sequence (entries 0, 1; the sequence's entry 2); iterations
        // 49 and 99 fail at step 0, so step 1 never runs for them.
        let (end, samples, seen) = on_executor(|| async {
            let mock = Mock {
                delay: |_| Duration::from_micros(100),
                seen: RefCell::new(Vec::new()),
            };
            let mut statements = plan();
            statements.extend(self::plan());
            let plan = Plan {
                statements,
                groups: vec![PlanGroup {
                    group: RunGroup {
                        name: "seq".into(),
                        statements: 0..2,
                        mode: RunMode::Sequence,
                        repeat: 1,
                        entry: 0,
                    },
                    batch: None,
                }],
            };
            let mut samples = Vec::new();
            let s = spec(0, 1, 3, None, 100);
            let end = run_worker(&mock, &|_| 0, &plan, &s, |x| samples.push(x)).await;
            (end, samples, mock.seen.into_inner())
        });
        assert_eq!(
            seen.len(),
            198,
            "two steps each but for 2 failed iterations"
        );
        let st = &end.statements;
        assert_eq!(st.len(), 3);
        assert_eq!((st[0].requests, st[0].error_count()), (100, 2));
        assert_eq!((st[1].requests, st[1].error_count()), (98, 0));
        assert_eq!((st[2].requests, st[2].error_count()), (100, 2));
        assert_eq!(st[2].errors, vec![("overloaded", 2)]);
        assert_eq!(
            st[2].latency.count(),
            98,
            "one latency per successful iteration"
        );
        // Not applied: iterations divisible by 7, but 49 failed.
        assert_eq!(st[0].not_applied, 14);
        let rows: u64 = (0..100u64).filter(|i| i % 50 != 49).map(|i| i % 3).sum();
        assert_eq!((st[1].rows, st[2].rows), (rows, 2 * rows));
        // The sequence is not a request: the totals are its steps'.
        let requests: u64 = samples.iter().map(|s| s.requests).sum();
        let latencies: u64 = samples.iter().map(|s| s.latency.count()).sum();
        assert_eq!((requests, latencies), (198, 196));
        // A sequence's whole latency is at least its steps' together.
        assert!(st[2].latency.min() >= st[0].latency.min() + st[1].latency.min());
    }

    #[test]
    fn a_batch_is_one_request_whose_copies_take_consecutive_iterations() {
        let (end, seen) = on_executor(|| async {
            let mock = Mock {
                delay: |_| Duration::from_micros(100),
                seen: RefCell::new(Vec::new()),
            };
            let plan = Plan {
                statements: plan(),
                groups: vec![PlanGroup {
                    group: RunGroup {
                        name: "fill".into(),
                        statements: 0..1,
                        mode: RunMode::Batch(crate::workload::BatchKind::Unlogged),
                        repeat: 10,
                        entry: 0,
                    },
                    batch: Some(()),
                }],
            };
            let s = spec(0, 1, 2, None, 30);
            let end = run_worker(&mock, &|_| 0, &plan, &s, |_| {}).await;
            (end, mock.seen.into_inner())
        });
        assert_eq!(end.statements.len(), 1);
        assert_eq!(end.statements[0].requests, 30, "one request per batch");
        let mut seen = seen;
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..300).collect::<Vec<u64>>(),
            "copy k of i: i * 10 + k"
        );
    }

    #[test]
    fn with_a_range_iterations_come_from_it_and_a_timed_phase_wraps_within_it() {
        let range = cycles::CycleRange::new(100, 103).unwrap();
        let (counted, timed) = on_executor(move || async move {
            let plan = Plan::singles(plan());
            let mut runs = Vec::new();
            for limit in [Limit::Count(3), Limit::Time(Duration::from_millis(30))] {
                let mock = Mock {
                    delay: |_| Duration::from_micros(200),
                    seen: RefCell::new(Vec::new()),
                };
                let s = WorkerSpec {
                    limit,
                    cycles: Some(range),
                    ..spec(0, 1, 2, None, 0)
                };
                run_worker(&mock, &|_| 0, &plan, &s, |_| {}).await;
                runs.push(mock.seen.into_inner());
            }
            (runs[0].clone(), runs[1].clone())
        });
        let mut counted = counted;
        counted.sort_unstable();
        assert_eq!(counted, vec![100, 101, 102], "a count: each once");
        assert!(timed.len() > 6, "the range was exhausted: {timed:?}");
        assert!(timed.iter().all(|i| (100..103).contains(i)), "{timed:?}");
    }

    #[test]
    fn a_stall_shows_in_the_latency_of_the_requests_it_delayed() {
        // 100 req/s on one fiber; iteration 10 stalls 300 ms. Iterations 11.. were due every
        // 10 ms during the stall: their latency counts from their due time.
        let samples = on_executor(|| async {
            let mock = Mock {
                delay: |i| Duration::from_millis(if i == 10 { 300 } else { 1 }),
                seen: RefCell::new(Vec::new()),
            };
            let plan = Plan::singles(plan());
            let mut samples = Vec::new();
            let s = spec(0, 1, 1, Some(100.0), 48);
            run_worker(&mock, &|_| 0, &plan, &s, |x| samples.push(x)).await;
            samples
        });
        let mut latency = crate::stats::LatencyHistogram::new();
        let mut service = crate::stats::LatencyHistogram::new();
        for s in &samples {
            latency.merge(&s.latency);
            service.merge(&s.service);
        }
        assert_eq!(latency.count(), 48);
        // Service time: one slow request in 48 (2 %).
        assert!(
            service.value_at_percentile(95.0) < 50_000_000,
            "{service:?}"
        );
        assert!(service.max() >= 290_000_000);
        // Latency from the due time: the stalled request and the ones due while it stalled
        // (iterations 11 to about 27, due every 10 ms, sent when it ended, 300 ms in) are
        // late by up to 200 ms: more than a third of all requests.
        let p65 = latency.value_at_percentile(65.0);
        assert!(p65 > 50_000_000, "p65 {p65}");
        assert!(latency.max() >= 290_000_000);
    }

    #[test]
    fn a_worker_follows_its_schedule_and_a_rate_of_zero_waits_the_phase_out() {
        let run = |schedule: &str, limit: Limit| {
            let schedule = Arc::new(schedule::RateSchedule::parse(schedule).unwrap());
            on_executor(move || async move {
                let mock = Mock {
                    delay: |_| Duration::from_micros(100),
                    seen: RefCell::new(Vec::new()),
                };
                let plan = Plan::singles(plan());
                let s = WorkerSpec {
                    limit,
                    rate: Some(schedule),
                    ..spec(0, 1, 4, None, 0)
                };
                let started = Instant::now();
                let end = run_worker(&mock, &|_| 0, &plan, &s, |_| {}).await;
                (end.iterations, started.elapsed())
            })
        };
        // 0 to 2k req/s over 300 ms: 300 requests are due (and the 4 fibers' first at 0).
        let (n, _) = run("ramp:0..2k/300ms", Limit::Time(Duration::from_millis(300)));
        assert!((295..=305).contains(&n), "{n} requests");
        // Rate 0 for ever: nothing is sent, and the phase still lasts its time.
        let (n, took) = run("0", Limit::Time(Duration::from_millis(150)));
        assert_eq!(n, 0);
        assert!(took >= Duration::from_millis(140), "{took:?}");
        // A count that the schedule never reaches ends rather than hangs.
        let (n, _) = run("ramp:100..0/1s", Limit::Count(1000));
        assert!((50..=55).contains(&n), "{n} requests");
    }

    #[test]
    fn without_a_rate_service_times_are_the_latencies_and_intervals_hold_what_ended_in_them() {
        let (samples, start, interval) = on_executor(|| async {
            let mock = Mock {
                delay: |i| Duration::from_micros(100 + (i % 7) * 50),
                seen: RefCell::new(Vec::new()),
            };
            let plan = Plan::singles(plan());
            let mut samples = Vec::new();
            let s = WorkerSpec {
                interval: Duration::from_millis(20),
                limit: Limit::Time(Duration::from_millis(110)),
                ..spec(0, 1, 3, None, 0)
            };
            run_worker(&mock, &|_| 0, &plan, &s, |x| samples.push(x)).await;
            (samples, s.start, s.interval)
        });
        let mut total = 0;
        for (k, s) in samples.iter().enumerate() {
            assert_eq!(s.index, k as u64, "one sample per interval, in order");
            assert_eq!(s.service.count(), s.latency.count());
            assert_eq!(s.service.percentiles(), s.latency.percentiles());
            assert_eq!(s.lateness_ns, 0);
            total += s.requests;
        }
        assert!(total > 100, "{total} requests");
        // 110 ms of 20 ms intervals: the sixth (100 to 120 ms) is the last, and takes the
        // answers that arrived after the end.
        assert_eq!(samples.len(), 6);
        assert!(samples.last().is_some_and(|s| s.last));
        // The boundaries: interval k ends at start + (k + 1) * 20 ms; the last has none.
        assert_eq!(
            interval_end(start, interval, 2, Some(5)),
            Some(start + Duration::from_millis(60))
        );
        assert_eq!(interval_end(start, interval, 5, Some(5)), None);
        assert_eq!(interval_end(start, interval, u64::MAX, None), None);
    }

    #[test]
    fn limits_parse() {
        assert_eq!(
            Limit::parse("30s"),
            Ok(Limit::Time(Duration::from_secs(30)))
        );
        assert_eq!(
            Limit::parse("250ms"),
            Ok(Limit::Time(Duration::from_millis(250)))
        );
        assert_eq!(
            Limit::parse("2m"),
            Ok(Limit::Time(Duration::from_secs(120)))
        );
        assert_eq!(Limit::parse("1M"), Ok(Limit::Count(1_000_000)));
        assert_eq!(Limit::parse("10k"), Ok(Limit::Count(10_000)));
        assert_eq!(Limit::parse("1_000"), Ok(Limit::Count(1000)));
        assert!(Limit::parse("soon").is_err());
        assert!(Limit::parse("-1s").is_err());
        // A bare number is a count; a time needs its unit.
        assert_eq!(Limit::parse("1500"), Ok(Limit::Count(1500)));
        assert_eq!(
            Limit::parse("1.5"),
            Err(UnitError::Limit { text: "1.5".into() })
        );
        assert_eq!(
            Limit::parse("1h30m"),
            Ok(Limit::Time(Duration::from_secs(5400)))
        );
        assert_eq!(
            Limit::parse("500us"),
            Ok(Limit::Time(Duration::from_micros(500)))
        );
    }
}
