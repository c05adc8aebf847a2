//! What a cluster says about itself: its nodes (address, data center, rack, tokens) and each
//! keyspace's replication, read from `system.local`, `system.peers_v2` (or `system.peers`)
//! and `system_schema.keyspaces`; on ScyllaDB also which keyspaces are laid out in tablets
//! (`system_schema.scylla_keyspaces`).
//!
//! A [`TopologySnapshot`] is plain `Send + Sync` data: the control connection builds one and
//! every shard derives its own routing tables from it (nothing here is consulted on the
//! request path).
//!
//! Invariants:
//! - Node addresses are the ones clients connect to (native transport), unique in a snapshot.
//! - A row that lacks what routing needs (an address, a data center) is left out rather than
//!   guessed; a node without parsable tokens is kept but owns no range.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};

use doppio_proto::deserialize::DeserializeValue;
use doppio_proto::rows::{Row, RowsView};

use super::murmur3::Token;

/// One node as the cluster describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// Where clients connect to it (its native-transport address and port).
    pub addr: SocketAddr,
    /// Its host id, when the cluster reported one.
    pub host_id: Option<[u8; 16]>,
    /// Data center.
    pub datacenter: String,
    /// Rack.
    pub rack: String,
    /// The tokens it owns (Murmur3), sorted.
    pub tokens: Vec<Token>,
}

/// How a keyspace places its replicas.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Replication {
    /// `SimpleStrategy`: the `rf` nodes that follow the token on the ring.
    Simple {
        /// Replication factor.
        rf: usize,
    },
    /// `NetworkTopologyStrategy`: per data center, `rf` nodes on distinct racks where
    /// possible; sorted by data-center name.
    NetworkTopology {
        /// Replication factor per data center.
        dcs: Vec<(String, usize)>,
    },
    /// `LocalStrategy` (system keyspaces): every node holds its own copy.
    Local,
    /// Any other strategy: requests are not routed by token.
    Other {
        /// The strategy class as the cluster names it.
        class: String,
    },
}

/// Reads a replication factor as Cassandra writes it: `3`, or `3/1` (total/transient).
fn parse_rf(s: &str) -> Option<usize> {
    s.split('/').next()?.trim().parse().ok()
}

impl Replication {
    /// Parses the `replication` map of `system_schema.keyspaces`.
    pub fn from_map<'a>(map: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let map: BTreeMap<&str, &str> = map.into_iter().collect();
        let class = map.get("class").copied().unwrap_or("");
        let short = class.rsplit('.').next().unwrap_or(class);
        match short {
            "SimpleStrategy" => match map.get("replication_factor").and_then(|v| parse_rf(v)) {
                Some(rf) => Replication::Simple { rf },
                None => Replication::Other {
                    class: class.to_owned(),
                },
            },
            "NetworkTopologyStrategy" => {
                let dcs = map
                    .iter()
                    .filter(|(k, _)| **k != "class")
                    .filter_map(|(k, v)| Some(((*k).to_owned(), parse_rf(v)?)))
                    .collect();
                Replication::NetworkTopology { dcs }
            }
            "LocalStrategy" => Replication::Local,
            _ => Replication::Other {
                class: class.to_owned(),
            },
        }
    }
}

/// What the control connection learned about the cluster. `Send + Sync`; each shard builds
/// its own routing tables from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologySnapshot {
    /// Increases with every snapshot the control connection publishes.
    pub version: u64,
    /// Every known node, sorted by address.
    pub nodes: Vec<NodeInfo>,
    /// Replication of every keyspace.
    pub keyspaces: BTreeMap<String, Replication>,
    /// The keyspaces ScyllaDB lays out in tablets, not on the token ring: their replicas come
    /// from each tablet, never from `keyspaces`' replication. `None` when the cluster does not
    /// say (Cassandra, or a node without tablets routing).
    pub tablet_keyspaces: Option<BTreeSet<String>>,
    /// The node the snapshot was read from (the control connection's node).
    pub source: Option<SocketAddr>,
    /// The data center of the node the control connection talks to (the default local
    /// data center).
    pub contact_datacenter: Option<String>,
    /// The partitioner's class; token routing is used only with Murmur3.
    pub partitioner: Option<String>,
}

impl TopologySnapshot {
    /// True if tokens are Murmur3 tokens (the only partitioner routed by token).
    pub fn murmur3(&self) -> bool {
        self.partitioner
            .as_deref()
            .is_none_or(|p| p.ends_with("Murmur3Partitioner"))
    }

    /// The node at `addr`.
    pub fn node(&self, addr: SocketAddr) -> Option<&NodeInfo> {
        self.nodes.iter().find(|n| n.addr == addr)
    }
}

/// Why a system table could not be read into a topology.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {table}: {reason}")]
pub struct TopologyError {
    /// The table.
    pub table: &'static str,
    /// What was wrong.
    pub reason: String,
}

/// Column lookups by name over one result (columns may be missing in older versions).
struct Columns<'a> {
    view: RowsView<'a>,
    table: &'static str,
}

impl<'a> Columns<'a> {
    fn index(&self, name: &str) -> Option<usize> {
        self.view.columns().iter().position(|c| c.name == name)
    }

    /// Column `name` of `row`, `None` if the column is absent or the cell null.
    fn get<T: DeserializeValue<'a>>(
        &self,
        row: &Row<'a>,
        name: &str,
    ) -> Result<Option<T>, TopologyError> {
        let Some(i) = self.index(name) else {
            return Ok(None);
        };
        row.get::<Option<T>>(i).map_err(|e| TopologyError {
            table: self.table,
            reason: e.to_string(),
        })
    }

    fn rows(&self) -> impl Iterator<Item = Result<Row<'a>, TopologyError>> + 'a {
        let table = self.table;
        self.view.iter().map(move |r| {
            r.map_err(|e| TopologyError {
                table,
                reason: e.to_string(),
            })
        })
    }
}

fn parse_tokens(tokens: Option<Vec<String>>) -> Vec<Token> {
    let mut out: Vec<Token> = tokens
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t.parse().ok())
        .collect();
    out.sort_unstable();
    out
}

/// An address clients can reach: a wildcard address is replaced by `fallback`.
fn reachable(ip: Option<IpAddr>, fallback: Option<IpAddr>) -> Option<IpAddr> {
    match ip {
        Some(ip) if !ip.is_unspecified() => Some(ip),
        _ => fallback,
    }
}

/// The local node from `SELECT * FROM system.local`, reached at `connected` (the address
/// the control connection used, which is what clients can reach), with the partitioner.
pub fn local_node(
    rows: RowsView<'_>,
    connected: SocketAddr,
) -> Result<(NodeInfo, Option<String>), TopologyError> {
    let cols = Columns {
        view: rows,
        table: "system.local",
    };
    let row = cols.rows().next().ok_or_else(|| TopologyError {
        table: "system.local",
        reason: "no row".into(),
    })??;
    let info = NodeInfo {
        addr: connected,
        host_id: cols.get::<[u8; 16]>(&row, "host_id")?,
        datacenter: cols.get::<String>(&row, "data_center")?.unwrap_or_default(),
        rack: cols.get::<String>(&row, "rack")?.unwrap_or_default(),
        tokens: parse_tokens(cols.get::<Vec<String>>(&row, "tokens")?),
    };
    Ok((info, cols.get::<String>(&row, "partitioner")?))
}

/// The peers from `SELECT * FROM system.peers_v2` (`v2`) or `system.peers`. Peers without
/// a usable address or data center are skipped; `default_port` is the native port for
/// `system.peers`, which does not record it.
pub fn peers(
    rows: RowsView<'_>,
    v2: bool,
    default_port: u16,
) -> Result<Vec<NodeInfo>, TopologyError> {
    let cols = Columns {
        view: rows,
        table: if v2 {
            "system.peers_v2"
        } else {
            "system.peers"
        },
    };
    let mut out = Vec::new();
    for row in cols.rows() {
        let row = row?;
        let peer = cols.get::<IpAddr>(&row, "peer")?;
        let (ip, port) = if v2 {
            let ip = cols.get::<IpAddr>(&row, "native_address")?;
            let port = cols.get::<i32>(&row, "native_port")?;
            (ip, port.and_then(|p| u16::try_from(p).ok()))
        } else {
            (cols.get::<IpAddr>(&row, "rpc_address")?, None)
        };
        let Some(ip) = reachable(ip, peer) else {
            continue;
        };
        let Some(datacenter) = cols.get::<String>(&row, "data_center")? else {
            continue;
        };
        out.push(NodeInfo {
            addr: SocketAddr::new(ip, port.unwrap_or(default_port)),
            host_id: cols.get::<[u8; 16]>(&row, "host_id")?,
            datacenter,
            rack: cols.get::<String>(&row, "rack")?.unwrap_or_default(),
            tokens: parse_tokens(cols.get::<Vec<String>>(&row, "tokens")?),
        });
    }
    Ok(out)
}

/// Keyspace replication from `SELECT keyspace_name, replication FROM
/// system_schema.keyspaces`.
pub fn keyspaces(rows: RowsView<'_>) -> Result<BTreeMap<String, Replication>, TopologyError> {
    let cols = Columns {
        view: rows,
        table: "system_schema.keyspaces",
    };
    let mut out = BTreeMap::new();
    for row in cols.rows() {
        let row = row?;
        let Some(name) = cols.get::<String>(&row, "keyspace_name")? else {
            continue;
        };
        let map: BTreeMap<String, String> = cols
            .get::<BTreeMap<String, String>>(&row, "replication")?
            .unwrap_or_default();
        let replication = Replication::from_map(map.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        out.insert(name, replication);
    }
    Ok(out)
}

/// The keyspaces laid out in tablets, from `SELECT keyspace_name, initial_tablets FROM
/// system_schema.scylla_keyspaces`: those whose `initial_tablets` is set (ScyllaDB keeps a
/// row for other keyspaces too, for their storage options, with it null).
pub fn tablet_keyspaces(rows: RowsView<'_>) -> Result<BTreeSet<String>, TopologyError> {
    let cols = Columns {
        view: rows,
        table: "system_schema.scylla_keyspaces",
    };
    let mut out = BTreeSet::new();
    for row in cols.rows() {
        let row = row?;
        let name = cols.get::<String>(&row, "keyspace_name")?;
        let initial = cols.get::<i32>(&row, "initial_tablets")?;
        if let (Some(name), Some(_)) = (name, initial) {
            out.insert(name);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_maps_parse_like_cassandra_writes_them() {
        let simple = Replication::from_map([
            ("class", "org.apache.cassandra.locator.SimpleStrategy"),
            ("replication_factor", "3"),
        ]);
        assert_eq!(simple, Replication::Simple { rf: 3 });
        let nts = Replication::from_map([
            (
                "class",
                "org.apache.cassandra.locator.NetworkTopologyStrategy",
            ),
            ("dc2", "2"),
            ("dc1", "3/1"),
        ]);
        assert_eq!(
            nts,
            Replication::NetworkTopology {
                dcs: vec![("dc1".into(), 3), ("dc2".into(), 2)]
            }
        );
        assert_eq!(
            Replication::from_map([("class", "org.apache.cassandra.locator.LocalStrategy")]),
            Replication::Local
        );
        assert!(matches!(
            Replication::from_map([("class", "EverywhereStrategy")]),
            Replication::Other { .. }
        ));
        assert!(matches!(
            Replication::from_map([("class", "SimpleStrategy"), ("replication_factor", "x")]),
            Replication::Other { .. }
        ));
    }

    #[test]
    fn tokens_are_parsed_and_sorted_and_garbage_is_skipped() {
        let t = parse_tokens(Some(vec!["5".into(), "-9".into(), "x".into()]));
        assert_eq!(t, vec![-9, 5]);
        assert!(parse_tokens(None).is_empty());
    }

    #[test]
    fn wildcard_addresses_fall_back_to_the_peer_address() {
        let peer: IpAddr = "10.0.0.2".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        assert_eq!(
            reachable(Some("0.0.0.0".parse().unwrap_or(peer)), Some(peer)),
            Some(peer)
        );
        assert_eq!(reachable(None, Some(peer)), Some(peer));
        assert_eq!(reachable(None, None), None);
    }
}
