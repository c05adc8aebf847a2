//! One node the stub plays, as all its executors share it: its emulated ScyllaDB shards (if
//! any), its connection count and, in a cluster, the ring its requests are checked against
//! with the counts of those that reached a node that is no replica of their token; each
//! node's counts name its data center and rack ([`NodeCounts::by_datacenter`] sums them).
//!
//! A single stub is one node; a cluster stub ([`crate::StubConfig::cluster`]) one per
//! cluster node. Counters are atomics written once per connection and once per read batch
//! (each connection tallies its requests in a plain cell first, [`Tally`]), never per
//! request; the replica check runs only in a cluster.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::cluster::Ring;
use crate::scylla::{Emulation, ScyllaShards, ShardCounts};
use crate::tables::{DATA_CENTER, RACK};
use crate::tablets::TabletLayout;

/// What one node's executors share.
pub(crate) struct NodeShared {
    /// ScyllaDB's shards of this node, when emulated.
    pub(crate) scylla: Option<Emulation>,
    /// The cluster's ring and this node's place in it (a cluster only).
    placement: Option<Placement>,
    connections: AtomicU64,
    requests: AtomicU64,
    wrong_replica: AtomicU64,
    not_primary: AtomicU64,
    lwt_requests: AtomicU64,
    lwt_not_primary: AtomicU64,
    tablet_payloads: AtomicU64,
    /// Taken down (`StubHandle::take_down`): new connections are closed at once.
    down: AtomicBool,
    /// How often it was taken down (its executors close its connections when this moves).
    downs: AtomicU64,
}

/// A cluster node's place on the ring.
struct Placement {
    ring: Arc<Ring>,
    node: u8,
    /// The routed keyspace's tables are split into tablets (ScyllaDB's): requests are
    /// checked against their tablet's replicas, not the ring's.
    tablets: Option<TabletLayout>,
}

/// One connection's counts of EXECUTEs since they were last added to its node's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    requests: u64,
    wrong_replica: u64,
    not_primary: u64,
    lwt_requests: u64,
    lwt_not_primary: u64,
    tablet_payloads: u64,
}

impl Tally {
    /// Counts one EXECUTE that reached a replica of its token or tablet (`replica`), its
    /// primary one (`primary`), a lightweight transaction if `conditional`.
    #[inline]
    fn count(&mut self, replica: bool, primary: bool, conditional: bool) {
        self.requests += 1;
        if !replica {
            self.wrong_replica += 1;
        }
        if !primary {
            self.not_primary += 1;
        }
        if conditional {
            self.lwt_requests += 1;
            if !primary {
                self.lwt_not_primary += 1;
            }
        }
    }
}

/// What arrived at one node (a snapshot of its counters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCounts {
    /// The node's address.
    pub addr: SocketAddr,
    /// The data center the node is in (`datacenter1` without data centers).
    pub data_center: String,
    /// The rack the node is on (`rack1` without data centers).
    pub rack: String,
    /// Connections it accepted.
    pub connections: u64,
    /// EXECUTEs of a prepared statement with a bound partition key (counted in a cluster
    /// only: 0 for a single stub).
    pub requests: u64,
    /// Of those, the ones whose token this node is no replica of.
    pub wrong_replica: u64,
    /// Of `requests`, the ones whose token's primary replica (the first) is another node:
    /// a token-aware client that spreads requests over the replicas sends some of them here.
    pub not_primary: u64,
    /// Of `requests`, the lightweight transactions (conditional statements).
    pub lwt_requests: u64,
    /// Of those, the ones that reached a replica that is not the token's primary one (or no
    /// replica at all).
    pub lwt_not_primary: u64,
    /// Answers that carried their tablet's routing (`tablets-routing-v1`): requests that
    /// reached a node or shard other than their tablet's replicas, on a connection that
    /// turned tablets routing on (0 without tablets).
    pub tablet_payloads: u64,
    /// Where requests landed per emulated ScyllaDB shard of this node (when emulated).
    pub shards: Option<ShardCounts>,
}

/// What arrived at the nodes of one data center (summed over them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatacenterCounts {
    /// EXECUTEs with a bound partition key that reached a node of the data center.
    pub requests: u64,
    /// Of those, the ones whose token the node they reached is no replica of.
    pub wrong_replica: u64,
}

impl NodeCounts {
    /// The requests each data center's nodes received, by data center name (every data
    /// center of `nodes` listed, with 0 if none reached it).
    pub fn by_datacenter(nodes: &[NodeCounts]) -> BTreeMap<String, DatacenterCounts> {
        let mut by = BTreeMap::<String, DatacenterCounts>::new();
        for n in nodes {
            let dc = by.entry(n.data_center.clone()).or_default();
            dc.requests += n.requests;
            dc.wrong_replica += n.wrong_replica;
        }
        by
    }
}

impl NodeShared {
    /// A node with its own emulated shards (`scylla`) and, in a cluster, node `node` of
    /// `ring`.
    pub(crate) fn new(scylla: Option<ScyllaShards>, ring: Option<(Arc<Ring>, u8)>) -> Self {
        Self {
            scylla: scylla.map(Emulation::new),
            placement: ring.map(|(ring, node)| Placement {
                ring,
                node,
                tablets: None,
            }),
            connections: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            wrong_replica: AtomicU64::new(0),
            not_primary: AtomicU64::new(0),
            lwt_requests: AtomicU64::new(0),
            lwt_not_primary: AtomicU64::new(0),
            tablet_payloads: AtomicU64::new(0),
            down: AtomicBool::new(false),
            downs: AtomicU64::new(0),
        }
    }

    /// Whether the node is down.
    pub(crate) fn is_down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    /// How often the node was taken down.
    pub(crate) fn downs(&self) -> u64 {
        self.downs.load(Ordering::Relaxed)
    }

    /// Takes the node down (`true`) or brings it up; false if it was so already.
    pub(crate) fn set_down(&self, down: bool) -> bool {
        let changed = self.down.swap(down, Ordering::SeqCst) != down;
        if changed && down {
            self.downs.fetch_add(1, Ordering::SeqCst);
        }
        changed
    }

    /// This cluster node with its keyspace's tables in `tablets` (nothing for a single
    /// stub, which has no cluster to lay tablets over).
    pub(crate) fn with_tablets(mut self, tablets: Option<TabletLayout>) -> Self {
        if let Some(p) = &mut self.placement {
            p.tablets = tablets;
        }
        self
    }

    /// The tablet layout and this node's index, when tablets are emulated.
    #[inline]
    pub(crate) fn tablets(&self) -> Option<(&TabletLayout, u8)> {
        let p = self.placement.as_ref()?;
        Some((p.tablets.as_ref()?, p.node))
    }

    /// This node's index in its cluster (0 for a single stub).
    #[inline]
    pub(crate) fn index(&self) -> u8 {
        self.placement.as_ref().map_or(0, |p| p.node)
    }

    /// Whether EXECUTEs are checked against a ring (a cluster node).
    #[inline]
    pub(crate) fn checks_replicas(&self) -> bool {
        self.placement.is_some()
    }

    /// Adds an EXECUTE of `token` (a lightweight transaction if `conditional`) to `tally`:
    /// where it should have gone against where it came (this node). Nothing without a ring.
    #[inline]
    pub(crate) fn place(&self, tally: &mut Tally, token: i64, conditional: bool) {
        let Some(p) = &self.placement else {
            return;
        };
        let replicas = p.ring.replicas(token);
        tally.count(
            replicas.contains(&p.node),
            replicas.first() == Some(&p.node),
            conditional,
        );
    }

    /// Adds an EXECUTE of tablet `k` in `epoch` to `tally`: whether this node holds one of
    /// its replicas (the shard is the caller's to check), whether it is the primary, and
    /// whether its answer carries the tablet's routing (`payload`).
    #[inline]
    pub(crate) fn place_in_tablet(
        &self,
        tally: &mut Tally,
        (layout, node): (&TabletLayout, u8),
        (k, epoch): (u32, u32),
        conditional: bool,
        payload: bool,
    ) {
        tally.count(
            layout.shard_on(k, node, epoch).is_some(),
            layout.is_primary(k, node, epoch),
            conditional,
        );
        if payload {
            tally.tablet_payloads += 1;
        }
    }

    /// Adds a connection's tally of one read batch.
    pub(crate) fn add(&self, tally: Tally) {
        for (counter, n) in [
            (&self.requests, tally.requests),
            (&self.wrong_replica, tally.wrong_replica),
            (&self.not_primary, tally.not_primary),
            (&self.lwt_requests, tally.lwt_requests),
            (&self.lwt_not_primary, tally.lwt_not_primary),
            (&self.tablet_payloads, tally.tablet_payloads),
        ] {
            if n > 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// A connection was accepted.
    pub(crate) fn accepted(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now, for the node at `addr`.
    pub(crate) fn counts(&self, addr: SocketAddr) -> NodeCounts {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (data_center, rack) = match &self.placement {
            Some(p) => (
                p.ring.datacenter_of(p.node).to_owned(),
                p.ring.rack_of(p.node),
            ),
            None => (DATA_CENTER.to_owned(), RACK.to_owned()),
        };
        NodeCounts {
            addr,
            data_center,
            rack,
            connections: load(&self.connections),
            requests: load(&self.requests),
            wrong_replica: load(&self.wrong_replica),
            not_primary: load(&self.not_primary),
            lwt_requests: load(&self.lwt_requests),
            lwt_not_primary: load(&self.lwt_not_primary),
            tablet_payloads: load(&self.tablet_payloads),
            shards: self.scylla.as_ref().map(Emulation::counts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executes_are_counted_against_the_replicas_of_their_token() {
        let ring = Arc::new(Ring::new(3, 4, 2));
        let token = 0;
        let replicas = ring.replicas(token).to_vec();
        let other = (0..3u8).find(|n| !replicas.contains(n)).unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], 9042));
        for (node, wrong, not_primary) in [(replicas[0], 0, 0), (replicas[1], 0, 1), (other, 1, 1)]
        {
            let shared = NodeShared::new(None, Some((ring.clone(), node)));
            let mut tally = Tally::default();
            shared.place(&mut tally, token, false);
            shared.place(&mut tally, token, true);
            shared.add(tally);
            let c = shared.counts(addr);
            assert_eq!((c.requests, c.lwt_requests), (2, 1), "node {node}");
            assert_eq!(c.wrong_replica, 2 * wrong, "node {node}");
            assert_eq!(c.not_primary, 2 * not_primary, "node {node}");
            assert_eq!(c.lwt_not_primary, not_primary, "node {node}");
        }
        // A single stub counts nothing.
        let single = NodeShared::new(None, None);
        let mut tally = Tally::default();
        single.place(&mut tally, token, true);
        assert_eq!(tally, Tally::default());
        assert!(!single.checks_replicas());
    }
}
