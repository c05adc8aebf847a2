//! The report's JSON schema (fields documented in `bench/REPORT.md`; [`SCHEMA_VERSION`]
//! changes when a field changes meaning or goes away): a run's [`Report`], its
//! configuration, each backend's entry, samples and statements.

use std::collections::BTreeMap;

use super::connection_shape::ConnectionShape;
use serde::{Deserialize, Serialize};

pub use super::figure::anatomy::AnatomyReport;
pub use super::figure::machines::MachineFigures;
pub use super::figure::samples::{SampleReport, SampleStatement};
pub use super::figure::segments::SegmentFigures;
pub use super::figure::statements::{StatementInfo, StatementReport};
pub use super::figure::waterfall::{StageReport, WaterfallReport};
pub use super::figure::while_parked::WhileParked;

pub use super::summary::LatencySummary;

/// The version of the JSON layout below.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole report: one invocation of `doppio run` (one or two backends).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    pub merged_from: Option<Vec<MergedInput>>,
    /// The machine and the build the run was measured with; `null` in a merged report (each
    /// machine's is in `merged_from`) and in reports written before this field existed.
    #[serde(default)]
    pub environment: Option<crate::probe::environment::Environment>,
}

/// The workload of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    /// With a rate: the release grid's step, seconds (`--release-grid`; every request is
    /// sent at the first grid point at or after its due time, 0: at its due time); `null`
    /// without a rate, and in reports written before the grid.
    #[serde(default)]
    pub release_grid_s: Option<f64>,
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
    /// `--validate`: the run statements whose rows were compared with what their writer wrote
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
    /// The TCP connections each backend held once its pools settled after connecting, by
    /// driver name: by node, and by ScyllaDB shard where the shard-aware port tells
    /// (counted from the kernel's socket table, whatever the driver says); absent when none
    /// was counted, and in reports written before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub connection_shapes: BTreeMap<String, ConnectionShape>,
    /// The backends' order in each round of segments (`--order`): `rotate` (each round
    /// starts one backend later: ABC, BCA, CAB) or `fixed` (ABC every round); `null` in
    /// reports written before rounds were rotated (fixed).
    #[serde(default)]
    pub order: Option<String>,
    /// Each round's order of backends, by driver name (`segments` rounds).
    #[serde(default)]
    pub rounds: Vec<Vec<String>>,
    /// `--server-warmup`: how long the workload ran unrecorded before the first round, to
    /// warm the node (`null`: not asked).
    #[serde(default)]
    pub server_warmup: Option<String>,
    /// The node processes whose CPU was measured (`--server-pid`, or those listening on a
    /// node's address on this machine); empty when the node is elsewhere.
    #[serde(default)]
    pub server_pids: Vec<u32>,
    /// The cores they may run on (the union of their affinities).
    #[serde(default)]
    pub server_cores: Option<usize>,
    /// `--equal-load`: each backend's capacity and the rate every segment ran at (`rate`
    /// holds it too); `null` otherwise.
    #[serde(default)]
    pub equal_load: Option<EqualLoad>,
    /// `--syscalls`: `by-kind` (the total, each kind, io_uring operations) or `total` (the
    /// total only); null in older reports (by kind).
    #[serde(default)]
    pub syscalls: Option<String>,
    /// `--waterfall N`: one request in N of each doppio backend was timed stage by stage
    /// (`null` without it).
    #[serde(default)]
    pub waterfall_every: Option<u64>,
}

/// `config.equal_load`: the run at equal work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EqualLoad {
    /// The share of the slowest backend's capacity (`--equal-load`).
    pub share: f64,
    /// Each backend's iterations per second at full speed, by driver name: the best of two
    /// unrecorded probes of a segment's length, in two rotated rounds before the first.
    pub capacities: BTreeMap<String, f64>,
    /// The rate every segment ran at, iterations per second.
    pub rate: f64,
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

/// What one backend measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackendReport {
    /// `doppio` or `scylla`.
    pub driver: String,
    /// Requests, errors, measured time and throughput.
    #[serde(flatten)]
    pub throughput: super::figure::throughput::ThroughputFigures,
    /// Client CPU per request, in all, by user and system, and the kernel threads' parts.
    #[serde(flatten)]
    pub client_cpu: super::figure::client_cpu::ClientCpuFigures,
    /// System calls per request, in all and by kind.
    #[serde(flatten)]
    pub syscalls: super::figure::syscalls::SyscallFigures,
    /// io_uring operations submitted and completed.
    #[serde(flatten)]
    pub io_uring: super::figure::uring::IoUringFigures,
    /// Hardware counters per request.
    #[serde(flatten)]
    pub hardware: super::figure::hardware::HardwareFigures,
    /// Context switches and sleeps per request.
    #[serde(flatten)]
    pub context_switches: super::figure::context_switches::ContextSwitchFigures,
    /// Heap allocations per request and peak RSS.
    #[serde(flatten)]
    pub memory: super::figure::memory::MemoryFigures,
    /// Requests per socket write and read.
    #[serde(flatten)]
    pub socket_batching: super::figure::socket_batching::SocketBatchingFigures,
    /// Retries, re-prepares, tablet misroutes and requests by node, as the driver counted.
    #[serde(flatten)]
    pub driver_counts: super::figure::driver_counts::DriverCountFigures,
    /// doppio's own io_uring runtime's `io_uring_enter` calls by reason.
    #[serde(flatten)]
    pub enters: super::figure::uring::UringEnterFigures,
    /// What this backend's threads (those it started as it connected) did while other
    /// backends' segments were measured, left out of those backends' figures; `null` when
    /// it ran alone.
    #[serde(default)]
    pub while_parked: Option<WhileParked>,
    /// Requests by ScyllaDB shard of each node.
    #[serde(flatten)]
    pub scylla_shards: super::figure::scylla_shards::ScyllaShardFigures,
    /// Latency and service time, and the sends' lateness.
    #[serde(flatten)]
    pub latency: super::figure::latency::LatencyFigures,
    /// Every sample, and the whole run's latency and service-time histograms.
    #[serde(flatten)]
    pub samples: super::figure::samples::SampleFigures,
    /// Result rows, per second and per client CPU time.
    #[serde(flatten)]
    pub result_rows: super::figure::rows::RowFigures,
    /// In a merged report, each machine's own figures; `null` in a report of one run.
    #[serde(flatten)]
    pub machines: super::figure::machines::MachineList,
    /// Each run statement's own figures, in the workload's order.
    #[serde(flatten)]
    pub statements: super::figure::statements::StatementFigures,
    /// Each measured segment's own figures, in the order run.
    #[serde(flatten)]
    pub segments: super::figure::segments::SegmentList,
    /// The node's CPU per request, utilisation and saturated segments.
    #[serde(flatten)]
    pub server_cpu: super::figure::server_cpu::ServerCpuFigures,
    /// The client's CPU per request split by layer (`--anatomy` or `--flamegraph`; `null`
    /// otherwise).
    #[serde(default)]
    pub anatomy: Option<AnatomyReport>,
    /// `--waterfall N`: the latency of the requests doppio timed, stage by stage (`null`
    /// without it, and for scylla, whose request path is not instrumented).
    #[serde(default)]
    pub waterfall: Option<WaterfallReport>,
}

/// One machine's run in a merged report: its file and its own description of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergedInput {
    /// The report's file, as given to `doppio merge`.
    pub file: String,
    /// Its `--tag`.
    pub tag: Option<String>,
    /// When it started.
    pub started_at: String,
    /// Its command line.
    pub command: Vec<String>,
    /// Its options (with its `cycles`).
    pub config: RunConfig,
    /// Its fatal error, if any.
    pub fatal_error: Option<String>,
    /// Its warnings.
    pub warnings: Vec<String>,
    /// Its machine and build (`null` in reports written before this field existed).
    #[serde(default)]
    pub environment: Option<crate::probe::environment::Environment>,
}

#[cfg(test)]
mod tests {
    use super::*;
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
