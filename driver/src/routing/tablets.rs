//! ScyllaDB's tablets of one table as a shard has learned them ([`TableTablets`]): each
//! tablet a token range `(first, last]` with its replicas (host id and ScyllaDB shard), from
//! the `tablets-routing-v1` payloads of the answers to misrouted requests, or the
//! `tablets-routing-v2` payloads (the same with the tablet's version) of those and of the
//! answers to requests whose tablet version block the node found stale.
//!
//! Invariants:
//! - The tablets are disjoint and sorted by range: a new one replaces every cached tablet
//!   it overlaps (the node's newer word on that range), so a lookup is one binary search.
//! - A tablet's replicas are turned into node indices of the view they are routed with
//!   once per view version ([`TableTablets::replicas`]); a tablet with a replica the view
//!   does not know (a node that left the cluster) is dropped: its requests go by the token
//!   ring until a node sends the tablet again.
//! - Nothing here allocates on a lookup of a resolved tablet: the replicas are an `Rc`.
//! - Under tablets routing v2 each resolved tablet probes the nibbles of its version in turn
//!   ([`TabletReplicas::block`]: a plain `Cell` of this shard, no atomic), so sixteen
//!   consecutive requests of one tablet from one shard probe all sixteen.

use std::cell::Cell;
use std::rc::Rc;

use doppio_proto::scylla_extensions::TabletRouting;
use doppio_proto::tablet_version::{TabletVersion, UNKNOWN_VERSION_BLOCK};

use crate::routing::murmur3::Token;
use crate::routing::ring::NodeIndex;

/// Why a tablet payload was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TabletError {
    /// A replica's shard is not a shard number.
    #[error("tablet ({first}, {last}] names shard {shard} of a replica")]
    BadShard {
        /// The range's exclusive start.
        first: i64,
        /// The range's inclusive end.
        last: i64,
        /// What the node sent.
        shard: i32,
    },
    /// The tablet has no replica.
    #[error("tablet ({first}, {last}] has no replica")]
    NoReplica {
        /// The range's exclusive start.
        first: i64,
        /// The range's inclusive end.
        last: i64,
    },
}

/// A tablet's replicas as node indices of one view, each with its ScyllaDB shard, in the
/// node's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabletReplicas {
    /// The replicas' node indices.
    pub nodes: Box<[NodeIndex]>,
    /// The shard of each, in the same order.
    pub shards: Box<[u16]>,
    /// The tablet's version, when a `tablets-routing-v2` payload gave it.
    pub version: Option<TabletVersion>,
    /// The nibble the next block probes (taken modulo 16).
    pub probe: Cell<u8>,
}

impl TabletReplicas {
    /// The shard of node `node`, if it is one of the replicas.
    #[inline]
    pub fn shard_of(&self, node: NodeIndex) -> Option<u16> {
        let at = self.nodes.iter().position(|&n| n == node)?;
        self.shards.get(at).copied()
    }

    /// The tablet version block of the next request of this tablet: its version's block of
    /// the next nibble in turn, or [`UNKNOWN_VERSION_BLOCK`] without a version.
    #[inline]
    pub fn block(&self) -> u8 {
        match self.version {
            Some(version) => {
                let index = self.probe.get();
                self.probe.set(index.wrapping_add(1) & 0x0F);
                version.block(index)
            }
            None => UNKNOWN_VERSION_BLOCK,
        }
    }
}

/// One tablet.
#[derive(Debug, Clone)]
struct Tablet {
    first: i64,
    last: i64,
    /// Host id and shard of each replica.
    replicas: Box<[([u8; 16], u16)]>,
    /// Its version (`tablets-routing-v2`).
    version: Option<TabletVersion>,
    /// The replicas resolved in the view of this version (0: never resolved).
    resolved: Option<(u64, Rc<TabletReplicas>)>,
}

/// One table's tablets as the statements of that table on one shard share them.
pub type SharedTablets = Rc<std::cell::RefCell<TableTablets>>;

/// The tablets of one table a shard knows.
#[derive(Debug, Default)]
pub struct TableTablets {
    tablets: Vec<Tablet>,
}

impl TableTablets {
    /// No tablet known (the table is routed by the token ring).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tablets.is_empty()
    }

    /// Tablets known.
    pub fn len(&self) -> usize {
        self.tablets.len()
    }

    /// Forgets every tablet (its keyspace is no longer in tablets).
    pub fn clear(&mut self) {
        self.tablets.clear();
    }

    /// Takes a tablet a node sent: it replaces every known tablet whose range it overlaps.
    pub fn insert(&mut self, routing: &TabletRouting) -> Result<(), TabletError> {
        let (first, last) = (routing.first_token, routing.last_token);
        if routing.replicas.is_empty() {
            return Err(TabletError::NoReplica { first, last });
        }
        let replicas = routing
            .replicas
            .iter()
            .map(|r| {
                u16::try_from(r.shard)
                    .map(|shard| (r.host_id, shard))
                    .map_err(|_| TabletError::BadShard {
                        first,
                        last,
                        shard: r.shard,
                    })
            })
            .collect::<Result<Box<[_]>, _>>()?;
        // The first known tablet that ends after `first`, and the first that starts at or
        // after `last`: those between overlap the new one.
        let from = self.tablets.partition_point(|t| t.last <= first);
        let to = self.tablets.partition_point(|t| t.first < last);
        let tablet = Tablet {
            first,
            last,
            replicas,
            version: routing.version,
            resolved: None,
        };
        self.tablets
            .splice(from..to.max(from), std::iter::once(tablet));
        Ok(())
    }

    /// The replicas of the tablet holding `token`, as node indices of the view of
    /// `version` (`node_of` finds a host id's index there). `None` if no tablet holds it,
    /// or if one of its replicas is unknown to the view: that tablet is then dropped.
    #[inline]
    pub fn replicas(
        &mut self,
        token: Token,
        version: u64,
        node_of: impl Fn(&[u8; 16]) -> Option<NodeIndex>,
    ) -> Option<Rc<TabletReplicas>> {
        let at = self.tablets.partition_point(|t| t.last < token);
        let tablet = self.tablets.get_mut(at).filter(|t| t.first < token)?;
        match &tablet.resolved {
            // Version 0 is a view before the first topology: resolved every time.
            Some((v, r)) if *v == version && version != 0 => Some(Rc::clone(r)),
            _ => {
                let nodes: Option<Box<[NodeIndex]>> =
                    tablet.replicas.iter().map(|(id, _)| node_of(id)).collect();
                match nodes {
                    Some(nodes) => {
                        let r = Rc::new(TabletReplicas {
                            nodes,
                            shards: tablet.replicas.iter().map(|(_, s)| *s).collect(),
                            version: tablet.version,
                            probe: Cell::new(0),
                        });
                        tablet.resolved = Some((version, Rc::clone(&r)));
                        Some(r)
                    }
                    None => {
                        // A replica left the cluster: forget the tablet.
                        self.tablets.remove(at);
                        None
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use doppio_proto::scylla_extensions::TabletReplica;

    use super::*;

    fn host(n: u8) -> [u8; 16] {
        [n; 16]
    }

    fn tablet(first: i64, last: i64, nodes: &[u8]) -> TabletRouting {
        TabletRouting {
            first_token: first,
            last_token: last,
            replicas: nodes
                .iter()
                .map(|&n| TabletReplica {
                    host_id: host(n),
                    shard: i32::from(n) + 10,
                })
                .collect(),
            version: None,
        }
    }

    /// Host `n` is node index `n`, for nodes below `known`.
    fn known(below: u8) -> impl Fn(&[u8; 16]) -> Option<NodeIndex> {
        move |id| (id[0] < below).then_some(u16::from(id[0]))
    }

    fn nodes_at(t: &mut TableTablets, token: Token) -> Option<Vec<NodeIndex>> {
        t.replicas(token, 1, known(10)).map(|r| r.nodes.to_vec())
    }

    #[test]
    fn a_token_finds_the_tablet_whose_range_holds_it_with_shards() {
        let mut t = TableTablets::default();
        t.insert(&tablet(0, 100, &[1, 2])).unwrap();
        t.insert(&tablet(200, 300, &[3])).unwrap();
        t.insert(&tablet(-100, 0, &[4])).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(nodes_at(&mut t, 0), Some(vec![4]), "(first, last]");
        assert_eq!(nodes_at(&mut t, 1), Some(vec![1, 2]));
        assert_eq!(nodes_at(&mut t, 100), Some(vec![1, 2]));
        assert_eq!(nodes_at(&mut t, 101), None, "between tablets");
        assert_eq!(nodes_at(&mut t, 200), None);
        assert_eq!(nodes_at(&mut t, 300), Some(vec![3]));
        assert_eq!(nodes_at(&mut t, -100), None);
        assert_eq!(nodes_at(&mut t, i64::MAX), None);
        let r = t.replicas(50, 1, known(10)).unwrap();
        assert_eq!(r.shard_of(2), Some(12));
        assert_eq!(r.shard_of(3), None);
    }

    #[test]
    fn a_new_tablet_replaces_every_one_it_overlaps() {
        let mut t = TableTablets::default();
        for k in 0..4 {
            t.insert(&tablet(k * 100, k * 100 + 100, &[1])).unwrap();
        }
        // Overlaps the second and third (a merge), touches the first and fourth.
        t.insert(&tablet(150, 250, &[2])).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(nodes_at(&mut t, 100), Some(vec![1]));
        assert_eq!(nodes_at(&mut t, 120), None, "the replaced tablet is gone");
        assert_eq!(nodes_at(&mut t, 200), Some(vec![2]));
        assert_eq!(nodes_at(&mut t, 301), Some(vec![1]));
        // The same range again (a migration): replaced in place.
        t.insert(&tablet(150, 250, &[3])).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(nodes_at(&mut t, 200), Some(vec![3]));
        // A split: one half replaces the whole.
        t.insert(&tablet(150, 200, &[4])).unwrap();
        assert_eq!(nodes_at(&mut t, 200), Some(vec![4]));
        assert_eq!(nodes_at(&mut t, 201), None);
    }

    #[test]
    fn a_tablet_with_a_replica_that_left_is_dropped_and_bad_payloads_refused() {
        let mut t = TableTablets::default();
        t.insert(&tablet(0, 100, &[1, 7])).unwrap();
        assert!(t.replicas(50, 1, known(10)).is_some());
        // A new view (version 2) in which node 7 is gone.
        assert!(t.replicas(50, 2, known(5)).is_none());
        assert!(t.is_empty());
        let mut bad = tablet(0, 100, &[1]);
        bad.replicas[0].shard = -1;
        assert!(matches!(
            t.insert(&bad),
            Err(TabletError::BadShard { shard: -1, .. })
        ));
        assert!(matches!(
            t.insert(&tablet(0, 100, &[])),
            Err(TabletError::NoReplica { .. })
        ));
        assert!(t.is_empty());
    }

    #[test]
    fn the_resolution_is_kept_for_its_view_version() {
        let mut t = TableTablets::default();
        t.insert(&tablet(0, 100, &[1])).unwrap();
        let a = t.replicas(50, 3, known(10)).unwrap();
        let b = t.replicas(50, 3, |_| None).unwrap();
        assert!(Rc::ptr_eq(&a, &b), "not resolved again in the same view");
    }

    /// A tablet of a v2 payload probes each nibble of its version in turn, all sixteen in
    /// sixteen requests; one of a v1 payload sends the block of an unknown version.
    #[test]
    fn a_versioned_tablet_probes_every_nibble_in_turn() {
        let mut t = TableTablets::default();
        let version = TabletVersion(0x0123_4567_89AB_CDEF);
        let mut v2 = tablet(0, 100, &[1]);
        v2.version = Some(version);
        t.insert(&v2).unwrap();
        t.insert(&tablet(100, 200, &[2])).unwrap();
        let r = t.replicas(50, 1, known(10)).unwrap();
        let blocks: Vec<u8> = (0..17).map(|_| r.block()).collect();
        let expected: Vec<u8> = (0..17).map(|i| version.block(i)).collect();
        assert_eq!(blocks, expected);
        assert!(blocks.iter().all(|&b| version.agrees_with(b)));
        // The lookups of one view share the counter.
        assert_eq!(
            t.replicas(50, 1, known(10)).unwrap().block(),
            version.block(1)
        );
        let v1 = t.replicas(150, 1, known(10)).unwrap();
        assert_eq!(v1.version, None);
        assert_eq!(v1.block(), UNKNOWN_VERSION_BLOCK);
    }
}
