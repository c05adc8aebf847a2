//! The session handle: [`Session`] (a shard's `!Send`, cheaply cloned handle) and the state
//! its clones share (`Inner`: the configuration, the nodes and their pools, the view of the
//! cluster, the prepared-statement cache, the counters), with the accessors that only read
//! that state. The request path, preparing, connecting and the rest add their methods to
//! `Session` from their own files, which import it from here.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use super::config::SessionConfig;
use super::latency::{Latency, LatencyRecorder, Started};
use super::load_balancing::LoadBalancingPolicy;
use super::prepared::PreparedStatement;
use super::stats::{Counters, SessionStats};
use super::view::{ClusterView, Node, NodeStatus};
use crate::connection::ConnectionStats;
use crate::control::Control;
use crate::error::Error;
use crate::pool::ConnectFn;
use crate::result::QueryResult;
use crate::routing::partition_key::RoutingScratch;
use crate::routing::tablets::SharedTablets;
use crate::routing::topology::TopologySnapshot;

/// A session's state, shared by its clones on the shard.
pub(super) struct Inner {
    pub(super) config: SessionConfig,
    /// The contact point that answered.
    pub(super) contact: SocketAddr,
    pub(super) connect: ConnectFn,
    pub(super) policy: Rc<dyn LoadBalancingPolicy>,
    /// Every node this shard connects to, by address (pools survive topology changes).
    pub(super) nodes: RefCell<HashMap<SocketAddr, Rc<Node>>>,
    pub(super) view: RefCell<Rc<ClusterView>>,
    pub(super) snapshot: RefCell<Arc<TopologySnapshot>>,
    /// The control connection, if this session runs it.
    pub(super) control: RefCell<Option<Rc<Control>>>,
    pub(super) keyspace: Rc<RefCell<Option<String>>>,
    pub(super) prepared: RefCell<HashMap<(String, Option<String>), PreparedStatement>>,
    pub(super) counters: Counters,
    /// The shard's histogram of request latencies, if the configuration asks for one.
    pub(super) latency: LatencyRecorder,
    /// Traffic of the pools of nodes that left the topology.
    pub(super) retired: Cell<ConnectionStats>,
    pub(super) closed: RefCell<Option<String>>,
    pub(super) scratch: RefCell<RoutingScratch>,
    /// Randomness of the retry backoff's jitter.
    pub(super) retry_jitter: crate::pool::Jitter,
    /// The tablets this shard learned, by keyspace and table (ScyllaDB): each table's
    /// shared by the shard's statements of it.
    pub(super) tablets: RefCell<HashMap<(String, String), SharedTablets>>,
}

/// A shard's handle to the database. `!Send`: it lives on its shard.
#[derive(Clone)]
pub struct Session {
    pub(super) inner: Rc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("contact", &self.inner.contact)
            .field("nodes", &self.inner.view.borrow().len())
            .field("keyspace", &self.inner.keyspace.borrow())
            .finish()
    }
}

impl Session {
    /// The contact point this session first talked to.
    pub fn node(&self) -> SocketAddr {
        self.inner.contact
    }

    /// The current view of the cluster (nodes, ring, replicas).
    pub fn view(&self) -> Rc<ClusterView> {
        self.inner.view.borrow().clone()
    }

    /// The topology snapshot the view was built from.
    pub fn topology(&self) -> Arc<TopologySnapshot> {
        self.inner.snapshot.borrow().clone()
    }

    /// Every node with its state and this shard's counters.
    pub fn nodes(&self) -> Vec<NodeStatus> {
        self.view().status()
    }

    /// The protocol version this shard's connections speak: that of an open connection to
    /// the contact node, or else to any node; `None` while none is open. Every connection
    /// of a session negotiates alike (the newest version its node offers, or the one
    /// configured), so in a cluster of one version this is the session's.
    pub fn protocol_version(&self) -> Option<doppio_proto::ProtocolVersion> {
        let nodes = self.inner.nodes.borrow();
        nodes
            .get(&self.inner.contact)
            .into_iter()
            .chain(nodes.values())
            .find_map(|n| n.pool.pick())
            .map(|c| c.version())
    }

    /// The node object (pool and counters) of `addr`, if this shard connects to it.
    pub fn node_at(&self, addr: SocketAddr) -> Option<Rc<Node>> {
        self.inner.nodes.borrow().get(&addr).cloned()
    }

    /// The node the control connection talks to now, if this session runs it.
    pub fn control_node(&self) -> Option<SocketAddr> {
        self.inner.control.borrow().as_ref().and_then(|c| c.node())
    }

    /// Closes the session: the control connection and every pool; requests then fail with
    /// [`Error::Closed`] and `reason`, those in flight with a broken connection naming it.
    pub fn close(&self, reason: &str) {
        self.inner
            .closed
            .borrow_mut()
            .get_or_insert_with(|| reason.to_owned());
        if let Some(c) = self.inner.control.borrow_mut().take() {
            c.stop();
        }
        for node in self.inner.nodes.borrow().values() {
            node.pool.close(reason);
        }
    }

    /// This session's counters: requests, retries and errors by kind, plus the traffic of
    /// its connections (see [`SessionStats`]).
    pub fn stats(&self) -> SessionStats {
        let mut traffic = self.inner.retired.get();
        for node in self.inner.nodes.borrow().values() {
            traffic.add(&node.pool.connection_stats());
        }
        self.inner.counters.snapshot(traffic)
    }

    /// The latencies of this session's requests so far (`None` if its configuration records
    /// none: [`SessionConfig::latency`]): a copy of the shard's histogram. Each request is
    /// one value, from the first poll of its future to its result, retries and failures
    /// included; each page of a paged read is one request.
    pub fn latency(&self) -> Option<Latency> {
        self.inner.latency.snapshot()
    }

    /// A request starts (see [`Session::latency`]): the clock, read if latency is recorded.
    #[inline]
    pub(super) fn latency_start(&self) -> Started {
        self.inner.latency.start()
    }

    /// The request started at `started` ended: its latency recorded, if it is.
    #[inline]
    pub(super) fn latency_end(&self, started: Started) {
        self.inner.latency.record(started);
    }

    /// Counts one request that ended with `result` after `retried` retries.
    #[inline]
    pub(super) fn count(&self, result: &Result<QueryResult, Error>, retried: u32) {
        self.inner.counters.record(result.as_ref().err(), retried);
    }
}
