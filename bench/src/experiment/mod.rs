//! The experiment: what is measured, in which order and at which load, apart from the
//! command line that asks for it and the files and renderings that show it. Each command
//! turns its options into one of these and hands the result to the report.
//!
//! Modules, from the bottom up:
//! - [`measure`]: one backend's warmup and measured stretch, with what watches it
//!   ([`measure::Observer`]: the node's CPU, hardware counters, `--hdr-log`, `--prometheus`,
//!   perf recordings).
//! - [`connections`]: the connections a backend opened as it connected, counted from the
//!   process's sockets once they held still, by node and ScyllaDB shard.
//! - [`rounds`]: the rounds of segments `run` and `curve` share: backends connected once,
//!   the node warmed, each backend's capacity probed, then round by round every backend's
//!   segment in the order `--order` gives, each segment interleaved with the others'.
//! - [`equal_load`]: one rate for every backend, a share of the slowest one's capacity.
//! - [`round_report`]: the report of those rounds: its heading and options, each backend's
//!   entry from what its segments measured.
//! - [`stacks`]: the stacks a run sampled (`--flamegraph`, `--anatomy`), folded, split by
//!   layer and drawn.
//! - [`run`]: the experiment of `doppio run`: rounds at a rate, at an equal load or at full
//!   speed, with its live outputs, stacks and `--validate` verdict.
//! - [`curve`]: the loads of `doppio curve`: the capacities probed once, then the rounds at
//!   each load.
//! - [`load`]: the load phase of `doppio load`, on one backend.
//! - [`findmax`]: the saturation search of `doppio findmax`: a rate raised step by step
//!   until a step does not hold, then bisected.
//! - [`cost`]: `doppio cost`'s instructions and allocations per request, counted under
//!   Valgrind in child processes rather than timed.
//! - [`nemesis`]: `doppio nemesis`'s run: writes on a backend while the seeded schedule's
//!   faults are applied and healed through the cluster script, then the read-back, check (a)
//!   and the report.

pub(crate) mod connections;
pub(crate) mod cost;
pub(crate) mod curve;
pub(crate) mod equal_load;
pub(crate) mod findmax;
pub(crate) mod load;
pub(crate) mod measure;
pub(crate) mod nemesis;
pub(crate) mod round_report;
pub(crate) mod rounds;
pub(crate) mod run;
pub(crate) mod stacks;
