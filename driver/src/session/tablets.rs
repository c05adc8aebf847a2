//! ScyllaDB's tablets on the request path: each shard learns the tablets of a table from
//! the `tablets-routing-v1` payloads of its own answers (a node adds one to the RESULT of a
//! request that reached a node or shard holding no replica of its tablet), and routes a
//! bound partition key whose tablet it knows to that tablet's replicas, each on its shard.
//! A token no known tablet holds goes by the token ring.
//!
//! Why each shard on its own: nothing is shared between shards on the request path. The
//! price is one misroute per tablet per shard while it warms up (and after a tablet moves),
//! each a request served anyway by the node it reached; the table of tablets is shared by
//! the shard's statements of one table (`Rc<RefCell<_>>`: no lock, no atomic).

use std::cell::RefCell;
use std::rc::Rc;

use bytes::Bytes;
use doppio_proto::metadata::PreparedMetadata;
use doppio_proto::scylla_extensions::{TabletRouting, TABLETS_PAYLOAD_KEY};

use super::handle::Session;
use super::prepared::{routing_table, PreparedStatement};
use super::view::ClusterView;
use crate::routing::murmur3::Token;
use crate::routing::tablets::{TableTablets, TabletReplicas};

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

    /// Takes the tablet an answer to `prepared` carried in its custom payload, if any (the
    /// rare path: a misrouted request). An unreadable one is counted and left out.
    pub(super) fn learn_tablet(
        &self,
        prepared: &PreparedStatement,
        payload: &[(String, Option<Bytes>)],
    ) {
        let Some(value) = payload
            .iter()
            .find(|(k, _)| k == TABLETS_PAYLOAD_KEY)
            .and_then(|(_, v)| v.as_ref())
        else {
            return;
        };
        let Some(tablets) = prepared.inner.tablets.as_ref() else {
            return;
        };
        let taken = TabletRouting::decode(value)
            .map_err(|_| ())
            .and_then(|t| tablets.borrow_mut().insert(&t).map_err(|_| ()));
        self.inner.counters.tablet_payload(taken.is_ok());
    }
}
