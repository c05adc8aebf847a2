//! The connections each backend held (CONFIG's `connections by node`): how many TCP
//! connections its driver opened to each node, and to which ScyllaDB shard where the
//! shard-aware port tells, counted from the kernel's socket table once they settled after
//! connecting; and [`parity`], the sentence a report and its VERDICT carry when two
//! backends did not hold the same.
//!
//! Counted from outside the drivers on purpose: a pool that a driver or its adapter sizes
//! wrongly (one connection per node where one per shard was meant) shows here whatever the
//! driver says of itself. A connection to a node's shard-aware port belongs to the shard
//! `source port % shards` (ScyllaDB's rule; the driver chose the port for it); one to the
//! plain port belongs to the shard the node picked, which only the node knows, and is
//! counted as of no known shard. A driver's control connection is one of its connections.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};

/// One backend's connections (`config.connection_shapes`' values).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionShape {
    /// True if the connections held still before they were counted (false: the driver was
    /// still opening or closing some when the bench stopped waiting).
    pub settled: bool,
    /// By node address (its IP).
    pub nodes: BTreeMap<String, NodeConnections>,
}

/// One backend's connections to one node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeConnections {
    /// TCP connections to it, every port.
    pub connections: usize,
    /// Its ScyllaDB shards as the driver learned them (`null`: not sharded, Cassandra).
    pub scylla_shards: Option<u16>,
    /// Connections through the shard-aware port, by the shard each belongs to (empty when
    /// not sharded).
    pub by_shard: Vec<usize>,
    /// Connections whose shard is not known from outside: to the plain port, where the node
    /// picks (every connection of an unsharded node).
    pub shard_unknown: usize,
}

impl ConnectionShape {
    /// The shape of `connections` (local and remote ends), those to a port of `cql_ports`
    /// being to a node's plain port and the others to its shard-aware port, `shards` each
    /// node's ScyllaDB shards by IP.
    pub fn of(
        connections: &[(SocketAddr, SocketAddr)],
        cql_ports: &BTreeSet<u16>,
        shards: &BTreeMap<IpAddr, u16>,
        settled: bool,
    ) -> Self {
        let shards: BTreeMap<IpAddr, u16> = shards
            .iter()
            .map(|(ip, n)| (ip.to_canonical(), *n))
            .collect();
        let mut nodes: BTreeMap<String, NodeConnections> = BTreeMap::new();
        for (local, remote) in connections {
            let ip = remote.ip().to_canonical();
            let node = nodes.entry(ip.to_string()).or_default();
            node.connections += 1;
            let sharded = shards.get(&ip).copied().filter(|&n| n > 0);
            node.scylla_shards = sharded;
            match sharded {
                Some(n) if !cql_ports.contains(&remote.port()) => {
                    let shard = usize::from(local.port() % n);
                    if node.by_shard.len() < usize::from(n) {
                        node.by_shard.resize(usize::from(n), 0);
                    }
                    node.by_shard[shard] += 1;
                }
                _ => node.shard_unknown += 1,
            }
        }
        // Shards no connection reached count 0.
        for node in nodes.values_mut() {
            if let Some(n) = node.scylla_shards {
                node.by_shard.resize(usize::from(n), 0);
            }
        }
        ConnectionShape { settled, nodes }
    }

    /// Connections to every node.
    pub fn total(&self) -> usize {
        self.nodes.values().map(|n| n.connections).sum()
    }

    /// True if `other` held as many connections to each node (their shards aside: those
    /// through the plain port land where the node puts them, run to run).
    pub fn same_counts(&self, other: &ConnectionShape) -> bool {
        let counts = |s: &ConnectionShape| -> BTreeMap<String, usize> {
            s.nodes
                .iter()
                .map(|(ip, n)| (ip.clone(), n.connections))
                .collect()
        };
        counts(self) == counts(other)
    }

    /// CONFIG's words for it: the total, then each node's count with its shards
    /// (`12: 127.0.0.1 5 (shards 1/1/1/1 +1), ...`).
    pub fn text(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|(ip, n)| {
                if n.scylla_shards.is_some() {
                    let shards: Vec<String> = n.by_shard.iter().map(ToString::to_string).collect();
                    let unknown = if n.shard_unknown > 0 {
                        format!(" +{} plain", n.shard_unknown)
                    } else {
                        String::new()
                    };
                    format!(
                        "{ip} {} (shards {}{unknown})",
                        n.connections,
                        shards.join("/")
                    )
                } else {
                    format!("{ip} {}", n.connections)
                }
            })
            .collect();
        let unsettled = if self.settled { "" } else { ", still changing" };
        format!("{}{unsettled}: {}", self.total(), nodes.join(", "))
    }
}

/// The connections of several loader machines' runs, by driver name: each machine holds
/// its own, so they add up node by node and shard by shard (settled if every machine's
/// were).
pub fn summed<'a>(
    machines: impl IntoIterator<Item = &'a BTreeMap<String, ConnectionShape>>,
) -> BTreeMap<String, ConnectionShape> {
    let mut total: BTreeMap<String, ConnectionShape> = BTreeMap::new();
    for shapes in machines {
        for (driver, shape) in shapes {
            let sum = total
                .entry(driver.clone())
                .or_insert_with(|| ConnectionShape {
                    settled: true,
                    nodes: BTreeMap::new(),
                });
            sum.settled &= shape.settled;
            for (ip, n) in &shape.nodes {
                let t = sum.nodes.entry(ip.clone()).or_default();
                t.connections += n.connections;
                t.scylla_shards = t.scylla_shards.or(n.scylla_shards);
                if t.by_shard.len() < n.by_shard.len() {
                    t.by_shard.resize(n.by_shard.len(), 0);
                }
                for (a, b) in t.by_shard.iter_mut().zip(&n.by_shard) {
                    *a += b;
                }
                t.shard_unknown += n.shard_unknown;
            }
        }
    }
    total
}

/// How many connections two backends' counts of one node may differ by and still hold the
/// same: a driver's control connection is an extra connection to one node, not always the
/// same node in two drivers.
pub const CONTROL_SLACK: usize = 1;

/// The sentence a report and its VERDICT carry when the backends of `shapes` (by driver
/// name) did not hold the same connections: different totals, or a node where two differ
/// by more than [`CONTROL_SLACK`]; `None` when they did (or fewer than two were counted).
pub fn parity(shapes: &BTreeMap<String, ConnectionShape>) -> Option<String> {
    if shapes.len() < 2 {
        return None;
    }
    let totals: BTreeSet<usize> = shapes.values().map(ConnectionShape::total).collect();
    let nodes: BTreeSet<&String> = shapes.values().flat_map(|s| s.nodes.keys()).collect();
    let uneven = nodes.iter().any(|ip| {
        let counts: Vec<usize> = shapes
            .values()
            .map(|s| s.nodes.get(*ip).map_or(0, |n| n.connections))
            .collect();
        let (min, max) = (
            counts.iter().min().copied().unwrap_or(0),
            counts.iter().max().copied().unwrap_or(0),
        );
        max - min > CONTROL_SLACK
    });
    if totals.len() < 2 && !uneven {
        return None;
    }
    let each: Vec<String> = shapes
        .iter()
        .map(|(driver, s)| format!("{driver} {}", s.text()))
        .collect();
    Some(format!(
        "the backends did not hold the same connections ({}): a comparison wants the same \
         connections per node and per shard, or each figure compares pools as much as \
         drivers",
        each.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    /// A ScyllaDB-like node of 4 shards at 127.0.0.1, plain port 9042, shard-aware 19042.
    fn scylla_node() -> (BTreeSet<u16>, BTreeMap<IpAddr, u16>) {
        (
            [9042].into_iter().collect(),
            [(at("127.0.0.1:0").ip(), 4)].into_iter().collect(),
        )
    }

    #[test]
    fn shard_aware_connections_count_by_source_port_and_plain_ones_apart() {
        let (ports, shards) = scylla_node();
        let connections = [
            (at("127.0.0.1:40000"), at("127.0.0.1:19042")), // 40000 % 4 = 0
            (at("127.0.0.1:40001"), at("127.0.0.1:19042")), // 1
            (at("127.0.0.1:40005"), at("127.0.0.1:19042")), // 1
            (at("127.0.0.1:40003"), at("127.0.0.1:19042")), // 3
            (at("127.0.0.1:50123"), at("127.0.0.1:9042")),  // plain
        ];
        let s = ConnectionShape::of(&connections, &ports, &shards, true);
        let n = &s.nodes["127.0.0.1"];
        assert_eq!(n.connections, 5);
        assert_eq!(n.scylla_shards, Some(4));
        assert_eq!(n.by_shard, vec![1, 2, 0, 1]);
        assert_eq!(n.shard_unknown, 1);
        assert_eq!(s.text(), "5: 127.0.0.1 5 (shards 1/2/0/1 +1 plain)");
    }

    #[test]
    fn an_unsharded_node_counts_every_connection_as_of_no_shard() {
        let ports = [9042].into_iter().collect();
        let connections = [
            (at("127.0.0.1:40000"), at("127.0.0.2:9042")),
            (
                at("[::ffff:127.0.0.1]:40001"),
                at("[::ffff:127.0.0.2]:9042"),
            ),
        ];
        let s = ConnectionShape::of(&connections, &ports, &BTreeMap::new(), false);
        // The IPv4-mapped address is the same node.
        let n = &s.nodes["127.0.0.2"];
        assert_eq!(
            (n.connections, n.scylla_shards, n.shard_unknown),
            (2, None, 2)
        );
        assert!(n.by_shard.is_empty());
        assert_eq!(s.text(), "2, still changing: 127.0.0.2 2");
    }

    fn shape(counts: &[(&str, usize)]) -> ConnectionShape {
        ConnectionShape {
            settled: true,
            nodes: counts
                .iter()
                .map(|(ip, n)| {
                    let node = NodeConnections {
                        connections: *n,
                        shard_unknown: *n,
                        ..NodeConnections::default()
                    };
                    ((*ip).to_owned(), node)
                })
                .collect(),
        }
    }

    #[test]
    fn the_same_pools_with_the_control_connection_elsewhere_hold_the_same() {
        let shapes = [
            (
                "doppio".to_owned(),
                shape(&[("10.0.0.1", 5), ("10.0.0.2", 4)]),
            ),
            (
                "scylla".to_owned(),
                shape(&[("10.0.0.1", 4), ("10.0.0.2", 5)]),
            ),
        ]
        .into_iter()
        .collect();
        assert_eq!(parity(&shapes), None);
    }

    #[test]
    fn a_pool_of_one_connection_per_node_against_one_per_shard_is_told() {
        // The bench's old scylla pool: one connection per host on a node of 4 shards.
        let shapes = [
            ("doppio".to_owned(), shape(&[("10.0.0.1", 5)])),
            ("scylla".to_owned(), shape(&[("10.0.0.1", 2)])),
        ]
        .into_iter()
        .collect();
        let w = parity(&shapes).expect("told");
        assert!(
            w.contains("doppio 5: 10.0.0.1 5; scylla 2: 10.0.0.1 2"),
            "{w}"
        );
    }

    #[test]
    fn the_same_total_spread_unevenly_over_nodes_is_told() {
        let shapes = [
            (
                "doppio".to_owned(),
                shape(&[("10.0.0.1", 4), ("10.0.0.2", 4)]),
            ),
            (
                "scylla".to_owned(),
                shape(&[("10.0.0.1", 6), ("10.0.0.2", 2)]),
            ),
        ]
        .into_iter()
        .collect();
        assert!(parity(&shapes).is_some());
    }

    #[test]
    fn machines_add_up_node_by_node_and_shard_by_shard() {
        let (ports, shards) = scylla_node();
        let one = |port: u16, settled: bool| {
            let c = [(at(&format!("127.0.0.1:{port}")), at("127.0.0.1:19042"))];
            let map: BTreeMap<String, ConnectionShape> = [(
                "doppio".to_owned(),
                ConnectionShape::of(&c, &ports, &shards, settled),
            )]
            .into_iter()
            .collect();
            map
        };
        let (a, b) = (one(40001, true), one(40005, false));
        let sum = summed([&a, &b]);
        let d = &sum["doppio"];
        assert!(!d.settled);
        assert_eq!(d.nodes["127.0.0.1"].connections, 2);
        assert_eq!(d.nodes["127.0.0.1"].by_shard, vec![0, 2, 0, 0]);
    }

    #[test]
    fn one_backend_alone_has_nothing_to_match() {
        let shapes = [("doppio".to_owned(), shape(&[("10.0.0.1", 5)]))]
            .into_iter()
            .collect();
        assert_eq!(parity(&shapes), None);
    }
}
