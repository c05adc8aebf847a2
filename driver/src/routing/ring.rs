//! The token ring and, per replication strategy, the replicas of every token range,
//! computed once per topology change so that routing a request is a binary search and a
//! slice.
//!
//! A token belongs to the first ring position whose token is greater than or equal to it
//! (wrapping past the largest to the first). Replicas of a position follow Cassandra's
//! placement:
//! - `SimpleStrategy`: walk the ring from the position, taking each node not taken yet,
//!   until `rf` nodes.
//! - `NetworkTopologyStrategy` (Cassandra 4.0+ placement): walk the ring once for all data
//!   centers; a node of a data center that still needs replicas is taken if its rack is new
//!   to that data center, or if the data center has fewer racks than its replication factor
//!   and may still repeat a rack (`rf - racks` repeats, taken as they come).
//!
//! Invariants: node indexes are `u16` positions in the snapshot's node list; every position
//! of a [`ReplicaMap`] lists the same number of replicas (the strategy's replica count,
//! capped by the nodes available), without duplicates.

use std::collections::{BTreeMap, BTreeSet};

use super::murmur3::Token;
use super::topology::{NodeInfo, Replication};

/// Index of a node in a topology's node list.
pub type NodeIndex = u16;

/// The ring: every node's tokens, sorted, with the owner of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRing {
    tokens: Vec<Token>,
    owners: Vec<NodeIndex>,
}

impl TokenRing {
    /// Builds the ring of `nodes` (at most 65536 nodes; further ones are left out). A token
    /// claimed twice goes to the first node that claims it.
    pub fn new(nodes: &[NodeInfo]) -> Self {
        let mut entries: Vec<(Token, NodeIndex)> = nodes
            .iter()
            .enumerate()
            .take(usize::from(NodeIndex::MAX) + 1)
            .flat_map(|(i, n)| n.tokens.iter().map(move |&t| (t, i as NodeIndex)))
            .collect();
        entries.sort_unstable();
        entries.dedup_by_key(|e| e.0);
        Self {
            tokens: entries.iter().map(|e| e.0).collect(),
            owners: entries.iter().map(|e| e.1).collect(),
        }
    }

    /// Number of ring positions (tokens).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// True if no node has a token.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The ring position that owns `token`, or `None` for an empty ring.
    pub fn position(&self, token: Token) -> Option<usize> {
        if self.tokens.is_empty() {
            return None;
        }
        let i = self.tokens.partition_point(|&t| t < token);
        Some(if i == self.tokens.len() { 0 } else { i })
    }

    /// The node owning ring position `position`.
    pub fn owner(&self, position: usize) -> Option<NodeIndex> {
        self.owners.get(position).copied()
    }

    /// The ring positions from `start` on, once around.
    fn walk(&self, start: usize) -> impl Iterator<Item = NodeIndex> + '_ {
        let n = self.owners.len();
        (0..n).map(move |k| self.owners[(start + k) % n])
    }
}

/// The replicas of every ring position for one replication strategy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicaMap {
    /// Replicas per position.
    stride: usize,
    /// `stride` replicas for each ring position, in placement order.
    replicas: Vec<NodeIndex>,
}

impl ReplicaMap {
    /// Computes the replicas of every position of `ring` under `replication`; `None` for
    /// strategies not routed by token (local, unknown) or an empty ring.
    pub fn build(ring: &TokenRing, nodes: &[NodeInfo], replication: &Replication) -> Option<Self> {
        if ring.is_empty() {
            return None;
        }
        let mut out: Vec<NodeIndex> = Vec::new();
        let mut stride = None;
        let mut one = Vec::new();
        let dc_shape = match replication {
            Replication::NetworkTopology { .. } => Some(DcShape::of(ring, nodes)),
            _ => None,
        };
        for start in 0..ring.len() {
            one.clear();
            match (replication, &dc_shape) {
                (Replication::Simple { rf }, _) => simple(ring, start, *rf, &mut one),
                (Replication::NetworkTopology { dcs }, Some(shape)) => {
                    network_topology(ring, nodes, shape, start, dcs, &mut one)
                }
                _ => return None,
            }
            // Every position gets the same count: it depends only on the nodes per DC.
            let s = *stride.get_or_insert(one.len());
            one.truncate(s);
            out.extend_from_slice(&one);
        }
        let stride = stride.unwrap_or(0);
        if stride == 0 {
            return None;
        }
        Some(Self {
            stride,
            replicas: out,
        })
    }

    /// Replicas per token range.
    pub fn replication(&self) -> usize {
        self.stride
    }

    /// The replicas of ring position `position`, in placement order.
    pub fn replicas(&self, position: usize) -> &[NodeIndex] {
        let at = position.saturating_mul(self.stride);
        self.replicas.get(at..at + self.stride).unwrap_or(&[])
    }
}

fn simple(ring: &TokenRing, start: usize, rf: usize, out: &mut Vec<NodeIndex>) {
    for node in ring.walk(start) {
        if out.len() >= rf {
            break;
        }
        if !out.contains(&node) {
            out.push(node);
        }
    }
}

/// Per data center placement state (Cassandra's `DatacenterEndpoints`).
struct DcState {
    /// Replicas still wanted.
    left: usize,
    /// Nodes of an already used rack that may still be taken.
    rack_repeats: isize,
    racks_seen: BTreeSet<String>,
}

/// Nodes and racks per data center, among the nodes that own tokens.
struct DcShape {
    nodes: BTreeMap<String, usize>,
    racks: BTreeMap<String, usize>,
}

impl DcShape {
    fn of(ring: &TokenRing, nodes: &[NodeInfo]) -> Self {
        let owning: BTreeSet<NodeIndex> = ring.owners.iter().copied().collect();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut racks: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        for &i in &owning {
            let n = &nodes[usize::from(i)];
            *counts.entry(n.datacenter.clone()).or_default() += 1;
            racks
                .entry(n.datacenter.clone())
                .or_default()
                .insert(&n.rack);
        }
        Self {
            nodes: counts,
            racks: racks.into_iter().map(|(dc, r)| (dc, r.len())).collect(),
        }
    }
}

fn network_topology(
    ring: &TokenRing,
    nodes: &[NodeInfo],
    shape: &DcShape,
    start: usize,
    dcs: &[(String, usize)],
    out: &mut Vec<NodeIndex>,
) {
    let mut state: BTreeMap<&str, DcState> = BTreeMap::new();
    for (dc, rf) in dcs {
        let Some(&count) = shape.nodes.get(dc.as_str()) else {
            continue;
        };
        let rack_count = shape.racks.get(dc.as_str()).copied().unwrap_or(0);
        if *rf == 0 {
            continue;
        }
        state.insert(
            dc,
            DcState {
                left: (*rf).min(count),
                rack_repeats: *rf as isize - rack_count as isize,
                racks_seen: BTreeSet::new(),
            },
        );
    }
    let mut unfinished = state.values().filter(|s| s.left > 0).count();
    for node in ring.walk(start) {
        if unfinished == 0 {
            break;
        }
        let info = &nodes[usize::from(node)];
        let Some(dc) = state.get_mut(info.datacenter.as_str()) else {
            continue;
        };
        if dc.left == 0 || out.contains(&node) {
            continue;
        }
        if dc.racks_seen.insert(info.rack.clone()) {
            dc.left -= 1;
            out.push(node);
        } else if dc.rack_repeats > 0 {
            dc.rack_repeats -= 1;
            dc.left -= 1;
            out.push(node);
        } else {
            continue;
        }
        if dc.left == 0 {
            unfinished -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(i: u8, dc: &str, rack: &str, tokens: &[Token]) -> NodeInfo {
        NodeInfo {
            addr: std::net::SocketAddr::from(([127, 0, 0, i], 9042)),
            host_id: None,
            datacenter: dc.into(),
            rack: rack.into(),
            tokens: tokens.to_vec(),
        }
    }

    #[test]
    fn a_token_belongs_to_the_next_ring_position_wrapping_around() {
        let nodes = [
            node(1, "dc1", "r1", &[-100]),
            node(2, "dc1", "r1", &[0]),
            node(3, "dc1", "r1", &[100]),
        ];
        let ring = TokenRing::new(&nodes);
        let owner = |t| ring.owner(ring.position(t).unwrap_or(usize::MAX));
        assert_eq!(owner(-100), Some(0), "a range includes its end token");
        assert_eq!(owner(-99), Some(1));
        assert_eq!(owner(0), Some(1));
        assert_eq!(owner(50), Some(2));
        assert_eq!(
            owner(101),
            Some(0),
            "past the last token wraps to the first"
        );
        assert_eq!(owner(i64::MIN), Some(0));
        assert_eq!(TokenRing::new(&[]).position(5), None);
    }

    #[test]
    fn simple_strategy_takes_the_next_distinct_nodes() {
        // Two tokens per node (vnodes): ring order 1 2 1 3 2 3.
        let nodes = [
            node(1, "dc1", "r1", &[10, 30]),
            node(2, "dc1", "r1", &[20, 50]),
            node(3, "dc1", "r1", &[40, 60]),
        ];
        let ring = TokenRing::new(&nodes);
        let map = ReplicaMap::build(&ring, &nodes, &Replication::Simple { rf: 2 }).unwrap();
        assert_eq!(map.replication(), 2);
        assert_eq!(map.replicas(0), &[0, 1]); // token 10: nodes 1, 2
        assert_eq!(map.replicas(1), &[1, 0]); // token 20: 2, 1
        assert_eq!(map.replicas(2), &[0, 2]); // token 30: 1, 3
        assert_eq!(map.replicas(5), &[2, 0]); // token 60: 3, then wraps to 1
        let all = ReplicaMap::build(&ring, &nodes, &Replication::Simple { rf: 5 }).unwrap();
        assert_eq!(all.replication(), 3, "capped by the nodes there are");
        assert!(ReplicaMap::build(&ring, &nodes, &Replication::Local).is_none());
    }

    #[test]
    fn network_topology_spreads_over_racks_and_counts_per_dc() {
        // dc1: racks a, a, b; dc2: one node. Ring order by token: 1(a) 2(a) 4(dc2) 3(b).
        let nodes = [
            node(1, "dc1", "a", &[0]),
            node(2, "dc1", "a", &[10]),
            node(3, "dc1", "b", &[30]),
            node(4, "dc2", "x", &[20]),
        ];
        let ring = TokenRing::new(&nodes);
        let r = Replication::NetworkTopology {
            dcs: vec![("dc1".into(), 2), ("dc2".into(), 1)],
        };
        let map = ReplicaMap::build(&ring, &nodes, &r).unwrap();
        assert_eq!(map.replication(), 3);
        // From token 0: node 1 (rack a, new), node 2 (rack a again: dc1 has 2 racks for
        // rf 2, so no repeat allowed; skipped), node 4 (dc2), node 3 (rack b).
        assert_eq!(map.replicas(0), &[0, 3, 2]);
        // From token 30 (node 3): 3 (b), wrap: 1 (a) -> dc1 done; then 2 skipped, 4 (dc2).
        assert_eq!(map.replicas(3), &[2, 0, 3]);
    }

    #[test]
    fn network_topology_repeats_racks_when_there_are_fewer_racks_than_replicas() {
        let nodes = [
            node(1, "dc1", "a", &[0]),
            node(2, "dc1", "a", &[10]),
            node(3, "dc1", "b", &[20]),
            node(4, "dc1", "b", &[30]),
        ];
        let ring = TokenRing::new(&nodes);
        let r = Replication::NetworkTopology {
            dcs: vec![("dc1".into(), 3)],
        };
        let map = ReplicaMap::build(&ring, &nodes, &r).unwrap();
        // rf 3 over 2 racks: one repeat allowed, taken as it comes (node 2, rack a again).
        assert_eq!(map.replicas(0), &[0, 1, 2]);
        // From node 2: a (new), node 3: b (new), node 4: b (repeat).
        assert_eq!(map.replicas(1), &[1, 2, 3]);
    }

    #[test]
    fn unknown_data_centers_and_zero_factors_add_nothing() {
        let nodes = [node(1, "dc1", "a", &[0]), node(2, "dc1", "a", &[10])];
        let ring = TokenRing::new(&nodes);
        let r = Replication::NetworkTopology {
            dcs: vec![("dc1".into(), 1), ("nowhere".into(), 3), ("dc0".into(), 0)],
        };
        let map = ReplicaMap::build(&ring, &nodes, &r).unwrap();
        assert_eq!(map.replicas(0), &[0]);
        assert_eq!(map.replicas(1), &[1]);
        let none = Replication::NetworkTopology {
            dcs: vec![("nowhere".into(), 3)],
        };
        assert!(ReplicaMap::build(&ring, &nodes, &none).is_none());
    }
}
