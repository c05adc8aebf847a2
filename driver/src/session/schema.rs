//! Schema agreement: after a statement that changed the schema, the session waits (bounded
//! by `schema_agreement_timeout`) until every live node reports the same schema version, so
//! that the next statement sees the change; a changed keyspace's replication is read again
//! at once so this shard routes by it (the other shards learn it from the control
//! connection's event).

use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_proto::response::{ResultBody, SchemaTarget};

use super::handle::Session;
use crate::connection::Connection;
use crate::error::Error;
use crate::result::QueryResult;
use crate::routing::topology::TopologySnapshot;
use crate::system;

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
                if current.keyspaces != keyspaces {
                    self.install(Arc::new(TopologySnapshot {
                        keyspaces,
                        ..(*current).clone()
                    }));
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
        let deadline = Instant::now() + timeout;
        loop {
            if self.schema_agrees(conn).await? {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            doppio_rt::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn schema_agrees(&self, conn: &Connection) -> Result<bool, Error> {
        let (mut versions, peers) = system::schema_versions(conn).await?;
        let view = self.view();
        // A peer counts if this shard has a live connection to it (a down node keeps its
        // old version until it comes back).
        let live = |ip: std::net::IpAddr| {
            (0..view.len()).any(|i| {
                let i = i as u16;
                view.info(i).is_some_and(|n| n.addr.ip() == ip) && view.is_up(i)
            })
        };
        versions.extend(
            peers
                .into_iter()
                .filter(|(ip, _)| live(*ip))
                .map(|(_, v)| v),
        );
        versions.sort_unstable();
        versions.dedup();
        Ok(versions.len() <= 1)
    }
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
