//! The CQL the driver runs for itself, on one connection: reading the nodes and keyspaces
//! (and, from ScyllaDB, which keyspaces are in tablets) from the system tables, the schema
//! versions, `REGISTER` for events and `USE`. Used by the control connection
//! ([`crate::control`]) and by the session (schema agreement, keyspace switching,
//! connection set-up); nothing here is on the request path.
//!
//! Invariant: every answer goes through [`crate::result`], so an ERROR or an unexpected
//! message is the same typed [`Error`] wherever the driver asked.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};

use doppio_proto::frame::Flags;
use doppio_proto::request::{Query, QueryParameters, Register};
use doppio_proto::response::{ErrorCode, Response, ResultBody};
use doppio_proto::rows::RowsView;

use crate::connection::Connection;
use crate::error::{Error, Violation};
use crate::result::{reply, result_of, unexpected, QueryResult};
use crate::routing::topology::{self, NodeInfo, Replication, TopologySnapshot};

/// The events the control connection follows.
pub(crate) const EVENTS: [&str; 3] = ["TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"];

/// Runs one unpaged statement without values on `conn` and returns its result.
pub(crate) async fn query(conn: &Connection, cql: &str) -> Result<QueryResult, Error> {
    let q = Query {
        query: cql,
        params: QueryParameters::default(),
        values: &(),
    };
    let frame = conn
        .send(Flags::NONE, &q, None)
        .await
        .map_err(|e| Error::from_request(conn.addr(), e))?;
    result_of(conn, frame, "QUERY")
}

/// The rows of `result`, or a protocol error naming `table` if it has none.
fn rows_of<'a>(result: &'a QueryResult, table: &'static str) -> Result<RowsView<'a>, Error> {
    result.rows().ok_or_else(|| Error::Protocol {
        node: result.node,
        violation: Box::new(Violation::NoRows { table }),
    })
}

fn topology_error(node: SocketAddr, e: topology::TopologyError) -> Error {
    Error::Protocol {
        node,
        violation: Box::new(Violation::Topology(e)),
    }
}

/// Reads the peers, from `system.peers_v2` when the node has it (`v2` remembers the
/// answer), else from `system.peers`.
async fn read_peers(conn: &Connection, v2: &Cell<Option<bool>>) -> Result<Vec<NodeInfo>, Error> {
    let node = conn.addr();
    if v2.get() != Some(false) {
        match query(conn, "SELECT * FROM system.peers_v2").await {
            Ok(r) => {
                v2.set(Some(true));
                let rows = rows_of(&r, "system.peers_v2")?;
                return topology::peers(rows, true, node.port())
                    .map_err(|e| topology_error(node, e));
            }
            // A node before 4.0 has no peers_v2 table.
            Err(e) if e.server_code() == Some(ErrorCode::Invalid) => v2.set(Some(false)),
            Err(e) => return Err(e),
        }
    }
    let r = query(conn, "SELECT * FROM system.peers").await?;
    topology::peers(rows_of(&r, "system.peers")?, false, node.port())
        .map_err(|e| topology_error(node, e))
}

/// Reads the nodes (local and peers) and the keyspaces through `conn`. `v2` remembers
/// whether the node has `system.peers_v2`.
pub(crate) async fn fetch_topology(
    conn: &Connection,
    v2: &Cell<Option<bool>>,
) -> Result<TopologySnapshot, Error> {
    let node = conn.addr();
    let local = query(conn, "SELECT * FROM system.local WHERE key = 'local'").await?;
    let (local, partitioner) = topology::local_node(rows_of(&local, "system.local")?, node)
        .map_err(|e| topology_error(node, e))?;
    let mut nodes = read_peers(conn, v2).await?;
    nodes.retain(|n| n.addr != local.addr);
    let contact_datacenter = Some(local.datacenter.clone()).filter(|dc| !dc.is_empty());
    nodes.push(local);
    nodes.sort_by_key(|n| n.addr);
    nodes.dedup_by_key(|n| n.addr);
    let keyspaces = fetch_keyspaces(conn).await?;
    Ok(TopologySnapshot {
        version: 0,
        source: Some(node),
        nodes,
        keyspaces: keyspaces.replication,
        tablet_keyspaces: keyspaces.tablets,
        contact_datacenter,
        partitioner,
    })
}

/// What the schema says of every keyspace: its replication and, on ScyllaDB, whether it is
/// laid out in tablets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyspaceLayout {
    /// Replication of every keyspace.
    pub(crate) replication: BTreeMap<String, Replication>,
    /// The keyspaces in tablets (`None`: the node does not say).
    pub(crate) tablets: Option<BTreeSet<String>>,
}

impl KeyspaceLayout {
    /// Whether `snapshot` already says what this layout says (both fields, which move together).
    pub(crate) fn matches(&self, snapshot: &TopologySnapshot) -> bool {
        snapshot.keyspaces == self.replication && snapshot.tablet_keyspaces == self.tablets
    }

    /// `base` with this layout's keyspaces, its nodes and the rest as they were.
    pub(crate) fn applied_to(self, base: &TopologySnapshot) -> TopologySnapshot {
        TopologySnapshot {
            keyspaces: self.replication,
            tablet_keyspaces: self.tablets,
            ..base.clone()
        }
    }
}

/// Reads the replication of every keyspace through `conn`, and which are in tablets.
pub(crate) async fn fetch_keyspaces(conn: &Connection) -> Result<KeyspaceLayout, Error> {
    let r = query(
        conn,
        "SELECT keyspace_name, replication FROM system_schema.keyspaces",
    )
    .await?;
    let replication = topology::keyspaces(rows_of(&r, "system_schema.keyspaces")?)
        .map_err(|e| topology_error(conn.addr(), e))?;
    Ok(KeyspaceLayout {
        replication,
        tablets: fetch_tablet_keyspaces(conn).await?,
    })
}

/// The keyspaces `conn`'s node lays out in tablets (`system_schema.scylla_keyspaces`). Asked
/// only of a node whose connection turned tablets routing on: Cassandra has no such table
/// (`None`), and a ScyllaDB without the extension cannot tell the driver where tablets are.
async fn fetch_tablet_keyspaces(conn: &Connection) -> Result<Option<BTreeSet<String>>, Error> {
    const TABLE: &str = "system_schema.scylla_keyspaces";
    if !conn.extensions().tablets_routing() {
        return Ok(None);
    }
    match query(
        conn,
        "SELECT keyspace_name, initial_tablets FROM system_schema.scylla_keyspaces",
    )
    .await
    {
        Ok(r) => topology::tablet_keyspaces(rows_of(&r, TABLE)?)
            .map(Some)
            .map_err(|e| topology_error(conn.addr(), e)),
        // A node without the table (or, before tablets, without the column) has none.
        Err(e) if e.server_code() == Some(ErrorCode::Invalid) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The schema version `conn`'s node reports for itself and, with their addresses, for each
/// of its peers (a peer's address is its `rpc_address`, or `peer` when that is unset).
pub(crate) async fn schema_versions(
    conn: &Connection,
) -> Result<(Vec<[u8; 16]>, Vec<(IpAddr, [u8; 16])>), Error> {
    let local = query(
        conn,
        "SELECT schema_version FROM system.local WHERE key = 'local'",
    )
    .await?;
    let mut own = Vec::new();
    if let Some(rows) = local.rows() {
        for row in rows.iter().flatten() {
            if let Ok(Some(v)) = row.get::<Option<[u8; 16]>>(0) {
                own.push(v);
            }
        }
    }
    let peers = query(
        conn,
        "SELECT peer, rpc_address, schema_version FROM system.peers",
    )
    .await?;
    let mut others = Vec::new();
    if let Some(rows) = peers.rows() {
        for row in rows.iter().flatten() {
            let ip = row
                .get::<Option<IpAddr>>(1)
                .ok()
                .flatten()
                .filter(|ip| !ip.is_unspecified())
                .or_else(|| row.get::<Option<IpAddr>>(0).ok().flatten());
            if let (Some(ip), Ok(Some(v))) = (ip, row.get::<Option<[u8; 16]>>(2)) {
                others.push((ip, v));
            }
        }
    }
    Ok((own, others))
}

/// Registers `conn` for the events the control connection follows ([`EVENTS`]).
pub(crate) async fn register(conn: &Connection) -> Result<(), Error> {
    let node = conn.addr();
    let frame = conn
        .send(Flags::NONE, &Register { events: &EVENTS }, None)
        .await
        .map_err(|e| Error::from_request(node, e))?;
    match reply(node, frame.response)? {
        Response::Ready => Ok(()),
        other => Err(unexpected(node, "REGISTER", &other)),
    }
}

/// Sets `keyspace` on `conn` (`USE`, the name quoted so that case and special characters
/// survive).
pub(crate) async fn use_keyspace(conn: &Connection, keyspace: &str) -> Result<(), Error> {
    let cql = format!("USE \"{}\"", keyspace.replace('"', "\"\""));
    match query(conn, &cql).await?.body {
        ResultBody::SetKeyspace(_) => Ok(()),
        _ => Err(Error::UnexpectedResponse {
            node: conn.addr(),
            request: "USE",
            got: "a RESULT that is not SetKeyspace",
        }),
    }
}
