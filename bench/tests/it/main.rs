//! The bench's integration tests, one test binary (`cargo test -p doppio-bench --test it`):
//! a module per file, named for what it tests (`cassandra_*` against a real Cassandra, `stub_*`
//! against the stub in this process), and `support`, the helpers they share. One binary
//! links once, where one per file linked the bench, the driver and scylla-rust-driver 44
//! times (docs/TESTING.md has the figures).
//!
//! What separate binaries kept apart stays apart:
//! - every test first takes its file's turn (`doppio_test_support::file_turn`): a test runs
//!   beside tests of its own file only, as when cargo ran one binary after another; the
//!   tests that measure (rates, CPU, latency, memory) count on it;
//! - a file's own locks (`SERIAL`, `MEASURING`, `ONE`) still run its measuring tests one at
//!   a time;
//! - the counting allocator below counts per thread for `paced_alloc`, so other threads of the
//!   binary do not touch its counts (with the `alloc-count` feature the bench's library
//!   installs it instead, and `paced_alloc` is left out, as before);
//! - scratch folders are named by file and test (`support::scratch_dir`); no test changes
//!   the environment or the current folder, and signals go to child processes only.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

#[cfg(not(feature = "alloc-count"))]
#[global_allocator]
static GLOBAL: doppio_alloc_count::CountingAlloc = doppio_alloc_count::CountingAlloc::new();

mod cassandra_acked_writes;
mod cassandra_builtins;
mod cassandra_cli;
mod cassandra_collections;
mod cassandra_demo;
mod cassandra_nemesis;
mod cassandra_node_death;
mod cassandra_overload;
mod cassandra_profile_data;
mod cassandra_profiles;
mod cassandra_rows;
mod cassandra_secrets;
mod cassandra_sequences;
mod cassandra_server_bound;
mod cassandra_stress;
mod cassandra_topology;
mod cassandra_validate;
mod cost;
mod option_ranges;
mod paced_alloc;
mod report_round_trip;
mod sharding;
mod stress_cli;
mod stub_anatomy;
mod stub_cli;
mod stub_connection_parity;
mod stub_curve;
mod stub_equal_load;
mod stub_findmax;
mod stub_flamegraph;
mod stub_hdr_log;
mod stub_interrupt;
mod stub_loaders;
mod stub_memory;
mod stub_order;
mod stub_overload;
mod stub_plot;
mod stub_progress;
mod stub_prometheus;
mod stub_rate_schedule;
mod stub_release_grid;
mod stub_report_paths;
mod stub_reprepare;
mod stub_rows;
mod stub_runs;
mod stub_scylla_shards;
mod stub_sequences;
mod stub_sqpoll;
mod stub_statements;
mod stub_waterfall;
mod support;
