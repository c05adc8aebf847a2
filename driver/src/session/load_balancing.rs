//! Load balancing: which node a request goes to, and where it goes next if that fails.
//!
//! A [`LoadBalancingPolicy`] is made once per shard (so it may keep `Cell` state, such as a
//! round-robin counter, with no atomic). The session asks it for the first node of every
//! request ([`LoadBalancingPolicy::pick`], the hot path: no allocation) and, only when a
//! request must go elsewhere (a retry on the next node, a speculative execution), for the
//! whole plan ([`LoadBalancingPolicy::plan`]).
//!
//! [`DefaultPolicy`] is token-aware first (the statement's replicas in the local data
//! center, rotated round-robin), then DC-aware (the other local nodes, rotated), then remote
//! data centers only if allowed. Nodes this shard has no open connection to are skipped.
//! A lightweight transaction's replicas are not rotated: the primary (the first in
//! placement order) first, then the next, as ScyllaDB asks of LWT-marked statements.
//! Statements without a routing token (unprepared, or a partition key that could not be
//! read) go round-robin over the local nodes.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use super::view::{ClusterView, Distance};
use crate::routing::murmur3::Token;
use crate::routing::ring::NodeIndex;
use crate::routing::topology::TopologySnapshot;

/// What the session knows of a request when it asks where to send it.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoutingInfo<'a> {
    /// The partition key's token, when known.
    pub token: Option<Token>,
    /// The token's replicas in the statement's keyspace, in placement order (empty if the
    /// token or the keyspace's replication is unknown).
    pub replicas: &'a [NodeIndex],
    /// A lightweight transaction (ScyllaDB's LWT mark, or a SERIAL or LOCAL_SERIAL read):
    /// [`DefaultPolicy`] tries its replicas in placement order, primary first, rather than
    /// rotated, so that the Paxos rounds of a partition meet at one coordinator.
    pub lwt: bool,
}

/// Chooses nodes for requests. One instance per shard; `!Send` is fine.
pub trait LoadBalancingPolicy: std::fmt::Debug {
    /// The distance of every node of a new topology, in its node order. The session opens
    /// connections only to nodes that are not [`Distance::Ignored`].
    fn distances(&self, topology: &TopologySnapshot) -> Vec<Distance>;

    /// The first node to try, or `None` if no node can take the request. Called for every
    /// request: should not allocate.
    fn pick(&self, view: &ClusterView, routing: &RoutingInfo<'_>) -> Option<NodeIndex>;

    /// The whole plan, in order, into `out` (cleared first). Called only when a request must
    /// go past its first node; may allocate.
    fn plan(&self, view: &ClusterView, routing: &RoutingInfo<'_>, out: &mut Vec<NodeIndex>);
}

/// Makes each shard's policy (shards are threads; the factory crosses to them).
#[derive(Clone)]
pub struct PolicyFactory(pub Arc<dyn Fn() -> Rc<dyn LoadBalancingPolicy> + Send + Sync>);

impl std::fmt::Debug for PolicyFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PolicyFactory")
    }
}

impl PolicyFactory {
    /// A factory of [`DefaultPolicy`] with `config`.
    pub fn default_policy(config: DefaultPolicyConfig) -> Self {
        Self(Arc::new(move || {
            Rc::new(DefaultPolicy::new(config.clone())) as Rc<dyn LoadBalancingPolicy>
        }))
    }

    /// Makes one policy.
    pub fn make(&self) -> Rc<dyn LoadBalancingPolicy> {
        (self.0)()
    }
}

impl Default for PolicyFactory {
    fn default() -> Self {
        Self::default_policy(DefaultPolicyConfig::default())
    }
}

/// Settings of [`DefaultPolicy`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultPolicyConfig {
    /// The local data center; `None`: the data center of the contact point that answered.
    pub local_datacenter: Option<String>,
    /// Whether nodes of other data centers may take requests (after every local node).
    pub allow_remote: bool,
    /// Whether to prefer the statement's replicas (token-aware routing).
    pub token_aware: bool,
}

impl Default for DefaultPolicyConfig {
    fn default() -> Self {
        Self {
            local_datacenter: None,
            allow_remote: false,
            token_aware: true,
        }
    }
}

/// Token-aware, DC-aware, round-robin (see the module doc).
#[derive(Debug)]
pub struct DefaultPolicy {
    config: DefaultPolicyConfig,
    next: Cell<usize>,
}

impl DefaultPolicy {
    /// A policy with `config`.
    pub fn new(config: DefaultPolicyConfig) -> Self {
        Self {
            config,
            next: Cell::new(0),
        }
    }

    fn rotation(&self) -> usize {
        let n = self.next.get();
        self.next.set(n.wrapping_add(1));
        n
    }
}

/// The first of `nodes`, starting at `from` and wrapping, that satisfies `ok`.
fn first_rotated(
    nodes: &[NodeIndex],
    from: usize,
    mut ok: impl FnMut(NodeIndex) -> bool,
) -> Option<NodeIndex> {
    let n = nodes.len();
    (0..n).map(|k| nodes[(from + k) % n]).find(|&i| ok(i))
}

impl LoadBalancingPolicy for DefaultPolicy {
    fn distances(&self, topology: &TopologySnapshot) -> Vec<Distance> {
        let local = self
            .config
            .local_datacenter
            .as_deref()
            .or(topology.contact_datacenter.as_deref());
        topology
            .nodes
            .iter()
            .map(|n| match local {
                None => Distance::Local,
                Some(dc) if n.datacenter == dc => Distance::Local,
                Some(_) if self.config.allow_remote => Distance::Remote,
                Some(_) => Distance::Ignored,
            })
            .collect()
    }

    fn pick(&self, view: &ClusterView, routing: &RoutingInfo<'_>) -> Option<NodeIndex> {
        let r = self.rotation();
        // A lightweight transaction's replicas in placement order: the primary first.
        let rr = if routing.lwt { 0 } else { r };
        if self.config.token_aware {
            let local_replica = first_rotated(routing.replicas, rr, |i| {
                view.distance(i) == Distance::Local && view.is_up(i)
            });
            if local_replica.is_some() {
                return local_replica;
            }
        }
        if let Some(i) = first_rotated(view.local_nodes(), r, |i| view.is_up(i)) {
            return Some(i);
        }
        if self.config.allow_remote {
            if self.config.token_aware {
                let remote_replica = first_rotated(routing.replicas, rr, |i| {
                    view.distance(i) == Distance::Remote && view.is_up(i)
                });
                if remote_replica.is_some() {
                    return remote_replica;
                }
            }
            return first_rotated(view.remote_nodes(), r, |i| view.is_up(i));
        }
        None
    }

    fn plan(&self, view: &ClusterView, routing: &RoutingInfo<'_>, out: &mut Vec<NodeIndex>) {
        out.clear();
        let r = self.rotation();
        let rr = if routing.lwt { 0 } else { r };
        let add = |out: &mut Vec<NodeIndex>, nodes: &[NodeIndex], want: Distance, r: usize| {
            let n = nodes.len();
            for k in 0..n {
                let i = nodes[(r + k) % n];
                if view.distance(i) == want && view.is_up(i) && !out.contains(&i) {
                    out.push(i);
                }
            }
        };
        if self.config.token_aware {
            add(out, routing.replicas, Distance::Local, rr);
        }
        add(out, view.local_nodes(), Distance::Local, r);
        if self.config.allow_remote {
            if self.config.token_aware {
                add(out, routing.replicas, Distance::Remote, rr);
            }
            add(out, view.remote_nodes(), Distance::Remote, r);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::rc::Rc;
    use std::time::Duration;

    use super::*;
    use crate::connection::{Connection, ConnectionConfig};
    use crate::pool::{Backoff, ConnectFn, NodePool};
    use crate::routing::topology::NodeInfo;
    use crate::session::view::Node;

    fn info(addr: SocketAddr, dc: &str) -> NodeInfo {
        NodeInfo {
            addr,
            host_id: None,
            datacenter: dc.into(),
            rack: "r".into(),
            tokens: Vec::new(),
        }
    }

    /// Nodes A and B (dc1, listening), C (dc2, listening), D (dc1, nothing listening: down),
    /// on each runtime: on the simulated one, which has no sockets, A, B and C listen in
    /// memory at the same addresses.
    fn with_view(
        allow_remote: bool,
        check: impl Fn(&DefaultPolicy, &ClusterView) + Clone + Send + 'static,
    ) {
        use doppio_rt::Runtime;
        for runtime in [Runtime::Glommio, Runtime::Uring, Runtime::Sim] {
            let check = check.clone();
            doppio_rt::run_on(runtime, "policy-test", move || async move {
                let listeners: Vec<std::net::TcpListener> = (0..3)
                    .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
                    .collect();
                let addr = |l: &std::net::TcpListener| l.local_addr().unwrap();
                let in_memory: Vec<doppio_rt::TcpListener> = if runtime == Runtime::Sim {
                    listeners
                        .iter()
                        .map(|l| doppio_rt::TcpListener::bind_memory(addr(l)).unwrap())
                        .collect()
                } else {
                    Vec::new()
                };
                let down = {
                    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                    l.local_addr().unwrap()
                };
                let snapshot = TopologySnapshot {
                    version: 1,
                    nodes: vec![
                        info(addr(&listeners[0]), "dc1"),
                        info(addr(&listeners[1]), "dc1"),
                        info(addr(&listeners[2]), "dc2"),
                        info(down, "dc1"),
                    ],
                    contact_datacenter: Some("dc1".into()),
                    ..TopologySnapshot::default()
                };
                let policy = DefaultPolicy::new(DefaultPolicyConfig {
                    allow_remote,
                    ..DefaultPolicyConfig::default()
                });
                let connect: ConnectFn = Rc::new(|addr, _| {
                    Box::pin(Connection::connect(addr, ConnectionConfig::default()))
                });
                let backoff = Backoff {
                    base: Duration::from_secs(5),
                    cap: Duration::from_secs(5),
                };
                let distances = policy.distances(&snapshot);
                let view = ClusterView::build(&snapshot, distances, |n| {
                    Rc::new(Node::new(
                        n.addr,
                        NodePool::start(n.addr, 1, connect.clone(), backoff),
                    ))
                });
                // Wait for the three live nodes (or two, when dc2 is ignored) to connect.
                let want = if allow_remote { 3 } else { 2 };
                for _ in 0..500 {
                    if (0..4).filter(|&i| view.is_up(i)).count() == want {
                        break;
                    }
                    doppio_rt::sleep(Duration::from_millis(2)).await;
                }
                check(&policy, &view);
                drop((listeners, in_memory));
            })
            .unwrap();
        }
    }

    const A: NodeIndex = 0;
    const B: NodeIndex = 1;
    const C: NodeIndex = 2;
    const D: NodeIndex = 3;

    #[test]
    fn local_replicas_first_rotated_and_down_or_remote_ones_skipped() {
        with_view(false, |p, view| {
            assert_eq!(view.distance(C), Distance::Ignored, "dc2 is not used");
            assert!(view.node(C).is_none(), "no pool for an ignored node");
            assert!(!view.is_up(D));
            let r = RoutingInfo {
                token: Some(1),
                replicas: &[D, C, B],
                lwt: false,
            };
            for _ in 0..4 {
                assert_eq!(p.pick(view, &r), Some(B), "the only live local replica");
            }
            let both = RoutingInfo {
                token: Some(1),
                replicas: &[A, B],
                lwt: false,
            };
            let picks: Vec<_> = (0..4).map(|_| p.pick(view, &both).unwrap()).collect();
            assert!(
                picks.contains(&A) && picks.contains(&B),
                "round-robin: {picks:?}"
            );
            let none = RoutingInfo::default();
            let picks: Vec<_> = (0..4).map(|_| p.pick(view, &none).unwrap()).collect();
            assert!(picks.iter().all(|i| *i == A || *i == B), "{picks:?}");
            assert!(picks.contains(&A) && picks.contains(&B), "{picks:?}");
            let mut plan = Vec::new();
            p.plan(view, &r, &mut plan);
            assert_eq!(plan[0], B, "replica first");
            assert_eq!(plan.len(), 2, "then the other live local node: {plan:?}");
        });
    }

    /// A lightweight transaction goes to its primary replica every time (the rotation that
    /// spreads other requests goes on around it), and its plan keeps placement order.
    #[test]
    fn a_lightweight_transaction_goes_to_its_primary_replica_first() {
        with_view(false, |p, view| {
            for replicas in [[A, B], [B, A]] {
                let lwt = RoutingInfo {
                    token: Some(1),
                    replicas: &replicas,
                    lwt: true,
                };
                for _ in 0..5 {
                    assert_eq!(p.pick(view, &lwt), Some(replicas[0]));
                    let mut plan = Vec::new();
                    p.plan(view, &lwt, &mut plan);
                    assert_eq!(plan, replicas, "placement order");
                }
            }
            // A primary that is down: the next replica in placement order.
            let lwt = RoutingInfo {
                token: Some(1),
                replicas: &[D, B, A],
                lwt: true,
            };
            for _ in 0..4 {
                assert_eq!(p.pick(view, &lwt), Some(B));
            }
        });
    }

    #[test]
    fn remote_nodes_come_last_and_only_when_allowed() {
        with_view(true, |p, view| {
            assert_eq!(view.distance(C), Distance::Remote);
            let r = RoutingInfo {
                token: Some(1),
                replicas: &[C, B],
                lwt: false,
            };
            assert_eq!(
                p.pick(view, &r),
                Some(B),
                "a local replica beats a remote one"
            );
            let mut plan = Vec::new();
            p.plan(view, &r, &mut plan);
            assert_eq!(plan.first(), Some(&B));
            assert_eq!(plan.last(), Some(&C), "remote last: {plan:?}");
            assert_eq!(plan.len(), 3);
            assert!(!plan.contains(&D), "down nodes are left out");
        });
    }
}
