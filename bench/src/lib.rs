//! The doppio benchmark as a library: workloads, the backend-neutral engine, the two
//! backends (doppio and scylla-rust-driver), statistics, driver-overhead measurement and
//! reports. The `doppio` binary (src/main.rs) is its command line.
//!
//! Modules:
//! - [`cli`]: the command line's options and subcommands (clap) (child: `limits`, the
//!   allowed range of every count and duration option, checked as it is parsed).
//! - [`run`]: what each subcommand does (connect, warm up, measure, write reports), and the
//!   failures that end one with their exit codes.
//! - [`workload`]: workload files and built-ins compiled into statements with generated
//!   arguments (children: `expr` the generators, `encode` their CQL bytes).
//! - [`engine`]: the backend-neutral request loops of one worker, their schedule and samples
//!   (children: `collect`, the coordinator merging workers' samples; `cycles`, the range of
//!   iteration numbers a loader draws from, `--cycles`/`--loader`; `schedule`, the rate
//!   schedule of `-r` and each iteration's due time; `statements`, what each
//!   run statement did, per interval and per phase; `spill`, released samples written to an
//!   unnamed temporary file so that memory stays bounded; `validate`, `--validate`'s
//!   comparison of returned rows with what the load wrote).
//! - [`backend`]: the drivers behind one interface (children: `doppio` on glommio or its
//!   own io_uring runtime, `scylla` on tokio) and the driving of a phase.
//! - [`stats`]: latency histograms, error margins on batch means, Welch's t-test (statrs).
//! - [`overhead`]: CPU time, context switches, RSS, syscalls by kind and io_uring operations
//!   of a measured stretch.
//! - [`alloc_count`]: the counting global allocator of the `alloc-count` feature.
//! - [`flame`]: `perf record` around measured segments, drawn as flamegraphs (inferno).
//! - [`anatomy`]: the layer (codec, driver, runtime, allocator, kernel parts, bench) that owns
//!   each sampled stack, as a table of frame patterns; CPU per request split by layer.
//! - [`report`]: the JSON report and its text rendering (children: `text`; `merge`, the
//!   reports of several loader machines combined).
//! - [`plot`]: `doppio plot`: throughput and latency percentiles over time, per backend, or
//!   a findmax report's curves, as SVG.
//! - [`findmax`]: `doppio findmax`, the saturation search: a constant rate raised step by
//!   step until it no longer holds (achieved rate, errors, `--slo` objectives), per backend.
//! - [`slo`]: findmax's options parsed: latency objectives and rates (apart from the search,
//!   so that the command line reads them without an import circle).
//! - [`sweep`]: runs at several concurrencies as a markdown table and an SVG plot.
//! - [`units`]: the one grammar for durations and counts (options, workload parameters): the
//!   crate `doppio-units`, shared with the stub's fault rules.
//! - [`secret`]: the password, which no `Debug` or `Display` of the options prints.
//! - [`progress`]: a phase's progress on stderr (a bar on a terminal, plain lines otherwise).
//! - [`metrics_server`]: `--prometheus`, the run's figures at `/metrics` while it goes.
//! - [`live_log`]: `--hdr-log`, the HdrHistogram interval log written while the run goes.
//! - [`interrupt`]: Ctrl-C and SIGTERM: the first stops the run and keeps what it measured,
//!   a second exits at once.
//!
//! Seams: [`workload`] knows no driver; [`engine`] knows no driver either (backends plug in
//! through [`engine::BenchSession`]); [`backend`] holds everything driver-specific.

pub mod alloc_count;
pub mod anatomy;
pub mod backend;
pub mod cli;
pub mod engine;
pub mod findmax;
pub mod flame;
pub mod interrupt;
pub mod live_log;
pub mod metrics_server;
pub mod overhead;
pub mod plot;
pub mod progress;
pub mod report;
pub mod run;
pub mod secret;
pub mod slo;
pub mod stats;
pub mod sweep;
pub mod units;
pub mod workload;
