//! A backend's report entry built figure by figure: each file here owns one figure family
//! of `BackendReport`, end to end.
//!
//! Children: [`throughput`], requests, errors, measured time and throughput; [`latency`],
//! latency, service time and send lateness; [`client_cpu`], the client's CPU per request,
//! user and system, and the kernel threads' parts; [`syscalls`], system calls per request,
//! in all and by kind; [`uring`], io_uring operations and doppio's runtime's
//! `io_uring_enter` calls by reason; [`hardware`], hardware counters per request;
//! [`context_switches`], context switches and sleeps per request; [`memory`], heap
//! allocations per request and peak RSS; [`socket_batching`], requests per socket write and
//! read; [`driver_counts`], retries, re-prepares, tablet misroutes and requests by node;
//! [`rows`], result rows, per second and per client CPU time; [`scylla_shards`], requests by
//! ScyllaDB shard of each node; [`server_cpu`], the node's CPU, utilisation and saturated
//! segments; [`anatomy`], the client CPU split by layer (`--anatomy`); [`waterfall`], the
//! timed requests' stages (`--waterfall`); [`while_parked`], what a backend's threads did
//! while the others' segments were measured; [`samples`], every sample interval and the
//! whole run's latency and service-time histograms; [`statements`], each run statement's
//! own figures; [`segments`], each measured segment's own figures (what the VERDICT pairs);
//! [`machines`], each loader machine's own figures in a merged report.
//!
//! What a figure file holds (see `syscalls.rs` for the pattern):
//! - its struct (`serde`, `Default`), placed in `BackendReport` (`report/schema.rs`) as a
//!   `#[serde(flatten)]` field where its fields were, so the JSON is unchanged: field names
//!   are the JSON's names, and each keeps its `#[serde(default)]` so older reports still
//!   read. A family whose fields are not contiguous in the JSON gets one struct per run of
//!   contiguous fields (as `uring.rs`'s `IoUringFigures` and `UringEnterFigures`);
//! - `of(...)`: its computation from the measured segments' totals, called by
//!   `BackendRun::report` (`report/accumulate/`). It takes plain totals (probe types,
//!   counts, requests), never `BackendRun` nor `BackendReport`: schema.rs names the figure,
//!   so the figure must not name schema.rs or accumulate.rs (no circle);
//! - `pooled(parts, ...)`: how `doppio merge` (`report/merge/`) combines the machines'
//!   figures, over `report::pool::Part`s (file, requests, the machine's figure) with the
//!   shared arithmetic of `report/pool.rs`;
//! - `rows()`: its rows of the text report's tables as `report::cell::Row`s over its own
//!   struct, which `render/text/compare.rs` reads through the entry
//!   (`Metric::all(rows, |b| &b.x)`), and `missing()`: the `(what, why)` pairs of
//!   OVERHEAD's "not counted" notes. A row that reads another figure too is over that
//!   figure (ANATOMY's client CPU, `AnatomyReport::cpu_row`, over `ClientCpuFigures`), or,
//!   when it reads two, over the entry as a type parameter with the parts it reads picked by
//!   the caller (WATERFALL's end to end, `WaterfallReport::end_to_end_row`), so that the
//!   figure still names neither schema.rs nor the entry. A figure whose text is a section of
//!   its own rather than rows of the comparison tables (statements: STATEMENTS, one line or
//!   one table per statement; machines: MACHINES) keeps that section in `render/text/`;
//!   one with no text (samples, segments) has no rows;
//! - its Prometheus lines, if `render/prometheus.rs` has any (none so far: the exposition
//!   counts from the live `Cost`s, not from the report).
//!
//! Adding one (moving a figure out of the flat entry): write its file here; replace its
//! fields in `BackendReport` by one flattened field; replace their lines in
//! `BackendRun::report` by `of`, in `merge_backend` by `pooled`, in `render/text/compare.rs`'s
//! `tables` by `Metric::all`; update the readers (`verdict.rs`, `render/*_table.rs`,
//! `experiment/`, `render/svg/`, `report/curve.rs`, `command/hdr.rs`, tests) to
//! `b.<figure>.<field>`. Then
//! `cargo test -p doppio-bench --test it report_round_trip` (the JSON byte for byte) and
//! `doppio show` of the fixture, alone and against itself, diffed with the output before.
//!
//! Nothing is flat in `BackendReport` any more but the driver's name: every other field is
//! a figure's, flattened (JSON unchanged), or a plain `Option` field for `anatomy`,
//! `waterfall` and `while_parked`, whose rows read the `Option`. `AnatomyReport::new` is
//! called by `experiment/stacks.rs` once the stacks are folded, not by `of`.
//!
//! A figure's struct holding a list (`samples`, `statements`, `segments`, `machines`) is
//! flattened like the others with the list as a named field inside (a `Vec` cannot be
//! flattened itself), keeping its name and its `#[serde(default)]`.

pub mod anatomy;
pub mod client_cpu;
pub mod context_switches;
pub mod driver_counts;
pub mod hardware;
pub mod latency;
pub mod machines;
pub mod memory;
pub mod rows;
pub mod samples;
pub mod scylla_shards;
pub mod segments;
pub mod server_cpu;
pub mod socket_batching;
pub mod statements;
pub mod syscalls;
pub mod throughput;
pub mod uring;
pub mod waterfall;
pub mod while_parked;
