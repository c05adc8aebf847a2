//! What a stub serves and how ([`StubConfig`], its defaults), and why it could not start
//! ([`StubError`]).

use std::net::SocketAddr;
use std::sync::Arc;

use doppio_proto::ProtocolVersion;
use doppio_rt::Runtime;

use crate::answer::Shape;
use crate::cluster::{Cluster, ClusterError};
use crate::datacenters::{DatacenterError, Datacenters};
use crate::rules::Rules;
use crate::scylla::ScyllaShards;
use crate::tablets::Tablets;

/// What a stub serves and how.
#[derive(Debug, Clone)]
pub struct StubConfig {
    /// Where to listen (port 0: any free port).
    pub listen: SocketAddr,
    /// One shard per core, pinned; empty: one unpinned shard.
    pub cores: Vec<usize>,
    /// Whether to pin each shard to its core (tests sharing a machine may not).
    pub pin: bool,
    /// The event loop of every shard.
    pub runtime: Runtime,
    /// Result shape and bind-marker type.
    pub shape: Shape,
    /// Fault rules.
    pub rules: Rules,
    /// Log fired rules to stderr.
    pub log_rules: bool,
    /// Keep the first bound value of every EXECUTE, for tests that check which keys a
    /// client sent
    /// ([`StubHandle::executed_first_values`](crate::StubHandle::executed_first_values)).
    /// Off by default: when on, every EXECUTE takes a lock and allocates, so it is for
    /// correctness tests, never for overhead measurements.
    pub record_values: bool,
    /// The newest protocol version offered and spoken (v5 by default, as Cassandra 5.0;
    /// v4 to play a node that offers no v5).
    pub newest_protocol: ProtocolVersion,
    /// Answer STARTUP with AUTHENTICATE naming this server authenticator class (any
    /// credentials then succeed); none: READY.
    pub authenticator: Option<String>,
    /// Emulate a ScyllaDB node's shards (off by default): see [`crate::scylla`].
    pub scylla: Option<ScyllaShards>,
    /// A keyspace to list with SimpleStrategy (replication factor 1), the first bind
    /// marker of every prepared statement named its partition key: drivers then route by
    /// token (off by default: only the system keyspaces, LocalStrategy, nothing routed).
    pub routed_keyspace: Option<String>,
    /// Serve TLS with this configuration (see [`crate::tls::server_config`]); `None`:
    /// plaintext.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Play a cluster of several nodes (off by default: one node). Node `i` listens on the
    /// IPv4 address `i` steps after `listen`'s, same port; each answers as the single stub
    /// does (same shape, rules, shards, TLS) with its own system tables and counters, the
    /// routed keyspace is listed with the cluster's replication factor, and every EXECUTE
    /// with a bound partition key is checked against its token's replicas: see
    /// [`crate::cluster`] and [`StubHandle::node_counts`](crate::StubHandle::node_counts).
    pub cluster: Option<Cluster>,
    /// Lay the routed keyspace's tables out in ScyllaDB's tablets (a cluster with emulated
    /// ScyllaDB shards only): requests are checked against their tablet's replicas and a
    /// misrouted one's answer carries the tablet's routing; the routed keyspace is listed as
    /// a keyspace in tablets (NetworkTopologyStrategy, `system_schema.scylla_keyspaces`).
    /// See [`crate::tablets`].
    pub tablets: Option<Tablets>,
    /// Lay the cluster's nodes out over data centers and racks (needs `cluster`, whose
    /// `nodes` must be the data centers' sum: [`Cluster::of_datacenters`] makes one): each node
    /// gives its data center and rack in `system.local` and `system.peers(_v2)`, the routed
    /// keyspace is listed with NetworkTopologyStrategy and each data center's factor, and
    /// requests are checked against the replicas it places. See [`crate::datacenters`].
    pub datacenters: Option<Datacenters>,
}

impl Default for StubConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            cores: Vec::new(),
            pin: false,
            runtime: Runtime::default(),
            shape: Shape::default(),
            rules: Rules::default(),
            log_rules: true,
            record_values: false,
            newest_protocol: ProtocolVersion::V5,
            authenticator: None,
            scylla: None,
            routed_keyspace: None,
            tls: None,
            cluster: None,
            datacenters: None,
            tablets: None,
        }
    }
}

/// Why a stub could not start, or a running one could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum StubError {
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}: {message}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        message: String,
    },
    /// Another node of a cluster could not listen on its address (taken by another
    /// process, or not a local address).
    #[error("cannot listen on {addr} for node {node} of the cluster: {message}")]
    NodeBind {
        /// The node.
        node: u8,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        message: String,
    },
    /// A shard was named that the emulated ScyllaDB node does not have
    /// ([`StubHandle::pin_plain_port`](crate::StubHandle::pin_plain_port)).
    #[error(
        "the emulated ScyllaDB node has no shard {shard} (it has {shards}; 0: `scylla` is off)"
    )]
    NoSuchScyllaShard {
        /// The shard named.
        shard: u16,
        /// The node's shards (0 when the emulation is off).
        shards: u16,
    },
    /// A node was named that the stub does not play, or the stub plays no cluster (only a
    /// cluster's nodes are taken down and send events).
    #[error("no node {node} to take down or bring up: the stub plays {nodes} node(s) (a cluster of two or more is needed)")]
    NoSuchNode {
        /// The node asked for.
        node: u8,
        /// The nodes the stub plays.
        nodes: usize,
    },
    /// Tablets were asked for without the cluster and the ScyllaDB shards they are laid
    /// over.
    #[error("tablets need a cluster (`cluster`) of emulated ScyllaDB nodes (`scylla`)")]
    TabletsWithoutCluster,
    /// Data centers were given without a cluster, or with tablets.
    #[error("data centers need a cluster (`cluster`) and are not laid over tablets")]
    DatacentersWithoutCluster,
    /// The data centers' layout is refused.
    #[error(transparent)]
    Datacenters(#[from] DatacenterError),
    /// The cluster's nodes cannot be given addresses.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// An executor could not start.
    #[error("cannot start the shard on core {core}: {cause}")]
    Executor {
        /// The core.
        core: usize,
        /// Why.
        #[source]
        cause: doppio_rt::StartFailure,
    },
}
