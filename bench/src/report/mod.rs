//! Reports: the JSON document researchers script against (fields documented in
//! `bench/REPORT.md`; `schema_version` changes when a field changes meaning or goes away),
//! and its text rendering.
//!
//! Children: [`findmax`], the report of `doppio findmax` and its table; [`text`], the text rendering (CONFIG, LOG, SUMMARY, LATENCY, OVERHEAD,
//! STATEMENTS, ERRORS, PAIRS, MACHINES, NOTES) of one report or two side by side; [`merge`], the reports of one
//! test run made on several loader machines combined into one (`doppio merge`).
//!
//! Invariants: a report never contains a password; every backend entry carries the same
//! fields whether or not the run hit errors; a field that could not be measured is `null`
//! with the reason beside it, never zero.

pub mod findmax;
pub mod merge;
pub mod text;

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::backend::{add_counts, DriverCounters};
use crate::engine::drive::PhaseOutcome;
use crate::engine::spill::{SpilledSamples, StoredSample};
use crate::engine::statements::{merge_totals, StatementCounts, StatementTotals};
use crate::overhead::{ByKind, Cost, IoUringOps};
use crate::stats::{estimate, LatencyHistogram};

/// The version of the JSON layout below.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole report: one invocation of `doppio run` (one or two backends).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Layout version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tool and its version.
    pub tool: String,
    /// User's label for this run (`--tag`).
    pub tag: Option<String>,
    /// When the run started, UTC, RFC 3339.
    pub started_at: String,
    /// The command line.
    pub command: Vec<String>,
    /// The workload and its parameters.
    pub workload: WorkloadInfo,
    /// Every option in force.
    pub config: RunConfig,
    /// Fatal error that ended the run early, if any (the report holds what was measured).
    pub fatal_error: Option<String>,
    /// Warnings (rate not reached, counters unavailable, ...).
    pub warnings: Vec<String>,
    /// One entry per backend, keyed by driver name (`doppio`, `scylla`).
    pub backends: BTreeMap<String, BackendReport>,
    /// The reports `doppio merge` combined into this one (each machine's run), or `null`
    /// for a report of one run.
    #[serde(default)]
    pub merged_from: Option<Vec<merge::MergedInput>>,
}

/// The workload of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadInfo {
    /// Name (built-in) or path.
    pub name: String,
    /// One line on what it does.
    pub description: String,
    /// Parameters with the values in force.
    pub params: BTreeMap<String, String>,
    /// The CQL of the run statements, parameters substituted (empty in reports written
    /// before this field existed).
    #[serde(default)]
    pub statements: Vec<String>,
}

/// The options of a run (no credentials).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    /// Node addresses.
    pub nodes: Vec<String>,
    /// Drivers in the order run.
    pub drivers: Vec<String>,
    /// Duration of the measured run per backend (`30s` or `100000 iterations`).
    pub duration: String,
    /// Warmup before measuring, per segment.
    pub warmup: String,
    /// Total concurrency.
    pub concurrency: usize,
    /// Threads (doppio shards / tokio workers).
    pub threads: usize,
    /// Connections per node (doppio: per shard).
    pub connections: usize,
    /// Target rate, requests per second, if limited to one constant rate (`null` without
    /// a limit, or with a schedule whose rate changes: see `rate_schedule`).
    pub rate: Option<f64>,
    /// `-r` as given (`10k`, `ramp:1k..50k/60s,hold:30s`, `sine:20k,10k,60s,poisson`);
    /// `null` without a rate limit (and in reports written before schedules).
    #[serde(default)]
    pub rate_schedule: Option<String>,
    /// Sample interval, seconds.
    pub sample_interval_s: f64,
    /// Consistency level.
    pub consistency: String,
    /// Request timeout, seconds.
    pub request_timeout_s: f64,
    /// Retries allowed per request.
    pub retries: u32,
    /// Compression of frame bodies: `lz4` or `none` (reports written before it took a value
    /// hold `true` or `false`, read as `lz4` or `none`).
    #[serde(deserialize_with = "compression_name")]
    pub compression: String,
    /// Segments per backend (A B A B alternation when two backends run).
    pub segments: usize,
    /// User name, if credentials were given (the password is never written).
    pub username: Option<String>,
    /// doppio shards' spin before parking, microseconds (`null`: no spin).
    #[serde(default)]
    pub spin_before_park_us: Option<f64>,
    /// Rows per result page, every backend (`null` in reports written before the option).
    #[serde(default)]
    pub page_size: Option<u32>,
    /// Result rows were counted but neither iterated nor decoded (`--discard-results`).
    #[serde(default)]
    pub discard_results: bool,
    /// `--validate`: the run statements whose rows were compared with what the load wrote
    /// (empty: no validation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validated: Vec<String>,
    /// The iteration numbers this loader drew from (`--cycles`, `--loader`); `null`: 0, 1, 2, ...
    #[serde(default)]
    pub cycles: Option<CyclesConfig>,
    /// Serial consistency sent with every request (`LOCAL_SERIAL`, `SERIAL`).
    #[serde(default)]
    pub serial_consistency: Option<String>,
    /// The run statements marked `idempotent = true` in the workload (their requests may be
    /// retried after a lost answer); absent when none is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idempotent: Vec<String>,
    /// Local data center of the load-balancing policy (`null`: each driver's default).
    #[serde(default)]
    pub datacenter: Option<String>,
    /// Preferred rack within `datacenter` (`null`: none).
    #[serde(default)]
    pub rack: Option<String>,
    /// Backoff before each retry as `BASE,CAP` (`null`: retries go at once).
    #[serde(default)]
    pub retry_backoff: Option<String>,
    /// The cores each backend's request threads were pinned to, by driver name (empty:
    /// not pinned).
    #[serde(default)]
    pub thread_cores: BTreeMap<String, Vec<usize>>,
    /// The CQL protocol version asked for (`--protocol`; `null`: each backend's newest the
    /// node offers).
    #[serde(default)]
    pub protocol: Option<u8>,
    /// The protocol version each backend spoke, by driver name.
    #[serde(default)]
    pub protocol_versions: BTreeMap<String, u8>,
    /// TLS to the nodes (`--tls`): `ca=FILE` and, when set, `client-cert=FILE` and
    /// `server-name=NAME`; `null`: plaintext.
    #[serde(default)]
    pub tls: Option<String>,
    /// The SQPOLL mode of `doppio-uring-sqpoll` (`--sqpoll-idle`, `--sqpoll-cpu`); `null`
    /// when that backend did not run.
    #[serde(default)]
    pub sqpoll: Option<SqPollConfig>,
    /// The io_uring setup flags the kernel accepted for each backend on doppio's own runtime
    /// (`SQPOLL|SQ_AFF|SINGLE_ISSUER|SUBMIT_ALL`), by driver name.
    #[serde(default)]
    pub uring_setup: BTreeMap<String, String>,
}

/// `config.sqpoll`: where and how the kernel's submission threads ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqPollConfig {
    /// How long a thread polls an empty queue before it sleeps, milliseconds.
    pub idle_ms: u64,
    /// The core the threads were pinned to (`null`: not pinned).
    pub cpu: Option<u32>,
}

/// `config.compression`: a name, or the boolean of reports written before it took one.
fn compression_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Name(String),
        Flag(bool),
    }
    Ok(match Written::deserialize(d)? {
        Written::Name(n) => n,
        Written::Flag(true) => "lz4".to_owned(),
        Written::Flag(false) => "none".to_owned(),
    })
}

/// The range of iteration numbers of a run (`--cycles START..END` or `--loader K/N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CyclesConfig {
    /// The first iteration number.
    pub start: u64,
    /// One past the last.
    pub end: u64,
    /// `K/N` when `--loader` chose the range, else `null`.
    pub loader: Option<String>,
    /// The workload's key space the loader's slice is of, else `null`.
    pub key_space: Option<u64>,
}

impl From<crate::engine::cycles::Cycles> for CyclesConfig {
    fn from(c: crate::engine::cycles::Cycles) -> Self {
        Self {
            start: c.range.start,
            end: c.range.end,
            loader: c.loader.map(|l| l.to_string()),
            key_space: c.key_space,
        }
    }
}

/// Percentiles of a latency distribution, nanoseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    /// Mean over all successful requests.
    pub mean: f64,
    /// Half-width of the confidence interval of the mean (from per-sample means, corrected
    /// for autocorrelation).
    pub mean_margin: f64,
    /// Minimum.
    pub min: u64,
    /// 25th percentile.
    pub p25: u64,
    /// Median.
    pub p50: u64,
    /// 75th percentile.
    pub p75: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// 99.99th percentile.
    pub p9999: u64,
    /// Maximum.
    pub max: u64,
}

impl BackendReport {
    /// The samples' target rate, their mean weighted by their lengths (`None` when no
    /// sample has one: no rate limit).
    pub fn mean_target_rps(&self) -> Option<f64> {
        let (mut requests, mut seconds) = (0.0, 0.0);
        for s in &self.samples {
            if let Some(t) = s.target_rps {
                requests += t * s.duration_s;
                seconds += s.duration_s;
            }
        }
        (seconds > 0.0).then(|| requests / seconds)
    }
}

/// One sample interval of a backend's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SampleReport {
    /// Segment (A B A B alternation) the sample belongs to.
    pub segment: usize,
    /// Offset of its start within the segment, seconds.
    pub start_s: f64,
    /// Length, seconds.
    pub duration_s: f64,
    /// Requests completed.
    pub requests: u64,
    /// Errors.
    pub errors: u64,
    /// Requests per second.
    pub throughput_rps: f64,
    /// Mean latency, ns.
    pub latency_mean_ns: f64,
    /// Median latency, ns.
    pub latency_p50_ns: u64,
    /// 99th percentile latency, ns.
    pub latency_p99_ns: u64,
    /// The interval's latency histogram (HdrHistogram V2, compressed, base64).
    pub histogram: String,
    /// Wall-clock start of the interval, seconds since the Unix epoch (what `doppio merge`
    /// aligns machines' samples by); `null` in reports written before this field existed.
    #[serde(default)]
    pub start_unix_s: Option<f64>,
    /// Per run statement, in the workload's order: its figures in this interval (empty in
    /// reports written before this field existed).
    #[serde(default)]
    pub statements: Vec<SampleStatement>,
    /// Requests the driver sent to each node (address) in this interval, retries included:
    /// how routing followed the cluster over the run (doppio's backends; absent for
    /// scylla-rust-driver, which does not count them, and in older reports).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests_by_node: BTreeMap<String, u64>,
    /// The rate schedule's mean over the interval, all workers, requests per second:
    /// what `throughput_rps` was asked to be (`null` without a rate limit, and in reports
    /// written before this field existed).
    #[serde(default)]
    pub target_rps: Option<f64>,
}

/// One run statement's figures in one sample interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleStatement {
    /// Requests completed.
    pub requests: u64,
    /// Errors.
    pub errors: u64,
    /// Requests per second.
    pub throughput_rps: f64,
    /// Mean latency of its successes, ns (0 without any).
    pub latency_mean_ns: f64,
}

/// What one run statement of the workload measured over a backend's whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatementReport {
    /// Its name as the workload gives it (`[[run]] name`, else `run1`, `run2`, ...; a
    /// sequence's step: `order.insert`).
    pub name: String,
    /// Its CQL, parameters substituted.
    pub cql: String,
    /// What the entry stands for when it is not a statement's requests: `sequence` (a
    /// sequence's iterations: `requests` counts iterations, its latency is the whole
    /// sequence's, from the iteration's due time to its last step's end), or
    /// `logged_batch`, `unlogged_batch`, `counter_batch` (one BATCH request per iteration).
    /// Absent for a statement (a single one, or a step of a sequence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Conditional updates (`IF NOT EXISTS`, `IF ...`) that succeeded but were not applied
    /// (their `[applied]` column was false; not errors). Present only for a conditional
    /// statement (or a batch holding one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applied: Option<u64>,
    /// Its weight as the workload gives it.
    pub weight: f64,
    /// Its share of the workload's weights (0 to 1): the fraction of iterations that run it.
    pub weight_share: f64,
    /// Requests completed (successes and errors); the statements' requests add up to the
    /// backend's.
    pub requests: u64,
    /// Its requests' share of the backend's requests (0 to 1).
    pub request_share: f64,
    /// Requests per second (its requests over the measured time).
    pub throughput_rps: f64,
    /// Confidence half-width of its throughput (per-sample, autocorrelation-corrected, as
    /// the backend's).
    pub throughput_margin_rps: f64,
    /// Errors.
    pub errors: u64,
    /// Errors by kind.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Result rows of its successful requests, `null` when not counted.
    pub rows: Option<u64>,
    /// Latency from the due time of its successes (the mean's margin from its per-sample
    /// means).
    pub latency_ns: LatencySummary,
    /// Its latency histogram (HdrHistogram V2, compressed, base64).
    pub histogram: String,
}

/// A run statement as the report names it: from the workload, for [`BackendRun`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatementInfo {
    /// Its name.
    pub name: String,
    /// Its CQL.
    pub cql: String,
    /// `sequence`, `*_batch`, or `None` for a statement (see [`StatementReport::kind`]).
    pub kind: Option<String>,
    /// A conditional statement: its not-applied answers are counted.
    pub conditional: bool,
    /// Its weight as the workload gives it.
    pub weight: f64,
    /// Its share of all the weights.
    pub weight_share: f64,
}

impl StatementInfo {
    /// Every entry of `workload`'s per-statement records, in order (see
    /// [`crate::workload::Workload::entries`]): a step or a batch has its `[[run]]`
    /// entry's weight.
    pub fn of_workload(workload: &crate::workload::Workload) -> Vec<Self> {
        use crate::workload::EntryKind;
        workload
            .entries()
            .into_iter()
            .map(|e| {
                let (weight, weight_share) = workload.weight(e.group).unwrap_or((0.0, 0.0));
                Self {
                    name: e.name,
                    cql: e.cql,
                    kind: match e.kind {
                        EntryKind::Statement => None,
                        EntryKind::Sequence => Some("sequence".to_owned()),
                        EntryKind::Batch(b) => Some(format!("{}_batch", b.name())),
                    },
                    conditional: e.conditional,
                    weight,
                    weight_share,
                }
            })
            .collect()
    }
}

/// What one backend measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackendReport {
    /// `doppio` or `scylla`.
    pub driver: String,
    /// Mean throughput, requests per second (requests over measured time).
    pub throughput_rps: f64,
    /// Confidence half-width of the throughput (per-sample, autocorrelation-corrected).
    pub throughput_margin_rps: f64,
    /// Requests completed (successes and errors).
    pub requests: u64,
    /// Errors.
    pub errors: u64,
    /// Errors by kind.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The first message of each error kind.
    pub first_errors: BTreeMap<String, String>,
    /// Measured time, seconds (all segments).
    pub elapsed_s: f64,
    /// Client CPU time (user + system) per request, microseconds: every thread of the
    /// process, the kernel's SQPOLL threads included.
    pub cpu_us_per_req: f64,
    /// Of `cpu_us_per_req`, the part of the kernel's SQPOLL threads (`iou-sqp-*`, one per
    /// ring of `doppio-uring-sqpoll`), microseconds per request; `null` when the process had
    /// none during the backend's measured segments.
    #[serde(default)]
    pub sqpoll_thread_cpu_us_per_req: Option<f64>,
    /// User CPU per request, microseconds.
    pub cpu_user_us_per_req: f64,
    /// System CPU per request, microseconds.
    pub cpu_sys_us_per_req: f64,
    /// System calls per request, `null` when they could not be counted.
    pub syscalls_per_req: Option<f64>,
    /// Why syscalls were not counted, when they were not.
    pub syscalls_unavailable: Option<String>,
    /// System calls by kind over the measured segments (they add up to the total), `null`
    /// when they could not be counted by kind.
    #[serde(default)]
    pub syscalls_by_kind: Option<ByKind<u64>>,
    /// The same per request.
    #[serde(default)]
    pub syscalls_by_kind_per_req: Option<ByKind<f64>>,
    /// Why syscalls were not counted by kind, when they were not.
    #[serde(default)]
    pub syscall_kinds_unavailable: Option<String>,
    /// io_uring operations submitted over the measured segments, `null` when not counted.
    #[serde(default)]
    pub io_uring_submitted: Option<u64>,
    /// io_uring operations submitted per request.
    #[serde(default)]
    pub io_uring_submitted_per_req: Option<f64>,
    /// io_uring completions posted over the measured segments, `null` when not counted.
    #[serde(default)]
    pub io_uring_completed: Option<u64>,
    /// io_uring completions posted per request.
    #[serde(default)]
    pub io_uring_completed_per_req: Option<f64>,
    /// Why io_uring operations were not counted, when they were not.
    #[serde(default)]
    pub io_uring_unavailable: Option<String>,
    /// Context switches (voluntary + involuntary) per request.
    pub ctx_switches_per_req: f64,
    /// Heap allocations per request (the whole process), `null` unless the bench was built
    /// with the `alloc-count` feature.
    #[serde(default)]
    pub allocations_per_req: Option<f64>,
    /// Peak resident set size of the process, bytes (the process's high-water mark: with
    /// two backends in one run, the larger of the two).
    pub peak_rss_bytes: u64,
    /// Requests per socket write (doppio's counters; `null` for scylla, which has none).
    pub requests_per_flush: Option<f64>,
    /// Requests per socket read (doppio's counters; `null` for scylla).
    pub requests_per_read: Option<f64>,
    /// Retries the driver's retry policy made over the measured segments (doppio's
    /// counters; `null` for scylla, whose count needs its `metrics` feature, which would add
    /// work to its request path).
    #[serde(default)]
    pub retries: Option<u64>,
    /// `retries` per second of measured time.
    #[serde(default)]
    pub retries_per_s: Option<f64>,
    /// Statements doppio prepared again over the measured segments because a node had
    /// forgotten them (UNPREPARED, e.g. after a restart); `null` for scylla, which does not
    /// count them.
    #[serde(default)]
    pub reprepares: Option<u64>,
    /// Requests sent to each node over the measured segments, retries included (doppio's
    /// per-node counters; `null` for scylla).
    #[serde(default)]
    pub requests_by_node: Option<BTreeMap<String, u64>>,
    /// doppio on its own io_uring runtime: its shards' `io_uring_enter` calls over the
    /// measured segments by reason (`null` for the other event loops).
    #[serde(default)]
    pub uring_enters: Option<crate::backend::UringEnters>,
    /// The same per request.
    #[serde(default)]
    pub uring_enters_per_req: Option<UringEntersPerReq>,
    /// Requests sent to each ScyllaDB shard of each node over the measured segments
    /// (`"ADDR:PORT": [count of shard 0, shard 1, ...]`), from doppio's per-connection
    /// counters grouped by the shard each connection landed on; `null` for scylla and for
    /// nodes without ScyllaDB shards (Cassandra).
    #[serde(default)]
    pub requests_by_scylla_shard: Option<BTreeMap<String, Vec<u64>>>,
    /// Latency from the due time (coordinated-omission corrected).
    pub latency_ns: LatencySummary,
    /// Service time from the actual send.
    pub service_time_ns: LatencySummary,
    /// Mean lateness of sends after their due time, ns (rate-limited runs).
    pub mean_send_lateness_ns: f64,
    /// Every sample.
    pub samples: Vec<SampleReport>,
    /// The whole run's latency histogram (HdrHistogram V2, compressed, base64).
    pub histogram: String,
    /// The whole run's service-time histogram.
    pub service_histogram: String,
    /// Result rows of the successful requests (every page), `null` when not counted.
    #[serde(default)]
    pub rows: Option<u64>,
    /// Rows per measured second, `null` when rows were not counted.
    #[serde(default)]
    pub rows_per_s: Option<f64>,
    /// Client CPU time per row, microseconds; `null` when no row was counted.
    #[serde(default)]
    pub cpu_us_per_row: Option<f64>,
    /// In a merged report, each machine's own figures (its overhead is kept per machine,
    /// not averaged); `null` in a report of one run.
    #[serde(default)]
    pub machines: Option<Vec<merge::MachineFigures>>,
    /// Each run statement's own figures, in the workload's order (the totals above are
    /// theirs added up); empty in reports written before this field existed.
    #[serde(default)]
    pub statements: Vec<StatementReport>,
}

/// [`crate::backend::UringEnters`] per request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UringEntersPerReq {
    /// Every enter.
    pub total: f64,
    /// Enters that waited.
    pub waiting: f64,
    /// Enters that woke the SQPOLL thread.
    pub sq_wakeup: f64,
    /// Enters that flushed a completion-queue overflow without waiting.
    pub cq_overflow: f64,
}

impl UringEntersPerReq {
    /// `e` divided by `requests` (zeros without requests).
    pub fn of(e: &crate::backend::UringEnters, requests: u64) -> Self {
        let per = |n: u64| {
            if requests > 0 {
                n as f64 / requests as f64
            } else {
                0.0
            }
        };
        UringEntersPerReq {
            total: per(e.total),
            waiting: per(e.waiting),
            sq_wakeup: per(e.sq_wakeup),
            cq_overflow: per(e.cq_overflow),
        }
    }
}

/// Raw overhead counters of a backend's measured segments.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OverheadTotals {
    /// User CPU, seconds.
    pub user_s: f64,
    /// System CPU, seconds.
    pub sys_s: f64,
    /// Syscalls, if counted.
    pub syscalls: Option<u64>,
    /// Syscalls by kind, if counted.
    pub syscalls_by_kind: Option<ByKind<u64>>,
    /// io_uring operations, if counted.
    pub io_uring: Option<IoUringOps>,
    /// Voluntary + involuntary context switches.
    pub ctx_switches: u64,
    /// Peak RSS, bytes.
    pub peak_rss: u64,
    /// Heap allocations, if counted.
    pub allocations: Option<u64>,
    /// CPU of the kernel's SQPOLL threads (part of `user_s` + `sys_s`), seconds, if the
    /// process had any.
    pub sqpoll_s: Option<f64>,
}

/// Summarises a histogram; `sample_means` (one per sample) give the mean's error margin.
pub fn latency_summary(h: &LatencyHistogram, sample_means: &[f64]) -> LatencySummary {
    let e = estimate(sample_means, 0.99);
    let p = |q: f64| h.value_at_percentile(q);
    LatencySummary {
        mean: h.mean(),
        mean_margin: if e.margin.is_finite() { e.margin } else { 0.0 },
        min: h.min(),
        p25: p(25.0),
        p50: p(50.0),
        p75: p(75.0),
        p90: p(90.0),
        p95: p(95.0),
        p99: p(99.0),
        p999: p(99.9),
        p9999: p(99.99),
        max: h.max(),
    }
}

/// A segment's samples read back from their spill file. The spill is this process's own
/// unnamed file; should reading it fail, the samples from there on are left out and the
/// failure is said on stderr, so that the report of what was read is still written.
fn read_back(seg: &SpilledSamples) -> Vec<StoredSample> {
    let mut out = Vec::with_capacity(seg.len());
    match seg.iter() {
        Ok(samples) => {
            for s in samples {
                match s {
                    Ok(s) => out.push(s),
                    Err(e) => {
                        eprintln!("warning: samples could not be read back: {e}");
                        break;
                    }
                }
            }
        }
        Err(e) => eprintln!("warning: samples could not be read back: {e}"),
    }
    out
}

/// Everything one backend produced over its segments, before it becomes a report entry.
#[derive(Debug, Default)]
pub struct BackendRun {
    /// Samples by segment, in their spill files.
    pub segments: Vec<SpilledSamples>,
    /// Latency from the due time of every sample's successes, merged as segments end.
    pub latency: LatencyHistogram,
    /// Service time of every sample's successes.
    pub service: LatencyHistogram,
    /// Measured seconds per segment.
    pub elapsed_s: Vec<f64>,
    /// Wall-clock start of each segment, seconds since the Unix epoch.
    pub segment_starts_unix_s: Vec<Option<f64>>,
    /// First message per error kind.
    pub first_errors: BTreeMap<String, String>,
    /// Overhead totals over the measured segments.
    pub overhead: OverheadTotals,
    /// Why syscalls could not be counted.
    pub syscalls_unavailable: Option<String>,
    /// Why syscalls could not be counted by kind.
    pub syscall_kinds_unavailable: Option<String>,
    /// Why io_uring operations could not be counted.
    pub io_uring_unavailable: Option<String>,
    /// Driver counters over the measured segments (doppio).
    pub counters: Option<crate::backend::DriverCounters>,
    /// Whether the samples' rows were counted (else the report's row figures are `null`).
    pub rows_counted: bool,
    /// The workload's run statements, in order (names the entries of `statements`).
    pub statement_info: Vec<StatementInfo>,
    /// Per run statement (by index): its record over the measured segments.
    pub statements: Vec<StatementTotals>,
}

/// Adds a segment's count `part` to `total`. A count missing from any segment (`why` says
/// why) is missing from the total, with the reason in `unavailable`: a partial sum would
/// pass for the whole.
fn add_count<T>(
    total: &mut Option<T>,
    unavailable: &mut Option<String>,
    part: Option<T>,
    why: Option<&String>,
    add: impl FnOnce(T, T) -> T,
) {
    match part {
        Some(p) if unavailable.is_none() => {
            *total = Some(match total.take() {
                Some(t) => add(t, p),
                None => p,
            });
        }
        Some(_) => {}
        None => {
            *unavailable = Some(why.cloned().unwrap_or_else(|| "not counted".into()));
            *total = None;
        }
    }
}

impl BackendRun {
    /// The run with `segments` of in-memory samples stored as a phase stores them (tests
    /// build runs from samples).
    #[cfg(test)]
    pub(crate) fn with_samples(
        mut self,
        segments: Vec<Vec<crate::engine::collect::Sample>>,
    ) -> Self {
        self.segments = segments
            .into_iter()
            .map(|seg| {
                let mut spilled = SpilledSamples::new().unwrap_or_else(|e| panic!("spill: {e}"));
                for s in seg {
                    self.latency.merge(&s.latency);
                    self.service.merge(&s.service);
                    spilled.push(&s).unwrap_or_else(|e| panic!("store: {e}"));
                }
                spilled
            })
            .collect();
        self
    }
    /// Adds the driver's counters over a measured segment (`after` less `before`), and the
    /// requests each node was sent in it (from the samples: the counters' difference would
    /// lose a node that left during the segment, as its counters leave with it).
    pub fn add_counters(
        &mut self,
        before: &DriverCounters,
        after: &DriverCounters,
        requests_by_node: &BTreeMap<String, u64>,
    ) {
        let c = self.counters.get_or_insert_with(Default::default);
        c.requests += after.requests.saturating_sub(before.requests);
        c.flushes += after.flushes.saturating_sub(before.flushes);
        c.reads += after.reads.saturating_sub(before.reads);
        c.bytes_written += after.bytes_written.saturating_sub(before.bytes_written);
        c.bytes_read += after.bytes_read.saturating_sub(before.bytes_read);
        c.retries += after.retries.saturating_sub(before.retries);
        if let (Some(b), Some(a)) = (before.uring_enters, after.uring_enters) {
            c.uring_enters = Some(c.uring_enters.unwrap_or_default().plus(&a.since(&b)));
        }
        c.reprepares += after.reprepares.saturating_sub(before.reprepares);
        for (node, n) in requests_by_node {
            *c.nodes.entry(node.clone()).or_default() += n;
        }
        for (node, counts) in &after.scylla_shards {
            let was = before.scylla_shards.get(node);
            let delta: Vec<u64> = counts
                .iter()
                .enumerate()
                .map(|(i, n)| n.saturating_sub(was.and_then(|w| w.get(i)).copied().unwrap_or(0)))
                .collect();
            add_counts(c.scylla_shards.entry(node.clone()).or_default(), &delta);
        }
    }

    /// Adds a measured segment: its samples, latencies, statements, time and first errors.
    pub fn add_phase(&mut self, outcome: PhaseOutcome) {
        for (k, m) in outcome.first_errors {
            self.first_errors.entry(k.to_owned()).or_insert(m);
        }
        self.elapsed_s.push(outcome.elapsed.as_secs_f64());
        self.segment_starts_unix_s.push(
            outcome
                .started_at
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64()),
        );
        self.latency.merge(&outcome.latency);
        self.service.merge(&outcome.service);
        self.segments.push(outcome.samples);
        merge_totals(&mut self.statements, &outcome.statements);
    }

    /// Adds what a measured segment cost.
    pub fn add_cost(&mut self, cost: &Cost) {
        let o = &mut self.overhead;
        o.user_s += cost.user.as_secs_f64();
        o.sys_s += cost.sys.as_secs_f64();
        o.ctx_switches += cost.voluntary_ctx_switches + cost.involuntary_ctx_switches;
        o.peak_rss = o.peak_rss.max(cost.peak_rss_bytes);
        if let Some(n) = cost.allocations {
            o.allocations = Some(o.allocations.unwrap_or(0) + n);
        }
        if let Some(d) = cost.sqpoll {
            o.sqpoll_s = Some(o.sqpoll_s.unwrap_or(0.0) + d.as_secs_f64());
        }
        add_count(
            &mut o.syscalls,
            &mut self.syscalls_unavailable,
            cost.syscalls,
            cost.syscalls_unavailable.as_ref(),
            |a, b| a + b,
        );
        add_count(
            &mut o.syscalls_by_kind,
            &mut self.syscall_kinds_unavailable,
            cost.syscalls_by_kind,
            cost.syscall_kinds_unavailable.as_ref(),
            |a, b| a.plus(&b),
        );
        add_count(
            &mut o.io_uring,
            &mut self.io_uring_unavailable,
            cost.io_uring,
            cost.io_uring_unavailable.as_ref(),
            |a, b| a.plus(&b),
        );
    }

    /// The report entry for `driver`.
    pub fn report(&self, driver: &str) -> BackendReport {
        let (latency, service) = (&self.latency, &self.service);
        let mut requests = 0u64;
        let mut rows = 0u64;
        let mut errors_by_kind: BTreeMap<String, u64> = BTreeMap::new();
        let mut samples = Vec::new();
        let mut throughputs = Vec::new();
        let mut means = Vec::new();
        let mut service_means = Vec::new();
        let mut lateness = (0.0, 0u64);
        for (segment, seg) in self.segments.iter().enumerate() {
            let mut first_duration = None;
            for s in read_back(seg) {
                let first = *first_duration.get_or_insert(s.duration.as_secs_f64());
                requests += s.requests;
                rows += s.rows;
                for (k, n) in &s.errors {
                    *errors_by_kind.entry(k.clone()).or_default() += n;
                }
                lateness.0 += s.mean_lateness_ns * s.requests as f64;
                lateness.1 += s.requests;
                // Partial last intervals (under half an interval) would skew the per-sample
                // statistics; they still count in the totals.
                let full = s.duration.as_secs_f64() > 0.0
                    && (samples.is_empty() || s.duration.as_secs_f64() >= 0.5 * first);
                if full {
                    throughputs.push(s.throughput());
                    if s.latency.count > 0 {
                        means.push(s.latency.mean);
                        service_means.push(s.service.mean);
                    }
                }
                samples.push(SampleReport {
                    segment,
                    start_s: s.start.as_secs_f64(),
                    duration_s: s.duration.as_secs_f64(),
                    requests: s.requests,
                    errors: s.error_count(),
                    throughput_rps: s.throughput(),
                    latency_mean_ns: s.latency.mean,
                    latency_p50_ns: s.latency.p50,
                    latency_p99_ns: s.latency.p99,
                    histogram: s.latency.base64.clone(),
                    start_unix_s: self
                        .segment_starts_unix_s
                        .get(segment)
                        .copied()
                        .flatten()
                        .map(|t| t + s.start.as_secs_f64()),
                    statements: (0..self.statement_info.len())
                        .map(|k| {
                            let c = s.statements.get(k).copied().unwrap_or_default();
                            sample_statement(&c, s.duration.as_secs_f64())
                        })
                        .collect(),
                    requests_by_node: s.requests_by_node.clone(),
                    target_rps: s.target_rps,
                });
            }
        }
        let elapsed: f64 = self.elapsed_s.iter().sum();
        let per_req = |x: f64| {
            if requests > 0 {
                x / requests as f64
            } else {
                0.0
            }
        };
        let o = &self.overhead;
        let tp = estimate(&throughputs, 0.99);
        let errors = errors_by_kind.values().sum();
        let statements = self.statement_reports(&samples, elapsed, requests);
        BackendReport {
            driver: driver.to_owned(),
            throughput_rps: if elapsed > 0.0 {
                requests as f64 / elapsed
            } else {
                0.0
            },
            throughput_margin_rps: if tp.margin.is_finite() {
                tp.margin
            } else {
                0.0
            },
            requests,
            errors,
            errors_by_kind,
            first_errors: self.first_errors.clone(),
            elapsed_s: elapsed,
            cpu_us_per_req: per_req((o.user_s + o.sys_s) * 1e6),
            sqpoll_thread_cpu_us_per_req: o.sqpoll_s.map(|s| per_req(s * 1e6)),
            cpu_user_us_per_req: per_req(o.user_s * 1e6),
            cpu_sys_us_per_req: per_req(o.sys_s * 1e6),
            syscalls_per_req: o.syscalls.map(|n| per_req(n as f64)),
            syscalls_unavailable: self.syscalls_unavailable.clone(),
            syscalls_by_kind: o.syscalls_by_kind,
            syscalls_by_kind_per_req: o.syscalls_by_kind.map(|k| k.map(|n| per_req(n as f64))),
            syscall_kinds_unavailable: self.syscall_kinds_unavailable.clone(),
            io_uring_submitted: o.io_uring.map(|x| x.submitted),
            io_uring_submitted_per_req: o.io_uring.map(|x| per_req(x.submitted as f64)),
            io_uring_completed: o.io_uring.map(|x| x.completed),
            io_uring_completed_per_req: o.io_uring.map(|x| per_req(x.completed as f64)),
            io_uring_unavailable: self.io_uring_unavailable.clone(),
            ctx_switches_per_req: per_req(o.ctx_switches as f64),
            allocations_per_req: o.allocations.map(|n| per_req(n as f64)),
            peak_rss_bytes: o.peak_rss,
            requests_per_flush: self
                .counters
                .as_ref()
                .filter(|c| c.flushes > 0)
                .map(|c| c.requests as f64 / c.flushes as f64),
            requests_per_read: self
                .counters
                .as_ref()
                .filter(|c| c.reads > 0)
                .map(|c| c.requests as f64 / c.reads as f64),
            retries: self.counters.as_ref().map(|c| c.retries),
            reprepares: self.counters.as_ref().map(|c| c.reprepares),
            retries_per_s: self
                .counters
                .as_ref()
                .filter(|_| elapsed > 0.0)
                .map(|c| c.retries as f64 / elapsed),
            requests_by_node: self.counters.as_ref().map(|c| c.nodes.clone()),
            uring_enters: self.counters.as_ref().and_then(|c| c.uring_enters),
            uring_enters_per_req: self
                .counters
                .as_ref()
                .and_then(|c| c.uring_enters)
                .map(|e| UringEntersPerReq::of(&e, requests)),
            requests_by_scylla_shard: self
                .counters
                .as_ref()
                .filter(|c| !c.scylla_shards.is_empty())
                .map(|c| c.scylla_shards.clone()),
            latency_ns: latency_summary(latency, &means),
            service_time_ns: latency_summary(service, &service_means),
            mean_send_lateness_ns: if lateness.1 > 0 {
                lateness.0 / lateness.1 as f64
            } else {
                0.0
            },
            samples,
            histogram: latency.to_base64(),
            service_histogram: service.to_base64(),
            rows: self.rows_counted.then_some(rows),
            rows_per_s: (self.rows_counted && elapsed > 0.0).then(|| rows as f64 / elapsed),
            cpu_us_per_row: (self.rows_counted && rows > 0)
                .then(|| (o.user_s + o.sys_s) * 1e6 / rows as f64),
            machines: None,
            statements,
        }
    }

    /// Each run statement's entry: its totals, and its margins from `samples` (the
    /// backend's, which carry every statement's per-interval figures).
    fn statement_reports(
        &self,
        samples: &[SampleReport],
        elapsed: f64,
        requests: u64,
    ) -> Vec<StatementReport> {
        let empty = StatementTotals::default();
        self.statement_info
            .iter()
            .enumerate()
            .map(|(k, info)| {
                let t = self.statements.get(k).unwrap_or(&empty);
                let (throughputs, means) = statement_series(samples, k);
                let sequence = info.kind.as_deref() == Some("sequence");
                StatementReport {
                    name: info.name.clone(),
                    cql: info.cql.clone(),
                    kind: info.kind.clone(),
                    not_applied: info.conditional.then_some(t.not_applied),
                    weight: info.weight,
                    weight_share: info.weight_share,
                    requests: t.requests,
                    // A sequence's iterations are not requests: no share of them.
                    request_share: if sequence {
                        0.0
                    } else {
                        share(t.requests, requests)
                    },
                    throughput_rps: per_second(t.requests, elapsed),
                    throughput_margin_rps: margin(&throughputs),
                    errors: t.error_count(),
                    errors_by_kind: t
                        .errors
                        .iter()
                        .map(|(k, n)| ((*k).to_owned(), *n))
                        .collect(),
                    rows: self.rows_counted.then_some(t.rows),
                    latency_ns: latency_summary(&t.latency, &means),
                    histogram: t.latency.to_base64(),
                }
            })
            .collect()
    }
}

/// `part` over `whole` (0 when `whole` is 0).
pub(crate) fn share(part: u64, whole: u64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64
    } else {
        0.0
    }
}

/// `n` over `seconds` (0 when no time passed).
pub(crate) fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// The 99 % confidence half-width of the mean of `xs` by batch means (0 when there are too
/// few samples to tell).
pub(crate) fn margin(xs: &[f64]) -> f64 {
    let e = estimate(xs, 0.99);
    if e.margin.is_finite() {
        e.margin
    } else {
        0.0
    }
}

/// A statement's figures in an interval of `duration_s` seconds.
fn sample_statement(c: &StatementCounts, duration_s: f64) -> SampleStatement {
    SampleStatement {
        requests: c.requests,
        errors: c.errors,
        throughput_rps: per_second(c.requests, duration_s),
        latency_mean_ns: c.mean_latency_ns(),
    }
}

/// Statement `k`'s per-sample throughputs and mean latencies (the latter of the samples in
/// which it succeeded) over the full samples: a last sample under half an interval is
/// left out, as in the totals' margins.
pub(crate) fn statement_series(samples: &[SampleReport], k: usize) -> (Vec<f64>, Vec<f64>) {
    let half = samples.first().map_or(0.0, |s| s.duration_s) * 0.5;
    let mut throughputs = Vec::new();
    let mut means = Vec::new();
    for s in samples
        .iter()
        .filter(|s| s.duration_s > 0.0 && s.duration_s >= half)
    {
        let st = s.statements.get(k).cloned().unwrap_or_default();
        throughputs.push(st.throughput_rps);
        if st.requests > st.errors {
            means.push(st.latency_mean_ns);
        }
    }
    (throughputs, means)
}

/// Now as RFC 3339 UTC to the second (`2026-11-22T15:04:05Z`).
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339_of_unix(i64::try_from(secs).unwrap_or(i64::MAX))
}

/// Seconds since the Unix epoch as RFC 3339 UTC to the second (`2026-11-22T15:04:05Z`); the
/// epoch itself for a time outside chrono's range.
pub fn rfc3339_of_unix(secs: i64) -> String {
    DateTime::<Utc>::from_timestamp(secs, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Seconds since the Unix epoch of an RFC 3339 time (as [`now_rfc3339`] writes it, or with
/// an offset or fractional seconds); `None` for anything else.
pub fn rfc3339_to_unix(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp())
}

impl Report {
    /// Reads a report written by `doppio run`.
    pub fn read(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a doppio report: {e}", path.display()))?;
        // Reports of other commands say what they are (`"kind"`); a run's report has none.
        if let Some(kind) = value.get("kind").and_then(|k| k.as_str()) {
            return Err(format!(
                "{}: a {kind} report, not the report of a run (`doppio show` prints it and \
                 `doppio plot` draws it)",
                path.display()
            ));
        }
        let report: Report = serde_json::from_value(value)
            .map_err(|e| format!("{}: not a doppio report: {e}", path.display()))?;
        if report.schema_version != SCHEMA_VERSION {
            return Err(format!(
                "{}: schema version {} (this doppio reads {SCHEMA_VERSION})",
                path.display(),
                report.schema_version
            ));
        }
        Ok(report)
    }

    /// Writes the report as pretty JSON.
    pub fn write(&self, path: &std::path::Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips() {
        assert_eq!(rfc3339_to_unix("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_to_unix("2026-11-22T15:04:05Z"), Some(1_795_359_845));
        assert_eq!(rfc3339_to_unix("2000-02-29T12:00:00Z"), Some(951_825_600));
        assert_eq!(rfc3339_to_unix("yesterday"), None);
        assert_eq!(rfc3339_to_unix("2026-13-01T00:00:00Z"), None);
        assert_eq!(
            rfc3339_to_unix("2026-11-22T16:04:05+01:00"),
            Some(1_795_359_845)
        );
        for secs in [0, 951_825_600, 1_795_359_845, 4_102_444_800] {
            assert_eq!(rfc3339_to_unix(&rfc3339_of_unix(secs)), Some(secs));
        }
        assert_eq!(rfc3339_of_unix(1_795_359_845), "2026-11-22T15:04:05Z");
        assert_eq!(rfc3339_of_unix(951_825_600), "2000-02-29T12:00:00Z");
        let now = now_rfc3339();
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        assert!((rfc3339_to_unix(&now).unwrap() - secs).abs() <= 2);
    }

    #[test]
    fn segments_add_up_and_a_count_missing_from_one_is_missing_with_its_reason() {
        use crate::overhead::{ByKind, Cost, IoUringOps};
        let counted = Cost {
            syscalls: Some(28),
            syscalls_by_kind: Some(ByKind::from_fn(|k| k as u64 + 1)),
            io_uring: Some(IoUringOps {
                submitted: 5,
                completed: 4,
            }),
            ..Cost::default()
        };
        let mut run = BackendRun::default();
        run.add_cost(&counted);
        run.add_cost(&counted);
        let r = run.report("doppio");
        let kinds = r.syscalls_by_kind.unwrap();
        assert_eq!(kinds.total(), 56);
        assert_eq!(kinds.other, 14);
        assert_eq!(
            r.syscalls_by_kind_per_req,
            Some(kinds.map(|_| 0.0)),
            "no requests"
        );
        assert_eq!(
            (r.io_uring_submitted, r.io_uring_completed),
            (Some(10), Some(8))
        );

        // The second segment could not count by kind nor io_uring: the total still adds up.
        let mut run = BackendRun::default();
        run.add_cost(&counted);
        run.add_cost(&Cost {
            syscalls: Some(28),
            syscall_kinds_unavailable: Some("filter refused".into()),
            io_uring_unavailable: Some("no io_uring tracepoints".into()),
            ..Cost::default()
        });
        run.add_cost(&counted);
        let r = run.report("scylla");
        assert_eq!(run.overhead.syscalls, Some(84));
        assert_eq!(
            (r.syscalls_by_kind, r.syscalls_by_kind_per_req),
            (None, None)
        );
        assert_eq!(
            r.syscall_kinds_unavailable.as_deref(),
            Some("filter refused")
        );
        assert_eq!(
            (r.io_uring_submitted, r.io_uring_completed_per_req),
            (None, None)
        );
        assert_eq!(
            r.io_uring_unavailable.as_deref(),
            Some("no io_uring tracepoints")
        );
        assert_eq!(r.syscalls_unavailable, None);
    }

    #[test]
    fn rows_are_reported_per_second_and_per_cpu_time_and_null_when_not_counted() {
        use crate::engine::collect::Sample;
        use std::time::Duration;
        let sample = |rows| Sample {
            index: 0,
            start: Duration::ZERO,
            duration: Duration::from_secs(1),
            requests: 100,
            rows,
            errors: Vec::new(),
            latency: LatencyHistogram::new(),
            service: LatencyHistogram::new(),
            mean_lateness_ns: 0.0,
            target_rps: None,
            statements: Vec::new(),
            nodes: Vec::new(),
        };
        let mut run = BackendRun {
            elapsed_s: vec![2.0],
            rows_counted: true,
            ..BackendRun::default()
        }
        .with_samples(vec![vec![sample(300), sample(500)]]);
        run.overhead.user_s = 0.003;
        run.overhead.sys_s = 0.001;
        let r = run.report("doppio");
        assert_eq!(r.rows, Some(800));
        assert_eq!(r.rows_per_s, Some(400.0));
        let per_row = r.cpu_us_per_row.unwrap();
        assert!((per_row - 5.0).abs() < 1e-9, "{per_row}");
        // No row read: no CPU per row (not a division by zero, not a zero).
        run = BackendRun {
            elapsed_s: vec![2.0],
            rows_counted: true,
            overhead: std::mem::take(&mut run.overhead),
            ..BackendRun::default()
        }
        .with_samples(vec![vec![sample(0)]]);
        let r = run.report("doppio");
        assert_eq!((r.rows, r.cpu_us_per_row), (Some(0), None));
        // Not counted: null, never a fake zero.
        run.rows_counted = false;
        let r = run.report("doppio");
        assert_eq!((r.rows, r.rows_per_s, r.cpu_us_per_row), (None, None, None));
        let j = serde_json::to_value(&r).unwrap();
        assert!(j["rows"].is_null() && j["cpu_us_per_row"].is_null(), "{j}");
    }

    #[test]
    fn rfc3339_has_the_right_shape() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.starts_with("20"), "{t}");
        assert!(t.ends_with('Z'));
    }

    #[test]
    fn config_compression_reads_names_and_the_booleans_of_older_reports() {
        let config = |compression: &str| {
            let text = format!(
                r#"{{"nodes": [], "drivers": [], "duration": "1s", "warmup": "0s",
                "concurrency": 1, "threads": 1, "connections": 1, "rate": null,
                "sample_interval_s": 1.0, "consistency": "ONE", "request_timeout_s": 5.0,
                "retries": 0, "compression": {compression}, "segments": 1,
                "username": null}}"#
            );
            serde_json::from_str::<RunConfig>(&text).unwrap()
        };
        assert_eq!(config("true").compression, "lz4");
        assert_eq!(config("false").compression, "none");
        let new = config(r#""lz4""#);
        assert_eq!(new.compression, "lz4");
        // Fields older reports lack read as absent.
        assert_eq!(new.serial_consistency, None);
        assert!(new.thread_cores.is_empty());
    }
}
