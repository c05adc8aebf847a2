//! The command line: `doppio schema|load|run|curve|findmax|show|hdr|list|sweep|merge|plot`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args as ClapArgs, Parser, Subcommand};

use crate::backend::{
    Compression, Consistency, Driver, RetryBackoff, SerialConsistency, SqPollOptions, UnknownDriver,
};
use crate::engine::cycles::{CycleRange, LoaderSlice};
use crate::engine::grid;
use crate::engine::order::Order;
use crate::engine::schedule::RateSchedule;
use crate::engine::Limit;
use crate::probe::process_cost::Counting;
use crate::secret::Secret;
use crate::units::{self, UnitError};

pub mod limits;

/// `doppio cost-child`: one run of a `cost` scenario, in the process Valgrind watches (used
/// by `doppio cost`). A command of its own, read before [`Cli`] is built (`main`), so that
/// the figures counted in that process (`empty`'s above all: the process's whole start-up)
/// do not move whenever the rest of the command line grows: clap builds every subcommand's
/// parser when it parses.
#[derive(Debug, Parser)]
#[command(name = "doppio cost-child")]
pub struct CostChildArgs {
    /// doppio or scylla.
    #[arg(long)]
    pub driver: String,
    /// The scenario.
    #[arg(long)]
    pub scenario: String,
    /// Requests to make.
    #[arg(long)]
    pub requests: u64,
    /// The stub to talk to (scylla's runs).
    #[arg(long)]
    pub stub: Option<std::net::SocketAddr>,
}

/// The first argument that selects [`CostChildArgs`] over [`Cli`].
pub const COST_CHILD: &str = "cost-child";

/// A latte-class CQL benchmark with a one-flag backend swap (doppio on glommio, doppio on its
/// own io_uring runtime, or scylla-rust-driver).
///
/// An option given twice takes its last value (repeatable ones, such as `-P`, collect every
/// value), so wrappers such as `scripts/demo.sh` can set defaults that the user overrides.
#[derive(Debug, Parser)]
#[command(name = "doppio", version, about, long_about = None, args_override_self = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// One value per process, parsed once: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Creates the workload's schema (keyspaces, tables).
    Schema(Connect),
    /// Fills the workload's tables (its [load] section).
    Load(LoadArgs),
    /// Runs the workload and writes a report.
    Run(RunArgs),
    /// The load curve: probes each backend's capacity, then runs them all in rounds at each
    /// of several loads (shares of the slowest one's capacity), writing one report per load
    /// and the curve of client CPU, syscalls, waits and latency per request against load
    /// (curve.json, curve.md, curve.svg) into a folder. `--from` draws the curve from the
    /// reports of an earlier one.
    Curve(CurveArgs),
    /// Finds the highest constant rate each backend holds: the rate is raised step by step
    /// until the achieved rate falls below 95 % of the target, more than 1 % of requests
    /// fail, or a latency objective (--slo) is broken. Prints a table per backend and writes
    /// a JSON report (`doppio plot` draws it).
    Findmax(FindmaxArgs),
    /// Prints a report, or two side by side with change and p-value.
    Show {
        /// The report.
        report: PathBuf,
        /// A baseline to compare with.
        baseline: Option<PathBuf>,
        /// Also print the per-sample LOG.
        #[arg(long)]
        log: bool,
        /// With a baseline: also draw the differential flamegraph of CPU per request of the
        /// two reports' first backends into this SVG (both runs made with --flamegraph; red
        /// where the report spends more per request than the baseline).
        #[arg(long, value_name = "SVG")]
        flamediff: Option<PathBuf>,
    },
    /// Writes a report's latency samples as an HdrHistogram interval log.
    Hdr {
        /// The report.
        report: PathBuf,
        /// Output file (.hlog).
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// Which backend of the report (default: the first).
        #[arg(long)]
        driver: Option<String>,
        /// One run statement's histogram (by its name) instead of the samples: one interval
        /// spanning the measured time (per-statement histograms are kept per run, not per
        /// sample).
        #[arg(long)]
        statement: Option<String>,
    },
    /// Lists the reports in a folder: tag, date, workload, throughput.
    List {
        /// The folder (default: the current one).
        dir: Option<PathBuf>,
    },
    /// Summarises runs at several concurrencies: a markdown table (stdout, and --markdown)
    /// and a plot of throughput and CPU per request against concurrency (--svg).
    Sweep {
        /// The reports, one per concurrency.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Also write the table here.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Write the plot here (SVG).
        #[arg(long)]
        svg: Option<PathBuf>,
        /// The plot's title.
        #[arg(long, default_value = "doppio vs scylla-rust-driver")]
        title: String,
    },
    /// cassandra-stress user profiles (YAML): `doppio profile convert p.yaml > p.toml` writes
    /// the doppio workload a profile runs as (bench/PROFILES.md); `schema`, `run`, `curve`
    /// and `findmax` also take `--profile p.yaml` in place of `-w`.
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Runs a cassandra-stress command line (after `--`) as cassandra-stress would, on the
    /// backend(s) of --driver: `doppio stress -- write n=1M -rate threads=64 -node 10.0.0.1`.
    /// Creates the schema, then runs as `doppio run` and writes its report
    /// (bench/STRESS.md: what is supported, and what each option becomes).
    Stress(StressArgs),
    /// User-space instructions and heap allocations per request of doppio and
    /// scylla-rust-driver, counted under Valgrind (Callgrind, DHAT): figures that do not move
    /// from run to run. Six scenarios (empty, insert, select_1, select_100, select_paged,
    /// batch_64) against the stub; doppio on its simulated runtime, scylla on a
    /// current-thread tokio. Prints a table and writes cost.md and cost.json into --out.
    Cost(CostArgs),
    /// Plots throughput and latency percentiles over time (SVG): one line per backend of
    /// each report (merged reports too), two panels stacked. Findmax reports are drawn
    /// against the target rate instead: achieved rate and p99 of each step.
    Plot {
        /// The reports.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// The plot's file (SVG).
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// Latency percentiles to draw, comma-separated.
        #[arg(long, default_value = "50,99")]
        percentiles: String,
        /// The plot's title (default: "throughput and latency over time", for findmax
        /// reports "achieved rate and p99 against target rate").
        #[arg(long)]
        title: Option<String>,
    },
    /// Combines the reports of one test run made on several loader machines into one:
    /// histograms added, requests and throughputs summed over wall-clock-aligned samples,
    /// overheads kept per machine, each machine's config kept.
    Merge {
        /// The machines' reports (at least two).
        #[arg(required = true, num_args = 2..)]
        reports: Vec<PathBuf>,
        /// The merged report's file.
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// The runs were made one after the other, not at once: merge them although their
        /// measured times do not overlap (refused otherwise: not one test run).
        #[arg(long)]
        sequential: bool,
    },
}

/// Options of `stress`: doppio's own, then the cassandra-stress command line after `--`.
#[derive(Debug, Clone, ClapArgs)]
pub struct StressArgs {
    /// Driver(s), as `run --driver`: doppio, doppio-uring, doppio-uring-sqpoll, scylla, or
    /// a list such as doppio,scylla to compare them.
    #[arg(long, default_value = "doppio")]
    pub driver: String,
    /// doppio's threads (shards) or tokio worker threads, 1 to 1024 (cassandra-stress's
    /// `-rate threads=` is the operations in flight, `run -p`).
    #[arg(short = 't', long, default_value_t = 1, value_parser = limits::threads)]
    pub threads: usize,
    /// Do not pin the threads that do request work to cores (as `run --no-pin`).
    #[arg(long)]
    pub no_pin: bool,
    /// The report's file (default in the current folder: doppio-stress-write-DATE.json and
    /// the like; for `user`, named for the profile).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// No progress output on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Print what would run (the `doppio run` options and the workload) and exit; nothing
    /// connects.
    #[arg(long)]
    pub dry_run: bool,
    /// The cassandra-stress command line: COMMAND [OPTIONS] [-GROUP OPTIONS]..., after `--`
    /// or as it is (everything from the command on is cassandra-stress's, `-rate` and all).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CASSANDRA-STRESS ARGS"
    )]
    pub words: Vec<String>,
}

/// What `doppio profile` does.
#[derive(Debug, Clone, Subcommand)]
pub enum ProfileCommand {
    /// Prints the doppio TOML workload a cassandra-stress user profile converts to (what
    /// could not be carried over is listed on stderr and in the TOML's comments).
    Convert {
        /// The profile (YAML); several, comma-separated, convert into one workload that
        /// runs them together (`a.yaml,b.yaml`, operations named `SPECNAME.OP`).
        profile: String,
    },
}

/// Where and how to connect, and which workload.
#[derive(Debug, Clone, ClapArgs)]
pub struct Connect {
    /// Node addresses (host or host:port; default 127.0.0.1:9042).
    #[arg(value_name = "NODE")]
    pub nodes: Vec<String>,
    /// Workload: a built-in (read, write, mixed, empty, timeseries, widerow) or a TOML file.
    #[arg(short = 'w', long, default_value = "read")]
    pub workload: String,
    /// A cassandra-stress user profile (YAML) to run instead of `-w`, converted in memory as
    /// `doppio profile convert` prints it; its parameters (`population`, `ops_NAME`) take
    /// `-P` (bench/PROFILES.md). Several, comma-separated, run together (`a.yaml,b.yaml`:
    /// weights `ops_SPECNAME_OP`).
    #[arg(long, value_name = "PROFILE.yaml", conflicts_with = "workload")]
    pub profile: Option<String>,
    /// Workload parameter overrides, NAME=VALUE (repeatable).
    #[arg(short = 'P', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Driver(s): doppio (glommio), doppio-uring (doppio's own io_uring runtime),
    /// doppio-uring-sqpoll (the same in SQPOLL mode: a kernel thread per shard takes the
    /// submissions, see --sqpoll-idle and --sqpoll-cpu), scylla, or a list such as
    /// doppio,doppio-uring,scylla to run them alternately (`run`, `curve`; `findmax` searches
    /// each). `null` is no driver: requests complete at once without I/O on doppio's io_uring
    /// runtime, so the report's OVERHEAD is the bench engine's own cost per request (its
    /// floor; nodes are ignored, no rows are returned; see bench/REPORT.md).
    #[arg(long, default_value = "doppio")]
    pub driver: String,
    /// Threads: doppio shards (one per core) or tokio worker threads (1 to 1024).
    #[arg(short = 't', long, default_value_t = 1, value_parser = limits::threads)]
    pub threads: usize,
    /// Connections per node (per ScyllaDB shard on a ScyllaDB node; doppio: per doppio
    /// shard too), 1 to 256.
    #[arg(short = 'c', long, default_value_t = 1, value_parser = limits::connections)]
    pub connections: usize,
    /// Consistency level.
    #[arg(long, default_value = "LOCAL_ONE", value_parser = Consistency::parse)]
    pub consistency: Consistency,
    /// Request timeout (1ms to 1h).
    #[arg(long, default_value = "5s", value_parser = limits::request_timeout)]
    pub timeout: Duration,
    /// Stop (exit code 1, report still written) when for this long no request succeeded and
    /// every failure was a lost connection: the node went away. 0s never stops.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub max_outage: Duration,
    /// Retries per request on errors that allow it (0: none; at most 100); every backend
    /// makes doppio's retry decisions.
    #[arg(long, default_value_t = 0, value_parser = limits::retries)]
    pub retries: u32,
    /// Compression of frame bodies: lz4 or none (every backend).
    #[arg(long, default_value = "none", value_name = "lz4|none", value_parser = Compression::parse)]
    pub compression: Compression,
    /// User name (PasswordAuthenticator).
    #[arg(long)]
    pub user: Option<String>,
    /// Password (or DOPPIO_PASSWORD); never written to reports.
    #[arg(long, env = "DOPPIO_PASSWORD", hide_env_values = true)]
    pub password: Option<Secret>,
    /// Do not pin the threads that do request work to cores 0..threads (doppio's shards,
    /// scylla's tokio workers and bench workers: every backend).
    #[arg(long)]
    pub no_pin: bool,
    /// doppio: let an idle shard spin this long (e.g. 50us) before it parks, trading CPU
    /// time for fewer io_uring_enter calls.
    #[arg(long, value_parser = parse_duration)]
    pub spin: Option<Duration>,
    /// doppio-uring: how late a shard's timer may fire so that timers due close together fire
    /// in one wake-up (never early); 0 to 100ms. Default: the runtime's (50us).
    #[arg(long, value_name = "DURATION", value_parser = limits::timer_slack)]
    pub timer_slack: Option<Duration>,
    /// doppio-uring: with several answers awaited, an idle shard waits for all of them at most
    /// this long, then wakes at the first (answers that trickle in are served several per
    /// wake-up, each at most this late); 0 (off) to 10ms. Default: the runtime's.
    #[arg(long, value_name = "DURATION", value_parser = limits::batch_wait)]
    pub batch_wait: Option<Duration>,
    /// doppio-uring: do the batched wait in user space (two waits where the kernel's minimum
    /// wait needs one), as on a kernel before Linux 6.12, even where the kernel has it.
    #[arg(long)]
    pub user_batch_wait: bool,
    /// doppio-uring-sqpoll: how long each shard's kernel submission thread polls an empty
    /// queue before it sleeps (whole milliseconds, 1ms to 10s; default 10ms). While it polls
    /// it uses a whole core; its CPU time is counted in the client's and shown on its own.
    #[arg(long, value_name = "DURATION", value_parser = parse_sqpoll_idle)]
    pub sqpoll_idle: Option<Duration>,
    /// doppio-uring-sqpoll: the core its kernel submission threads are pinned to, or `none`
    /// (the kernel places them on any core). Default: the first core after the shards'
    /// (0..threads), when the machine has one, else none. Every shard's thread goes there.
    #[arg(long, value_name = "CORE|none", value_parser = parse_sqpoll_cpu)]
    pub sqpoll_cpu: Option<SqPollCpu>,
    /// No progress output on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// When stderr is not a terminal: a progress line this often (of phase time; at least
    /// 100ms).
    #[arg(long, default_value = "10s", value_parser = limits::progress_every, value_name = "DURATION")]
    pub progress_every: Duration,
    /// Serial consistency of conditional statements, sent by every backend.
    #[arg(long, default_value = "LOCAL_SERIAL", value_name = "SERIAL|LOCAL_SERIAL",
          value_parser = SerialConsistency::parse)]
    pub serial_consistency: SerialConsistency,
    /// The local data center of every backend's load-balancing policy (default: doppio
    /// the contact point's, scylla none preferred).
    #[arg(long, value_name = "DC")]
    pub datacenter: Option<String>,
    /// A rack to prefer within --datacenter (scylla only: doppio refuses it).
    #[arg(long, value_name = "RACK")]
    pub rack: Option<String>,
    /// Delay before each retry: exponential from BASE up to CAP (default BASE), full jitter.
    /// doppio only: scylla-rust-driver cannot delay a retry and refuses it.
    #[arg(long, value_name = "BASE[,CAP]", value_parser = RetryBackoff::parse)]
    pub retry_backoff: Option<RetryBackoff>,
    /// The CQL protocol version: 4 or 5 (default: backends compared in one run speak the
    /// newest all of them speak, so v4 when scylla-rust-driver, which speaks v4 only and
    /// refuses 5, is among them; a backend alone speaks the newest the node offers: doppio
    /// v5 with Cassandra 4.0+ and the stub).
    #[arg(long, value_name = "4|5", value_parser = clap::value_parser!(u8).range(4..=5))]
    pub protocol: Option<u8>,
    /// A workload given as TOML text rather than by name (`doppio stress` writes the one
    /// of cassandra-stress's legacy commands); not an option of the command line.
    #[arg(skip)]
    pub inline_workload: Option<InlineWorkload>,
    /// Speak TLS to the nodes (every backend; rustls with the ring provider). Needs --ca.
    #[arg(long, requires = "ca")]
    pub tls: bool,
    /// With --tls: the PEM file of the CA(s) the nodes' certificates must chain to.
    #[arg(long, value_name = "FILE", requires = "tls")]
    pub ca: Option<std::path::PathBuf>,
    /// With --tls: a client certificate chain (PEM) to show nodes that require one; needs
    /// --key.
    #[arg(long, value_name = "FILE", requires_all = ["tls", "key"])]
    pub cert: Option<std::path::PathBuf>,
    /// With --tls: the private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires_all = ["tls", "cert"])]
    pub key: Option<std::path::PathBuf>,
    /// With --tls: the name the nodes' certificates must carry (default: each node's IP
    /// address). doppio only: scylla-rust-driver always checks the IP address and refuses it.
    #[arg(long, value_name = "NAME", requires = "tls")]
    pub tls_server_name: Option<String>,
}

/// A workload as TOML text, with the name errors give it (`doppio stress`'s legacy commands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineWorkload {
    /// Its origin in errors, e.g. `stress-write`.
    pub name: String,
    /// The TOML.
    pub toml: String,
}

impl Connect {
    /// The TLS options, if `--tls` was given.
    pub fn tls_options(&self) -> Option<crate::backend::TlsOptions> {
        let ca = self.ca.clone().filter(|_| self.tls)?;
        Some(crate::backend::TlsOptions {
            ca,
            client_cert: self.cert.clone().zip(self.key.clone()),
            server_name: self.tls_server_name.clone(),
        })
    }
}

/// Options of `load`.
#[derive(Debug, Clone, ClapArgs)]
pub struct LoadArgs {
    /// Connection and workload.
    #[command(flatten)]
    pub connect: Connect,
    /// Concurrent requests in total (1 to 1,000,000).
    #[arg(short = 'p', long, default_value_t = 256, value_parser = limits::concurrency)]
    pub concurrency: usize,
    /// Rate limit, requests per second in total: a number or a schedule (as `run -r`).
    #[arg(short = 'r', long, value_name = "RATE|SCHEDULE", value_parser = limits::rate_limit)]
    pub rate: Option<RateSchedule>,
    /// With a rate: each request is released (sent) at the first point of this grid, counted
    /// from the phase's start, at or after its due time; the same grid for every backend, so
    /// that all batch their sends alike whatever their runtime's timer resolution. Latency
    /// still counts from the due time: the grid shows as lateness. 0: each request at its
    /// own due time. 0 to 1s; the default is the finest that tokio's timer keeps (bench/MANUAL.md).
    #[arg(long, value_name = "STEP", default_value = grid::DEFAULT_STEP_TEXT, value_parser = limits::release_grid)]
    pub release_grid: Duration,
    /// Which iteration numbers this loader draws its keys from (several loader machines).
    #[command(flatten)]
    pub cycles: CyclesArgs,
}

/// Options of `run`.
#[derive(Debug, Clone, ClapArgs)]
pub struct RunArgs {
    /// Connection and workload.
    #[command(flatten)]
    pub connect: Connect,
    /// The rounds of measured segments: their length, warmup, concurrency, order.
    #[command(flatten)]
    pub rounds: RoundArgs,
    /// Rate limit, requests per second in total (latency measured from each request's due
    /// time: no coordinated omission): a number (5000, 10k) or a schedule of parts separated
    /// by commas, each phase starting it anew: RATE[/DURATION], ramp:FROM..TO/DURATION,
    /// hold:DURATION, step:RATE[/DURATION], sine:MEAN,AMPLITUDE,PERIOD[/DURATION], and
    /// `poisson[:SEED]` for exponential gaps around the scheduled rate (seed 1 unless given).
    /// After the last part its last rate holds. Example: ramp:1k..50k/60s,hold:30s,step:60k/30s
    #[arg(short = 'r', long, value_name = "RATE|SCHEDULE", value_parser = limits::rate_limit)]
    pub rate: Option<RateSchedule>,
    /// Equal load: before the first round each driver runs unrecorded at full speed for a
    /// segment's length, twice in rotated order (its capacity: the better one), then every
    /// segment runs at this share of the slowest driver's capacity (70% or 0.7), so that CPU and syscalls per request are
    /// compared at the same work. Not with --rate.
    #[arg(long, value_name = "SHARE", value_parser = limits::share, conflicts_with = "rate")]
    pub equal_load: Option<f64>,
    /// The report's file (default: doppio-WORKLOAD-DATE.json in the current folder).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// A label stored in the report.
    #[arg(long)]
    pub tag: Option<String>,
    /// Write the HdrHistogram interval log here while the run goes: one interval per
    /// measured sample, tagged with the backend (warm-ups are left out).
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
    /// Serve the run's figures at http://ADDR/metrics (Prometheus text format) while it
    /// goes, e.g. 127.0.0.1:9464 (port 0: any free port; the address is printed).
    #[arg(long, value_name = "ADDR")]
    pub prometheus: Option<std::net::SocketAddr>,
    /// Also print the per-sample LOG section.
    #[arg(long)]
    pub log: bool,
    /// Record the measured segments with `perf record -e cpu-clock --call-graph dwarf` and
    /// write PREFIX-<driver>.svg (and .folded) per backend. Perturbs the overhead figures.
    #[arg(long, value_name = "PREFIX")]
    pub flamegraph: Option<PathBuf>,
    /// Sample the measured segments' stacks (perf record, 499 Hz, 8 KiB DWARF stacks; no
    /// drawing) and split each backend's client CPU per request by layer: codec, driver,
    /// runtime, allocator, kernel parts, bench (the ANATOMY table). `--flamegraph` does it
    /// too. Perturbs the overhead figures less than a flamegraph, but does.
    #[arg(long)]
    pub anatomy: bool,
    /// Time one request in N of each doppio backend stage by stage (schedule, bench, queue,
    /// flush, wire, frame, wake, decode: the WATERFALL table, whose means add up to those
    /// requests' mean latency), 1 to 1,000,000,000. scylla-rust-driver has no such hooks: its
    /// column shows the end-to-end latency only.
    #[arg(long, value_name = "N", value_parser = limits::waterfall)]
    pub waterfall: Option<u64>,
    /// How results are fetched and consumed.
    #[command(flatten)]
    pub results: ResultArgs,
    /// Compare every row that a statement with `validate` in the workload returns with what
    /// the load phase wrote for it (the built-in `read` has one); values that differ and rows
    /// that are missing are errors of their own kinds, by statement, and the run exits 1.
    #[arg(long)]
    pub validate: bool,
    /// Which iteration numbers this loader draws its keys from (several loader machines).
    #[command(flatten)]
    pub cycles: CyclesArgs,
}

/// How the backends' measured segments run in rounds: what `run` and `curve` share.
#[derive(Debug, Clone, ClapArgs)]
pub struct RoundArgs {
    /// How long to measure per driver (`curve`: per driver at each load), split over its
    /// segments: a time (30s, 2m) or a count of iterations (1M); not 0.
    #[arg(short = 'd', long, default_value = "10s", value_parser = limits::run_length)]
    pub duration: Limit,
    /// Warmup before each measured segment: a time or a count.
    #[arg(long, default_value = "1s", value_parser = Limit::parse)]
    pub warmup: Limit,
    /// Concurrent requests in total (1 to 1,000,000).
    #[arg(short = 'p', long, default_value_t = 128, value_parser = limits::concurrency)]
    pub concurrency: usize,
    /// Sample interval (at least 1ms).
    #[arg(short = 's', long = "sampling", default_value = "1s", value_parser = limits::sample_interval)]
    pub interval: Duration,
    /// Segments per driver, 1 to 1000 (default: `run` 1 for one driver, 2 for two: A B A B;
    /// `curve` 5 at each load). Segment k of every driver makes round k.
    #[arg(long, value_parser = limits::segments)]
    pub segments: Option<usize>,
    /// The drivers' order in each round: rotate (each round starts one driver later: ABC,
    /// BCA, CAB; a drift over the run then cancels out of the comparison) or fixed (ABC
    /// every round).
    #[arg(long, default_value = "rotate", value_name = "rotate|fixed", value_parser = Order::parse)]
    pub order: Order,
    /// Run the workload unrecorded for this long before the first round (with the first
    /// driver), so that the node is warm (its JIT, caches, memtables) before anything is
    /// measured; 0s: none.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub server_warmup: Duration,
    /// With a rate (-r, --equal-load, every load of `curve`): each request is released (sent)
    /// at the first point of this grid, counted from the phase's start, at or after its due
    /// time; the same grid for every backend, so that all batch their sends alike whatever
    /// their runtime's timer resolution. Latency still counts from the due time: the grid
    /// shows as lateness. 0: each request at its own due time. 0 to 1s; the default is the
    /// finest that tokio's timer keeps (bench/MANUAL.md).
    #[arg(long, value_name = "STEP", default_value = grid::DEFAULT_STEP_TEXT, value_parser = limits::release_grid)]
    pub release_grid: Duration,
    /// What the syscall counters count: by-kind (the total, each kind and io_uring
    /// operations: 9 counters per thread) or total (one counter per thread, for studies of
    /// CPU alone: counting by kind costs about 3 % more client CPU per request at one
    /// request in flight and 0.3 to 2 % from 64, bench/REPORT.md).
    #[arg(long, default_value = "by-kind", value_name = "by-kind|total", value_parser = Counting::parse)]
    pub syscalls: Counting,
    /// The node's process, whose CPU is measured over each segment (default: the process
    /// listening on a node's address when the node runs on this machine).
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
}

/// Options of `cost`.
#[derive(Debug, Clone, ClapArgs)]
pub struct CostArgs {
    /// Requests measured per scenario (after the warm-up): the figure is the difference of
    /// a run with them and one without, divided by them.
    #[arg(long, default_value_t = 1000)]
    pub requests: u64,
    /// Requests made before the measured ones, in both runs.
    #[arg(long, default_value_t = 100)]
    pub warmup: u64,
    /// Only this scenario (repeat for several; default: all).
    #[arg(long)]
    pub scenario: Vec<String>,
    /// Only this driver, doppio or scylla (default: both).
    #[arg(long)]
    pub driver: Option<String>,
    /// Folder for the profiles, logs, cost.md and cost.json (created if missing).
    #[arg(long, default_value = "cost")]
    pub out: PathBuf,
    /// Compare doppio's figures with this baseline (an earlier cost.json, made with the
    /// same build profile, warm-up and requests) and fail when a scenario's instructions
    /// per request rose by more than 2 % or its allocations per request rose at all. To
    /// accept a change deliberately, copy the new cost.json over the baseline in the same
    /// commit.
    #[arg(long, value_name = "COST_JSON")]
    pub check: Option<PathBuf>,
}

/// Options of `curve`.
#[derive(Debug, Clone, ClapArgs)]
pub struct CurveArgs {
    /// Connection and workload; `--driver a,b,c` the backends compared at every load.
    #[command(flatten)]
    pub connect: Connect,
    /// The rounds at each load: their length, warmup, concurrency, order.
    #[command(flatten)]
    pub rounds: RoundArgs,
    /// How results are fetched and consumed.
    #[command(flatten)]
    pub results: ResultArgs,
    /// The loads, in the order run: shares of the slowest backend's capacity (70% or 0.7,
    /// above 0 and at most 100 %), separated by commas, at most 20, none twice.
    #[arg(long, value_name = "SHARE,...", default_value = "10%,30%,50%,70%,90%",
          value_parser = limits::loads, conflicts_with = "from")]
    pub loads: limits::Loads,
    /// The folder of the results (one report per load, `load-30.json` and its text
    /// `load-30.txt`, and the curve: `curve.json`, `curve.md`, `curve.svg`); created if
    /// missing, refused if it holds anything (unless --force).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Write into an --out folder that holds files already (files of the same names are
    /// replaced, others are left as they are).
    #[arg(long)]
    pub force: bool,
    /// Run nothing: draw the curve from these reports (each a point of an earlier `doppio
    /// curve`, or a `run --equal-load`: its `config.equal_load` gives the load).
    #[arg(long, value_name = "REPORT.json", num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// A label stored in every report.
    #[arg(long)]
    pub tag: Option<String>,
}

/// Options of `findmax`.
#[derive(Debug, Clone, ClapArgs)]
pub struct FindmaxArgs {
    /// Connection and workload; `--driver a,b` searches each backend's maximum, the
    /// backends alternating step by step.
    #[command(flatten)]
    pub connect: Connect,
    /// How results are fetched and consumed.
    #[command(flatten)]
    pub results: ResultArgs,
    /// Concurrent requests in total, 1 to 1,000,000 (the maximum found is that of this
    /// concurrency).
    #[arg(short = 'p', long, default_value_t = 128, value_parser = limits::concurrency)]
    pub concurrency: usize,
    /// The first step's rate, requests per second (1000, 10k).
    #[arg(long, default_value = "1k", value_name = "RATE", value_parser = crate::slo::parse_rate)]
    pub start: f64,
    /// Each step's rate is the previous one's times this (above 1).
    #[arg(long, default_value = "1.5", value_parser = crate::slo::parse_factor)]
    pub factor: f64,
    /// Each step's requests are each is released (sent) at the first point of this grid, counted
    /// from the phase's start, at or after its due time; the same grid for every backend, so
    /// that all batch their sends alike whatever their runtime's timer resolution. Latency
    /// still counts from the due time: the grid shows as lateness. 0: each request at its
    /// own due time. 0 to 1s; the default is the finest that tokio's timer keeps (bench/MANUAL.md).
    #[arg(long, value_name = "STEP", default_value = grid::DEFAULT_STEP_TEXT, value_parser = limits::release_grid)]
    pub release_grid: Duration,
    /// The highest rate tried (the last step, if every step before held).
    #[arg(long, default_value = "10M", value_name = "RATE", value_parser = crate::slo::parse_rate)]
    pub max_rate: f64,
    /// How long each step is measured, per backend (at least 100ms).
    #[arg(long, default_value = "5s", value_parser = limits::step_duration)]
    pub step_duration: Duration,
    /// Warmup at the step's rate before each measured step (not recorded).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Bisection rounds (at most 30) after the search by factor: each runs a step halfway
    /// between a backend's highest rate held and the lowest that did not, narrowing that
    /// bracket.
    #[arg(long, default_value_t = 0, value_name = "ROUNDS", value_parser = limits::refine)]
    pub refine: u32,
    /// A latency objective that a step must meet to hold, PERCENTILE<DURATION (latency from
    /// each request's intended start), e.g. p99<10ms; repeatable.
    #[arg(long, value_name = "pN<DURATION", value_parser = crate::slo::Slo::parse)]
    pub slo: Vec<crate::slo::Slo>,
    /// Sample interval within a step (progress lines; at least 1ms).
    #[arg(short = 's', long = "sampling", default_value = "1s", value_parser = limits::sample_interval)]
    pub interval: Duration,
    /// The report's file (default: doppio-findmax-WORKLOAD-DATE.json in the current folder).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// A label stored in the report.
    #[arg(long)]
    pub tag: Option<String>,
}

/// How results are fetched and consumed, the same for every backend (`run` and `findmax`).
#[derive(Debug, Clone, ClapArgs)]
pub struct ResultArgs {
    /// Rows per result page, the same for every backend; a result longer than a page is
    /// paged through to the end (one request in the report: all its pages).
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=i32::MAX as i64))]
    pub page_size: u32,
    /// Neither iterate nor decode result rows (protocol-overhead studies): pages are still
    /// fetched to the end and their rows counted from the page headers.
    #[arg(long)]
    pub discard_results: bool,
}

/// `--cycles START..END` or `--loader K/N`: the iteration numbers (and so the keys) of this
/// loader, so that loaders on several machines send different requests. Without either,
/// every phase draws 0, 1, 2, ...
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct CyclesArgs {
    /// Draw the iteration numbers START..END (END exclusive; counts such as 500k, 1M).
    /// `load` runs each once (instead of its [load] count); a `run` phase bounded by time
    /// that exhausts the range wraps around within it, a count larger than it is refused.
    #[arg(long, value_name = "START..END", value_parser = CycleRange::parse, conflicts_with = "loader")]
    pub cycles: Option<CycleRange>,
    /// Be loader K of N (counted from 1): draw the K-th of N equal slices of the workload's
    /// key space (its [load] count, else its `rows` parameter). `index/N`: K from a
    /// Kubernetes Indexed Job's JOB_COMPLETION_INDEX (from 0) plus one.
    #[arg(long, value_name = "K/N|index/N", value_parser = LoaderSlice::parse)]
    pub loader: Option<LoaderSlice>,
}

/// Parses a duration with its unit: `500ms`, `5s`, `2m`, `1h` (see [`crate::units::duration`]).
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    units::duration(text)
}

/// The default of `--sqpoll-idle`.
pub const DEFAULT_SQPOLL_IDLE: Duration = Duration::from_millis(10);

/// `--sqpoll-idle`: a duration the kernel takes as an SQPOLL idle time (whole milliseconds,
/// 1 ms to 10 s).
pub fn parse_sqpoll_idle(text: &str) -> Result<Duration, limits::OptionError> {
    let idle = units::duration(text)?;
    doppio_driver::rt::uring::SqPoll { idle, cpu: None }
        .validate()
        .map_err(|_| limits::OptionError::SqPollIdle {
            max_secs: doppio_driver::rt::uring::SqPoll::MAX_IDLE.as_secs(),
        })?;
    Ok(idle)
}

/// `--sqpoll-cpu`: a core, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqPollCpu {
    /// Pinned to this core.
    Core(u32),
    /// Not pinned.
    None,
}

/// Parses `--sqpoll-cpu`: a core number or `none`.
pub fn parse_sqpoll_cpu(text: &str) -> Result<SqPollCpu, limits::OptionError> {
    match text.trim() {
        "none" => Ok(SqPollCpu::None),
        t => t
            .parse()
            .map(SqPollCpu::Core)
            .map_err(|_| limits::OptionError::NotACore {
                text: text.to_owned(),
            }),
    }
}

/// The number of online cores (not the cores this process may run on: the kernel's
/// submission thread is not bound by the bench's own pinning).
pub fn online_cores() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(1)
}

impl Connect {
    /// Whether the threads `-t` asks for can be pinned as they will be (to cores
    /// 0..threads, unless `--no-pin`): every one of those cores online. Refused before
    /// anything starts; otherwise a shard's executor would fail to start on the missing core.
    pub fn check_pinning(&self) -> Result<(), ConnectError> {
        let cores = online_cores();
        if !self.no_pin && self.threads > cores {
            return Err(ConnectError::TooManyPinnedThreads {
                threads: self.threads,
                cores,
            });
        }
        Ok(())
    }

    /// The SQPOLL mode `--sqpoll-idle` and `--sqpoll-cpu` ask for (defaults resolved), checked
    /// against `drivers`: either option without `doppio-uring-sqpoll` among them, or a core
    /// the machine does not have online, is refused before anything starts.
    pub fn sqpoll_options(&self, drivers: &[Driver]) -> Result<SqPollOptions, ConnectError> {
        let sqpoll = drivers.contains(&Driver::DoppioUringSqpoll);
        if !sqpoll && (self.sqpoll_idle.is_some() || self.sqpoll_cpu.is_some()) {
            return Err(ConnectError::SqPollWithoutDriver);
        }
        let cores = online_cores();
        let cpu = match self.sqpoll_cpu {
            Some(SqPollCpu::Core(c)) if c as usize >= cores => {
                return Err(ConnectError::SqPollCpuOffline {
                    core: c,
                    last: cores - 1,
                })
            }
            Some(SqPollCpu::Core(c)) => Some(c),
            Some(SqPollCpu::None) => None,
            None => u32::try_from(self.threads.max(1))
                .ok()
                .filter(|&c| (c as usize) < cores),
        };
        Ok(SqPollOptions {
            idle: self.sqpoll_idle.unwrap_or(DEFAULT_SQPOLL_IDLE),
            cpu,
        })
    }

    /// How doppio's own runtime waits (`--timer-slack`, `--batch-wait`, `--user-batch-wait`),
    /// checked against `drivers`: any of them without a doppio-uring backend among them does
    /// nothing, and is refused before anything starts.
    pub fn uring_wait(
        &self,
        drivers: &[Driver],
    ) -> Result<crate::backend::UringWait, ConnectError> {
        let uring = drivers
            .iter()
            .any(|d| matches!(d, Driver::DoppioUring | Driver::DoppioUringSqpoll));
        let asked = self.timer_slack.is_some() || self.batch_wait.is_some() || self.user_batch_wait;
        if asked && !uring {
            return Err(ConnectError::UringWaitWithoutDriver);
        }
        Ok(crate::backend::UringWait {
            timer_slack: self.timer_slack,
            batch_wait: self.batch_wait,
            user_space: self.user_batch_wait,
        })
    }

    /// `--max-outage` as the engine takes it (`None` for 0: never stop).
    pub fn outage_limit(&self) -> Option<Duration> {
        (!self.max_outage.is_zero()).then_some(self.max_outage)
    }

    /// The node addresses, resolved (port 9042 when none is given).
    pub fn node_addrs(&self) -> Result<Vec<SocketAddr>, ConnectError> {
        if self.nodes.is_empty() {
            return Ok(vec![SocketAddr::from(([127, 0, 0, 1], 9042))]);
        }
        let mut out = Vec::new();
        for n in &self.nodes {
            let with_port = if n.contains(':') {
                n.clone()
            } else {
                format!("{n}:9042")
            };
            let addr = with_port
                .to_socket_addrs()
                .map_err(|source| ConnectError::Resolve {
                    node: n.clone(),
                    source,
                })?
                .next()
                .ok_or_else(|| ConnectError::NoAddress { node: n.clone() })?;
            out.push(addr);
        }
        Ok(out)
    }

    /// The drivers named by `--driver`, in order, without repeats.
    pub fn drivers(&self) -> Result<Vec<Driver>, UnknownDriver> {
        let mut out = Vec::new();
        for d in self.driver.split(',') {
            let d = Driver::parse(d)?;
            if !out.contains(&d) {
                out.push(d);
            }
        }
        Ok(out)
    }

    /// The `-P` overrides as pairs.
    pub fn param_pairs(&self) -> Result<Vec<(String, String)>, ConnectError> {
        self.params
            .iter()
            .map(|p| {
                p.split_once('=')
                    .map(|(k, v)| (k.trim().to_owned(), v.to_owned()))
                    .ok_or_else(|| ConnectError::Param { text: p.clone() })
            })
            .collect()
    }
}

/// Why the connection options (the `NODE`s, `-P`, `--sqpoll-idle`, `--sqpoll-cpu`) cannot
/// be used as given: found once clap has parsed them, before anything starts.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// `--sqpoll-idle` or `--sqpoll-cpu` without `doppio-uring-sqpoll` among the drivers.
    #[error(
        "--sqpoll-idle and --sqpoll-cpu apply to --driver doppio-uring-sqpoll only (add it to \
         --driver, or leave them out)"
    )]
    SqPollWithoutDriver,
    /// `--timer-slack`, `--batch-wait` or `--user-batch-wait` without a doppio-uring backend.
    #[error(
        "--timer-slack, --batch-wait and --user-batch-wait apply to doppio's own runtime only \
         (add doppio-uring to --driver, or leave them out)"
    )]
    UringWaitWithoutDriver,
    /// A `--sqpoll-cpu` core that is not online.
    #[error(
        "--sqpoll-cpu {core}: this machine has cores 0 to {last} online (give one of them, or \
         `none` to let the kernel place the threads)"
    )]
    SqPollCpuOffline {
        /// The core given.
        core: u32,
        /// The machine's last online core.
        last: usize,
    },
    /// More pinned threads than the machine has cores online.
    #[error(
        "--threads {threads}: the threads are pinned to cores 0 to {}, but this machine has \
         {cores} core(s) online; give -t {cores} or less, or --no-pin to let the kernel place \
         them",
        threads - 1
    )]
    TooManyPinnedThreads {
        /// The threads asked for.
        threads: usize,
        /// The machine's cores online.
        cores: usize,
    },
    /// A node name that does not resolve.
    #[error("node {node}: {source}")]
    Resolve {
        /// The node as given.
        node: String,
        /// Why it does not resolve.
        #[source]
        source: std::io::Error,
    },
    /// A node name that resolves to no address.
    #[error("node {node}: no address")]
    NoAddress {
        /// The node as given.
        node: String,
    },
    /// A `-P` without `=`.
    #[error("-P {text}: expected NAME=VALUE (such as -P rows=1000)")]
    Param {
        /// The text given.
        text: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `run` subcommand's connection options of `args`.
    fn connect_of(args: &[&str]) -> Connect {
        let argv = ["doppio", "run"].iter().chain(args);
        match Cli::try_parse_from(argv)
            .expect("the options parse")
            .command
        {
            Command::Run(run) => run.connect,
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn connection_options_that_cannot_be_used_say_which_and_what_to_type() {
        let c = connect_of(&["-P", "rows=10", "-P", "rows"]);
        let e = c.param_pairs().unwrap_err();
        assert!(
            matches!(&e, ConnectError::Param { text } if text == "rows"),
            "{e:?}"
        );
        assert!(
            e.to_string().starts_with("-P rows: expected NAME=VALUE"),
            "{e}"
        );
        let c = connect_of(&["--driver", "doppio,scyla"]);
        assert_eq!(c.drivers().unwrap_err().name, "scyla");
        let c = connect_of(&["--driver", "doppio-uring", "--sqpoll-cpu", "0"]);
        let e = c.sqpoll_options(&c.drivers().unwrap()).unwrap_err();
        assert!(matches!(e, ConnectError::SqPollWithoutDriver), "{e:?}");
        assert!(e.to_string().contains("doppio-uring-sqpoll only"), "{e}");
        let c = connect_of(&["--driver", "doppio,scylla", "--batch-wait", "200us"]);
        let e = c.uring_wait(&c.drivers().unwrap()).unwrap_err();
        assert!(matches!(e, ConnectError::UringWaitWithoutDriver), "{e:?}");
        let c = connect_of(&["--driver", "doppio-uring", "--timer-slack", "0"]);
        let w = c.uring_wait(&c.drivers().unwrap()).unwrap();
        assert_eq!(w.timer_slack, Some(Duration::ZERO));
        let c = connect_of(&["--driver", "doppio-uring-sqpoll", "--sqpoll-cpu", "4096"]);
        let e = c.sqpoll_options(&c.drivers().unwrap()).unwrap_err();
        assert!(
            matches!(e, ConnectError::SqPollCpuOffline { core: 4096, .. }),
            "{e:?}"
        );
    }

    #[test]
    fn a_repeated_option_takes_its_last_value_and_repeatable_ones_collect() {
        let cli = Cli::try_parse_from([
            "doppio",
            "run",
            "-d",
            "10s",
            "-p",
            "64",
            "-P",
            "rows=1",
            "-d",
            "30s",
            "-p",
            "256",
            "-P",
            "keyspace=k",
        ])
        .expect("a repeated option is accepted");
        let Command::Run(run) = cli.command else {
            panic!("not a run: {cli:?}");
        };
        assert_eq!(run.rounds.duration, Limit::parse("30s").unwrap());
        assert_eq!(run.rounds.concurrency, 256);
        assert_eq!(run.connect.params, vec!["rows=1", "keyspace=k"]);
    }

    /// Every subcommand's options are well formed (no id twice among the flattened groups
    /// `run` and `curve` share, every `conflicts_with` naming an option).
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn curve_takes_the_rounds_of_run_and_five_loads_by_default() {
        let parse = |args: &[&str]| {
            let argv = ["doppio", "curve"].iter().chain(args);
            Cli::try_parse_from(argv).map(|cli| match cli.command {
                Command::Curve(c) => c,
                other => panic!("not a curve: {other:?}"),
            })
        };
        let c = parse(&["-o", "out"]).unwrap();
        assert_eq!(c.loads, limits::Loads(vec![0.1, 0.3, 0.5, 0.7, 0.9]));
        assert_eq!(c.out, PathBuf::from("out"));
        assert_eq!(c.rounds.segments, None);
        assert!(c.from.is_empty() && !c.force);
        let c = parse(&["-o", "o", "--loads", "90%,0.2", "-p", "16", "-d", "2s"]).unwrap();
        assert_eq!(c.loads.0, [0.9, 0.2]);
        assert_eq!(c.rounds.concurrency, 16);
        assert_eq!(c.rounds.duration, Limit::Time(Duration::from_secs(2)));
        // Where the curve goes is always given; --from takes the loads from its reports.
        assert!(parse(&[]).is_err());
        assert!(parse(&["-o", "o", "--from", "a.json", "--loads", "50%"]).is_err());
        let e = parse(&["-o", "o", "--loads", "50%,150%"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`150%` is not a share"), "{e}");
    }

    #[test]
    fn the_rate_takes_a_number_or_a_schedule_and_a_bad_schedule_is_a_usage_error() {
        let run = |rate: &str| {
            Cli::try_parse_from(["doppio", "run", "-r", rate]).map(|cli| match cli.command {
                Command::Run(run) => run.rate,
                other => panic!("not a run: {other:?}"),
            })
        };
        let constant = run("2500").expect("a number").expect("a rate");
        assert_eq!(constant.constant(), Some(2500.0));
        let schedule = run("ramp:1k..5k/10s,hold:5s").unwrap().unwrap();
        assert_eq!(schedule.constant(), None);
        assert_eq!(schedule.text(), "ramp:1k..5k/10s,hold:5s");
        let e = run("ramp:1k..5k/10s,hold:5x").unwrap_err().to_string();
        assert!(e.contains("`hold:5x`"), "{e}");
    }
}
