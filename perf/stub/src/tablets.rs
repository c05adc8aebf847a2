//! ScyllaDB's tablets, emulated on a cluster stub ([`crate::StubConfig::tablets`]): every
//! table of the routed keyspace is split into tablets, each a token range `(first, last]`
//! with replicas that are a (node, shard) pair each; a request that reaches a node or shard
//! that is not one of its tablet's replicas is served, counted as a misroute, and its RESULT
//! carries the tablet's routing in the `tablets-routing-v1` custom payload (to a connection
//! whose STARTUP turned `TABLETS_ROUTING_V1` on).
//!
//! Tablets routing v2 (`TABLETS_ROUTING_V2_EXPERIMENTAL`, offered by default: see
//! [`crate::scylla::SCYLLA_EXTENSIONS`]): each tablet has a version, a stable 64-bit hash of
//! its ordered replica list ([`TabletLayout::version`]: a migration changes it, as it changes
//! ScyllaDB's), every EXECUTE on such a connection ends with a tablet version block, and the
//! answer carries the tablet in the `tablets-routing-v2` payload (v1's with the version)
//! when the request was misrouted or its block disagrees with the tablet's version.
//!
//! The layout is a pure function of the tablet's index and the epoch: tablet `k` of `count`
//! covers an equal share of the Murmur3 range; in epoch `e` its replicas are nodes
//! `(k + j + e) % nodes` for `j` in `0..rf`, each on shard `(k / nodes + j + e) % shards` of
//! that node: tablets spread over every node and shard, and the shard is not the one the
//! token's own sharding would pick (a driver that routes by the token ring misroutes). The
//! epoch starts at 0 and becomes 1 once `migrate_after` has passed since the stub started:
//! every tablet then moves (its replicas shift by one node and one shard), as a tablet
//! migration does, while requests keep arriving; or, with [`TabletMigration::Reorder`], keeps its
//! replicas but in another order (the first one moves to the end: a new primary), which a
//! request reaching any replica cannot notice under v1.
//!
//! The routed keyspace is listed as ScyllaDB lists a keyspace in tablets
//! (NetworkTopologyStrategy, and `initial_tablets` in `system_schema.scylla_keyspaces`:
//! [`crate::tables::add_tablet_keyspace`]).
//!
//! Invariant: the layout is the same for every node and every shard of the stub (all
//! compute it from the same numbers), so a node's payload and every other node's check of
//! the same request agree.

use std::num::{NonZeroU16, NonZeroU32};
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::scylla_extensions::{TabletReplica, TabletRouting};
use doppio_proto::tablet_version::TabletVersion;

use crate::cluster::host_id;

/// How a cluster stub lays out its tablets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tablets {
    /// Tablets per table.
    pub count: NonZeroU32,
    /// Move every tablet once, this long after the stub started (`None`: never).
    pub migrate_after: Option<Duration>,
    /// How the tablets move then.
    pub migration: TabletMigration,
}

/// How a tablet moves in the migration ([`Tablets::migrate_after`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TabletMigration {
    /// Its replicas shift by one node and one shard (the default).
    #[default]
    Move,
    /// The same replicas (node and shard), the first moved to the end: a new order, and a
    /// new primary.
    Reorder,
}

/// The layout of a cluster's tablets: [`Tablets`] with the cluster's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TabletLayout {
    /// The configuration.
    pub tablets: Tablets,
    /// Nodes of the cluster.
    pub nodes: u8,
    /// Replicas per tablet (the cluster's replication factor, at most `nodes`).
    pub replication: u8,
    /// Shards per node.
    pub shards: NonZeroU16,
}

impl TabletLayout {
    /// The epoch after `elapsed` since the stub started: 0, then 1 once the migration time
    /// has passed.
    pub fn epoch(&self, elapsed: Duration) -> u32 {
        match self.tablets.migrate_after {
            Some(after) if elapsed >= after => 1,
            _ => 0,
        }
    }

    /// The exclusive start of tablet `k`'s range (for `k == count`, the end of the ring).
    fn boundary(&self, k: u32) -> i64 {
        let count = i128::from(self.tablets.count.get());
        let span = 1i128 << 64;
        let b = i128::from(i64::MIN) + span * i128::from(k) / count;
        // k == count: the ring's last token.
        i64::try_from(b).unwrap_or(i64::MAX)
    }

    /// The range `(first, last]` of tablet `k` (the first tablet also holds `i64::MIN`,
    /// which Murmur3 never yields).
    pub fn range(&self, k: u32) -> (i64, i64) {
        (self.boundary(k), self.boundary(k + 1))
    }

    /// The tablet holding `token`.
    pub fn tablet_of(&self, token: i64) -> u32 {
        let count = i128::from(self.tablets.count.get());
        let offset = i128::from(token) - i128::from(i64::MIN);
        // The share `offset` falls in, then moved down when it is a range's first token
        // (which belongs to the range before it).
        let mut k = u32::try_from((offset * count) >> 64)
            .unwrap_or(0)
            .min(self.tablets.count.get() - 1);
        while k > 0 && token <= self.boundary(k) {
            k -= 1;
        }
        k
    }

    /// Replica `j` of tablet `k` in `epoch`: (node, shard).
    pub fn replica(&self, k: u32, j: u8, epoch: u32) -> (u8, u16) {
        match self.tablets.migration {
            TabletMigration::Reorder if epoch > 0 => {
                self.replica_moved(k, (j + 1) % self.replication.max(1), 0)
            }
            _ => self.replica_moved(k, j, epoch),
        }
    }

    /// Replica `j` of tablet `k` after `epoch` moves ([`TabletMigration::Move`]).
    fn replica_moved(&self, k: u32, j: u8, epoch: u32) -> (u8, u16) {
        let nodes = u32::from(self.nodes.max(1));
        let shards = u32::from(self.shards.get());
        let node = (k + u32::from(j) + epoch) % nodes;
        let shard = (k / nodes + u32::from(j) + epoch) % shards;
        (node as u8, shard as u16)
    }

    /// The shard of `node` that holds a replica of tablet `k` in `epoch`, if `node` holds
    /// one at all.
    pub fn shard_on(&self, k: u32, node: u8, epoch: u32) -> Option<u16> {
        (0..self.replication)
            .map(|j| self.replica(k, j, epoch))
            .find(|&(n, _)| n == node)
            .map(|(_, shard)| shard)
    }

    /// Whether replica `j = 0` of tablet `k` is `node` (the tablet's primary replica).
    pub fn is_primary(&self, k: u32, node: u8, epoch: u32) -> bool {
        self.replica(k, 0, epoch).0 == node
    }

    /// Tablet `k`'s version in `epoch` (tablets routing v2): FNV-1a (64 bits) of its
    /// ordered replica list, each replica its host id and its shard (big-endian), so that
    /// any change of replica, shard or order changes it and nothing else does.
    pub fn version(&self, k: u32, epoch: u32) -> TabletVersion {
        const OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
        const PRIME: u64 = 0x0000_0100_0000_01B3;
        let mut hash = OFFSET;
        for j in 0..self.replication {
            let (node, shard) = self.replica(k, j, epoch);
            for byte in host_id(node).into_iter().chain(shard.to_be_bytes()) {
                hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
            }
        }
        TabletVersion(hash)
    }

    /// Tablet `k`'s routing in `epoch`, as the `tablets-routing-v1` payload carries it.
    pub fn routing(&self, k: u32, epoch: u32) -> TabletRouting {
        let (first_token, last_token) = self.range(k);
        TabletRouting {
            first_token,
            last_token,
            replicas: (0..self.replication)
                .map(|j| {
                    let (node, shard) = self.replica(k, j, epoch);
                    TabletReplica {
                        host_id: host_id(node),
                        shard: i32::from(shard),
                    }
                })
                .collect(),
            version: None,
        }
    }

    /// The encoded payload value of tablet `k` in `epoch`: `tablets-routing-v2`'s (with the
    /// version) when `v2`, else `tablets-routing-v1`'s.
    pub fn payload(&self, k: u32, epoch: u32, v2: bool) -> BytesMut {
        let mut buf = BytesMut::new();
        let mut routing = self.routing(k, epoch);
        if v2 {
            routing.version = Some(self.version(k, epoch));
        }
        // Our own value of at most a few hundred bytes: encoding cannot fail.
        let _ = routing.encode(&mut buf);
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(count: u32) -> TabletLayout {
        TabletLayout {
            tablets: Tablets {
                count: NonZeroU32::new(count).unwrap(),
                migrate_after: Some(Duration::from_secs(5)),
                migration: TabletMigration::Move,
            },
            nodes: 3,
            replication: 3,
            shards: NonZeroU16::new(4).unwrap(),
        }
    }

    #[test]
    fn the_tablets_cover_the_ring_and_each_token_is_in_its_tablet() {
        for count in [1, 2, 3, 7, 16, 1000] {
            let l = layout(count);
            assert_eq!(l.range(0).0, i64::MIN);
            assert_eq!(l.range(count - 1).1, i64::MAX);
            for k in 1..count {
                assert_eq!(l.range(k - 1).1, l.range(k).0, "adjacent");
            }
            for token in [i64::MIN + 1, -1, 0, 1, i64::MAX, 12345, -98765] {
                let k = l.tablet_of(token);
                let (first, last) = l.range(k);
                assert!(first < token && token <= last, "{count} {token} {k}");
            }
            for k in 1..count {
                // A range's first token belongs to the tablet before it.
                let (first, _) = l.range(k);
                assert_eq!(l.tablet_of(first), k - 1);
                assert_eq!(l.tablet_of(first + 1), k);
            }
        }
    }

    #[test]
    fn replicas_are_distinct_nodes_spread_over_every_shard_and_move_in_epoch_one() {
        let l = layout(16);
        let mut seen = std::collections::HashSet::new();
        for k in 0..16 {
            let nodes: std::collections::HashSet<u8> =
                (0..3).map(|j| l.replica(k, j, 0).0).collect();
            assert_eq!(nodes.len(), 3);
            for j in 0..3 {
                seen.insert(l.replica(k, j, 0));
                assert_ne!(l.replica(k, j, 0), l.replica(k, j, 1), "moved");
            }
            let (node, shard) = l.replica(k, 1, 0);
            assert_eq!(l.shard_on(k, node, 0), Some(shard));
        }
        assert_eq!(seen.len(), 12, "every shard of every node holds a replica");
        assert_eq!(l.epoch(Duration::from_secs(4)), 0);
        assert_eq!(l.epoch(Duration::from_secs(5)), 1);
    }

    #[test]
    fn the_payload_reads_back_as_the_tablet_s_routing() {
        let l = layout(8);
        let back = TabletRouting::decode(&l.payload(5, 1, false)).unwrap();
        assert_eq!(back, l.routing(5, 1));
        assert_eq!(back.replicas.len(), 3);
        assert_eq!(back.replicas[0].host_id, host_id(l.replica(5, 0, 1).0));
    }

    #[test]
    fn a_v2_payload_carries_the_version_of_the_ordered_replica_list() {
        let l = layout(8);
        let back = TabletRouting::decode_v2(&l.payload(5, 1, true)).unwrap();
        assert_eq!(back.version, Some(l.version(5, 1)));
        assert_eq!(back.replicas, l.routing(5, 1).replicas);
        // Stable: the same list, the same version; a move changes it.
        assert_eq!(l.version(5, 0), l.version(5, 0));
        assert_ne!(l.version(5, 0), l.version(5, 1));
        assert_ne!(l.version(5, 0), l.version(6, 0), "other replicas");
    }

    #[test]
    fn a_reorder_keeps_the_replicas_in_another_order_and_changes_the_version() {
        let mut l = layout(8);
        l.tablets.migration = TabletMigration::Reorder;
        for k in 0..8 {
            let before: Vec<_> = (0..3).map(|j| l.replica(k, j, 0)).collect();
            let after: Vec<_> = (0..3).map(|j| l.replica(k, j, 1)).collect();
            assert_eq!(after, [before[1], before[2], before[0]]);
            for &(node, shard) in &before {
                assert_eq!(l.shard_on(k, node, 1), Some(shard), "still a replica");
            }
            assert!(!l.is_primary(k, before[0].0, 1), "a new primary");
            assert_ne!(l.version(k, 0), l.version(k, 1));
        }
    }
}
