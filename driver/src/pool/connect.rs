//! How a pool opens a connection: its connect function ([`ConnectFn`]), the ScyllaDB shard a
//! connection is aimed at ([`ShardTarget`]), and how long the shard-aware port is skipped
//! after a fallback.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use crate::connection::{Connection, ConnectionError};
use crate::routing::sharding::Sharder;

/// Opens one ready connection (TCP connect plus CQL handshake) to a node, aimed at a
/// ScyllaDB shard when a target is given.
pub(crate) type ConnectFn = Rc<
    dyn Fn(
        SocketAddr,
        Option<ShardTarget>,
    ) -> Pin<Box<dyn Future<Output = Result<Connection, ConnectionError>>>>,
>;

/// The ScyllaDB shard a connection should land on, and how to reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShardTarget {
    /// The wanted shard.
    pub(crate) shard: u16,
    /// The node's sharding.
    pub(crate) sharder: Sharder,
    /// The node's shard-aware port (`None`: the plain port, where the node picks the shard).
    pub(crate) shard_aware_port: Option<u16>,
    /// A random value to start the source-port search from.
    pub(crate) random: u64,
}

/// How long new connections skip the shard-aware port after a fallback, unless the session
/// says otherwise (`SessionConfig::shard_aware_retry`).
pub(super) const DEFAULT_SHARD_AWARE_RETRY: Duration = Duration::from_secs(60);
