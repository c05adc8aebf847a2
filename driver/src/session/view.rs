//! One shard's view of the cluster: its nodes with their connection pools and counters, the
//! token ring, and the replicas of every keyspace, rebuilt from each topology snapshot.
//!
//! The session keeps the current view behind an `Rc`: a request clones the `Rc` (no atomic),
//! routes with it and keeps it until it is answered, so a topology change in between never
//! moves a node index under it.
//!
//! Invariants:
//! - A [`Node`] (its pool and counters) lives as long as its address is in the topology; a
//!   new view reuses it, so connections survive topology changes.
//! - Only nodes a policy does not ignore have a pool.
//! - Keyspaces with the same replication share one [`ReplicaMap`]; a keyspace ScyllaDB lays
//!   out in tablets has none (its replicas come from its tablets, `session::tablets`).

use std::cell::Cell;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

#[cfg(feature = "unstable-internals")]
use crate::connection::Connection;
use crate::connection::ConnectionError;
use crate::pool::{NodePool, PoolStats};
use crate::routing::murmur3::Token;
use crate::routing::ring::{NodeIndex, ReplicaMap, TokenRing};
use crate::routing::sharding::ShardingInfo;
use crate::routing::topology::{NodeInfo, Replication, TopologySnapshot};

/// How a load-balancing policy sees a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distance {
    /// In the local data center: connected, preferred.
    Local,
    /// In another data center: connected, used only when the policy allows it.
    Remote,
    /// Not used: no connection is opened to it.
    Ignored,
}

/// Per-node counters of one shard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeCounters {
    /// Requests sent to this node (each attempt, retries and speculative ones included,
    /// counted when sent).
    pub requests: u64,
    /// Attempts that failed (with any error).
    pub errors: u64,
}

/// A node this shard talks to: its pool and counters. Stable across topology changes.
#[derive(Debug)]
pub struct Node {
    addr: SocketAddr,
    pub(crate) pool: Rc<NodePool>,
    counters: Cell<NodeCounters>,
}

impl Node {
    pub(crate) fn new(addr: SocketAddr, pool: Rc<NodePool>) -> Self {
        Self {
            addr,
            pool,
            counters: Cell::new(NodeCounters::default()),
        }
    }

    /// The node's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// True if this shard has an open connection to it.
    pub fn is_up(&self) -> bool {
        self.pool.is_up()
    }

    /// True if this shard has evidence it is down (no open connection, and one failed or
    /// closed); false while its pool is still making its first connection.
    pub(crate) fn known_down(&self) -> bool {
        self.pool.known_down()
    }

    /// The counters.
    pub fn counters(&self) -> NodeCounters {
        self.counters.get()
    }

    /// Requests in flight to it from this shard.
    pub fn in_flight(&self) -> usize {
        self.pool.in_flight()
    }

    /// One of this shard's open connections to it, round-robin (for control-path work
    /// and tests; requests pick theirs the same way). Feature `unstable-internals`: the
    /// connection is the low-level API.
    #[cfg(feature = "unstable-internals")]
    pub fn connection(&self) -> Option<Connection> {
        self.pool.pick()
    }

    /// This shard's open connections to it.
    pub fn open_connections(&self) -> usize {
        self.pool.open_count()
    }

    /// What the node said about its ScyllaDB shards (`None` on Cassandra, or before a
    /// connection has reported it).
    pub fn scylla_sharding(&self) -> Option<ShardingInfo> {
        self.pool.sharding()
    }

    /// Requests this shard's connections to it sent, per ScyllaDB shard they landed on
    /// (every request on a connection counts, the handshake's and `USE` included); empty
    /// for a node without ScyllaDB shards.
    pub fn requests_by_scylla_shard(&self) -> Vec<u64> {
        self.pool.requests_by_shard()
    }

    /// The counters of this shard's pool of connections to it.
    pub fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// Waits until this shard has an open connection to it, or `timeout` passes (then the
    /// last connect error).
    pub async fn wait_connected(&self, timeout: Duration) -> Result<(), ConnectionError> {
        self.pool.wait_ready(timeout).await
    }

    /// Counts an attempt sent to this node.
    pub(crate) fn started(&self) {
        let mut c = self.counters.get();
        c.requests += 1;
        self.counters.set(c);
    }

    /// Counts an attempt that failed.
    pub(crate) fn failed(&self) {
        let mut c = self.counters.get();
        c.errors += 1;
        self.counters.set(c);
    }
}

/// A snapshot of one node for callers: address, placement, state and counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeStatus {
    /// What the cluster says of it.
    pub info: NodeInfo,
    /// The policy's distance.
    pub distance: Distance,
    /// True if this shard has an open connection to it.
    pub up: bool,
    /// Requests in flight from this shard.
    pub in_flight: usize,
    /// Counters of this shard.
    pub counters: NodeCounters,
    /// Requests this shard's connections sent per ScyllaDB shard of the node (empty for a
    /// node without ScyllaDB shards): see [`Node::requests_by_scylla_shard`].
    pub requests_by_scylla_shard: Vec<u64>,
}

/// One shard's routing tables for one topology snapshot.
#[derive(Debug, Default)]
pub struct ClusterView {
    version: u64,
    info: Vec<NodeInfo>,
    nodes: Vec<Option<Rc<Node>>>,
    distance: Vec<Distance>,
    local: Vec<NodeIndex>,
    remote: Vec<NodeIndex>,
    ring: TokenRing,
    replicas: HashMap<String, Option<Rc<ReplicaMap>>>,
}

impl ClusterView {
    /// Builds the view of `snapshot`: `distance` from the policy (one per node), `node_for`
    /// gives the node object (pool) of each node that is not ignored.
    pub(crate) fn build(
        snapshot: &TopologySnapshot,
        distance: Vec<Distance>,
        mut node_for: impl FnMut(&NodeInfo) -> Rc<Node>,
    ) -> Self {
        let info: Vec<NodeInfo> = snapshot
            .nodes
            .iter()
            .take(usize::from(NodeIndex::MAX) + 1)
            .cloned()
            .collect();
        let distance: Vec<Distance> = (0..info.len())
            .map(|i| distance.get(i).copied().unwrap_or(Distance::Ignored))
            .collect();
        let nodes = info
            .iter()
            .zip(&distance)
            .map(|(n, d)| (*d != Distance::Ignored).then(|| node_for(n)))
            .collect();
        let pick = |want: Distance| {
            (0..info.len())
                .filter(|&i| distance[i] == want)
                .map(|i| i as NodeIndex)
                .collect::<Vec<_>>()
        };
        let (local, remote) = (pick(Distance::Local), pick(Distance::Remote));
        let ring = if snapshot.murmur3() {
            TokenRing::new(&info)
        } else {
            TokenRing::default()
        };
        let mut by_strategy: HashMap<&Replication, Option<Rc<ReplicaMap>>> = HashMap::new();
        let mut replicas = HashMap::new();
        let in_tablets = |ks: &str| {
            snapshot
                .tablet_keyspaces
                .as_ref()
                .is_some_and(|t| t.contains(ks))
        };
        for (ks, r) in &snapshot.keyspaces {
            // A keyspace in tablets has no replicas on the ring: a key whose tablet this
            // shard does not know yet goes to any node (its answer then says where the
            // tablet is), not to the ring's replicas, which would send every unknown tablet
            // to the same few nodes.
            if in_tablets(ks) {
                replicas.insert(ks.clone(), None);
                continue;
            }
            let map = by_strategy
                .entry(r)
                .or_insert_with(|| ReplicaMap::build(&ring, &info, r).map(Rc::new))
                .clone();
            replicas.insert(ks.clone(), map);
        }
        Self {
            version: snapshot.version,
            info,
            nodes,
            distance,
            local,
            remote,
            ring,
            replicas,
        }
    }

    /// The snapshot version this view was built from.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The index of the node whose host id is `host` (a scan: for the rare path that
    /// resolves a tablet's replicas once per view).
    pub(crate) fn index_of_host(&self, host: &[u8; 16]) -> Option<NodeIndex> {
        let at = self
            .info
            .iter()
            .position(|n| n.host_id.as_ref() == Some(host))?;
        NodeIndex::try_from(at).ok()
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.info.len()
    }

    /// True if no node is known.
    pub fn is_empty(&self) -> bool {
        self.info.is_empty()
    }

    /// What the cluster says of node `i`.
    pub fn info(&self, i: NodeIndex) -> Option<&NodeInfo> {
        self.info.get(usize::from(i))
    }

    /// Node `i`'s pool and counters (`None` if ignored).
    pub fn node(&self, i: NodeIndex) -> Option<&Rc<Node>> {
        self.nodes.get(usize::from(i))?.as_ref()
    }

    /// The policy's distance of node `i`.
    pub fn distance(&self, i: NodeIndex) -> Distance {
        self.distance
            .get(usize::from(i))
            .copied()
            .unwrap_or(Distance::Ignored)
    }

    /// True if some node reported ScyllaDB shards (tokens are then computed even for
    /// keyspaces whose replication is unknown: they choose the shard).
    pub fn any_sharded(&self) -> bool {
        self.nodes
            .iter()
            .flatten()
            .any(|n| n.pool.sharding().is_some())
    }

    /// True if this shard has an open connection to node `i`.
    pub fn is_up(&self, i: NodeIndex) -> bool {
        self.node(i).is_some_and(|n| n.is_up())
    }

    /// The local nodes, by index.
    pub fn local_nodes(&self) -> &[NodeIndex] {
        &self.local
    }

    /// The remote nodes, by index.
    pub fn remote_nodes(&self) -> &[NodeIndex] {
        &self.remote
    }

    /// The replica map of `keyspace` (`None` if unknown or not routed by token).
    pub fn replica_map(&self, keyspace: &str) -> Option<&Rc<ReplicaMap>> {
        self.replicas.get(keyspace)?.as_ref()
    }

    /// The replicas of `token` in `map`, in placement order.
    pub fn replicas<'a>(&self, map: &'a ReplicaMap, token: Token) -> &'a [NodeIndex] {
        match self.ring.position(token) {
            Some(p) => map.replicas(p),
            None => &[],
        }
    }

    /// Every node with its state, for callers and tests.
    pub fn status(&self) -> Vec<NodeStatus> {
        (0..self.info.len())
            .map(|i| {
                let node = self.nodes[i].as_ref();
                NodeStatus {
                    info: self.info[i].clone(),
                    distance: self.distance[i],
                    up: node.is_some_and(|n| n.is_up()),
                    in_flight: node.map_or(0, |n| n.in_flight()),
                    counters: node.map(|n| n.counters()).unwrap_or_default(),
                    requests_by_scylla_shard: node
                        .map(|n| n.requests_by_scylla_shard())
                        .unwrap_or_default(),
                }
            })
            .collect()
    }
}
