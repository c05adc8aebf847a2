//! The doppio benchmark as a library: workloads, the backend-neutral engine, the two
//! backends (doppio and scylla-rust-driver), statistics, driver-overhead measurement and
//! reports. The `doppio` binary (src/main.rs) is its command line.
//!
//! Modules:
//! - [`cli`]: the command line's options and subcommands (clap) (child: `limits`, the
//!   allowed range of every count and duration option, checked as it is parsed).
//! - [`command`]: what each subcommand does, one module each (`schema`, `load`, `run`,
//!   `curve`, `findmax`, `show`, `hdr`, `list`, `merge`, `plot`, `sweep`, `cost`, `profile`,
//!   `stress`, `nemesis`), siblings that `main` dispatches to, each thin: its options made into an
//!   experiment, run, and the result handed to the report and its files; below them `setup`
//!   (connection options, workload, files to write).
//! - [`experiment`]: what is measured, in which order and at which load (children:
//!   `measure`, one backend's warmup and measured stretch with its observers; `rounds`, the
//!   rounds of segments `run` and `curve` share: backends connected once, the node warmed,
//!   capacities probed, each round's segments in `--order`; `equal_load`, one rate at a share
//!   of the slowest capacity; `round_report`, the run report those rounds make; `stacks`, the
//!   sampled stacks folded, split by layer and drawn; `run`, `doppio run`'s experiment;
//!   `curve`, the loads of `doppio curve`; `load`, the load phase of `doppio load`; `findmax`,
//!   the saturation search; `cost`, `doppio cost`'s instructions and allocations per request
//!   under Valgrind; `nemesis`, `doppio nemesis`'s run: faults applied and healed through
//!   the cluster script while a backend writes, the read-back and the report).
//! - [`failure`]: what ends a command, with its exit code, and the commands' typed errors
//!   (beneath the commands and the experiment).
//! - [`workload`]: workload files and built-ins compiled into statements with generated
//!   arguments (children: `expr` the generators, `encode` their CQL bytes, `dist`
//!   cassandra-stress's distributions, `profile` cassandra-stress user profiles read and
//!   converted into a workload).
//! - [`engine`]: the backend-neutral request loops of one worker, their schedule and samples
//!   (children: `limit`, how long a phase lasts; `request`, one request's outcome;
//!   `error_kind`, the bench's kind of a failed request, onto which each backend maps its
//!   driver's errors;
//!   `session`, what a backend offers a worker, `BenchSession`; `plan`, a phase's plan as
//!   the workers run it; `assemble`, that plan from the workload and prepared statements;
//!   `worker`, one worker's fibers and their request loop, with `recorder` and `outage`
//!   beside it; `interval`, a worker's sample of one interval and the intervals'
//!   boundaries; `clock`, the clock of each request's end; `collect`, the coordinator
//!   merging workers' samples; `cycles`, the range of iteration numbers a loader draws from,
//!   `--cycles`/`--loader`; `schedule`, the rate schedule of `-r` and each iteration's due
//!   time; `statements`, what each run statement did, per interval and per phase; `spill`,
//!   released samples written to an unnamed temporary file so that memory stays bounded;
//!   `validate`, `--validate`'s comparison of returned rows with what their writer wrote;
//!   `phase`, a phase as the workers run it and what a backend gives the engine to run one;
//!   `drive`, a phase driven from the coordinator; `waterfall`, `--waterfall`'s timed
//!   requests stage by stage).
//! - [`backend`]: the drivers behind one interface, `Backend` (children, its adapters:
//!   `doppio` on glommio or its own io_uring runtime, `scylla_rust_driver` on tokio, `null`; what they
//!   share: `interface`, the `Backend` trait; `nemesis`, the nemesis's acknowledged-writes
//!   workload's plan and results, driver-neutral; `driver`, which driver and the protocol
//!   versions; `options`, how to connect; `settings`, the driver settings; `retry`, the
//!   bench's retry policy (`--retries`), which the scylla adapter follows and doppio's own
//!   policy is tested equal to; `counters`, the
//!   driver-side counters; `tls`, doppio's TLS configuration; `tasks`, fibers as tasks of
//!   doppio's runtimes; and above the adapters `connect`, which checks the settings and
//!   starts one, and `nemesis_run`, which runs the nemesis's workload).
//! - [`stress_cli`]: cassandra-stress command lines (`write n=1M -rate threads=64 ...`)
//!   read into a typed model and mapped onto `doppio run` (children: `lex`, `parse`,
//!   `options`, `values`, `model`, `error`, `map`, and `legacy`, the workload of `write`,
//!   `read` and `mixed`); `command::stress` runs them.
//! - [`nemesis`]: a nemesis run's pure core, no cluster or driver (children: `history`, the
//!   operations of a run and their outcomes, saved as JSON lines; `acked_writes`, the check
//!   that no acknowledged write is lost; `linearizable`, the linearizability check of the
//!   register workload with the smallest failing sub-history, used by its tests only until
//!   that workload exists; `schedule`, the seeded fault schedule within what the replication
//!   factor spares). `doppio nemesis` runs it: `command::nemesis` (its options),
//!   `experiment::nemesis` (the run: faults through the cluster script, the read-back, the
//!   report), `backend::nemesis` and `backend::nemesis_run` (the acknowledged-writes
//!   workload as a backend runs it, and the adapter that runs it; doppio's errors mapped
//!   onto outcomes in `backend::doppio::nemesis`).
//! - [`stats`]: latency histograms, error margins on batch means, Welch's t-test (statrs).
//! - [`probe`]: what a measured stretch cost and where it ran, each probe a module
//!   (children: `process_cost`, CPU time, context switches, RSS, syscalls by kind and
//!   io_uring operations, with the threads of a parked backend counted apart;
//!   `thread_usage`, one thread's CPU time and context switches from `/proc`;
//!   `hw_counters`, instructions, cycles and cache misses (`perf_event_open`), or why the
//!   machine has none; `server_cpu`, the node's CPU over each segment when it runs here, and
//!   whether it set the pace; `alloc_count`, the counting global allocator of the
//!   `alloc-count` feature; `environment`, the machine and build of a run; `flame`, `perf
//!   record` around measured segments drawn as flamegraphs; `anatomy`, the layer that owns
//!   each sampled stack, CPU per request by layer).
//! - [`report`]: the JSON report and what every rendering of it reads (children: `figure`,
//!   the figures that own their fields, computation, pooling and text rows, one file each
//!   (every field of a backend's entry but its driver's name); `schema`, the report's other
//!   fields and the entry they are flattened into; `accumulate`, a backend's segments added
//!   up into its entry; `pool`, the arithmetic the figures share and their pooling in a
//!   merge; `cell`, a text table's cells and rows; `time`, RFC 3339 times; `file`, a report
//!   read and written, with its errors; `verdict`, the comparison of backends round by round;
//!   `summary`, a latency distribution's summary; `lateness`, the send-lateness figure;
//!   `merge`, the reports of several loader machines combined; `findmax`, the report of the
//!   saturation search, which `doppio findmax` writes and `doppio show` and `doppio plot`
//!   read; `curve`, the load curve of `doppio curve`, made from the run reports of its
//!   loads; `cost`, the table of `doppio cost` and its `--check` gate).
//! - [`render`]: the renderings (children: `text`, the text report of a run, one report or
//!   two side by side; `curve_table`, `findmax_table` and `sweep_table`, the tables of the
//!   other results: the load curve's markdown, findmax's text table, the sweep's markdown; `svg`, the plots of `plot`, `sweep` and
//!   `curve` with `chart`, how they all look; `prometheus`, `--prometheus`, the run's figures
//!   at `/metrics` while it goes; `cost_table`, `doppio cost`'s table and `--check`
//!   verdict).
//! - [`slo`]: findmax's options parsed: latency objectives and rates (apart from the search,
//!   so that the command line reads them without an import circle).
//! - [`units`]: the one grammar for durations and counts (options, workload parameters): the
//!   crate `doppio-units`, shared with the stub's fault rules.
//! - [`secret`]: the password, which no `Debug` or `Display` of the options prints.
//! - [`progress`]: a phase's progress on stderr (a bar on a terminal, plain lines otherwise).
//! - [`live_log`]: `--hdr-log`, the HdrHistogram interval log written while the run goes.
//! - [`interrupt`]: Ctrl-C and SIGTERM: the first stops the run and keeps what it measured,
//!   a second exits at once.
//!
//! Seams: [`workload`] knows no driver; [`engine`] knows no driver either (backends plug in
//! through [`engine::session::BenchSession`] and `engine::phase::PhaseRunner`, and report
//! failures as `engine::ErrorKind`); [`backend`] holds everything driver-specific, and
//! each of its adapters names only its own driver (`scripts/check-seams.sh`).

// The library serves its binary and tests, and its docs are read with
// `--document-private-items`: the module maps above link to private rooms on purpose.
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod backend;
pub mod cli;
pub mod command;
pub mod engine;
pub(crate) mod experiment;
pub mod failure;
pub mod interrupt;
pub(crate) mod live_log;
pub(crate) mod nemesis;
pub(crate) mod probe;
pub(crate) mod progress;
pub(crate) mod render;
pub mod report;
pub mod secret;
pub(crate) mod slo;
pub mod stats;
pub(crate) mod stress_cli;
pub(crate) mod units;
pub mod workload;
