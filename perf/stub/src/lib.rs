//! `doppio-stub`: a loopback CQL server (protocol v4 and v5) for driver-overhead research and
//! fault injection.
//!
//! It speaks enough of Cassandra 5.0 for doppio and scylla-rust-driver to connect to it
//! unmodified (handshake with or without lz4, the system tables drivers read, USE, QUERY,
//! PREPARE, EXECUTE, BATCH, and `ALTER TABLE` of the tables it answers SELECTs of, whose
//! changed columns prepared statements then report: `METADATA_CHANGED`), answers in almost
//! no time so that the client's own cost can be measured, and misbehaves on purpose when its
//! fault rules say so.
//!
//! Parts:
//! - [`server`]: [`Stub::start`] runs one pinned executor per core (glommio, or doppio's own
//!   io_uring runtime), all accepting on
//!   the same address; [`StubHandle`] gives the address, fire counts, and stops it.
//!   [`Stub::serve_local`] serves one listener with tasks on the caller's own executor
//!   instead (an in-memory listener of `doppio_rt` then puts no kernel between client and
//!   stub). [`Stub::in_memory`] makes a stub on any thread to serve later, on an executor's
//!   own thread, over in-memory listeners ([`MemoryStub::serve`]: a stub for a test on the
//!   simulated runtime, a cluster too, with its counters readable from the test's thread).
//!   Playing a cluster ([`StubConfig::cluster`]), every executor serves every node,
//!   each on its own address.
//! - `shard` (private): one shard's state for one node (its responder and rule matcher)
//!   and the counters all shards share (connection numbers, rule fire counts, the stop
//!   flag, the nodes).
//! - `node` (private): one node's state all shards share: its emulated ScyllaDB shards, its
//!   counts ([`NodeCounts`]) and, in a cluster, the check of each EXECUTE against the
//!   replicas of its token.
//! - [`cluster`]: several nodes played by one stub: their addresses and host ids, the token
//!   ring and each token's replicas (SimpleStrategy, or NetworkTopologyStrategy over
//!   [`datacenters`]).
//! - [`datacenters`]: a cluster laid out over data centers and racks
//!   ([`StubConfig::datacenters`]) and NetworkTopologyStrategy's placement of replicas.
//! - `events` (private): the events a cluster's nodes push to registered connections
//!   (their log, shared by every executor) and their types.
//! - `conn` (private): one connection: read, answer every frame, one write per batch; fault
//!   reactions. `conn::handle` answers each request by its opcode, one function per opcode
//!   (`handshake`: STARTUP, OPTIONS, REGISTER, AUTH_RESPONSE; `query`, `prepare`,
//!   `execute`, `batch`).
//! - [`answer`]: what each request gets; prepared statements' answers encoded once.
//! - [`tables`]: the system tables (of a single node, or of one node of a cluster) and the
//!   little CQL parsing the stub needs.
//! - [`rules`]: fault rules as data (TOML) and their matching.
//! - [`scylla`]: ScyllaDB's shards, emulated (`StubConfig::scylla`): shard of each
//!   connection, SUPPORTED's `SCYLLA_*` options (with ScyllaDB's other extensions: the LWT
//!   mark, the rate-limit error, tablets routing, result metadata ids in v4), counts of
//!   requests per shard and of those that arrived at a shard not owning their token.
//! - [`tablets`]: ScyllaDB's tablets, emulated over a cluster (`StubConfig::tablets`): each
//!   tablet's range and (node, shard) replicas, a migration at a set time, and the routing
//!   payload a misrouted request's answer carries.
//! - [`tls`]: serving TLS (rustls, ring provider) with a given certificate and key.
//!
//! `server`, `conn`, `answer` and `rules` are directories of files of one concern each; their
//! `mod.rs` is the map of those files and re-exports what the module offers, so the paths
//! above (`doppio_stub::server::StubConfig`, `doppio_stub::rules::Rules`, ...) are the same.
//!
//! Imports go one way, with no circle: `server` -> `conn` -> `shard` -> `answer`, `rules`,
//! `node`; `node` -> `scylla`, `cluster`, `tables`, `tablets`; `tablets` -> `cluster`; `cluster` -> `tables`, `datacenters`; `answer` -> `tables`;
//! `conn` -> `tls`, `node`, `tablets` (`server` also builds the `shard` and `node` state it hands to each
//! connection, and the `cluster`'s ring).
//!
//! Invariants: the EXECUTE hot path allocates nothing, takes no lock and touches no atomic;
//! per-connection memory is bounded; no input from the wire can make it panic.
//!
//! What one EXECUTE costs the stub is recorded with the loopback study (`perf/README.md`).

pub mod answer;
pub mod cluster;
mod conn;
pub mod datacenters;
mod events;
mod node;
pub mod rules;
pub mod scylla;
pub mod server;
mod shard;
pub mod tables;
pub mod tablets;
pub mod tls;

pub use answer::Shape;
pub use cluster::{Cluster, Ring};
pub use datacenters::{Datacenter, Datacenters};
pub use node::{DatacenterCounts, NodeCounts};
pub use rules::{Reaction, Rule, Rules};
pub use scylla::{ScyllaShards, ShardAwarePort, ShardCounts};
pub use server::{
    ClusterControl, LocalStubHandle, MemoryStub, Stub, StubConfig, StubError, StubHandle,
};
pub use tablets::{TabletMigration, Tablets};
