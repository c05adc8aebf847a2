//! A running stub's handle: every node's address, the counts (connections, rules fired,
//! requests per node and per emulated shard, recorded values), pinning the emulated
//! ScyllaDB node's plain-port connections to a shard, a cluster's nodes taken down and
//! brought up and events pushed to its connections, and stopping it.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use doppio_rt::ExecutorHandle;

use doppio_proto::response::Event;

use crate::node::{NodeCounts, NodeShared};
use crate::scylla::{ShardAwarePort, ShardCounts};
use crate::server::config::StubError;
use crate::shard::Shared;

/// A running stub. Dropping it stops it. (A stub served in memory,
/// [`Stub::in_memory`](crate::Stub::in_memory), has no threads of its own: its handle stops
/// its accepting.)
pub struct StubHandle {
    /// Every node's address, node 0 first.
    pub(super) addrs: Vec<SocketAddr>,
    pub(super) shared: Arc<Shared>,
    pub(super) threads: Vec<ExecutorHandle<()>>,
}

impl std::fmt::Debug for StubHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StubHandle")
            .field("addrs", &self.addrs)
            .field("shards", &self.threads.len())
            .finish()
    }
}

/// Stops accepting and closing connections on every shard, and joins their threads.
pub(super) fn stop_all(shared: &Shared, threads: Vec<ExecutorHandle<()>>) {
    shared.stop.store(true, Ordering::SeqCst);
    for t in threads {
        let _ = t.join();
    }
}

impl StubHandle {
    /// The address the stub listens on (the real port when 0 was asked for); node 0's
    /// when it plays a cluster.
    pub fn addr(&self) -> SocketAddr {
        self.addrs
            .first()
            .copied()
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Every node's address, node 0 first (one unless it plays a cluster).
    pub fn node_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// What arrived at each node so far, node 0 first: connections, and (in a cluster)
    /// EXECUTEs with a bound partition key, those at a node that is no replica of their
    /// token, and lightweight transactions that missed their primary replica; each node's
    /// requests per emulated ScyllaDB shard when
    /// [`StubConfig::scylla`](crate::StubConfig::scylla).
    pub fn node_counts(&self) -> Vec<NodeCounts> {
        node_counts(&self.shared, &self.addrs)
    }

    /// How often each rule fired so far, by rule name, in rule order.
    pub fn fired(&self) -> Vec<(String, u64)> {
        self.shared.fired_counts()
    }

    /// The first bound value of every EXECUTE so far, in arrival order per shard (empty
    /// unless [`StubConfig::record_values`](crate::StubConfig::record_values); an EXECUTE
    /// without values records nothing).
    pub fn executed_first_values(&self) -> Vec<Vec<u8>> {
        self.shared.recorded_values()
    }

    /// Where requests landed per emulated ScyllaDB shard (`None` unless
    /// [`StubConfig::scylla`](crate::StubConfig::scylla)); node 0's in a cluster (every
    /// node's: [`Self::node_counts`]).
    pub fn shard_counts(&self) -> Option<ShardCounts> {
        self.shared
            .nodes
            .first()?
            .scylla
            .as_ref()
            .map(|e| e.counts())
    }

    /// The emulated ScyllaDB node's shard-aware port, when it listens on one (node 0's in a
    /// cluster; the other nodes' are on their own addresses, same port).
    pub fn shard_aware_addr(&self) -> Option<SocketAddr> {
        let e = self.shared.nodes.first()?.scylla.as_ref()?;
        match e.config.shard_aware_port {
            ShardAwarePort::Listen(_) => Some(SocketAddr::new(self.addr().ip(), e.aware_port())),
            _ => None,
        }
    }

    /// Sends the connections the emulated ScyllaDB node accepts on its plain port from now
    /// on to shard `shard`, however loaded it is (`None`: to the shard with the fewest
    /// connections again, as ScyllaDB does): a test's way to make a driver's connection land
    /// on another shard than it aimed at. Node 0's in a cluster. Fails if the emulation is
    /// off ([`StubConfig::scylla`](crate::StubConfig::scylla)) or has no such shard.
    pub fn pin_plain_port(&self, shard: Option<u16>) -> Result<(), StubError> {
        let no_such = |shards| StubError::NoSuchScyllaShard {
            shard: shard.unwrap_or(0),
            shards,
        };
        let e = self
            .shared
            .nodes
            .first()
            .and_then(|n| n.scylla.as_ref())
            .ok_or_else(|| no_such(0))?;
        e.pin_plain_port(shard).map_err(no_such)
    }

    /// A handle on the cluster's nodes and events, to keep beside a client (any thread,
    /// any executor): [`ClusterControl::take_down`], [`ClusterControl::bring_up`],
    /// [`ClusterControl::push_event`].
    pub fn control(&self) -> ClusterControl {
        ClusterControl {
            addrs: self.addrs.clone(),
            shared: self.shared.clone(),
        }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.next_connection.load(Ordering::Relaxed)
    }

    /// Stops accepting, closes every connection and joins the shards.
    pub fn stop(mut self) {
        let threads = std::mem::take(&mut self.threads);
        stop_all(&self.shared, threads);
    }
}

impl Drop for StubHandle {
    fn drop(&mut self) {
        let threads = std::mem::take(&mut self.threads);
        stop_all(&self.shared, threads);
    }
}

fn status_change(change: &str, node: SocketAddr) -> Event {
    Event::StatusChange {
        change: change.into(),
        node,
    }
}

/// A cluster stub's nodes taken down and brought up, and events pushed to its connections
/// ([`StubHandle::control`]). Cheap to clone; sendable to any thread.
#[derive(Clone)]
pub struct ClusterControl {
    addrs: Vec<SocketAddr>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ClusterControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterControl")
            .field("addrs", &self.addrs)
            .finish()
    }
}

impl ClusterControl {
    /// How often each rule fired so far, by rule name, in rule order (as
    /// [`StubHandle::fired`]).
    pub fn fired(&self) -> Vec<(String, u64)> {
        self.shared.fired_counts()
    }

    /// What arrived at each node so far (as [`StubHandle::node_counts`]).
    pub fn node_counts(&self) -> Vec<NodeCounts> {
        node_counts(&self.shared, &self.addrs)
    }

    /// Takes node `node` (from 0) down, as if its process died: within 10 ms its
    /// connections close, and until [`Self::bring_up`] every new one is closed as soon as
    /// it is accepted; every other node's connections registered for `STATUS_CHANGE` are
    /// sent `DOWN` for it. Nothing is sent if it was down already. A cluster's nodes only.
    pub fn take_down(&self, node: u8) -> Result<(), StubError> {
        let (n, addr) = self.cluster_node(node)?;
        if n.set_down(true) {
            self.push_event(status_change("DOWN", addr));
        }
        Ok(())
    }

    /// Brings node `node` up again: it accepts connections, and the connections registered
    /// for `STATUS_CHANGE` (its own new ones too) are sent `UP` for it. Nothing is sent if it
    /// was up already.
    pub fn bring_up(&self, node: u8) -> Result<(), StubError> {
        let (n, addr) = self.cluster_node(node)?;
        if n.set_down(false) {
            self.push_event(status_change("UP", addr));
        }
        Ok(())
    }

    /// Sends `event` to every connection of every node up that registered for its type,
    /// within 10 ms (the last 1,024 events wait for a watcher that fell behind). A
    /// cluster's connections only: a single stub sends no events.
    pub fn push_event(&self, event: Event) {
        self.shared.events.push(event);
    }

    /// The node at `node`, if the stub plays a cluster that has it.
    fn cluster_node(&self, node: u8) -> Result<(&NodeShared, SocketAddr), StubError> {
        let nodes = self.shared.nodes.len();
        let found = (nodes > 1)
            .then(|| {
                self.shared
                    .nodes
                    .get(usize::from(node))
                    .zip(self.addrs.get(usize::from(node)))
            })
            .flatten();
        found
            .map(|(n, &a)| (&**n, a))
            .ok_or(StubError::NoSuchNode { node, nodes })
    }
}

fn node_counts(shared: &Shared, addrs: &[SocketAddr]) -> Vec<NodeCounts> {
    shared
        .nodes
        .iter()
        .zip(addrs)
        .map(|(n, &a)| n.counts(a))
        .collect()
}
