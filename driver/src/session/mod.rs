//! The session API a shard's user code calls: query, prepare, execute, batch, use_keyspace.
//!
//! A [`Session`] belongs to one shard (`!Send`, cheap to clone). It keeps the shard's view of
//! the cluster ([`view::ClusterView`]: every node with its connection pool and counters, the
//! token ring and each keyspace's replicas), its prepared-statement cache (keyed by CQL text
//! and keyspace) and its counters. A standalone session runs its own control connection
//! ([`crate::control`]); in a [`crate::Cluster`] one shard runs it for all.
//!
//! Per request: the load-balancing policy picks a node (for a prepared statement whose
//! partition key is bound, one of its replicas: the token is computed from the values), the
//! statement is encoded straight into one of that node's connections' write buffer
//! (prepared statements from their pre-encoded [`ExecuteTemplate`]), the caller parks on its
//! stream id, and the answer comes back as a zero-copy frame body. No task, channel or lock.
//! Only on failure does the session ask the policy for the rest of the plan and the retry
//! policy whether and where to try again.
//!
//! Invariants:
//! - A request routed with a view keeps that view (an `Rc`) until it is answered.
//! - A closed session fails every request with [`Error::Closed`] and its reason.
//! - After a statement that changed the schema, the session waits (bounded) until every
//!   live node reports the same schema version, so the next statement sees the change.

pub mod paging;
pub mod policy;
pub mod result;
pub mod retry;
mod route;
mod run;
pub mod stats;
pub mod view;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use doppio_proto::consistency::Consistency;
use doppio_proto::frame::Flags;
use doppio_proto::metadata::{ColumnSpec, PreparedMetadata, RowsMetadata};
use doppio_proto::request::{
    Batch, BatchStatement, BatchType, Execute, ExecuteTemplate, Prepare, Query, QueryParameters,
    RequestBody,
};
use doppio_proto::response::{ErrorCode, Response, ResponseFrame, ResultBody};
use doppio_proto::values::QueryValues;

use crate::connection::{Connection, ConnectionConfig, ConnectionStats};
use crate::control::{self, Control, ControlConfig, ControlEvent, Publisher};
use crate::error::Error;
use crate::handshake::{handshake, HandshakeConfig};
use crate::pool::{Backoff, ConnectFn, NodePool};
use crate::routing::murmur3::Token;
use crate::routing::ring::ReplicaMap;
use crate::routing::topology::TopologySnapshot;
pub use paging::{PageStream, Statement};
pub use policy::{
    DefaultPolicy, DefaultPolicyConfig, LoadBalancingPolicy, PolicyFactory, RoutingInfo,
};
pub use result::QueryResult;
pub use retry::{DefaultRetryPolicy, NoRetry, RetryDecision, RetryPolicy};
use route::RoutingScratch;
use run::Route;
pub use stats::{ErrorCounts, SessionStats};
pub use view::{ClusterView, Distance, Node, NodeCounters, NodeStatus};

/// Speculative execution: an idempotent request still unanswered after `delay` is also sent
/// to the next node of its plan (up to `max` extra nodes, `delay` apart); the first answer
/// wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpeculativeExecution {
    /// How long to wait for an answer before asking the next node.
    pub delay: Duration,
    /// Extra nodes asked at most.
    pub max: usize,
}

/// How a session connects and what its statements default to.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The contact point: the first node asked for the cluster's topology.
    pub node: SocketAddr,
    /// Further contact points, tried in order if `node` does not answer.
    pub contact_points: Vec<SocketAddr>,
    /// Connections to each node (per shard).
    pub connections: usize,
    /// Connection tunables (stream ids, timeouts, buffers, keepalive).
    pub connection: ConnectionConfig,
    /// Handshake: compression and credentials.
    pub handshake: HandshakeConfig,
    /// Reconnection backoff of the node pools.
    pub backoff: Backoff,
    /// Default consistency.
    pub consistency: Consistency,
    /// Default serial consistency (for conditional statements).
    pub serial_consistency: Option<Consistency>,
    /// Default page size.
    pub page_size: Option<i32>,
    /// How long `connect` waits for the first connection.
    pub connect_timeout: Duration,
    /// Which failed requests are sent again, and where (consulted only on failure).
    pub retry_policy: Arc<dyn RetryPolicy>,
    /// Which node each request goes to (one policy is made per shard).
    pub load_balancing: PolicyFactory,
    /// Speculative execution of idempotent statements (off by default).
    pub speculative: Option<SpeculativeExecution>,
    /// How long a schema change waits for every live node to agree on the schema
    /// (`Duration::ZERO`: does not wait).
    pub schema_agreement_timeout: Duration,
    /// The control connection's tunables.
    pub control: ControlConfig,
}

impl SessionConfig {
    /// Defaults for contact point `node`: one connection per node, LOCAL_QUORUM, pages of
    /// 5000 rows, token-aware routing in the contact point's data center.
    pub fn new(node: SocketAddr) -> Self {
        Self {
            node,
            contact_points: Vec::new(),
            connections: 1,
            connection: ConnectionConfig::default(),
            handshake: HandshakeConfig::default(),
            backoff: Backoff::default(),
            consistency: Consistency::LocalQuorum,
            serial_consistency: None,
            page_size: Some(5000),
            connect_timeout: Duration::from_secs(10),
            retry_policy: Arc::new(DefaultRetryPolicy::default()),
            load_balancing: PolicyFactory::default(),
            speculative: None,
            schema_agreement_timeout: Duration::from_secs(10),
            control: ControlConfig::default(),
        }
    }

    fn contact_points(&self) -> Vec<SocketAddr> {
        let mut out = vec![self.node];
        for c in &self.contact_points {
            if !out.contains(c) {
                out.push(*c);
            }
        }
        out
    }
}

/// Options of one statement; `None` fields take the session's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatementOptions<'a> {
    /// Consistency.
    pub consistency: Option<Consistency>,
    /// Serial consistency.
    pub serial_consistency: Option<Consistency>,
    /// Default timestamp, microseconds since the epoch.
    pub timestamp: Option<i64>,
    /// Page size (`Some(0)`: no paging).
    pub page_size: Option<i32>,
    /// Continue from this paging state.
    pub paging_state: Option<&'a [u8]>,
    /// Ask the node to trace the request (the result carries the tracing id).
    pub tracing: bool,
    /// Whether the statement may be applied twice safely (for retry policies and
    /// speculative execution).
    pub idempotent: bool,
    /// Request timeout.
    pub timeout: Option<Duration>,
}

/// A prepared statement: its id, metadata and pre-encoded EXECUTE. Cheap to clone.
#[derive(Debug, Clone)]
pub struct PreparedStatement {
    inner: Rc<PreparedInner>,
}

#[derive(Debug)]
struct PreparedInner {
    cql: String,
    keyspace: Option<String>,
    id: RefCell<Bytes>,
    metadata: PreparedMetadata,
    /// The columns an execution returns, from the latest PREPARE. Executions ask the node
    /// to skip sending them (`skip_metadata`) and read rows by these instead, shared with
    /// each result by an `Rc` clone: no allocation, no atomic per request.
    result_columns: RefCell<Rc<[ColumnSpec]>>,
    /// EXECUTE with the session's default options; rebuilt on re-prepare. An `Rc` so that a
    /// request can hold it across awaits without a `RefCell` borrow or a copy.
    template: RefCell<Rc<ExecuteTemplate>>,
    /// The replica map of the statement's keyspace, for the view version it was looked up
    /// in (one `HashMap` lookup per topology change, not per request).
    replicas: RefCell<(u64, Option<Rc<ReplicaMap>>)>,
}

impl PreparedStatement {
    /// The CQL text.
    pub fn cql(&self) -> &str {
        &self.inner.cql
    }

    /// The prepared id.
    pub fn id(&self) -> Bytes {
        self.inner.id.borrow().clone()
    }

    /// The keyspace the statement was prepared in (the session keyspace then).
    pub fn keyspace(&self) -> Option<&str> {
        self.inner.keyspace.as_deref()
    }

    /// Bind markers and partition-key indexes.
    pub fn metadata(&self) -> &PreparedMetadata {
        &self.inner.metadata
    }

    /// The columns an execution returns (as of the latest PREPARE).
    pub fn result_columns(&self) -> Rc<[ColumnSpec]> {
        self.inner.result_columns.borrow().clone()
    }

    /// Whether executions skip the result metadata (statements that return rows).
    fn skips_metadata(&self) -> bool {
        !self.inner.result_columns.borrow().is_empty()
    }

    /// The keyspace of the partition key's table (from the bind markers).
    fn routing_keyspace(&self) -> Option<&str> {
        let m = &self.inner.metadata;
        let first = *m.pk_indexes.first()?;
        Some(&m.columns.get(usize::from(first))?.keyspace)
    }
}

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
    stats: Cell<SessionStats>,
    /// Traffic of the pools of nodes that left the topology.
    retired: Cell<ConnectionStats>,
    closed: RefCell<Option<String>>,
    scratch: RefCell<RoutingScratch>,
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

/// The connect function of a session's pools: TCP, handshake, then `USE` of the session
/// keyspace. A handshake the node refuses (credentials, protocol version) is also kept in
/// `refused`, so that `connect` can fail at once with it instead of retrying until its
/// timeout.
fn connect_fn(
    config: &SessionConfig,
    keyspace: Rc<RefCell<Option<String>>>,
    refused: Rc<RefCell<Option<Error>>>,
) -> ConnectFn {
    let conn_config = config.connection.clone();
    let hs = config.handshake.clone();
    Rc::new(move |addr| {
        let conn_config = conn_config.clone();
        let hs = hs.clone();
        let keyspace = keyspace.borrow().clone();
        let refused = refused.clone();
        Box::pin(async move {
            let conn = Connection::connect(addr, conn_config).await?;
            let fail = |e: Error| crate::connection::ConnectionError::Closed {
                addr,
                reason: e.to_string(),
            };
            if let Err(e) = handshake(&conn, &hs).await {
                let refusal = match &e {
                    Error::Authentication { .. } | Error::Handshake { .. } => true,
                    // A node that does not speak v4 says so with a PROTOCOL_ERROR.
                    Error::Server { error, .. } => error.code == ErrorCode::ProtocolError,
                    _ => false,
                };
                if refusal {
                    *refused.borrow_mut() = Some(e.clone());
                }
                conn.close("handshake failed");
                return Err(fail(e));
            }
            if let Some(ks) = keyspace {
                use_keyspace_on(&conn, &ks).await.map_err(fail)?;
            }
            Ok(conn)
        })
    })
}

/// How a session learns of topology changes.
pub(crate) enum ControlRole {
    /// It runs the control connection and hands what it learns to `publish` (which must
    /// reach this session too).
    Run(Publisher),
    /// Another shard runs it; this session starts from `snapshot` and is told of changes.
    Follow(Arc<TopologySnapshot>),
}

impl Session {
    /// Connects a standalone session: a control connection to the first contact point that
    /// answers reads the cluster's topology, then connections open to every node the
    /// load-balancing policy does not ignore. Returns once one of them is ready.
    pub async fn connect(config: SessionConfig) -> Result<Self, Error> {
        let me: Rc<RefCell<std::rc::Weak<Inner>>> = Rc::new(RefCell::new(std::rc::Weak::new()));
        let publish: Publisher = {
            let me = me.clone();
            Rc::new(move |event| {
                if let Some(inner) = me.borrow().upgrade() {
                    Session { inner }.apply(&event);
                }
            })
        };
        let session = Self::connect_as(config, ControlRole::Run(publish)).await?;
        *me.borrow_mut() = Rc::downgrade(&session.inner);
        Ok(session)
    }

    /// Connects a session in the given control role (see [`ControlRole`]).
    pub(crate) async fn connect_as(
        config: SessionConfig,
        role: ControlRole,
    ) -> Result<Self, Error> {
        let keyspace: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
        let refused: Rc<RefCell<Option<Error>>> = Rc::new(RefCell::new(None));
        let connect = connect_fn(&config, keyspace.clone(), refused.clone());
        let (control, snapshot) = match role {
            ControlRole::Run(publish) => {
                let connected = Control::connect(
                    config.contact_points(),
                    connect.clone(),
                    config.control,
                    publish,
                )
                .await;
                match connected {
                    Ok((control, snapshot)) => (Some(control), snapshot),
                    Err(e) => {
                        if let Some(refusal) = refused.borrow_mut().take() {
                            return Err(refusal);
                        }
                        return Err(match e {
                            Error::ConnectionBroken(c) => Error::NoConnection(c.to_string()),
                            other => other,
                        });
                    }
                }
            }
            ControlRole::Follow(snapshot) => (None, snapshot),
        };
        let contact = snapshot.source.unwrap_or(config.node);
        let policy = config.load_balancing.make();
        let session = Self {
            inner: Rc::new(Inner {
                config,
                contact,
                connect,
                policy,
                nodes: RefCell::new(HashMap::new()),
                view: RefCell::new(Rc::new(ClusterView::default())),
                snapshot: RefCell::new(Arc::new(TopologySnapshot::default())),
                control: RefCell::new(control.clone()),
                keyspace,
                prepared: RefCell::new(HashMap::new()),
                stats: Cell::new(SessionStats::default()),
                retired: Cell::new(ConnectionStats::default()),
                closed: RefCell::new(None),
                scratch: RefCell::new(RoutingScratch::default()),
            }),
        };
        session.install(snapshot);
        let deadline = std::time::Instant::now() + session.inner.config.connect_timeout;
        loop {
            if session.inner.nodes.borrow().values().any(|n| n.is_up()) {
                break;
            }
            if let Some(e) = refused.borrow_mut().take() {
                session.close("the node refused the handshake");
                return Err(e);
            }
            if std::time::Instant::now() >= deadline {
                let why = session.why_no_node();
                session.close("connect timed out");
                return Err(Error::NoConnection(why));
            }
            // Control path (once per session): a short sleep keeps this loop simple.
            crate::rt::sleep(Duration::from_millis(2)).await;
        }
        if let Some(control) = control {
            crate::rt::spawn_local(control.run()).detach();
        }
        Ok(session)
    }

    /// Applies what the control connection learned.
    pub(crate) fn apply(&self, event: &ControlEvent) {
        if self.inner.closed.borrow().is_some() {
            return;
        }
        match event {
            ControlEvent::Topology(snapshot) => {
                if snapshot.version > self.inner.snapshot.borrow().version {
                    self.install(snapshot.clone());
                }
            }
            ControlEvent::NodeUp(addr) => {
                if let Some(node) = self.inner.nodes.borrow().get(addr) {
                    node.pool.reconnect_now();
                }
            }
        }
    }

    /// Builds the view of `snapshot`: pools for new nodes, closing those of nodes gone.
    fn install(&self, snapshot: Arc<TopologySnapshot>) {
        let inner = &self.inner;
        let distances = inner.policy.distances(&snapshot);
        let mut nodes = inner.nodes.borrow_mut();
        let view = ClusterView::build(&snapshot, distances, |info| {
            nodes
                .entry(info.addr)
                .or_insert_with(|| {
                    let pool = NodePool::start(
                        info.addr,
                        inner.config.connections,
                        inner.connect.clone(),
                        inner.config.backoff,
                    );
                    Rc::new(Node::new(info.addr, pool))
                })
                .clone()
        });
        let kept: std::collections::HashSet<SocketAddr> = (0..view.len())
            .filter_map(|i| view.node(i as u16).map(|n| n.addr()))
            .collect();
        let gone: Vec<SocketAddr> = nodes
            .keys()
            .filter(|a| !kept.contains(a))
            .copied()
            .collect();
        for addr in gone {
            if let Some(node) = nodes.remove(&addr) {
                let mut retired = inner.retired.get();
                stats::add_connection_stats(&mut retired, &node.pool.connection_stats());
                inner.retired.set(retired);
                node.pool.close("the node left the cluster's topology");
            }
        }
        drop(nodes);
        *inner.view.borrow_mut() = Rc::new(view);
        *inner.snapshot.borrow_mut() = snapshot;
    }

    /// Why no node can take a request (for errors).
    fn why_no_node(&self) -> String {
        let nodes = self.inner.nodes.borrow();
        if nodes.is_empty() {
            return format!(
                "the cluster at {} lists no node this session may use",
                self.inner.contact
            );
        }
        let mut parts: Vec<String> = nodes
            .values()
            .map(|n| match n.pool.last_error() {
                Some(e) => format!("{} is down: {e}", n.addr()),
                None => format!("{} has no open connection", n.addr()),
            })
            .collect();
        parts.sort();
        parts.join("; ")
    }

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
        let mut s = self.inner.stats.get();
        let mut traffic = self.inner.retired.get();
        for node in self.inner.nodes.borrow().values() {
            stats::add_connection_stats(&mut traffic, &node.pool.connection_stats());
        }
        s.connections = traffic;
        s
    }

    fn count(&self, result: &Result<QueryResult, Error>, retried: u32) {
        let mut s = self.inner.stats.get();
        s.requests += 1;
        s.retries += u64::from(retried);
        if let Err(e) = result {
            s.errors.count(e);
        }
        self.inner.stats.set(s);
    }

    /// The keyspace set by [`Session::use_keyspace`].
    pub fn keyspace(&self) -> Option<String> {
        self.inner.keyspace.borrow().clone()
    }

    fn params<'a>(&self, o: &StatementOptions<'a>) -> QueryParameters<'a> {
        let c = &self.inner.config;
        QueryParameters {
            consistency: o.consistency.unwrap_or(c.consistency),
            skip_metadata: false,
            page_size: match o.page_size.or(c.page_size) {
                Some(p) if p > 0 => Some(p),
                _ => None,
            },
            paging_state: o.paging_state,
            serial_consistency: o.serial_consistency.or(c.serial_consistency),
            timestamp: o.timestamp,
        }
    }

    async fn send(
        &self,
        conn: &Connection,
        tracing: bool,
        request: &impl RequestBody,
        timeout: Option<Duration>,
    ) -> Result<ResponseFrame, Error> {
        let flags = if tracing { Flags::TRACING } else { Flags::NONE };
        conn.send(flags, request, timeout)
            .await
            .map_err(|e| Error::from_request(conn.addr(), e))
    }

    /// A route without a token (unprepared statements, batches, preparation).
    fn route_any(&self) -> Route {
        Route {
            view: self.view(),
            token: None,
            map: None,
        }
    }

    /// The route of a prepared statement with `values`: its replicas when the partition
    /// key is bound and the keyspace's replication is known.
    fn route_prepared(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
    ) -> Route {
        let view = self.view();
        let map = {
            let mut cached = prepared.inner.replicas.borrow_mut();
            if cached.0 != view.version() || view.version() == 0 {
                let map = prepared
                    .routing_keyspace()
                    .and_then(|ks| view.replica_map(ks).cloned());
                *cached = (view.version(), map);
            }
            cached.1.clone()
        };
        let token = map.as_ref().and_then(|_| {
            let m = &prepared.inner.metadata;
            self.inner
                .scratch
                .borrow_mut()
                .token(values, &m.columns, &m.pk_indexes)
        });
        Route { view, token, map }
    }

    /// The token of `prepared`'s partition key bound in `values`, if it is bound.
    pub fn token_of(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
    ) -> Option<Token> {
        let m = &prepared.inner.metadata;
        self.inner
            .scratch
            .borrow_mut()
            .token(values, &m.columns, &m.pk_indexes)
    }

    /// The replicas (addresses, in placement order) of `prepared` with `values`, as this
    /// shard would route it.
    pub fn replicas_of(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
    ) -> Vec<SocketAddr> {
        let route = self.route_prepared(prepared, values);
        match (&route.map, route.token) {
            (Some(map), Some(token)) => route
                .view
                .replicas(map, token)
                .iter()
                .filter_map(|&i| route.view.info(i).map(|n| n.addr))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Runs an unprepared statement with the session's defaults.
    pub async fn query(
        &self,
        cql: &str,
        values: &(impl QueryValues + ?Sized),
    ) -> Result<QueryResult, Error> {
        self.query_with(cql, values, &StatementOptions::default())
            .await
    }

    /// Runs an unprepared statement with per-statement options.
    pub async fn query_with(
        &self,
        cql: &str,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        self.run(self.route_any(), options.idempotent, |conn| async move {
            self.query_once(&conn, cql, values, options).await
        })
        .await
    }

    async fn query_once(
        &self,
        conn: &Connection,
        cql: &str,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let q = Query {
            query: cql,
            params: self.params(options),
            values,
        };
        let frame = self
            .send(conn, options.tracing, &q, options.timeout)
            .await?;
        result_of(conn.addr(), frame, "QUERY")
    }

    /// Prepares a statement, or returns it from this shard's cache (keyed by CQL text and
    /// the session keyspace). It is prepared on one node, then on every other node this
    /// shard is connected to (so that executions routed there need no re-prepare; a node
    /// that missed it is healed on its first UNPREPARED).
    pub async fn prepare(&self, cql: &str) -> Result<PreparedStatement, Error> {
        let key = (cql.to_owned(), self.keyspace());
        if let Some(p) = self.inner.prepared.borrow().get(&key) {
            return Ok(p.clone());
        }
        let first: RefCell<Option<SocketAddr>> = RefCell::new(None);
        let (id, metadata, result_metadata) = {
            let prepared = self
                .run(self.route_any(), true, |conn| {
                    let first = &first;
                    async move {
                        *first.borrow_mut() = Some(conn.addr());
                        self.prepare_on(&conn, cql).await.map(|p| QueryResult {
                            node: conn.addr(),
                            body: ResultBody::Prepared(Box::new(p)),
                            warnings: Vec::new(),
                            tracing_id: None,
                            columns: None,
                        })
                    }
                })
                .await?;
            match prepared.body {
                ResultBody::Prepared(p) => (p.id, p.metadata, p.result_metadata),
                _ => {
                    return Err(Error::UnexpectedResponse {
                        node: prepared.node,
                        request: "PREPARE",
                        got: "a RESULT that is not Prepared",
                    })
                }
            }
        };
        // The other nodes: best effort (control path, once per statement and shard).
        let first = first.borrow().to_owned();
        let others: Vec<Connection> = self
            .inner
            .nodes
            .borrow()
            .values()
            .filter(|n| Some(n.addr()) != first)
            .filter_map(|n| n.pool.pick())
            .collect();
        for conn in others {
            let _ = self.prepare_on(&conn, cql).await;
        }
        let result_columns: Rc<[ColumnSpec]> = result_metadata.columns.into();
        let template = self.template(&id, metadata.columns.len(), !result_columns.is_empty())?;
        let prepared = PreparedStatement {
            inner: Rc::new(PreparedInner {
                cql: cql.to_owned(),
                keyspace: key.1.clone(),
                id: RefCell::new(id),
                metadata,
                result_columns: RefCell::new(result_columns),
                template: RefCell::new(Rc::new(template)),
                replicas: RefCell::new((0, None)),
            }),
        };
        self.inner
            .prepared
            .borrow_mut()
            .insert(key, prepared.clone());
        Ok(prepared)
    }

    fn template(
        &self,
        id: &[u8],
        markers: usize,
        skip_metadata: bool,
    ) -> Result<ExecuteTemplate, Error> {
        let params = QueryParameters {
            skip_metadata,
            ..self.params(&StatementOptions::default())
        };
        ExecuteTemplate::new(id, markers, &params, Flags::NONE).map_err(Error::Serialization)
    }

    /// PREPARE on one connection.
    async fn prepare_on(
        &self,
        conn: &Connection,
        cql: &str,
    ) -> Result<doppio_proto::response::Prepared, Error> {
        let frame = self
            .send(conn, false, &Prepare { query: cql }, None)
            .await?;
        match result_of(conn.addr(), frame, "PREPARE")?.body {
            ResultBody::Prepared(p) => Ok(*p),
            _ => Err(Error::UnexpectedResponse {
                node: conn.addr(),
                request: "PREPARE",
                got: "a RESULT that is not Prepared",
            }),
        }
    }

    /// Executes a prepared statement with the session's defaults.
    pub async fn execute(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
    ) -> Result<QueryResult, Error> {
        self.execute_with(prepared, values, &StatementOptions::default())
            .await
    }

    /// Executes a prepared statement with per-statement options, on one of its replicas
    /// when its partition key is bound. If the node has forgotten the statement
    /// (UNPREPARED), it is prepared there again and executed once more.
    pub async fn execute_with(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let route = self.route_prepared(prepared, values);
        self.run(route, options.idempotent, |conn| async move {
            self.execute_healing(&conn, prepared, values, options).await
        })
        .await
    }

    /// The pages of an unprepared statement's result, each fetched while the caller reads
    /// the one before (see [`PageStream`]). The page size is the statement's
    /// or the session's; `options.paging_state` resumes an earlier stream.
    pub fn query_pages<'a, V: QueryValues + ?Sized>(
        &self,
        cql: &'a str,
        values: &'a V,
        options: StatementOptions<'a>,
    ) -> PageStream<'a, V> {
        PageStream::new(self.clone(), Statement::Query(cql), values, options)
    }

    /// The pages of a prepared statement's result, each fetched while the caller reads the
    /// one before (see [`PageStream`]).
    pub fn execute_pages<'a, V: QueryValues + ?Sized>(
        &self,
        prepared: &'a PreparedStatement,
        values: &'a V,
        options: StatementOptions<'a>,
    ) -> PageStream<'a, V> {
        PageStream::new(self.clone(), Statement::Prepared(prepared), values, options)
    }

    /// One execution on `conn`, healed once if the node has forgotten the statement
    /// (UNPREPARED) or its result no longer has the prepared number of columns (the table
    /// changed since: the result columns we read rows by are stale).
    async fn execute_healing(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        match self.execute_once(conn, prepared, values, options).await {
            Err(e) if e.server_code() == Some(ErrorCode::Unprepared) => {}
            Ok(r) if r.stale_columns() => {}
            other => return other,
        }
        // The healing path is rare: boxed, so that it does not grow every request's future.
        Box::pin(async {
            self.reprepare(conn, prepared).await?;
            let result = self.execute_once(conn, prepared, values, options).await?;
            if result.stale_columns() {
                return Err(Error::Protocol {
                    node: result.node,
                    detail: format!(
                        "the result of `{}` does not match its prepared columns even after \
                         preparing it again",
                        prepared.cql()
                    ),
                });
            }
            Ok(result)
        })
        .await
    }

    /// Prepares `prepared` again on `conn`'s node and takes its current id and result
    /// columns.
    async fn reprepare(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
    ) -> Result<(), Error> {
        let p = self.prepare_on(conn, &prepared.inner.cql).await?;
        let result_columns: Rc<[ColumnSpec]> = p.result_metadata.columns.into();
        let template = self.template(
            &p.id,
            prepared.inner.metadata.columns.len(),
            !result_columns.is_empty(),
        )?;
        *prepared.inner.id.borrow_mut() = p.id;
        *prepared.inner.result_columns.borrow_mut() = result_columns;
        *prepared.inner.template.borrow_mut() = Rc::new(template);
        Ok(())
    }

    async fn execute_once(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let node = conn.addr();
        let columns = Some(prepared.inner.metadata.columns.as_slice());
        let defaults = *options == StatementOptions::default()
            || *options
                == (StatementOptions {
                    idempotent: true,
                    ..StatementOptions::default()
                });
        let frame = if defaults && conn.compression().is_none() {
            // The hot path: two memcpys from the template plus the values.
            let template = Rc::clone(&prepared.inner.template.borrow());
            let frame = conn
                .request(None, |buf, stream| {
                    template.encode(buf, stream, values, columns)
                })
                .await
                .map_err(|e| Error::from_request(node, e))?;
            ResponseFrame::decode(&frame, conn.compression(), conn.config().max_frame_body)
                .map_err(|e| Error::Protocol {
                    node,
                    detail: e.to_string(),
                })?
        } else {
            let id = prepared.id();
            let e = Execute {
                id: &id,
                params: QueryParameters {
                    skip_metadata: prepared.skips_metadata(),
                    ..self.params(options)
                },
                values,
                columns,
            };
            // Non-default options: a rarer path, boxed to keep the hot future small.
            Box::pin(self.send(conn, options.tracing, &e, options.timeout)).await?
        };
        let mut result = result_of(node, frame, "EXECUTE")?;
        // Rows sent without metadata are read by the prepared result columns.
        if let ResultBody::Rows(rows) = &result.body {
            if rows.metadata.no_metadata {
                result.columns = Some(prepared.result_columns());
            }
        }
        Ok(result)
    }

    /// Runs a BATCH of prepared and unprepared statements.
    pub async fn batch(
        &self,
        kind: BatchType,
        statements: &[BatchStatement<'_>],
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        self.run(self.route_any(), options.idempotent, |conn| async move {
            self.batch_once(&conn, kind, statements, options).await
        })
        .await
    }

    async fn batch_once(
        &self,
        conn: &Connection,
        kind: BatchType,
        statements: &[BatchStatement<'_>],
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let p = self.params(options);
        let b = Batch {
            kind,
            statements,
            consistency: p.consistency,
            serial_consistency: p.serial_consistency,
            timestamp: p.timestamp,
        };
        let frame = self
            .send(conn, options.tracing, &b, options.timeout)
            .await?;
        result_of(conn.addr(), frame, "BATCH")
    }

    /// Sets the session keyspace on every open connection of every node, and on
    /// connections opened later.
    pub async fn use_keyspace(&self, keyspace: &str) -> Result<(), Error> {
        // One node first: an unknown keyspace is an error before anything changes.
        self.run(self.route_any(), true, |conn| async move {
            use_keyspace_on(&conn, keyspace).await?;
            Ok(QueryResult {
                node: conn.addr(),
                body: ResultBody::Void,
                warnings: Vec::new(),
                tracing_id: None,
                columns: None,
            })
        })
        .await?;
        *self.inner.keyspace.borrow_mut() = Some(keyspace.to_owned());
        // Every open connection (control path, not per request).
        let conns: Vec<Connection> = self
            .inner
            .nodes
            .borrow()
            .values()
            .flat_map(|n| n.pool.open_connections())
            .collect();
        for conn in conns {
            use_keyspace_on(&conn, keyspace).await?;
        }
        Ok(())
    }

    /// After a schema change answered by `node`: wait until the live nodes agree on the
    /// schema, and re-read a changed keyspace's replication so this shard routes by it at
    /// once (other shards learn it from the control connection's event).
    async fn after_schema_change(&self, result: &QueryResult) {
        let Some(conn) = self.node_at(result.node).and_then(|n| n.pool.pick()) else {
            return;
        };
        let timeout = self.inner.config.schema_agreement_timeout;
        if !timeout.is_zero() {
            let _ = self.await_schema_agreement(&conn, timeout).await;
        }
        if control::keyspace_change(result).is_some() {
            if let Ok(keyspaces) = control::fetch_keyspaces(&conn).await {
                let current = self.topology();
                if current.keyspaces != keyspaces {
                    self.install(Arc::new(TopologySnapshot {
                        keyspaces,
                        ..(*current).clone()
                    }));
                }
            }
        }
    }

    /// Polls `conn`'s node for the schema versions of itself and its live peers until they
    /// are all the same (true), or `timeout` passes (false).
    pub async fn await_schema_agreement(
        &self,
        conn: &Connection,
        timeout: Duration,
    ) -> Result<bool, Error> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self.schema_agrees(conn).await? {
                return Ok(true);
            }
            if std::time::Instant::now() >= deadline {
                return Ok(false);
            }
            crate::rt::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn schema_agrees(&self, conn: &Connection) -> Result<bool, Error> {
        let local = control::query(
            conn,
            "SELECT schema_version FROM system.local WHERE key = 'local'",
        )
        .await?;
        let mut versions: Vec<[u8; 16]> = Vec::new();
        let read = |r: &QueryResult, out: &mut Vec<[u8; 16]>, live: &dyn Fn(&Row<'_>) -> bool| {
            if let Some(rows) = r.rows() {
                let i = rows
                    .columns()
                    .iter()
                    .position(|c| c.name == "schema_version");
                for row in rows.iter().flatten() {
                    if !live(&row) {
                        continue;
                    }
                    if let Some(Some(v)) = i.map(|i| row.get::<Option<[u8; 16]>>(i).ok().flatten())
                    {
                        out.push(v);
                    }
                }
            }
        };
        read(&local, &mut versions, &|_| true);
        let peers = control::query(
            conn,
            "SELECT peer, rpc_address, schema_version FROM system.peers",
        )
        .await?;
        let view = self.view();
        let live = |row: &Row<'_>| {
            // A peer counts if this shard has a live connection to it (a down node keeps
            // its old version until it comes back).
            let ip = row
                .get::<Option<std::net::IpAddr>>(1)
                .ok()
                .flatten()
                .filter(|ip| !ip.is_unspecified())
                .or_else(|| row.get::<Option<std::net::IpAddr>>(0).ok().flatten());
            ip.is_some_and(|ip| {
                (0..view.len()).any(|i| {
                    view.info(i as u16).is_some_and(|n| n.addr.ip() == ip) && view.is_up(i as u16)
                })
            })
        };
        read(&peers, &mut versions, &live);
        versions.dedup();
        Ok(versions.len() <= 1)
    }
}

use doppio_proto::rows::Row;

async fn use_keyspace_on(conn: &Connection, keyspace: &str) -> Result<(), Error> {
    let node = conn.addr();
    // Quote the name so that case and special characters survive.
    let cql = format!("USE \"{}\"", keyspace.replace('"', "\"\""));
    let q = Query {
        query: &cql,
        params: QueryParameters::default(),
        values: &(),
    };
    let frame = conn
        .send(Flags::NONE, &q, None)
        .await
        .map_err(|e| Error::from_request(node, e))?;
    match frame.response {
        Response::Result(ResultBody::SetKeyspace(_)) => Ok(()),
        Response::Error(error) => Err(Error::Server { node, error }),
        other => Err(Error::UnexpectedResponse {
            node,
            request: "USE",
            got: other.opcode().name(),
        }),
    }
}

/// The RESULT in `frame`, or the ERROR it carries as an [`Error`].
fn result_of(
    node: SocketAddr,
    frame: ResponseFrame,
    request: &'static str,
) -> Result<QueryResult, Error> {
    match frame.response {
        Response::Result(body) => Ok(QueryResult {
            node,
            body,
            warnings: frame.warnings,
            tracing_id: frame.tracing_id,
            columns: None,
        }),
        Response::Error(error) => Err(Error::Server { node, error }),
        other => Err(Error::UnexpectedResponse {
            node,
            request,
            got: other.opcode().name(),
        }),
    }
}

// Keep the unused-import lint quiet for types only some builds name.
#[allow(unused_imports)]
use RowsMetadata as _;
