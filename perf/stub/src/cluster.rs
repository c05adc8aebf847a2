//! A cluster of several nodes played by one stub ([`crate::StubConfig::cluster`]): where each
//! node listens, who it says it is, which tokens it owns, and which nodes are the replicas of
//! a token.
//!
//! Node `i` listens on the IPv4 address `i` steps after the configured one (Linux routes all
//! of 127.0.0.0/8 to the loopback interface, so 127.0.0.1, 127.0.0.2, ... need no set-up), on
//! the same port as node 0. Its host id is a constant of its index; data center and rack are
//! the same for all (`datacenter1`, `rack1`, as a fresh Cassandra names them).
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

use crate::tables::NodeRow;

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
}

impl Ring {
    /// `nodes` nodes of `vnodes` tokens each, replicas by SimpleStrategy with `replication`
    /// (at most `nodes`).
    pub fn new(nodes: u8, vnodes: u16, replication: u8) -> Self {
        let n = usize::from(nodes.max(1));
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
        }
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
