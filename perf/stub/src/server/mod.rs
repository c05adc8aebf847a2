//! The server: one pinned executor per core (glommio's, or doppio's own io_uring runtime:
//! [`StubConfig::runtime`]), each accepting on the same address
//! (`SO_REUSEPORT`: the kernel spreads connections over the shards) and serving its
//! connections itself, with its own responder and rule state. Nothing is shared on the
//! request path; the connection counter and the rule fire counts are the only atomics
//! (once per connection, and once per fired rule).
//!
//! Playing a cluster ([`StubConfig::cluster`]), every executor also listens on every other
//! node's address (see [`crate::cluster`]), with a responder per node that describes that
//! node; each node keeps its own counters ([`StubHandle::node_counts`]).
//!
//! A stub can also be served by tasks on the caller's executor: [`Stub::serve_local`] (one
//! node on a given listener) and [`Stub::in_memory`] (any configuration, a cluster too, on
//! in-memory listeners: what a test on the simulated runtime, which has no sockets and no
//! other threads, serves beside its client).
//!
//! Files (this one is a map; nothing is defined here):
//! - `config`: what a stub serves and how ([`StubConfig`]), and why it could not start
//!   ([`StubError`]).
//! - `start`: [`Stub::start`], one executor per core, each binding its listeners.
//! - `plan`: what a configuration makes before any executor runs (nodes, counters) and what
//!   every executor serves with (each shard's responder and rule matcher per node).
//! - `listen`: listening and accepting: each node's listeners bound, connections accepted
//!   and served by `crate::conn`.
//! - `handle`: a running stub's [`StubHandle`]: its addresses, its counts, pinning its
//!   emulated ScyllaDB plain-port connections to a shard, its stop.
//! - `local`: [`Stub::serve_local`], one listener served on the caller's executor
//!   ([`LocalStubHandle`]).
//! - `memory`: [`Stub::in_memory`], a stub served over in-memory listeners ([`MemoryStub`]).

mod config;
mod handle;
mod listen;
mod local;
mod memory;
mod plan;
mod start;

pub use config::{StubConfig, StubError};
pub use handle::{ClusterControl, StubHandle};
pub use local::LocalStubHandle;
pub use memory::MemoryStub;
pub use start::Stub;
