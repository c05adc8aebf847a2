//! Routing: where a partition lives. Pure functions of data, no I/O: the session and the
//! control connection feed them what the cluster reports.
//!
//! - [`murmur3`]: the token of a partition key, exactly as Cassandra's `Murmur3Partitioner`.
//! - [`topology`]: nodes and keyspace replication as read from the system tables.
//! - [`ring`]: the token ring and the replicas of every range per replication strategy,
//!   precomputed so that routing a request is a binary search and a slice.
//! - [`sharding`]: ScyllaDB's shards: their SUPPORTED options, the shard of a token, and the
//!   source ports that reach a shard through the shard-aware port.
//! - [`tablets`]: ScyllaDB's tablets of a table as a shard learned them from its answers'
//!   routing payloads: the replicas (and their shards) of a token's tablet.
//! - `partition_key`: the token of a prepared statement's bound values (serialized once,
//!   into a reused scratch the request's frame then copies from).

pub mod murmur3;
pub(crate) mod partition_key;
pub mod ring;
pub mod sharding;
pub mod tablets;
pub mod topology;
