//! The driver's integration tests, one test binary (`cargo test -p doppio-driver --test it`):
//! a module per file, named for what it tests (`cassandra_*` against a real Cassandra, the
//! others against the stub, small misbehaving peers or the simulated runtime, in this
//! process), and `support`, the helpers they share. One binary links once, where one per
//! file linked the driver, the stub, the runtimes and the test crates 33 times
//! (docs/TESTING.md has the figures). `tracing_events.rs` stays a binary of its own: it is
//! built with the `tracing` feature only.
//!
//! What separate binaries kept apart stays apart:
//! - every test first takes its file's turn (`doppio_test_support::file_turn`, through
//!   `support::runtime_tests!` and `support::cassandra_runtime_tests!`): a test runs beside
//!   tests of its own file only, as when cargo ran one binary after another. The tests that
//!   measure (allocations, heap, wake-ups, latency) and those that stop or freeze nodes of
//!   the three-node cluster count on it;
//! - a file's own locks (`support::cluster_turn`, `ONE_AT_A_TIME`, `TURN`) still run its
//!   tests one at a time where they did;
//! - the counting allocator below serves `scylla_shards_alloc` (which reads its own
//!   thread's count) and `cassandra_many_requests` (which reads the process's heap while it
//!   holds its turn).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

#[global_allocator]
static ALLOCATOR: doppio_alloc_count::CountingAlloc =
    doppio_alloc_count::CountingAlloc::with_process_bytes();

mod authenticators;
mod cassandra_auth;
mod cassandra_cluster;
mod cassandra_cluster_failover;
mod cassandra_cluster_routing;
mod cassandra_cluster_speculative;
mod cassandra_connection;
mod cassandra_derive;
mod cassandra_examples;
mod cassandra_load;
mod cassandra_many_requests;
mod cassandra_observe;
mod cassandra_paging;
mod cassandra_session;
mod cassandra_statements;
mod cassandra_tls;
mod cassandra_tokens;
mod cassandra_tokio;
mod cassandra_types;
mod connection;
mod faults;
mod in_process_stub;
mod readme_snippets;
mod runtimes;
mod scylla_extensions;
mod scylla_metadata_ids;
mod scylla_shards;
mod scylla_shards_alloc;
mod scylla_wrong_shard;
mod sim_faults;
mod soak;
mod stub_answers;
mod stub_cluster;
mod stub_datacenters;
mod stub_events;
mod stub_latency;
mod stub_nodes;
mod stub_tablets;
mod stub_tablets_v2;
mod support;
mod tls;
