//! A cluster stub laid out over data centers and racks ([`crate::StubConfig::datacenters`]),
//! and the replicas of a ring position under NetworkTopologyStrategy.
//!
//! The nodes are numbered data center by data center, in the order given: with
//! `dc1:3,dc2:3`, nodes 0 to 2 are in `dc1` and 3 to 5 in `dc2`. Within a data center, node
//! `j` (counted from the data center's first) is on rack `j % racks`, named `rack1`,
//! `rack2`, ...; a data center of fewer nodes than racks uses only as many racks as it has
//! nodes. The routed keyspace is listed with NetworkTopologyStrategy and each data center's
//! replication factor.
//!
//! Placement, as Cassandra 4.0 and later do it (the stub says it runs 5.0): the ring is
//! walked once from the token's position, for all data centers at the same time. A data
//! center wants `rf` replicas; a node of a data center still wanting some, and not taken
//! yet, is taken if its rack has no replica of that data center yet, or else if the data
//! center may still repeat a rack: it may repeat `rf - racks` times (racks with nodes), the
//! first repeats the walk meets. So with at least `rf` racks every replica is on its own
//! rack, and with fewer each rack has one and the first same-rack nodes met fill the rest.
//! The replicas are listed in the order the walk took them, the primary first.
//!
//! Invariant: every ring position has the sum of the data centers' factors as replicas,
//! since a factor above a data center's node count is refused ([`DatacenterError`]).

use std::num::NonZeroU8;

/// One data center: its name, its nodes and its replication factor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datacenter {
    /// Its name, as `system.local` and `system.peers` give it.
    pub name: String,
    /// Its nodes.
    pub nodes: NonZeroU8,
    /// Replicas of each token in it (at most `nodes`).
    pub replication_factor: u8,
}

/// The data centers of a cluster and the racks of each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datacenters {
    /// The data centers, in node order.
    pub datacenters: Vec<Datacenter>,
    /// Racks per data center (fewer when a data center has fewer nodes).
    pub racks: NonZeroU8,
}

/// Why a layout of data centers is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatacenterError {
    /// No data center at all.
    #[error("no data center: give at least one, as NAME:NODES (e.g. dc1:3,dc2:3)")]
    None,
    /// A part that is not `NAME:NODES`.
    #[error("`{0}`: a data center is NAME:NODES, e.g. dc1:3 (a name of letters, digits, `_` or `-`, and 1 to 255 nodes)")]
    Syntax(String),
    /// A data center without nodes.
    #[error("data center {0} has 0 nodes: it needs at least one")]
    NoNodes(String),
    /// A name given twice.
    #[error("data center {0} is given twice")]
    Duplicate(String),
    /// More than 255 nodes in all.
    #[error("{0} nodes in all: a cluster stub plays at most 255")]
    TooManyNodes(usize),
    /// A replication factor above a data center's node count.
    #[error("replication factor {replication_factor} in data center {name}, which has only {nodes} nodes")]
    ReplicationAboveNodes {
        /// The data center.
        name: String,
        /// Its factor.
        replication_factor: u8,
        /// Its nodes.
        nodes: u8,
    },
    /// Every factor is 0: no token would have a replica.
    #[error("every data center's replication factor is 0: no token would have a replica")]
    NoReplicas,
    /// The cluster's node count is not the data centers' sum.
    #[error("the cluster has {cluster} nodes but its data centers {datacenters}")]
    NodeCount {
        /// `Cluster::nodes`.
        cluster: u8,
        /// The data centers' nodes in all.
        datacenters: usize,
    },
}

impl Datacenters {
    /// Parses `NAME:NODES,NAME:NODES,...` (the CLI's `--datacenters`), each data center
    /// with `replication_factor` and `racks` racks, and checks the layout.
    pub fn parse(
        spec: &str,
        racks: NonZeroU8,
        replication_factor: u8,
    ) -> Result<Self, DatacenterError> {
        let datacenters = spec
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|part| {
                let syntax = || DatacenterError::Syntax(part.to_owned());
                let (name, nodes) = part.split_once(':').ok_or_else(syntax)?;
                let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
                if name.is_empty() || !name.chars().all(valid) {
                    return Err(syntax());
                }
                let nodes: u8 = nodes.trim().parse().map_err(|_| syntax())?;
                let nodes = NonZeroU8::new(nodes).ok_or(DatacenterError::NoNodes(name.into()))?;
                Ok(Datacenter {
                    name: name.to_owned(),
                    nodes,
                    replication_factor,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let layout = Self { datacenters, racks };
        layout.check()?;
        Ok(layout)
    }

    /// Checks the layout: at least one data center, distinct names, 255 nodes at most, no
    /// factor above its data center's nodes, and some replica.
    pub fn check(&self) -> Result<(), DatacenterError> {
        if self.datacenters.is_empty() {
            return Err(DatacenterError::None);
        }
        for (i, dc) in self.datacenters.iter().enumerate() {
            if self.datacenters[..i].iter().any(|d| d.name == dc.name) {
                return Err(DatacenterError::Duplicate(dc.name.clone()));
            }
            if dc.replication_factor > dc.nodes.get() {
                return Err(DatacenterError::ReplicationAboveNodes {
                    name: dc.name.clone(),
                    replication_factor: dc.replication_factor,
                    nodes: dc.nodes.get(),
                });
            }
        }
        let total = self.total_nodes();
        if total > usize::from(u8::MAX) {
            return Err(DatacenterError::TooManyNodes(total));
        }
        if self.datacenters.iter().all(|d| d.replication_factor == 0) {
            return Err(DatacenterError::NoReplicas);
        }
        Ok(())
    }

    /// The nodes of all data centers.
    pub fn total_nodes(&self) -> usize {
        self.datacenters
            .iter()
            .map(|d| usize::from(d.nodes.get()))
            .sum()
    }

    /// Replicas of each token in all: the sum of the factors.
    pub fn replication(&self) -> usize {
        self.datacenters
            .iter()
            .map(|d| usize::from(d.replication_factor))
            .sum()
    }

    /// The data center (its index) and rack (its index within the data center) of every
    /// node, in node order.
    pub fn places(&self) -> Vec<(u8, u8)> {
        self.datacenters
            .iter()
            .enumerate()
            .flat_map(|(d, dc)| {
                let racks = self.racks.get().min(dc.nodes.get());
                (0..dc.nodes.get()).map(move |j| (d as u8, j % racks))
            })
            .collect()
    }

    /// The name of rack `rack` (its index within its data center).
    pub fn rack_name(rack: u8) -> String {
        format!("rack{}", u16::from(rack) + 1)
    }

    /// The routed keyspace's replication: each data center's name and factor.
    pub fn replication_map(&self) -> Vec<(String, u8)> {
        self.datacenters
            .iter()
            .map(|d| (d.name.clone(), d.replication_factor))
            .collect()
    }
}

/// What the walk of one data center needs: its factor and its racks with nodes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DcWant {
    pub(crate) replication_factor: u8,
    pub(crate) nodes: u8,
    pub(crate) racks: u8,
}

impl DcWant {
    /// Each data center's wants, in data center order.
    pub(crate) fn of(layout: &Datacenters) -> Vec<Self> {
        layout
            .datacenters
            .iter()
            .map(|d| DcWant {
                replication_factor: d.replication_factor,
                nodes: d.nodes.get(),
                racks: layout.racks.get().min(d.nodes.get()),
            })
            .collect()
    }
}

/// Appends to `out` the replicas of the ring position whose walk meets the nodes `walk`
/// yields (the position's owner first, once around), `places[node]` being each node's data
/// center and rack; see the module docs for the rule.
pub(crate) fn place(
    walk: impl Iterator<Item = u8>,
    places: &[(u8, u8)],
    wants: &[DcWant],
    out: &mut Vec<u8>,
) {
    struct Fill {
        left: u8,
        repeats: i16,
        seen_racks: Vec<bool>,
    }
    let at = out.len();
    let mut fills: Vec<Fill> = wants
        .iter()
        .map(|w| Fill {
            left: w.replication_factor.min(w.nodes),
            repeats: i16::from(w.replication_factor) - i16::from(w.racks),
            seen_racks: vec![false; usize::from(w.racks)],
        })
        .collect();
    let mut to_fill = fills.iter().filter(|f| f.left > 0).count();
    for node in walk {
        if to_fill == 0 {
            break;
        }
        let Some(&(dc, rack)) = places.get(usize::from(node)) else {
            continue;
        };
        let Some(fill) = fills.get_mut(usize::from(dc)) else {
            continue;
        };
        if fill.left == 0 || out[at..].contains(&node) {
            continue;
        }
        let Some(seen) = fill.seen_racks.get_mut(usize::from(rack)) else {
            continue;
        };
        if !*seen {
            *seen = true;
        } else if fill.repeats > 0 {
            fill.repeats -= 1;
        } else {
            continue;
        }
        out.push(node);
        fill.left -= 1;
        if fill.left == 0 {
            to_fill -= 1;
        }
    }
}

#[cfg(test)]
#[path = "datacenters_tests.rs"]
mod tests;
