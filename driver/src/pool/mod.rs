//! A shard's connections to one node, kept filled in the background.
//!
//! Each of the pool's slots has a watcher task: it opens a connection (TCP and handshake, by
//! the pool's connect function), publishes it, waits for it to close, and opens the next one
//! after a jittered exponential backoff. Requests pick an open connection round-robin and
//! never wait for a reconnect: a node with no open connection is reported as such at once.
//!
//! Invariants:
//! - At most `size` connections per node per shard (per ScyllaDB shard of a sharded node)
//!   in the slots; besides them, at most one try per slot at a time (a wrong-shard slot's)
//!   and the connections replaced in a slot, until their requests in flight are answered
//!   (within their request timeout). One watcher per slot, spawned once.
//! - Picking is a few `Cell`/`RefCell` operations: no allocation, no atomic.
//! - ScyllaDB: once a connection reports the node's shards ([`ShardingInfo`]), the pool
//!   grows to `size` connections per ScyllaDB shard (slot `i` is for shard `i % nr_shards`),
//!   each opened towards its shard (through the shard-aware port when the node has one, see
//!   `session::connect`). A connection that landed on another shard (the plain port, where
//!   the node picks, or the fallback) serves the shard it did land on while its slot tries
//!   again in the background for its own, one try at a time and at most 8 per such
//!   connection (`wrong_shard`); one that lands takes its place, and the replaced one
//!   closes once its requests in flight are answered. After a fallback, new connections go
//!   to the plain port at once for `shard_aware_retry` (60 s by default), then try the
//!   shard-aware port again, which may be back. [`NodePool::pick_for`] sends a token to a
//!   connection of its owning shard: a few `Cell` reads and a scan of the slots, no
//!   allocation.
//! - Backoff delays are random in `[0, min(cap, base * 2^attempt)]` ("full jitter"), so the
//!   shards of many clients do not reconnect in lockstep; a success resets the attempt count.
//!
//! Its files, one concern each: `node` (the pool proper: picking, counters, closing),
//! `watch` (starting it and keeping its slots filled), `wrong_shard` (a slot's background
//! tries for its ScyllaDB shard), `connect` (the connect function and shard targets),
//! `backoff` ([`Backoff`] and its jitter) and `stats` ([`PoolStats`]).

mod backoff;
mod connect;
mod node;
mod stats;
#[cfg(test)]
mod tests;
mod watch;
mod wrong_shard;

pub use backoff::Backoff;
pub(crate) use backoff::Jitter;
pub(crate) use connect::{ConnectFn, ShardTarget};
pub(crate) use node::NodePool;
pub use stats::PoolStats;
