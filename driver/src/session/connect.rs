//! Connecting a session and keeping its view of the cluster: the connect function of its
//! pools (TCP, handshake, `USE` of the session keyspace), the first topology (read by its
//! own control connection, or handed over by the shard that runs it), and installing every
//! later snapshot (pools for new nodes, closing those of nodes gone).
//!
//! ScyllaDB: a connection aimed at a shard goes to the node's shard-aware port from a
//! source port that the node maps to that shard (`port % nr_shards`), trying the next such
//! port while the kernel says one is in use (a bounded number of times); if the shard-aware
//! port cannot be reached at all, it goes to the plain port, where the node picks the shard.
//!
//! Invariant: a node's pool lives as long as its address is in the topology; a handshake
//! the contact point refuses (credentials, protocol version, TLS on one side only) fails
//! `connect` at once with that error, and so do refusals by every node; another node's
//! refusal alone does not (it may be shutting down: it closes at the first request as a
//! TLS-only port does), and its pool keeps trying.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Duration;

use doppio_proto::response::ErrorCode;

use super::config::SessionConfig;
use super::handle::{Inner, Session};
use super::latency::LatencyRecorder;
use super::stats::Counters;
use super::view::{ClusterView, Node};
use crate::connection::{Connection, ConnectionError, ConnectionStats};
use crate::control::{Control, ControlEvent, Publisher};
use crate::error::{ConnectError, Error};
use crate::handshake::handshake;
use crate::pool::{ConnectFn, NodePool, ShardTarget};
use crate::routing::partition_key::RoutingScratch;
use crate::routing::sharding::SOURCE_PORTS;
use crate::routing::topology::TopologySnapshot;
use crate::system;
use crate::telemetry::event;

/// The handshakes nodes refused for good (credentials, protocol version, TLS), the latest
/// of each node unless it accepted one since: what ends `connect` at once instead of its timeout (control path only;
/// as many entries as nodes, at most).
#[derive(Default)]
struct Refusals {
    by_node: Vec<(SocketAddr, Error)>,
}

impl Refusals {
    fn record(&mut self, addr: SocketAddr, error: Error) {
        match self.by_node.iter_mut().find(|(a, _)| *a == addr) {
            Some(entry) => entry.1 = error,
            None => self.by_node.push((addr, error)),
        }
    }

    /// The node accepted a handshake since: its refusal no longer stands.
    fn forget(&mut self, addr: SocketAddr) {
        self.by_node.retain(|(a, _)| *a != addr);
    }

    fn of(&self, addr: SocketAddr) -> Option<&Error> {
        self.by_node
            .iter()
            .find(|(a, _)| *a == addr)
            .map(|(_, e)| e)
    }

    /// The refusal that ends `connect` once the topology is known: the contact point's, or
    /// the last node's when every one of `nodes` refused.
    fn ending(&self, contact: SocketAddr, nodes: &[SocketAddr]) -> Option<Error> {
        if let Some(e) = self.of(contact) {
            return Some(e.clone());
        }
        let all = !nodes.is_empty() && nodes.iter().all(|&a| self.of(a).is_some());
        all.then(|| self.of(nodes[nodes.len() - 1]).cloned())
            .flatten()
    }

    /// The latest refusal of any node.
    fn latest(&self) -> Option<Error> {
        self.by_node.last().map(|(_, e)| e.clone())
    }
}

/// The connect function of a session's pools: TCP, handshake, then `USE` of the session
/// keyspace. A handshake the node refuses (credentials, protocol version, TLS) is also
/// kept in `refused`, so that `connect` can fail at once with it instead of retrying until
/// its timeout ([`Refusals::ending`] says when).
fn connect_fn(
    config: &SessionConfig,
    keyspace: Rc<RefCell<Option<String>>>,
    refused: Rc<RefCell<Refusals>>,
) -> ConnectFn {
    let conn_config = config.connection.clone();
    let hs = config.handshake.clone();
    Rc::new(move |addr, target| {
        let conn_config = conn_config.clone();
        let hs = hs.clone();
        let keyspace = keyspace.borrow().clone();
        let refused = refused.clone();
        Box::pin(async move {
            let connected = match target {
                Some(t) => connect_to_shard(addr, t, conn_config).await,
                None => Connection::connect(addr, conn_config).await,
            };
            let conn = match connected {
                Ok(conn) => conn,
                Err(e) => {
                    // A TLS failure (certificate refused, TLS on one side only) will not
                    // pass on a retry: fail `connect` at once with it.
                    if matches!(e, ConnectionError::Tls { .. }) {
                        refused
                            .borrow_mut()
                            .record(addr, Error::ConnectionBroken(e.clone()));
                    }
                    return Err(e);
                }
            };
            let fail = |e: Error| ConnectionError::Closed {
                addr,
                // The whole chain: "broke the protocol" alone does not say how.
                reason: crate::error::Report(&e).to_string(),
            };
            if let Err(e) = handshake(&conn, &hs).await {
                let refusal = match &e {
                    Error::Authentication { .. } | Error::Handshake { .. } => true,
                    // A plaintext connection to a TLS-only port fails here.
                    Error::ConnectionBroken(ConnectionError::Tls { .. }) => true,
                    // A node that does not speak v4 says so with a PROTOCOL_ERROR.
                    Error::Server { error, .. } => error.code == ErrorCode::ProtocolError,
                    _ => false,
                };
                if refusal {
                    refused.borrow_mut().record(addr, e.clone());
                }
                conn.close("handshake failed");
                return Err(fail(e));
            }
            refused.borrow_mut().forget(addr);
            if let Some(ks) = keyspace {
                system::use_keyspace(&conn, &ks).await.map_err(fail)?;
            }
            Ok(conn)
        })
    })
}

/// Source ports tried for one connection before giving up on the shard-aware port.
const SOURCE_PORT_TRIES: usize = 64;

/// Opens a TCP connection to node `addr` aimed at ScyllaDB shard `target.shard`: through
/// the shard-aware port from a source port of that shard when the node has one (the next
/// such port while one is in use), else, or when that port cannot be reached, the plain
/// port (the node then picks the shard; if it picks another, the pool serves that shard
/// with the connection while it tries again for the wanted one, `pool::wrong_shard`).
async fn connect_to_shard(
    addr: SocketAddr,
    target: ShardTarget,
    config: crate::connection::ConnectionConfig,
) -> Result<Connection, ConnectionError> {
    if let Some(port) = target.shard_aware_port {
        let aware = SocketAddr::new(addr.ip(), port);
        let span = u32::from(*SOURCE_PORTS.end() - *SOURCE_PORTS.start()) + 1;
        let start = *SOURCE_PORTS.start() + (target.random % u64::from(span)) as u16;
        for source in target
            .sharder
            .source_ports(target.shard, start)
            .take(SOURCE_PORT_TRIES)
        {
            match Connection::connect_via(addr, aware, Some(source), config.clone()).await {
                Ok(conn) => return Ok(conn),
                Err((_, std::io::ErrorKind::AddrInUse | std::io::ErrorKind::AddrNotAvailable)) => {
                    continue
                }
                // Refused, unreachable or timed out: the plain port instead.
                Err(_) => break,
            }
        }
    }
    Connection::connect(addr, config).await
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
    /// Fails with a [`ConnectError`]: refused for good, unreachable, or metadata unreadable.
    pub async fn connect(config: SessionConfig) -> Result<Self, ConnectError> {
        let me: Rc<RefCell<Weak<Inner>>> = Rc::new(RefCell::new(Weak::new()));
        let publish: Publisher = {
            let me = me.clone();
            Rc::new(move |event| {
                if let Some(inner) = me.borrow().upgrade() {
                    Session { inner }.apply(&event);
                }
            })
        };
        event!(info, node = %config.node, "session connecting");
        let session = match Self::connect_as(config, ControlRole::Run(publish)).await {
            Ok(s) => s,
            Err(e) => {
                event!(warn, error = %crate::error::Report(&e), "session connect failed");
                return Err(ConnectError::from_connect(e));
            }
        };
        event!(
            info,
            node = %session.node(),
            nodes = session.view().len(),
            "session connected"
        );
        *me.borrow_mut() = Rc::downgrade(&session.inner);
        Ok(session)
    }

    /// Connects a session in the given control role (see [`ControlRole`]).
    pub(crate) async fn connect_as(
        config: SessionConfig,
        role: ControlRole,
    ) -> Result<Self, Error> {
        let keyspace: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
        let refused: Rc<RefCell<Refusals>> = Rc::default();
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
                        if let Some(refusal) = refused.borrow().latest() {
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
        let latency = LatencyRecorder::new(config.latency);
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
                counters: Counters::default(),
                latency,
                retired: Cell::new(ConnectionStats::default()),
                closed: RefCell::new(None),
                scratch: RefCell::new(RoutingScratch::default()),
                retry_jitter: crate::pool::Jitter::seeded(0x7265_7472_7900),
                tablets: Default::default(),
            }),
        };
        session.install(snapshot);
        let deadline = doppio_rt::now() + session.inner.config.startup_timeout;
        loop {
            if session.inner.nodes.borrow().values().any(|n| n.is_up()) {
                break;
            }
            let nodes: Vec<SocketAddr> = session.inner.nodes.borrow().keys().copied().collect();
            let ending = refused.borrow().ending(contact, &nodes);
            if let Some(e) = ending {
                session.close("the node refused the handshake");
                return Err(e);
            }
            if doppio_rt::now() >= deadline {
                let why = session.why_no_node();
                session.close("connect timed out");
                return Err(Error::NoConnection(why));
            }
            // Control path (once per session): a short sleep keeps this loop simple.
            doppio_rt::sleep(Duration::from_millis(2)).await;
        }
        if let Some(control) = control {
            doppio_rt::spawn_local(control.run()).detach();
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
                event!(info, node = %addr, "node reported up: reconnecting at once");
                if let Some(node) = self.inner.nodes.borrow().get(addr) {
                    node.pool.reconnect_now();
                }
            }
        }
    }

    /// Builds the view of `snapshot`: pools for new nodes, closing those of nodes gone.
    pub(super) fn install(&self, snapshot: Arc<TopologySnapshot>) {
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
                    pool.set_shard_aware_retry(inner.config.shard_aware_retry);
                    Rc::new(Node::new(info.addr, pool))
                })
                .clone()
        });
        let kept: HashSet<SocketAddr> = (0..view.len())
            .filter_map(|i| view.node(i as u16).map(|n| n.addr()))
            .collect();
        let gone: Vec<SocketAddr> = nodes
            .keys()
            .filter(|a| !kept.contains(a))
            .copied()
            .collect();
        event!(
            info,
            version = snapshot.version,
            nodes = view.len(),
            gone = ?gone,
            "topology installed"
        );
        for addr in gone {
            if let Some(node) = nodes.remove(&addr) {
                let mut retired = inner.retired.get();
                retired.add(&node.pool.connection_stats());
                inner.retired.set(retired);
                // Its requests in flight finish first (within the request timeout).
                node.pool.retire(
                    "the node left the cluster's topology",
                    inner.config.connection.request_timeout,
                );
            }
        }
        drop(nodes);
        self.forget_tablets_outside(&snapshot);
        *inner.view.borrow_mut() = Rc::new(view);
        *inner.snapshot.borrow_mut() = snapshot;
    }

    /// Why no node can take a request (for errors).
    pub(super) fn why_no_node(&self) -> String {
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
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use super::Refusals;
    use crate::error::Error;

    fn node(i: u8) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, i], 9042))
    }

    fn refusal(i: u8) -> Error {
        Error::NoConnection(format!("node {i} refused"))
    }

    #[test]
    fn another_nodes_refusal_alone_does_not_end_connect() {
        let mut r = Refusals::default();
        r.record(node(2), refusal(2));
        let nodes = [node(1), node(2), node(3)];
        assert!(r.ending(node(1), &nodes).is_none());
        r.record(node(3), refusal(3));
        assert!(
            r.ending(node(1), &nodes).is_none(),
            "node 1 has not refused"
        );
        r.record(node(1), refusal(1));
        assert!(
            r.ending(node(1), &nodes).is_some(),
            "the contact point refused"
        );
    }

    #[test]
    fn refusals_by_every_node_end_connect_whoever_the_contact_point() {
        let mut r = Refusals::default();
        for i in 1..=3 {
            r.record(node(i), refusal(i));
        }
        let e = r.ending(node(9), &[node(1), node(2), node(3)]).unwrap();
        assert_eq!(e.to_string(), refusal(3).to_string());
        assert!(
            r.ending(node(9), &[]).is_none(),
            "no node known: the timeout decides"
        );
    }

    #[test]
    fn a_handshake_accepted_since_lifts_a_refusal() {
        let mut r = Refusals::default();
        r.record(node(1), refusal(1));
        r.record(node(1), refusal(1));
        assert_eq!(r.by_node.len(), 1, "the latest of each node");
        r.forget(node(1));
        assert!(r.ending(node(1), &[node(1)]).is_none());
        assert!(r.latest().is_none());
    }
}
