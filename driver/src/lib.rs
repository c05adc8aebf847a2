//! `doppio`: a thread-per-core CQL v4 driver on glommio.
//!
//! The only crate of the workspace that knows glommio. Its parts (see `shared/DESIGN.md`):
//! - [`cluster`]: a `Cluster` that starts one pinned executor per core ([`runtime`]) and a
//!   session on each; one shard runs the [`control`] connection and hands topology changes
//!   to all of them over the control plane.
//! - [`connection`] and [`pool`]: per-shard connections to every node that coalesce frames
//!   into batched writes and parse every complete frame per read, replaced in the background
//!   with backoff when they break.
//! - [`routing`]: Murmur3 tokens, the token ring and replica placement (pure).
//! - [`session`]: the `Session` API that user code runs on each shard, with token-aware
//!   load balancing, retries and speculative execution.
//!
//! Invariant: nothing on the request path is shared across cores; shard state is
//! `Rc`/`RefCell`, never `Arc`/`Mutex`.

pub mod auth;
pub mod clock;
pub mod cluster;
pub mod connection;
pub mod control;
pub mod error;
pub mod handshake;
pub mod pool;
pub mod routing;
pub mod runtime;
pub mod session;

pub use cluster::{Cluster, ClusterBuilder, ClusterError};
/// The protocol layer this driver speaks, re-exported for users who need its types.
pub use doppio_proto as proto;
/// The runtimes the driver runs on (glommio, or doppio's own io_uring runtime), re-exported
/// for users who spawn tasks, sleep or run executors beside it.
pub use doppio_rt as rt;
pub use error::Error;
pub use session::{
    PageStream, PreparedStatement, QueryResult, Session, SessionConfig, SessionStats,
    StatementOptions,
};
