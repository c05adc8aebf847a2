//! Schema agreement: after a statement that changed the schema, the session waits (bounded
//! by `schema_agreement_timeout`) until every live node reports the same schema version, so
//! that the next statement sees the change; a changed keyspace's replication is read again
//! at once so this shard routes by it (the other shards learn it from the control
//! connection's event).

use std::sync::Arc;
use std::time::Duration;

use doppio_proto::response::{ResultBody, SchemaTarget};

use super::handle::Session;
use crate::connection::Connection;
use crate::error::Error;
use crate::result::QueryResult;
use crate::system;
use crate::telemetry::event;

impl Session {
    /// After a schema change answered by `result.node`: wait until the live nodes agree on
    /// the schema, and re-read a changed keyspace's replication.
    pub(super) async fn after_schema_change(&self, result: &QueryResult) {
        let Some(conn) = self.node_at(result.node).and_then(|n| n.pool.pick()) else {
            return;
        };
        let timeout = self.inner.config.schema_agreement_timeout;
        if !timeout.is_zero() {
            let _ = self.await_schema_agreement(&conn, timeout).await;
        }
        if changed_keyspace(result).is_some() {
            if let Ok(keyspaces) = system::fetch_keyspaces(&conn).await {
                let current = self.topology();
                if !keyspaces.matches(&current) {
                    self.install(Arc::new(keyspaces.applied_to(&current)));
                }
            }
        }
    }

    /// Polls `conn`'s node for the schema versions of itself and its live peers until they
    /// are all the same (true), or `timeout` passes (false).
    pub async fn await_schema_agreement(
        &self,
        conn: &Connection,
        timeout: Duration,
    ) -> Result<bool, Error> {
        let deadline = doppio_rt::now() + timeout;
        loop {
            if self.schema_agrees(conn).await? {
                event!(debug, node = %conn.addr(), "schema agreement reached");
                return Ok(true);
            }
            if doppio_rt::now() >= deadline {
                event!(warn, node = %conn.addr(), ?timeout, "no schema agreement within the timeout");
                return Ok(false);
            }
            doppio_rt::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn schema_agrees(&self, conn: &Connection) -> Result<bool, Error> {
        let (local, peers) = system::schema_versions(conn).await?;
        let view = self.view();
        // A peer is left out only if this shard knows it is down (a down node keeps its old
        // version until it comes back). One whose pool is still connecting counts: right
        // after a session starts most are, and a node left out then may not have the table
        // the next statement uses.
        let known_down = |ip: std::net::IpAddr| {
            (0..view.len()).any(|i| {
                let i = i as u16;
                view.info(i).is_some_and(|n| n.addr.ip() == ip)
                    && view.node(i).is_some_and(|n| n.known_down())
            })
        };
        Ok(versions_agree(local, peers, known_down))
    }
}

/// True if the coordinator's versions (`local`) and those of every peer not `known_down`
/// are one and the same.
fn versions_agree<V: Ord>(
    mut local: Vec<V>,
    peers: Vec<(std::net::IpAddr, V)>,
    known_down: impl Fn(std::net::IpAddr) -> bool,
) -> bool {
    local.extend(
        peers
            .into_iter()
            .filter(|(ip, _)| !known_down(*ip))
            .map(|(_, v)| v),
    );
    local.sort_unstable();
    local.dedup();
    local.len() <= 1
}

/// The keyspace whose schema `result` changed, if it is a keyspace change (its
/// replication may have changed).
fn changed_keyspace(result: &QueryResult) -> Option<&str> {
    match &result.body {
        ResultBody::SchemaChange(c) => match &c.target {
            SchemaTarget::Keyspace(ks) => Some(ks),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use super::versions_agree;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
    }

    /// A peer with another version holds the agreement back unless it is known down; a peer
    /// this shard has not connected to yet is not known down (before, only peers with an
    /// open connection counted, and a fresh session agreed without its third node).
    #[test]
    fn only_peers_known_down_are_left_out() {
        let peers = || vec![(ip(2), 1), (ip(3), 2)];
        assert!(!versions_agree(vec![1], peers(), |_| false));
        assert!(versions_agree(vec![1], peers(), |a| a == ip(3)));
        assert!(!versions_agree(vec![1], peers(), |a| a == ip(2)));
        assert!(versions_agree(vec![1], vec![(ip(2), 1)], |_| false));
        assert!(versions_agree(Vec::<u8>::new(), vec![], |_| false));
    }
}
