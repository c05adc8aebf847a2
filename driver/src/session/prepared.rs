//! A prepared statement: [`PreparedStatement`] (id, bind markers, result columns and the
//! pre-encoded EXECUTE), the value the shard's cache holds and every execution reads.
//! Preparing it, and preparing it again, is `prepare`'s.
//!
//! Invariant: a statement's id, result metadata id, result columns and template change
//! together (`Session::install_prepared`), only on re-prepare or a METADATA_CHANGED (v5's, or
//! v4's with ScyllaDB's `SCYLLA_USE_METADATA_ID`; control path); executions read them through
//! `Rc` clones, never holding a `RefCell` borrow across an await.

use std::cell::RefCell;
use std::rc::Rc;

use bytes::Bytes;
use doppio_proto::metadata::{ColumnSpec, PreparedMetadata};
use doppio_proto::request::ExecuteTemplate;

use super::statement::StatementConfig;
use crate::routing::ring::ReplicaMap;
use crate::routing::tablets::TableTablets;

/// A prepared statement: its id, metadata and pre-encoded EXECUTE, shared by its clones,
/// and its settings ([`StatementConfig`]), each clone's own. Cheap to clone.
#[derive(Debug, Clone)]
pub struct PreparedStatement {
    pub(super) inner: Rc<PreparedInner>,
    pub(super) config: StatementConfig,
}

#[derive(Debug)]
pub(super) struct PreparedInner {
    pub(super) cql: String,
    pub(super) keyspace: Option<String>,
    pub(super) id: RefCell<Bytes>,
    /// The id of the result columns, sent with every EXECUTE; replaced when a result says
    /// METADATA_CHANGED (v5; v4 with ScyllaDB's extension; `None` when prepared in v4
    /// without it).
    pub(super) result_metadata_id: RefCell<Option<Bytes>>,
    pub(super) metadata: PreparedMetadata,
    /// The columns an execution returns, from the latest PREPARE. Executions ask the node
    /// to skip sending them (`skip_metadata`) and read rows by these instead, shared with
    /// each result by an `Rc` clone: no allocation, no atomic per request.
    pub(super) result_columns: RefCell<Rc<[ColumnSpec]>>,
    /// EXECUTE with the session's default options; rebuilt on re-prepare. An `Rc` so that a
    /// request can hold it across awaits without a `RefCell` borrow or a copy.
    pub(super) template: RefCell<Rc<ExecuteTemplate>>,
    /// The replica map of the statement's keyspace, for the view version it was looked up
    /// in (one `HashMap` lookup per topology change, not per request).
    pub(super) replicas: RefCell<(u64, Option<Rc<ReplicaMap>>)>,
    /// A lightweight transaction, by ScyllaDB's LWT mark on its metadata: its executions go
    /// to its replicas primary first.
    pub(super) lwt: bool,
    /// The tablets this shard knows of the partition key's table (ScyllaDB), shared by the
    /// shard's statements of that table; `None` for a statement with no partition key.
    pub(super) tablets: Option<Rc<RefCell<TableTablets>>>,
}

impl PreparedStatement {
    /// Its settings (this clone's).
    pub fn config(&self) -> &StatementConfig {
        &self.config
    }

    /// Its settings, to change (this clone's: other clones keep theirs).
    pub fn config_mut(&mut self) -> &mut StatementConfig {
        &mut self.config
    }

    /// A clone with its settings changed by `f`.
    pub fn with_config(&self, f: impl FnOnce(&mut StatementConfig)) -> Self {
        let mut statement = self.clone();
        f(&mut statement.config);
        statement
    }

    /// The CQL text.
    pub fn cql(&self) -> &str {
        &self.inner.cql
    }

    /// The prepared id.
    pub fn id(&self) -> Bytes {
        self.inner.id.borrow().clone()
    }

    /// The id of the result columns the node knows: v5's, or v4's on a connection with
    /// ScyllaDB's `SCYLLA_USE_METADATA_ID` on (`None` when prepared in v4 without it).
    pub fn result_metadata_id(&self) -> Option<Bytes> {
        self.inner.result_metadata_id.borrow().clone()
    }

    /// The keyspace the statement was prepared in (the session keyspace then).
    pub fn keyspace(&self) -> Option<&str> {
        self.inner.keyspace.as_deref()
    }

    /// Bind markers and partition-key indexes.
    pub fn metadata(&self) -> &PreparedMetadata {
        &self.inner.metadata
    }

    /// The columns an execution returns (as of the latest PREPARE).
    pub fn result_columns(&self) -> Rc<[ColumnSpec]> {
        self.inner.result_columns.borrow().clone()
    }

    /// Whether the node marked the statement as a lightweight transaction (ScyllaDB's
    /// `SCYLLA_LWT_ADD_METADATA_MARK`; always false on Cassandra). Its executions go to its
    /// replicas in ring order, primary first, so that the Paxos rounds of one partition
    /// meet at one coordinator instead of contending.
    pub fn is_lwt(&self) -> bool {
        self.inner.lwt
    }

    /// How many tablets of its table this shard knows (ScyllaDB; 0 elsewhere).
    pub fn known_tablets(&self) -> usize {
        self.inner.tablets.as_ref().map_or(0, |t| t.borrow().len())
    }

    /// Whether executions skip the result metadata (statements that return rows).
    pub(super) fn skips_metadata(&self) -> bool {
        !self.inner.result_columns.borrow().is_empty()
    }

    /// The keyspace of the partition key's table (from the bind markers).
    pub(super) fn routing_keyspace(&self) -> Option<&str> {
        self.routing_table().map(|(keyspace, _)| keyspace)
    }

    /// The keyspace and table of the partition key (from the bind markers).
    pub(super) fn routing_table(&self) -> Option<(&str, &str)> {
        routing_table(&self.inner.metadata)
    }
}

/// The keyspace and table of `metadata`'s partition key, if it is bound.
pub(super) fn routing_table(metadata: &PreparedMetadata) -> Option<(&str, &str)> {
    let first = *metadata.pk_indexes.first()?;
    let c = metadata.columns.get(usize::from(first))?;
    Some((&c.keyspace, &c.table))
}
