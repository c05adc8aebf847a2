//! What a configuration makes before any executor runs (every node's address and counters,
//! the ring, the tablets) and what every executor serves with: each shard's responder and
//! rule matcher for each node, and its accept loops.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use doppio_proto::ProtocolVersion;

use crate::answer::{Responder, Shape};
use crate::cluster::Ring;
use crate::conn;
use crate::node::NodeShared;
use crate::rules::{Matcher, Rules};
use crate::scylla::ShardAwarePort;
use crate::server::config::{StubConfig, StubError};
use crate::server::listen::{accept_loop, NodeListeners};
use crate::shard::{ShardContext, Shared};
use crate::tablets::TabletLayout;

/// What every shard's responder is made from, taken from a [`StubConfig`] once.
#[derive(Clone)]
pub(super) struct Answering {
    pub(super) shape: Arc<Shape>,
    pub(super) newest_protocol: ProtocolVersion,
    pub(super) authenticator: Option<Arc<str>>,
    pub(super) routed_keyspace: Option<Arc<str>>,
    /// The cluster's ring, when playing one.
    pub(super) ring: Option<Arc<Ring>>,
    /// The routed keyspace's replication factor.
    pub(super) replication: u8,
    /// Tablets per table of the routed keyspace, when it is in tablets.
    pub(super) tablets: Option<u32>,
    /// Each data center's name and factor, when the cluster has data centers.
    pub(super) datacenters: Option<Arc<[(String, u8)]>>,
}

impl Answering {
    pub(super) fn of(config: &StubConfig, ring: Option<Arc<Ring>>) -> Self {
        Self {
            replication: config.cluster.map_or(1, |c| c.replication()),
            tablets: config.tablets.map(|t| t.count.get()),
            datacenters: config
                .datacenters
                .as_ref()
                .map(|d| Arc::from(d.replication_map())),
            ring,
            shape: Arc::new(config.shape.clone()),
            // ScyllaDB speaks v4 only: emulating its shards caps the versions offered.
            newest_protocol: if config.scylla.is_some() {
                config.newest_protocol.min(ProtocolVersion::V4)
            } else {
                config.newest_protocol
            },
            authenticator: config.authenticator.as_deref().map(Arc::from),
            routed_keyspace: config.routed_keyspace.as_deref().map(Arc::from),
        }
    }

    /// The responder of node `node` of those listening on `addrs` (`scylla`: emulating
    /// ScyllaDB's shards).
    pub(super) fn responder(&self, addrs: &[SocketAddr], node: usize, scylla: bool) -> Responder {
        let bound = addrs.get(node).or(addrs.first()).copied();
        let bound = bound.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
        let mut r = Responder::new(bound, self.shape.clone())
            .with_newest_protocol(self.newest_protocol)
            .with_authenticator(self.authenticator.clone());
        if scylla {
            r = r.with_first_marker_as_key();
        }
        if let Some(ring) = &self.ring {
            let rows = ring.node_rows(addrs);
            let (local, peers): (Vec<_>, Vec<_>) =
                rows.into_iter().enumerate().partition(|(i, _)| *i == node);
            let peers: Vec<_> = peers.into_iter().map(|(_, p)| p).collect();
            if let Some((_, local)) = local.first() {
                r = r.with_topology(local, &peers);
            }
        }
        if scylla {
            r = r.with_scylla_keyspaces();
        }
        match (&self.routed_keyspace, self.tablets, &self.datacenters) {
            (Some(ks), Some(tablets), _) => r.with_tablet_keyspace(ks, self.replication, tablets),
            (Some(ks), None, Some(dcs)) => r.with_datacenter_keyspace(ks, dcs),
            (Some(ks), None, None) => r.with_routed_keyspace(ks, self.replication),
            (None, _, _) => r,
        }
    }
}

/// One shard's state for one node: its responder and rule matcher; `started`: when the
/// stub started, on this executor's clock (rules' time windows count from it).
pub(super) fn shard_context(
    responder: Responder,
    matcher: Matcher,
    shared: Arc<Shared>,
    node: Arc<NodeShared>,
    tls: Option<Arc<rustls::ServerConfig>>,
    started: Instant,
) -> Rc<ShardContext> {
    Rc::new(ShardContext::new(responder, matcher, shared, node, tls).started_at(started))
}

/// What a [`StubConfig`] makes before any executor runs: every node's IP, node 0's
/// shard-aware address (if any), and what each executor serves with.
pub(super) struct Plan {
    pub(super) ips: Vec<IpAddr>,
    pub(super) aware: Option<SocketAddr>,
    pub(super) serving: Serving,
}

impl Plan {
    pub(super) fn of(config: &StubConfig) -> Result<Self, StubError> {
        let ips = match config.cluster {
            Some(c) => c.addresses(config.listen.ip())?,
            None => vec![config.listen.ip()],
        };
        let ring = match (&config.cluster, &config.datacenters) {
            (Some(c), None) => Some(Arc::new(c.ring())),
            (Some(c), Some(dcs)) if config.tablets.is_none() => {
                c.check_datacenters(dcs)?;
                Some(Arc::new(Ring::with_datacenters(dcs, c.vnodes.get())))
            }
            (_, Some(_)) => return Err(StubError::DatacentersWithoutCluster),
            (None, None) => None,
        };
        let tablets = match (config.tablets, config.cluster, config.scylla) {
            (None, _, _) => None,
            (Some(tablets), Some(cluster), Some(scylla)) => Some(TabletLayout {
                tablets,
                nodes: cluster.nodes.get(),
                replication: cluster.replication(),
                shards: scylla.shards,
            }),
            (Some(_), _, _) => return Err(StubError::TabletsWithoutCluster),
        };
        let nodes = (0..ips.len())
            .map(|i| {
                let place = ring.clone().map(|r| (r, i as u8));
                Arc::new(NodeShared::new(config.scylla, place).with_tablets(tablets))
            })
            .collect();
        let shared = Arc::new(Shared::new(
            &config.rules,
            config.log_rules,
            config.record_values,
            nodes,
        ));
        // The shard-aware listener, if any: every executor listens there too.
        let aware = match config.scylla.map(|s| s.shard_aware_port) {
            Some(ShardAwarePort::Listen(a)) => Some(a),
            _ => None,
        };
        Ok(Self {
            ips,
            aware,
            serving: Serving {
                shared,
                rules: Arc::new(config.rules.clone()),
                answering: Answering::of(config, ring),
                tls: config.tls.clone(),
            },
        })
    }
}

/// What every executor of a stub serves with (`Send`: handed to each executor's thread).
#[derive(Clone)]
pub(super) struct Serving {
    pub(super) shared: Arc<Shared>,
    pub(super) rules: Arc<Rules>,
    pub(super) answering: Answering,
    pub(super) tls: Option<Arc<rustls::ServerConfig>>,
}

impl Serving {
    /// The accept loops of shard `shard` of `executors` over `listeners` (one per node, in
    /// node order, the nodes at `addrs`): one per listener, each node with its own
    /// responder and rule matcher.
    pub(super) fn accept_loops(
        &self,
        listeners: Vec<NodeListeners>,
        addrs: &[SocketAddr],
        shard: usize,
        executors: usize,
        started: Instant,
    ) -> Vec<Pin<Box<dyn Future<Output = ()>>>> {
        let mut loops: Vec<Pin<Box<dyn Future<Output = ()>>>> = Vec::new();
        // A cluster's nodes can be taken down and send events: a watcher per node here.
        let cluster = self.shared.nodes.len() > 1;
        for ((node, l), state) in listeners.into_iter().enumerate().zip(&self.shared.nodes) {
            let ctx = shard_context(
                self.answering
                    .responder(addrs, node, state.scylla.is_some()),
                Matcher::new(self.rules.clone(), shard + node * executors),
                self.shared.clone(),
                state.clone(),
                self.tls.clone(),
                started,
            );
            let watched = cluster.then(|| Rc::new(conn::Watched::default()));
            if let Some(w) = &watched {
                loops.push(Box::pin(conn::watch(w.clone(), ctx.clone())));
            }
            if let Some((_, aware)) = l.aware {
                let shared = self.shared.clone();
                loops.push(Box::pin(accept_loop(
                    aware,
                    true,
                    ctx.clone(),
                    shared,
                    watched.clone(),
                )));
            }
            loops.push(Box::pin(accept_loop(
                l.plain,
                false,
                ctx,
                self.shared.clone(),
                watched,
            )));
        }
        loops
    }
}
