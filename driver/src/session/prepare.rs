//! Preparing: `Session::prepare` (the shard's cache of statements, keyed by CQL text and
//! keyspace, and preparing on every connected node), and preparing again when a node has
//! forgotten a statement or its table changed (UNPREPARED; METADATA_CHANGED, v5's or v4's
//! with ScyllaDB's `SCYLLA_USE_METADATA_ID`).

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;

use bytes::Bytes;
use doppio_proto::frame::Flags;
use doppio_proto::metadata::ColumnSpec;
use doppio_proto::request::{ExecuteTemplate, Prepare, QueryParameters};
use doppio_proto::response::{Prepared, ResultBody};
use doppio_proto::scylla_extensions::Extensions;
use doppio_proto::ProtocolVersion;

use super::config::StatementOptions;
use super::handle::Session;
use super::prepared::{PreparedInner, PreparedStatement};
use super::statement::{Statement, StatementConfig};
use crate::connection::Connection;
use crate::error::Error;
use crate::result::{result_of, QueryResult, ResultParts};
use crate::telemetry::event;

impl Session {
    /// Prepares a statement, or returns it from this shard's cache (keyed by CQL text and
    /// the session keyspace). It is prepared on one node, then on every other node this
    /// shard is connected to (so that executions routed there need no re-prepare; a node
    /// that missed it is healed on its first UNPREPARED).
    ///
    /// The prepared statement carries `statement`'s settings (a `&str` has the session's
    /// defaults); the cache keeps none of them, so each caller gets its own.
    pub async fn prepare(
        &self,
        statement: impl Into<Statement>,
    ) -> Result<PreparedStatement, Error> {
        let statement = statement.into();
        let mut prepared = self.prepare_cql(statement.cql()).await?;
        prepared.config = statement.config().clone();
        Ok(prepared)
    }

    /// [`Session::prepare`] of `cql` with the session's defaults.
    async fn prepare_cql(&self, cql: &str) -> Result<PreparedStatement, Error> {
        let key = (cql.to_owned(), self.keyspace());
        if let Some(p) = self.inner.prepared.borrow().get(&key) {
            return Ok(p.clone());
        }
        let first: RefCell<Option<(SocketAddr, ProtocolVersion, Extensions)>> = RefCell::new(None);
        let (id, result_metadata_id, version, metadata, result_metadata) = {
            let prepared = self
                .run(self.place_anywhere(), self.own_attempts(true), |conn| {
                    let first = &first;
                    async move {
                        *first.borrow_mut() =
                            Some((conn.addr(), conn.version(), conn.extensions()));
                        self.prepare_on(&conn, cql).await.map(|p| {
                            QueryResult::new(ResultParts {
                                node: conn.addr(),
                                body: ResultBody::Prepared(Box::new(p)),
                                ..ResultParts::default()
                            })
                        })
                    }
                })
                .await?;
            let version = first.borrow().map(|(_, v, _)| v).unwrap_or_default();
            let prepared = prepared.into_parts();
            match prepared.body {
                ResultBody::Prepared(p) => (
                    p.id,
                    p.result_metadata_id,
                    version,
                    p.metadata,
                    p.result_metadata,
                ),
                _ => {
                    return Err(Error::UnexpectedResponse {
                        node: prepared.node,
                        request: "PREPARE",
                        got: "a RESULT that is not Prepared",
                    })
                }
            }
        };
        // A lightweight transaction, as the node that prepared it marks them (ScyllaDB's LWT
        // mark; never on Cassandra).
        let lwt = first
            .borrow()
            .is_some_and(|(_, _, e)| e.is_lwt(metadata.extension_flags));
        // What the connection that prepared it turned on: how it lays out result metadata
        // ids and whether it reads a tablet version block after each EXECUTE (its
        // template's).
        let extensions = first.borrow().map(|(_, _, e)| e).unwrap_or_default();
        // The other nodes: best effort (control path, once per statement and shard).
        let first = first.borrow().map(|(addr, _, _)| addr);
        let others: Vec<Connection> = self
            .inner
            .nodes
            .borrow()
            .values()
            .filter(|n| Some(n.addr()) != first)
            .filter_map(|n| n.pool.pick())
            .collect();
        event!(
            debug,
            node = ?first,
            others = others.len(),
            cql,
            lwt,
            "prepared; preparing on the other nodes"
        );
        for conn in others {
            if let Err(_e) = self.prepare_on(&conn, cql).await {
                event!(info, node = %conn.addr(), error = %crate::error::Report(&_e), cql, "preparing on another node failed (healed on its first UNPREPARED)");
            }
        }
        let result_columns: Rc<[ColumnSpec]> = result_metadata.columns.into();
        let template = self.template(
            version,
            extensions,
            &id,
            result_metadata_id.as_deref(),
            metadata.columns.len(),
            !result_columns.is_empty(),
        )?;
        let tablets = self.table_tablets(&metadata);
        let prepared = PreparedStatement {
            inner: Rc::new(PreparedInner {
                cql: cql.to_owned(),
                keyspace: key.1.clone(),
                id: RefCell::new(id),
                result_metadata_id: RefCell::new(result_metadata_id),
                metadata,
                result_columns: RefCell::new(result_columns),
                template: RefCell::new(Rc::new(template)),
                replicas: RefCell::new((0, None)),
                lwt,
                tablets,
            }),
            config: StatementConfig::default(),
        };
        self.inner
            .prepared
            .borrow_mut()
            .insert(key, prepared.clone());
        Ok(prepared)
    }

    /// The EXECUTE template in the version and `extensions` (result metadata ids, and a
    /// tablet version block or none) of the connection that prepared the statement (those of
    /// every connection of a session whose nodes speak the same; a connection laid out
    /// otherwise takes the general path).
    fn template(
        &self,
        version: ProtocolVersion,
        extensions: Extensions,
        id: &[u8],
        result_metadata_id: Option<&[u8]>,
        markers: usize,
        skip_metadata: bool,
    ) -> Result<ExecuteTemplate, Error> {
        let params = QueryParameters {
            skip_metadata,
            ..self.params(&StatementOptions::default())
        };
        ExecuteTemplate::new(
            version,
            extensions.metadata_ids(),
            id,
            result_metadata_id,
            markers,
            &params,
            Flags::NONE,
        )
        .map(|t| t.with_tablet_block(extensions.tablets_routing_v2))
        .map_err(Error::Serialization)
    }

    /// PREPARE on one connection.
    async fn prepare_on(&self, conn: &Connection, cql: &str) -> Result<Prepared, Error> {
        let frame = self
            .send(
                conn,
                false,
                &Prepare {
                    query: cql,
                    keyspace: None,
                },
                None,
            )
            .await?;
        match result_of(conn, frame, "PREPARE")?.into_parts().body {
            ResultBody::Prepared(p) => Ok(*p),
            _ => Err(Error::UnexpectedResponse {
                node: conn.addr(),
                request: "PREPARE",
                got: "a RESULT that is not Prepared",
            }),
        }
    }

    /// Prepares `prepared` again on `conn`'s node and takes its current id and result
    /// columns.
    pub(super) async fn reprepare(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
    ) -> Result<(), Error> {
        event!(info, node = %conn.addr(), cql = %prepared.inner.cql, "re-preparing");
        let p = self.prepare_on(conn, &prepared.inner.cql).await?;
        self.install_prepared(
            conn,
            prepared,
            p.id,
            p.result_metadata_id,
            p.result_metadata.columns.into(),
        )
    }

    /// METADATA_CHANGED (v5, or v4 with ScyllaDB's extension): the statement's result columns
    /// changed (its table was altered); `new_id` and `columns` (sent with the result) replace
    /// the prepared ones, so that the next executions skip the metadata again.
    pub(super) fn metadata_changed(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
        new_id: Bytes,
        columns: &[ColumnSpec],
    ) -> Result<(), Error> {
        let id = prepared.id();
        self.install_prepared(conn, prepared, id, Some(new_id), columns.into())
    }

    /// Replaces the statement's id, result metadata id and result columns together, with
    /// the template that encodes them as `conn` lays EXECUTE out (its version, result
    /// metadata ids and tablet version block; the invariant above).
    fn install_prepared(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
        id: Bytes,
        result_metadata_id: Option<Bytes>,
        result_columns: Rc<[ColumnSpec]>,
    ) -> Result<(), Error> {
        let template = self.template(
            conn.version(),
            conn.extensions(),
            &id,
            result_metadata_id.as_deref(),
            prepared.inner.metadata.columns.len(),
            !result_columns.is_empty(),
        )?;
        *prepared.inner.id.borrow_mut() = id;
        *prepared.inner.result_metadata_id.borrow_mut() = result_metadata_id;
        *prepared.inner.result_columns.borrow_mut() = result_columns;
        *prepared.inner.template.borrow_mut() = Rc::new(template);
        Ok(())
    }
}
