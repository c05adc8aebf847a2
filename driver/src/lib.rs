//! `doppio`: a thread-per-core CQL v4 driver on glommio.
//!
//! The only crate of the workspace that knows glommio. Its parts, as they land (see
//! `shared/DESIGN.md` sections 2 and 3): a `Cluster` that starts one pinned executor per core,
//! per-shard connections that coalesce frames into batched writes and parse every complete
//! frame per read, and the `Session` API that user code runs on each shard.
//!
//! Invariant: nothing on the request path is shared across cores; shard state is
//! `Rc`/`RefCell`, never `Arc`/`Mutex`.

pub mod auth;
pub mod cluster;
pub mod connection;
pub mod error;
pub mod handshake;
pub mod pool;
pub mod runtime;
pub mod session;

pub use cluster::{Cluster, ClusterBuilder, ClusterError};
/// The protocol layer this driver speaks, re-exported for users who need its types.
pub use doppio_proto as proto;
pub use error::Error;
pub use session::{
    PageStream, PreparedStatement, QueryResult, Session, SessionConfig, SessionStats,
    StatementOptions,
};
