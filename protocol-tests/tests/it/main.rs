//! The protocol layer's conformance tests, one test binary
//! (`cargo test -p protocol-tests --test it`): a module per file (`cassandra_*` against a
//! real Cassandra, each in a keyspace of its own; the others in memory).
//!
//! The counting allocator below is for `hostile_input` and `no_alloc`, which read only the
//! measuring thread's counts (`doppio_alloc_count::measure`): tests running beside them on
//! other threads do not disturb them. Nothing here measures time, so files run beside each
//! other.

#[global_allocator]
static GLOBAL: doppio_alloc_count::CountingAlloc = doppio_alloc_count::CountingAlloc::new();

mod captured_fixtures;
mod captured_v5_fixtures;
mod cassandra_captured;
mod cassandra_smoke;
mod cassandra_v5_messages;
mod cassandra_v5_segments;
mod fuzz_corpus;
mod golden;
mod hostile_input;
mod no_alloc;
mod roundtrip_props;
mod split_points;
