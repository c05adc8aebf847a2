//! Switching the session keyspace: `USE` on one node first (an unknown keyspace fails
//! before anything changes), then on every open connection; connections opened later run
//! it in their set-up (see `connect`).

use super::handle::Session;
use crate::connection::Connection;
use crate::error::Error;
use crate::result::QueryResult;
use crate::system;

impl Session {
    /// Sets the session keyspace on every open connection of every node, and on
    /// connections opened later.
    pub async fn use_keyspace(&self, keyspace: &str) -> Result<(), Error> {
        self.run(
            self.place_anywhere(),
            self.own_attempts(true),
            |conn| async move {
                system::use_keyspace(&conn, keyspace).await?;
                Ok(QueryResult::void(conn.addr()))
            },
        )
        .await?;
        *self.inner.keyspace.borrow_mut() = Some(keyspace.to_owned());
        // Every open connection (control path, not per request).
        let conns: Vec<Connection> = self
            .inner
            .nodes
            .borrow()
            .values()
            .flat_map(|n| n.pool.open_connections())
            .collect();
        for conn in conns {
            system::use_keyspace(&conn, keyspace).await?;
        }
        Ok(())
    }

    /// The keyspace set by [`Session::use_keyspace`].
    pub fn keyspace(&self) -> Option<String> {
        self.inner.keyspace.borrow().clone()
    }
}
