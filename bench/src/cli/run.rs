//! The options of `run`, and the rounds of measured segments it shares with `curve`
//! ([`RoundArgs`]).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args as ClapArgs;

use crate::engine::grid;
use crate::engine::order::Order;
use crate::engine::schedule::RateSchedule;
use crate::engine::Limit;
use crate::probe::process_cost::Counting;

use super::connect::Connect;
use super::cycles::CyclesArgs;
use super::duration::parse_duration;
use super::limits;
use super::results::ResultArgs;

/// Options of `run`.
#[derive(Debug, Clone, ClapArgs)]
pub struct RunArgs {
    /// Connection and workload.
    #[command(flatten)]
    pub(crate) connect: Connect,
    /// The rounds of measured segments: their length, warmup, concurrency, order.
    #[command(flatten)]
    pub(crate) rounds: RoundArgs,
    /// Rate limit, requests per second in total (latency measured from each request's due
    /// time: no coordinated omission): a number (5000, 10k) or a schedule of parts separated
    /// by commas, each phase starting it anew: RATE[/DURATION], ramp:FROM..TO/DURATION,
    /// hold:DURATION, step:RATE[/DURATION], sine:MEAN,AMPLITUDE,PERIOD[/DURATION], and
    /// `poisson[:SEED]` for exponential gaps around the scheduled rate (seed 1 unless given).
    /// After the last part its last rate holds. Example: ramp:1k..50k/60s,hold:30s,step:60k/30s
    #[arg(short = 'r', long, value_name = "RATE|SCHEDULE", value_parser = limits::rate_limit)]
    pub(crate) rate: Option<RateSchedule>,
    /// Equal load: before the first round each driver runs unrecorded at full speed for a
    /// segment's length, twice in rotated order (its capacity: the better one), then every
    /// segment runs at this share of the slowest driver's capacity (70% or 0.7), so that CPU and syscalls per request are
    /// compared at the same work. Not with --rate.
    #[arg(long, value_name = "SHARE", value_parser = limits::share, conflicts_with = "rate")]
    pub(crate) equal_load: Option<f64>,
    /// The report's file (default: doppio-WORKLOAD-DATE.json in the current folder).
    #[arg(short = 'o', long)]
    pub(crate) output: Option<PathBuf>,
    /// A label stored in the report.
    #[arg(long)]
    pub(crate) tag: Option<String>,
    /// Write the HdrHistogram interval log here while the run goes: one interval per
    /// measured sample, tagged with the backend (warm-ups are left out).
    #[arg(long, value_name = "FILE")]
    pub(crate) hdr_log: Option<PathBuf>,
    /// Serve the run's figures at http://ADDR/metrics (Prometheus text format) while it
    /// goes, e.g. 127.0.0.1:9464 (port 0: any free port; the address is printed).
    #[arg(long, value_name = "ADDR")]
    pub(crate) prometheus: Option<std::net::SocketAddr>,
    /// Also print the per-sample LOG section.
    #[arg(long)]
    pub(crate) log: bool,
    /// Record the measured segments with `perf record -e cpu-clock --call-graph dwarf` and
    /// write PREFIX-DRIVER.svg (and .folded) per backend. Perturbs the overhead figures.
    #[arg(long, value_name = "PREFIX")]
    pub(crate) flamegraph: Option<PathBuf>,
    /// Sample the measured segments' stacks (perf record, 499 Hz, 8 KiB DWARF stacks; no
    /// drawing) and split each backend's client CPU per request by layer: codec, driver,
    /// runtime, allocator, kernel parts, bench (the ANATOMY table). `--flamegraph` does it
    /// too. Perturbs the overhead figures less than a flamegraph, but does.
    #[arg(long)]
    pub(crate) anatomy: bool,
    /// Time one request in N of each doppio backend stage by stage (schedule, bench, queue,
    /// flush, wire, frame, wake, decode: the WATERFALL table, whose means add up to those
    /// requests' mean latency), 1 to 1,000,000,000. scylla-rust-driver has no such hooks: its
    /// column shows the end-to-end latency only.
    #[arg(long, value_name = "N", value_parser = limits::waterfall)]
    pub(crate) waterfall: Option<u64>,
    /// How results are fetched and consumed.
    #[command(flatten)]
    pub(crate) results: ResultArgs,
    /// Compare every row that a statement with `validate` in the workload returns with what
    /// the load phase wrote for it (the built-in `read` has one); values that differ and rows
    /// that are missing are errors of their own kinds, by statement, and the run exits 1.
    #[arg(long)]
    pub(crate) validate: bool,
    /// Which iteration numbers this loader draws its keys from (several loader machines).
    #[command(flatten)]
    pub(crate) cycles: CyclesArgs,
}

/// How the backends' measured segments run in rounds: what `run` and `curve` share.
#[derive(Debug, Clone, ClapArgs)]
pub(crate) struct RoundArgs {
    /// How long to measure per driver (`curve`: per driver at each load), split over its
    /// segments: a time (30s, 2m) or a count of iterations (1M); not 0.
    #[arg(short = 'd', long, default_value = "10s", value_parser = limits::run_length)]
    pub(crate) duration: Limit,
    /// Warmup before each measured segment: a time or a count.
    #[arg(long, default_value = "1s", value_parser = Limit::parse)]
    pub(crate) warmup: Limit,
    /// Concurrent requests in total (1 to 1,000,000).
    #[arg(short = 'p', long, default_value_t = 128, value_parser = limits::concurrency)]
    pub(crate) concurrency: usize,
    /// Sample interval (at least 1ms).
    #[arg(short = 's', long = "sampling", default_value = "1s", value_parser = limits::sample_interval)]
    pub(crate) interval: Duration,
    /// Segments per driver, 1 to 1000 (default: `run` 1 for one driver, 2 for two: A B A B;
    /// `curve` 5 at each load). Segment k of every driver makes round k.
    #[arg(long, value_parser = limits::segments)]
    pub(crate) segments: Option<usize>,
    /// The drivers' order in each round: rotate (each round starts one driver later: ABC,
    /// BCA, CAB; a drift over the run then cancels out of the comparison) or fixed (ABC
    /// every round).
    #[arg(long, default_value = "rotate", value_name = "rotate|fixed", value_parser = Order::parse)]
    pub(crate) order: Order,
    /// Run the workload unrecorded for this long before the first round (with the first
    /// driver), so that the node is warm (its JIT, caches, memtables) before anything is
    /// measured; 0s: none.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub(crate) server_warmup: Duration,
    /// With a rate (-r, --equal-load, every load of `curve`): each request is released (sent)
    /// at the first point of this grid, counted from the phase's start, at or after its due
    /// time; the same grid for every backend, so that all batch their sends alike whatever
    /// their runtime's timer resolution. Latency still counts from the due time: the grid
    /// shows as lateness. 0: each request at its own due time. 0 to 1s; the default is the
    /// finest that tokio's timer keeps (bench/MANUAL.md).
    #[arg(long, value_name = "STEP", default_value = grid::DEFAULT_STEP_TEXT, value_parser = limits::release_grid)]
    pub(crate) release_grid: Duration,
    /// What the syscall counters count: by-kind (the total, each kind and io_uring
    /// operations: 9 counters per thread) or total (one counter per thread, for studies of
    /// CPU alone: counting by kind costs about 3 % more client CPU per request at one
    /// request in flight and 0.3 to 2 % from 64, bench/REPORT.md).
    #[arg(long, default_value = "by-kind", value_name = "by-kind|total", value_parser = Counting::parse)]
    pub(crate) syscalls: Counting,
    /// The node's process, whose CPU is measured over each segment (default: the process
    /// listening on a node's address when the node runs on this machine).
    #[arg(long, value_name = "PID")]
    pub(crate) server_pid: Option<u32>,
}
