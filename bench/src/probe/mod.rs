//! The probes: what a measured stretch cost the client and the node, and where it ran. Each
//! probe is a module of its own; none knows a driver, the engine or the report.
//!
//! - [`process_cost`]: CPU time (user and system), context switches, peak RSS, system calls
//!   in total and by kind and io_uring operations of a measured stretch (`getrusage`,
//!   `perf_event_open` counters on tracepoints), with a parked backend's threads apart.
//! - [`thread_usage`]: one thread's CPU time and context switches from `/proc`, and which
//!   threads a backend started.
//! - [`hw_counters`]: instructions, cycles and cache misses of the client's threads
//!   (`perf_event_open` through `perf-event2`), or why the machine has none.
//! - [`server_cpu`]: the node's CPU over each measured segment when it runs on this machine,
//!   and whether it was saturated.
//! - [`alloc_count`]: the counting global allocator of the `alloc-count` feature.
//! - [`environment`]: the machine and the build of a run (kernel, CPU, mitigations,
//!   governor, compiler, commit, driver crate versions).
//! - [`flame`]: `perf record` around measured segments, drawn as flamegraphs (inferno).
//! - [`sockets`]: the TCP connections this process opened since a moment, with both ends,
//!   once they held still (`/proc`, through `procfs`).
//! - [`anatomy`]: the layer (codec, driver, runtime, allocator, kernel parts, bench) that
//!   owns each sampled stack; CPU per request split by layer.

pub(crate) mod alloc_count;
pub(crate) mod anatomy;
pub(crate) mod environment;
pub(crate) mod flame;
pub(crate) mod hw_counters;
pub(crate) mod process_cost;
pub(crate) mod server_cpu;
pub(crate) mod sockets;
pub(crate) mod thread_usage;
