//! A cluster of several nodes played by one stub ([`crate::StubConfig::cluster`]): where each
//! node listens, who it says it is, which tokens it owns, and which nodes are the replicas of
//! a token (SimpleStrategy here; NetworkTopologyStrategy over data centers and racks when
//! the cluster has them, [`crate::datacenters`]).
//!
//! Node `i` listens on the IPv4 address `i` steps after the configured one (Linux routes all
//! of 127.0.0.0/8 to the loopback interface, so 127.0.0.1, 127.0.0.2, ... need no set-up), on
//! the same port as node 0. Its host id is a constant of its index; without data centers
//! ([`crate::StubConfig::datacenters`]) data center and rack are the same for all
//! (`datacenter1`, `rack1`, as a fresh Cassandra names them).
//!
//! The token ring: `vnodes` tokens per node, evenly spaced over the whole Murmur3 range and
//! interleaved: the ring is walked in rounds of one token per node, each round's order
//! rotated by one against the last, so that a node's successors differ from one vnode to
//! the next (and SimpleStrategy's walk meets repeated nodes it must skip, as on a real
//! ring). A token belongs to the first ring position at or after it (wrapping past the
//! last); its replicas are that position's node and the next distinct nodes clockwise,
//! `replication_factor` of them (capped at the node count), the first being the primary.
//!
//! Invariant: every node's tables describe the same ring, which is also the ring requests
//! are checked against (both are made from one [`Ring`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::num::{NonZeroU16, NonZeroU8};

use crate::datacenters::{place, DatacenterError, Datacenters, DcWant};
use crate::tables::{NodeRow, DATA_CENTER, RACK};

/// Several nodes served by one stub.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cluster {
    /// How many nodes.
    pub nodes: NonZeroU8,
    /// The replication factor the routed keyspace is listed with (capped at `nodes`).
    pub replication_factor: NonZeroU8,
    /// Tokens per node.
    pub vnodes: NonZeroU16,
}

/// Tokens per node unless told otherwise.
pub const DEFAULT_VNODES: u16 = 8;
/// The replication factor unless told otherwise (capped at the node count).
pub const DEFAULT_REPLICATION_FACTOR: u8 = 3;

impl Cluster {
    /// `nodes` nodes of [`DEFAULT_VNODES`] tokens each, replication factor
    /// [`DEFAULT_REPLICATION_FACTOR`] (or `nodes`, if fewer).
    pub fn new(nodes: NonZeroU8) -> Self {
        Self {
            nodes,
            replication_factor: NonZeroU8::new(DEFAULT_REPLICATION_FACTOR)
                .unwrap_or(NonZeroU8::MIN),
            vnodes: NonZeroU16::new(DEFAULT_VNODES).unwrap_or(NonZeroU16::MIN),
        }
    }

    /// The replication factor in effect: as configured, at most the node count.
    pub fn replication(&self) -> u8 {
        self.replication_factor.get().min(self.nodes.get())
    }

    /// The address of every node, node 0 on `first`.
    pub fn addresses(&self, first: IpAddr) -> Result<Vec<IpAddr>, ClusterError> {
        let IpAddr::V4(v4) = first else {
            return Err(ClusterError::NotIpv4(first));
        };
        let base = u32::from(v4);
        (0..self.nodes.get())
            .map(|i| {
                base.checked_add(u32::from(i))
                    .map(|a| IpAddr::V4(Ipv4Addr::from(a)))
                    .ok_or(ClusterError::AddressesRunOut {
                        first: v4,
                        nodes: self.nodes.get(),
                    })
            })
            .collect()
    }

    /// The cluster of `layout`'s nodes, `vnodes` tokens each (its
    /// `replication_factor` is the largest data center's, and unused: each data center has
    /// its own). Checks the layout first.
    pub fn of_datacenters(
        layout: &Datacenters,
        vnodes: NonZeroU16,
    ) -> Result<Self, DatacenterError> {
        layout.check()?;
        let total = layout.total_nodes();
        let nodes = u8::try_from(total)
            .ok()
            .and_then(NonZeroU8::new)
            .ok_or(DatacenterError::TooManyNodes(total))?;
        let most = layout
            .datacenters
            .iter()
            .map(|d| d.replication_factor)
            .max()
            .and_then(NonZeroU8::new)
            .ok_or(DatacenterError::NoReplicas)?;
        Ok(Self {
            nodes,
            replication_factor: most,
            vnodes,
        })
    }

    /// Checks `layout` for this cluster: its own rules, and `nodes` being the data
    /// centers' sum.
    pub fn check_datacenters(&self, layout: &Datacenters) -> Result<(), DatacenterError> {
        layout.check()?;
        let datacenters = layout.total_nodes();
        if datacenters != usize::from(self.nodes.get()) {
            return Err(DatacenterError::NodeCount {
                cluster: self.nodes.get(),
                datacenters,
            });
        }
        Ok(())
    }

    /// The ring of this cluster.
    pub fn ring(&self) -> Ring {
        Ring::new(self.nodes.get(), self.vnodes.get(), self.replication())
    }
}

/// Why a cluster's addresses cannot be laid out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// The nodes' consecutive addresses are IPv4 ones.
    #[error("a cluster's nodes listen on consecutive IPv4 addresses, and {0} is not IPv4")]
    NotIpv4(IpAddr),
    /// Past 255.255.255.255.
    #[error("{nodes} consecutive addresses from {first} run past the last IPv4 address")]
    AddressesRunOut {
        /// Node 0's address.
        first: Ipv4Addr,
        /// The node count.
        nodes: u8,
    },
}

/// The host id of node `node`: a constant of its index (unlike the single stub's
/// [`crate::tables::HOST_ID`]).
pub fn host_id(node: u8) -> [u8; 16] {
    let mut id = *b"doppio-stub-node";
    id[14] = b'#';
    id[15] = node;
    id
}

/// The token ring of a cluster and the replicas of each of its positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    /// Every token, ascending.
    tokens: Vec<i64>,
    /// The node owning each token.
    owners: Vec<u8>,
    /// Replicas per position.
    replication: usize,
    /// `replication` nodes per position, the primary first.
    replicas: Vec<u8>,
    /// Each node's data center (an index into `datacenters`) and rack (an index within it).
    places: Vec<(u8, u8)>,
    /// The data centers' names.
    datacenters: Vec<String>,
}

/// `n` nodes of `vnodes` tokens each, evenly spaced and interleaved (see the module docs):
/// the tokens, ascending, and the owner of each.
fn token_ring(n: usize, vnodes: u16) -> (Vec<i64>, Vec<u8>) {
    let positions = n * usize::from(vnodes.max(1));
    let step = (1u128 << 64) / positions as u128;
    let tokens: Vec<i64> = (0..positions)
        .map(|k| {
            // Half a step in: no token sits on the range's very bottom.
            let offset = step * k as u128 + step / 2;
            (i128::from(i64::MIN) + offset as i128) as i64
        })
        .collect();
    let owners: Vec<u8> = (0..positions)
        .map(|k| ((k % n + k / n) % n) as u8)
        .collect();
    (tokens, owners)
}

impl Ring {
    /// `nodes` nodes of `vnodes` tokens each, replicas by SimpleStrategy with `replication`
    /// (at most `nodes`), all in one data center ([`DATA_CENTER`]) and rack ([`RACK`]).
    pub fn new(nodes: u8, vnodes: u16, replication: u8) -> Self {
        let n = usize::from(nodes.max(1));
        let (tokens, owners) = token_ring(n, vnodes);
        let positions = tokens.len();
        let replication = usize::from(replication).clamp(1, n);
        let mut replicas = Vec::with_capacity(positions * replication);
        for start in 0..positions {
            let at = replicas.len();
            for k in 0..positions {
                let owner = owners[(start + k) % positions];
                if !replicas[at..].contains(&owner) {
                    replicas.push(owner);
                    if replicas.len() - at == replication {
                        break;
                    }
                }
            }
        }
        Self {
            tokens,
            owners,
            replication,
            replicas,
            places: vec![(0, 0); n],
            datacenters: vec![DATA_CENTER.to_owned()],
        }
    }

    /// The nodes of `layout` (data center by data center), `vnodes` tokens each, replicas by
    /// NetworkTopologyStrategy with each data center's factor ([`crate::datacenters`]).
    /// The layout is taken as checked ([`Datacenters::check`]).
    pub fn with_datacenters(layout: &Datacenters, vnodes: u16) -> Self {
        let places = layout.places();
        let n = places.len().max(1);
        let (tokens, owners) = token_ring(n, vnodes);
        let positions = tokens.len();
        let wants = DcWant::of(layout);
        let replication = layout.replication().max(1);
        let mut replicas = Vec::with_capacity(positions * replication);
        for start in 0..positions {
            let at = replicas.len();
            let walk = (0..positions).map(|k| owners[(start + k) % positions]);
            place(walk, &places, &wants, &mut replicas);
            // Every position gets the same count (see the module docs); should one not, it
            // is padded with its first replica rather than shift every later position.
            let first = replicas.get(at).copied().unwrap_or(0);
            replicas.resize(at + replication, first);
        }
        Self {
            tokens,
            owners,
            replication,
            replicas,
            places,
            datacenters: layout.datacenters.iter().map(|d| d.name.clone()).collect(),
        }
    }

    /// The data center node `node` is in.
    pub fn datacenter_of(&self, node: u8) -> &str {
        self.places
            .get(usize::from(node))
            .and_then(|&(dc, _)| self.datacenters.get(usize::from(dc)))
            .map_or(DATA_CENTER, String::as_str)
    }

    /// The rack node `node` is on.
    pub fn rack_of(&self, node: u8) -> String {
        self.places
            .get(usize::from(node))
            .map_or_else(|| RACK.to_owned(), |&(_, r)| Datacenters::rack_name(r))
    }

    /// How many nodes hold each token.
    pub fn replication(&self) -> usize {
        self.replication
    }

    /// The tokens node `node` owns, ascending.
    pub fn tokens_of(&self, node: u8) -> Vec<i64> {
        self.tokens
            .iter()
            .zip(&self.owners)
            .filter(|(_, &o)| o == node)
            .map(|(&t, _)| t)
            .collect()
    }

    /// The replicas of `token`, the primary first.
    #[inline]
    pub fn replicas(&self, token: i64) -> &[u8] {
        let i = self.tokens.partition_point(|&t| t < token);
        let i = if i == self.tokens.len() { 0 } else { i };
        let at = i * self.replication;
        &self.replicas[at..at + self.replication]
    }

    /// What every node says of itself in `system.local` and of the others in
    /// `system.peers(_v2)`: node `i` at `addrs[i]`.
    pub fn node_rows(&self, addrs: &[SocketAddr]) -> Vec<NodeRow> {
        addrs
            .iter()
            .enumerate()
            .map(|(i, &addr)| {
                let node = i as u8;
                NodeRow {
                    addr,
                    host_id: host_id(node),
                    tokens: self.tokens_of(node),
                    data_center: self.datacenter_of(node).to_owned(),
                    rack: self.rack_of(node),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: u8) -> NonZeroU8 {
        NonZeroU8::new(n).unwrap_or(NonZeroU8::MIN)
    }

    #[test]
    fn nodes_get_consecutive_addresses_or_a_typed_error() {
        let c = Cluster::new(nz(3));
        assert_eq!(
            c.addresses([127, 0, 0, 1].into()),
            Ok(vec![
                IpAddr::from([127, 0, 0, 1]),
                IpAddr::from([127, 0, 0, 2]),
                IpAddr::from([127, 0, 0, 3])
            ])
        );
        assert_eq!(
            c.addresses([127, 0, 0, 255].into()).map(|a| a[1]),
            Ok(IpAddr::from([127, 0, 1, 0]))
        );
        assert!(matches!(
            c.addresses([255, 255, 255, 254].into()),
            Err(ClusterError::AddressesRunOut { nodes: 3, .. })
        ));
        assert!(matches!(
            c.addresses("::1".parse().unwrap_or(IpAddr::from([0; 16]))),
            Err(ClusterError::NotIpv4(_))
        ));
    }

    #[test]
    fn tokens_are_spread_evenly_and_every_node_owns_its_share() {
        let ring = Ring::new(3, 4, 3);
        assert!(ring.tokens.windows(2).all(|w| w[0] < w[1]));
        assert!(*ring.tokens.first().unwrap_or(&0) > i64::MIN);
        for node in 0..3 {
            assert_eq!(ring.tokens_of(node).len(), 4);
        }
        // Interleaved, each round rotated: 0 1 2 | 1 2 0 | 2 0 1 | 0 1 2.
        assert_eq!(ring.owners, [0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2]);
        let gaps: Vec<i128> = ring
            .tokens
            .windows(2)
            .map(|w| i128::from(w[1]) - i128::from(w[0]))
            .collect();
        assert!(gaps.iter().all(|g| (g - gaps[0]).abs() <= 1), "{gaps:?}");
    }

    #[test]
    fn replicas_are_the_owner_then_the_next_distinct_nodes_clockwise() {
        let ring = Ring::new(3, 4, 3);
        // Position 2 (node 2) is followed by 1, 2 (skipped), 0.
        let t2 = ring.tokens[2];
        assert_eq!(ring.replicas(t2), [2, 1, 0]);
        // A token between positions belongs to the next one; past the last, to the first.
        assert_eq!(ring.replicas(t2 - 1), [2, 1, 0]);
        assert_eq!(ring.replicas(t2 + 1)[0], ring.owners[3]);
        assert_eq!(ring.replicas(i64::MAX), ring.replicas(i64::MIN));
        assert_eq!(ring.replicas(i64::MIN)[0], 0);
        // The factor is capped at the node count.
        let small = Ring::new(2, 2, 5);
        assert_eq!(small.replication(), 2);
        assert_eq!(small.replicas(0).len(), 2);
        let one = Ring::new(1, 3, 1);
        assert_eq!(one.replicas(12345), [0]);
    }

    #[test]
    fn every_node_row_describes_the_same_ring() {
        let ring = Ring::new(3, 2, 2);
        let addrs: Vec<SocketAddr> = (1..=3)
            .map(|i| SocketAddr::from(([127, 0, 0, i], 9042)))
            .collect();
        let rows = ring.node_rows(&addrs);
        let mut all: Vec<i64> = rows.iter().flat_map(|r| r.tokens.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, ring.tokens);
        assert_eq!(rows[1].host_id, host_id(1));
        assert_ne!(host_id(0), host_id(1));
    }
}
