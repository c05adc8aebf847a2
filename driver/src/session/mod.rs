//! The session API a shard's user code calls: query, prepare, execute, batch, use_keyspace.
//!
//! A [`Session`] belongs to one shard (`!Send`, cheap to clone). It keeps the shard's view of
//! the cluster ([`view::ClusterView`]: every node with its connection pool and counters, the
//! token ring and each keyspace's replicas), its prepared-statement cache and its counters.
//! A standalone session runs its own control connection (the private `control` module); in a
//! [`crate::Cluster`] one shard runs it for all.
//!
//! Its modules, one concern each:
//! - `config`: [`SessionConfig`], [`StatementOptions`], [`SpeculativeExecution`].
//! - `connect`: connecting, the pools' connect function, installing topology snapshots.
//! - `request`: the request path of QUERY, EXECUTE and BATCH, and where each goes.
//! - `execute`: the future of an EXECUTE, its common case (first node answers) as one state
//!   machine and the rest on the general path.
//! - `plan`: running one request along its query plan (retries, speculative execution).
//! - `prepared`: [`PreparedStatement`], the cache, re-preparing.
//! - `keyspace`: `use_keyspace`.
//! - `schema`: waiting for schema agreement after a schema change.
//! - [`paging`]: [`PageStream`], pages fetched one ahead.
//! - [`load_balancing`] and [`retry`]: the policies (which node; whether to try again).
//! - [`view`]: the shard's view of the cluster; [`stats`]: the session's counters.
//! - `bench` (hidden): the request path's stages one at a time, for the request-path
//!   benchmarks (`driver/benches/request_path.rs`).
//!
//! Per request: the load-balancing policy picks a node (for a prepared statement whose
//! partition key is bound, one of its replicas: the token is computed from the values),
//! the statement is encoded straight into one of that node's connections' write buffer,
//! the caller parks on its stream id, and the answer comes back as a zero-copy frame body.
//! No task, channel or lock. Only on failure does the session ask the policy for the rest
//! of the plan and the retry policy whether and where to try again.
//!
//! Invariants:
//! - A request routed with a view keeps that view (an `Rc`) until it is answered.
//! - A closed session fails every request with [`Error::Closed`] and its reason.
//! - After a statement that changed the schema, the session waits (bounded) until every
//!   live node reports the same schema version, so the next statement sees the change.

#[doc(hidden)]
pub mod bench;
mod config;
mod connect;
mod execute;
mod keyspace;
pub mod load_balancing;
pub mod paging;
mod plan;
mod prepared;
mod request;
pub mod retry;
mod schema;
pub mod stats;
pub mod view;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

pub use config::{SessionConfig, SpeculativeExecution, StatementOptions};
pub(crate) use connect::ControlRole;
pub use load_balancing::{
    DefaultPolicy, DefaultPolicyConfig, LoadBalancingPolicy, PolicyFactory, RoutingInfo,
};
pub use paging::{PageStream, Statement};
pub use prepared::PreparedStatement;
pub use request::{PreparedBatchEntries, PreparedBatchEntry};
pub use retry::{DefaultRetryPolicy, NoRetry, RetryDecision, RetryPolicy};
pub use stats::{ErrorCounts, SessionStats};
pub use view::{ClusterView, Distance, Node, NodeCounters, NodeStatus};

use crate::connection::ConnectionStats;
use crate::control::Control;
use crate::error::Error;
use crate::pool::ConnectFn;
use crate::result::QueryResult;
use crate::routing::partition_key::RoutingScratch;
use crate::routing::topology::TopologySnapshot;
use stats::Counters;

/// A session's state, shared by its clones on the shard.
struct Inner {
    config: SessionConfig,
    /// The contact point that answered.
    contact: SocketAddr,
    connect: ConnectFn,
    policy: Rc<dyn LoadBalancingPolicy>,
    /// Every node this shard connects to, by address (pools survive topology changes).
    nodes: RefCell<HashMap<SocketAddr, Rc<Node>>>,
    view: RefCell<Rc<ClusterView>>,
    snapshot: RefCell<Arc<TopologySnapshot>>,
    /// The control connection, if this session runs it.
    control: RefCell<Option<Rc<Control>>>,
    keyspace: Rc<RefCell<Option<String>>>,
    prepared: RefCell<HashMap<(String, Option<String>), PreparedStatement>>,
    counters: Counters,
    /// Traffic of the pools of nodes that left the topology.
    retired: Cell<ConnectionStats>,
    closed: RefCell<Option<String>>,
    scratch: RefCell<RoutingScratch>,
    /// Randomness of the retry backoff's jitter.
    retry_jitter: crate::pool::Jitter,
}

/// A shard's handle to the database. `!Send`: it lives on its shard.
#[derive(Clone)]
pub struct Session {
    inner: Rc<Inner>,
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
            .find_map(|n| n.connection())
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

    /// Counts one request that ended with `result` after `retried` retries.
    fn count(&self, result: &Result<QueryResult, Error>, retried: u32) {
        self.inner.counters.record(result.as_ref().err(), retried);
    }
}
