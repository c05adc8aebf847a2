//! `doppio`: a thread-per-core CQL driver for Apache Cassandra and ScyllaDB on io_uring, on
//! either of two runtimes.
//!
//! It speaks the native protocol v4 and v5 (the newest both sides speak unless pinned), with
//! lz4, TLS (rustls) and authentication; routes by token and data center, to ScyllaDB's
//! shards and tablets; retries, speculates and pages. Linux only (io_uring).
//!
//! One session on one node, on an executor thread of a runtime of your choice (a
//! [`Cluster`] starts one pinned executor and session per core instead: [`cluster`]):
//!
//! ```no_run
//! use doppio_driver::rt::{run_on, Runtime};
//! use doppio_driver::{Session, SessionConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let node = "127.0.0.1:9042".parse()?;
//! let version = run_on(Runtime::Uring, "example", move || async move {
//!     let session = Session::connect(SessionConfig::new(node)).await?;
//!     session
//!         .query_unpaged("SELECT release_version FROM system.local", &())
//!         .await?
//!         .typed_rows::<(String,)>()
//! })??; // the executor did not start; the driver's error
//! println!("{version:?}");
//! # Ok(())
//! # }
//! ```
//!
//! Cargo features:
//! - `derive` (on by default): the derives of `doppio-macros`, re-exported here:
//!   [`FromRow`] (a struct from each row, by column name or position), [`SerializeRow`] (a
//!   struct as bound values, by bind-marker name; also a `QueryValues`), and
//!   [`DeserializeValue`] and [`SerializeValue`] (a struct as a user-defined type's value).
//!   docs/DRIVER.md says what they check at compile time and at run time.
//! - `tracing` (off by default): `tracing` events (target `doppio_driver`) at the session's cold
//!   points: connecting, preparing and re-preparing, retry decisions, connections opened,
//!   closed and failed with their reconnection backoff, topology changes, schema agreement.
//!   Without it no `tracing` code is compiled in; with it the request path's common case
//!   still emits nothing.
//!
//! doppio-proto's default `uuid` is on: `uuid::Uuid` values bind and read as `uuid` and
//! `timeuuid`.
//!
//! - `unstable-internals` (off by default): the low-level single-connection API
//!   (`connection`), a picked request's stage stamps (`stages`) and what the request-path
//!   benchmarks time one stage at a time (`bench_internals`), for the bench and the
//!   driver's own tests. No stability promise: any release may change them.
//!
//! The face: the root holds the names most programs need ([`Session`], [`SessionConfig`],
//! [`Cluster`], [`ClusterBuilder`], [`Statement`], [`StatementConfig`],
//! [`PreparedStatement`], [`Batch`], [`ExecutionProfile`], [`Consistency`], [`QueryResult`],
//! [`Page`], [`PagingState`], [`SendSession`], [`Error`], [`ErrorKind`]) and the derives;
//! everything else lives in a named module: every setting in [`config`], every error in
//! [`error`] but the cluster's and the door's (in their modules), counters and
//! histograms, paging streams, policies and traces in [`session`].
//!
//! It names no runtime itself: tasks, timers, sockets and executor threads come from the
//! crate `doppio-rt` (glommio, or doppio's own io_uring runtime; re-exported as [`rt`] for
//! users), so the same code runs on both. Its modules (docs/ARCHITECTURE.md places them
//! among the other crates):
//! - [`cluster`]: a `Cluster` that starts one pinned executor per core (`shards`, private:
//!   the shards and their control plane) and a session on each; one shard runs the control
//!   connection (`control`, private) and hands topology changes to all of them over the
//!   control plane. Its errors: [`cluster::ClusterError`], [`cluster::RuntimeError`].
//! - [`door`]: the door for tokio (and other) applications: a `Send + Sync` [`SendSession`]
//!   whose requests cross to a shard's session through a bounded lock-free lane and whose
//!   answers come back through a one-shot channel.
//! - [`config`]: every setting, gathered from the modules that use them.
//! - `connection` (public with `unstable-internals`): one connection to one node that
//!   coalesces frames into batched writes and parses every complete frame per read
//!   (requests as raw frames or request bodies, no handshake, no pool). TLS (rustls, its
//!   private `tls` submodule) sits between a connection's socket and its buffers when
//!   configured.
//! - `pool` (private): per-shard connections to every node, replaced in the background with
//!   backoff when they break ([`config::Backoff`], [`session::PoolStats`]); `handshake`
//!   (private) and [`auth`] open them ([`config::HandshakeConfig`]).
//! - `system` (private): the CQL the driver runs for itself on one connection (system
//!   tables, schema versions, REGISTER, USE), for the control connection and the session.
//! - [`routing`]: Murmur3 tokens, the token ring, replica placement, ScyllaDB's shards and
//!   the token of bound values (pure).
//! - [`session`]: the `Session` API that user code runs on each shard, with token-aware
//!   load balancing, retries and speculative execution; its per-shard counters and latency
//!   histogram, and traced requests' traces read back from `system_traces`.
//! - [`result`]: what a node answered ([`QueryResult`]) and the one place an answer becomes
//!   a typed outcome.
//! - [`error`]: the driver's error type with its causes (a connection's, a TLS setting's),
//!   and the one table of error kinds.
//! - `clock` (private): the coarse clock of request deadlines, and the precise one of
//!   request latencies.
//! - `telemetry` (private): the `tracing` events of the session's cold points (feature
//!   `tracing`; nothing without it).
//! - `stages` (public with `unstable-internals`): a picked request timed stage by stage on
//!   its way through a connection (queued, handed to the runtime, read, split off, polled),
//!   for benchmarks' waterfalls.
//!
//! Invariant: nothing on the request path is shared across cores; shard state is
//! `Rc`/`RefCell`, never `Arc`/`Mutex`.

pub mod auth;
mod clock;
pub mod cluster;
// The low-level single-connection API (`Connection`, its in-flight table): public with the
// feature `unstable-internals` only. Without it the module's `pub` items are reachable from
// nowhere outside the crate, which is the point: allowed here rather than marked one by one.
#[cfg(feature = "unstable-internals")]
pub mod connection;
#[cfg(not(feature = "unstable-internals"))]
#[allow(unreachable_pub)]
mod connection;
mod control;
pub mod door;
pub mod error;
mod handshake;
mod pool;
pub mod result;
pub mod routing;
pub mod session;
// Its `pub` items are reachable through `bench_internals` only (feature `unstable-internals`).
#[cfg_attr(not(feature = "unstable-internals"), allow(unreachable_pub))]
mod shards;
// Timestamps of a picked request's stages, for the bench's waterfalls: with the feature
// `unstable-internals` only (the request path stamps nothing unless a request was picked).
#[cfg(feature = "unstable-internals")]
pub mod stages;
#[cfg(not(feature = "unstable-internals"))]
#[allow(unreachable_pub)]
mod stages;
mod system;
mod telemetry;

/// Every setting of the driver in one place, beside [`SessionConfig`] (at the root): a
/// session's connections, handshake, TLS, control connection, reconnection backoff,
/// load-balancing, speculative execution and latency recording; statements' settings and
/// execution profiles; the door's. A [`Cluster`] takes a [`SessionConfig`] for its shards
/// ([`ClusterBuilder::session_config`]) and adds only what a cluster has (cores, runtime,
/// shutdown grace).
pub mod config {
    pub use crate::connection::{ConnectionConfig, TlsConfig};
    pub use crate::control::ControlConfig;
    pub use crate::door::DoorConfig;
    pub use crate::handshake::HandshakeConfig;
    pub use crate::pool::Backoff;
    pub use crate::session::load_balancing::{DefaultPolicyConfig, PolicyFactory};
    pub use crate::session::{
        ExecutionProfile, ExecutionProfileBuilder, LatencyConfig, SessionConfig,
        SpeculativeExecution, StatementConfig,
    };
}

/// What the request-path benchmarks (`driver/benches/request_path/`) and the bench call to
/// time one stage of a request at a time: the in-flight table, the encoding, the placement,
/// the decoding, the sizes of the futures, the shards (one pinned executor per core) they run
/// on, and the thread CPU clock. Feature `unstable-internals` only: not an API, free to
/// change with any release.
#[cfg(feature = "unstable-internals")]
pub mod bench_internals {
    pub use crate::clock::thread_cpu_time;
    pub use crate::connection::{InFlightTable, TableSlot};
    pub use crate::session::bench::{
        decode_execute, encode_execute, future_sizes, place_execute, FutureSizes,
    };
    pub use crate::shards::{ShardOptions, Shards};

    /// Queues already encoded frames on `conn` as if requests had been encoded there (see
    /// `Connection::queue_raw`): the benchmark's sink.
    pub fn queue_raw(conn: &crate::connection::Connection, frames: &[u8]) {
        conn.queue_raw(frames);
    }
}

// The crate README's example compiles as a doctest (it is what crates.io shows).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

pub use cluster::{Cluster, ClusterBuilder};
pub use door::SendSession;
/// The derives (feature `derive`, on by default): rows into structs, structs as bound values,
/// structs as user-defined types both ways. The generated code names `::doppio_driver::proto`.
#[cfg(feature = "derive")]
pub use doppio_macros::{DeserializeValue, FromRow, SerializeRow, SerializeValue};
/// The protocol layer this driver speaks, re-exported for users who need its types.
pub use doppio_proto as proto;
/// A request's consistency level (the protocol layer's type).
pub use doppio_proto::consistency::Consistency;
/// The runtimes the driver runs on (glommio, or doppio's own io_uring runtime), re-exported
/// for users who spawn tasks, sleep or run executors beside it.
pub use doppio_rt as rt;
pub use error::{Error, ErrorKind};
pub use result::QueryResult;
pub use session::{
    Batch, ExecutionProfile, Page, PagingState, PreparedStatement, Session, SessionConfig,
    Statement, StatementConfig,
};
