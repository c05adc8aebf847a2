//! ScyllaDB's tablets on the request path: each shard learns the tablets of a table from
//! the `tablets-routing-v1` payloads of its own answers (a node adds one to the RESULT of a
//! request that reached a node or shard holding no replica of its tablet) or, on
//! connections with tablets routing v2, from the `tablets-routing-v2` payloads (the node
//! adds one also when the request's tablet version block disagrees with the tablet's
//! version: a tablet that moved is learned within sixteen requests of it, even while they
//! still reach a replica), and routes a
//! bound partition key whose tablet it knows to that tablet's replicas, each on its shard.
//! A token no known tablet holds goes to any node in a keyspace the cluster lists in tablets
//! (`system_schema.scylla_keyspaces`), by the token ring elsewhere; a keyspace that leaves
//! that list takes its tables' learned tablets with it.
//!
//! Why each shard on its own: nothing is shared between shards on the request path. The
//! price is one misroute per tablet per shard while it warms up (and after a tablet moves),
//! each a request served anyway by the node it reached; the table of tablets is shared by
//! the shard's statements of one table (`Rc<RefCell<_>>`: no lock, no atomic).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use bytes::Bytes;
use doppio_proto::metadata::PreparedMetadata;
use doppio_proto::scylla_extensions::{TabletRouting, TABLETS_PAYLOAD_KEY, TABLETS_V2_PAYLOAD_KEY};

use super::handle::Session;
use super::prepared::{routing_table, PreparedStatement};
use super::view::ClusterView;
use crate::routing::murmur3::Token;
use crate::routing::tablets::{SharedTablets, TableTablets, TabletReplicas};
use crate::routing::topology::TopologySnapshot;

impl Session {
    /// The table of tablets of the table `metadata`'s partition key is in (made on first
    /// need; `None` with no partition key).
    pub(super) fn table_tablets(
        &self,
        metadata: &PreparedMetadata,
    ) -> Option<Rc<RefCell<TableTablets>>> {
        let (keyspace, table) = routing_table(metadata)?;
        let mut tables = self.inner.tablets.borrow_mut();
        let entry = tables
            .entry((keyspace.to_owned(), table.to_owned()))
            .or_default();
        Some(Rc::clone(entry))
    }

    /// The replicas of `token`'s tablet, if this shard knows it (one `RefCell` borrow and an
    /// emptiness check for a table without tablets).
    #[inline]
    pub(super) fn tablet_replicas(
        &self,
        prepared: &PreparedStatement,
        token: Option<Token>,
        view: &ClusterView,
    ) -> Option<Rc<TabletReplicas>> {
        let tablets = prepared.inner.tablets.as_ref()?;
        let token = token?;
        let mut tablets = tablets.borrow_mut();
        if tablets.is_empty() {
            return None;
        }
        tablets.replicas(token, view.version(), |host| view.index_of_host(host))
    }

    /// Forgets what this shard learned of the tables of every keyspace `snapshot` does not
    /// list in tablets (dropped, or re-created on the ring), when the cluster says which are.
    pub(super) fn forget_tablets_outside(&self, snapshot: &TopologySnapshot) {
        if let Some(in_tablets) = &snapshot.tablet_keyspaces {
            forget_outside(&self.inner.tablets.borrow(), in_tablets);
        }
    }

    /// Takes the tablet an answer to `prepared` carried in its custom payload, if any (the
    /// rare path: a misrouted request, or under v2 a stale tablet version): v2's payload,
    /// else v1's. An unreadable one is counted and left out.
    pub(super) fn learn_tablet(
        &self,
        prepared: &PreparedStatement,
        payload: &[(String, Option<Bytes>)],
    ) {
        let value = |key: &str| {
            payload
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v.as_ref())
        };
        let decoded = match (value(TABLETS_V2_PAYLOAD_KEY), value(TABLETS_PAYLOAD_KEY)) {
            (Some(v2), _) => TabletRouting::decode_v2(v2),
            (None, Some(v1)) => TabletRouting::decode(v1),
            (None, None) => return,
        };
        let Some(tablets) = prepared.inner.tablets.as_ref() else {
            return;
        };
        let taken = decoded
            .map_err(|_| ())
            .and_then(|t| tablets.borrow_mut().insert(&t).map_err(|_| ()));
        self.inner.counters.tablet_payload(taken.is_ok());
    }
}

/// Empties the tablets of every table in `tables` whose keyspace is not in `in_tablets`. The
/// tables stay: their statements hold them, and learn again if the keyspace comes back.
fn forget_outside(
    tables: &HashMap<(String, String), SharedTablets>,
    in_tablets: &BTreeSet<String>,
) {
    for ((keyspace, _), tablets) in tables {
        if !in_tablets.contains(keyspace) {
            tablets.borrow_mut().clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use doppio_proto::scylla_extensions::TabletReplica;

    use super::*;

    fn table_with_one_tablet() -> SharedTablets {
        let t = SharedTablets::default();
        let routing = TabletRouting {
            first_token: -10,
            last_token: 10,
            replicas: vec![TabletReplica {
                host_id: [1; 16],
                shard: 0,
            }],
            version: None,
        };
        assert!(t.borrow_mut().insert(&routing).is_ok());
        t
    }

    /// A keyspace the cluster no longer lists in tablets loses its tables' tablets; the
    /// others keep theirs.
    #[test]
    fn tablets_of_keyspaces_outside_the_list_are_forgotten() {
        let mut tables = HashMap::new();
        let kept = table_with_one_tablet();
        let gone = table_with_one_tablet();
        tables.insert(("in".to_owned(), "t".to_owned()), Rc::clone(&kept));
        tables.insert(("out".to_owned(), "t".to_owned()), Rc::clone(&gone));
        forget_outside(&tables, &BTreeSet::from(["in".to_owned()]));
        assert_eq!(kept.borrow().len(), 1);
        assert!(gone.borrow().is_empty());
    }
}
