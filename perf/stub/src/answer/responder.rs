//! One shard's answering state: what each request gets (SUPPORTED, READY, the system tables
//! and the configured shape selected, `USE`, PREPARE encoding a statement's answers once,
//! EXECUTE from them).

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;
use doppio_proto::compression::Compression;
use doppio_proto::metadata::{ColumnSpec, PreparedMetadata, RowsMetadata};
use doppio_proto::request::{DecodedParameters, Request};
use doppio_proto::response::{ErrorCode, Prepared, Response, ResultBody};
use doppio_proto::types::ColumnType;
use doppio_proto::value::CqlValue;
use doppio_proto::ProtocolVersion;

use crate::answer::errors::{error, unprepared};
use crate::answer::prepared::{body_of, statement_id, PreparedEntry};
use crate::answer::rows::{page_bounds, rows_response, SelectRows};
use crate::answer::shape::Shape;
use crate::tables::{self, Table};

/// An answer to write: a message to encode, or a pre-encoded RESULT body.
#[derive(Debug)]
pub enum Answer {
    /// Encode this message.
    Message(Response),
    /// A RESULT whose body is ready (compressed already if the connection uses lz4).
    Body(Bytes),
}

/// One shard's answering state.
pub struct Responder {
    addr: SocketAddr,
    tables: Vec<Table>,
    shape: Arc<Shape>,
    prepared: Vec<([u8; 16], Rc<PreparedEntry>)>,
    /// The newest protocol version offered in SUPPORTED (and spoken).
    newest: ProtocolVersion,
    /// The authenticator STARTUP is answered with (AUTHENTICATE naming it; any
    /// AUTH_RESPONSE then succeeds), or none (READY).
    authenticator: Option<Arc<str>>,
    /// Whether PREPARED names the first bind marker as the partition key (so that drivers
    /// compute tokens; on when the stub emulates ScyllaDB's shards).
    first_marker_is_key: bool,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder")
            .field("addr", &self.addr)
            .field("prepared", &self.prepared.len())
            .finish()
    }
}

/// The most prepared statements a shard keeps; older ones are forgotten (their EXECUTEs
/// then get UNPREPARED, which drivers heal by preparing again).
const MAX_PREPARED: usize = 4096;

impl Responder {
    /// A responder for a stub listening on `addr`.
    pub fn new(addr: SocketAddr, shape: Arc<Shape>) -> Self {
        Self {
            addr,
            tables: tables::system_tables(addr),
            shape,
            prepared: Vec::new(),
            newest: ProtocolVersion::V5,
            authenticator: None,
            first_marker_is_key: false,
        }
    }

    /// The same responder answering STARTUP with AUTHENTICATE naming `class` (a node
    /// that requires authentication; any credentials are then accepted).
    pub fn with_authenticator(mut self, class: Option<Arc<str>>) -> Self {
        self.authenticator = class;
        self
    }

    /// The same responder offering versions up to `newest` only (v4: a node like Cassandra
    /// 3.x or ScyllaDB, which offer no v5).
    pub fn with_newest_protocol(mut self, newest: ProtocolVersion) -> Self {
        self.newest = newest;
        self
    }

    /// The newest protocol version offered.
    pub fn newest_protocol(&self) -> ProtocolVersion {
        self.newest
    }

    /// Names the first bind marker of every prepared statement as its partition key.
    pub fn with_first_marker_as_key(mut self) -> Self {
        self.first_marker_is_key = true;
        self
    }

    /// Lists `keyspace` among the keyspaces (SimpleStrategy, `replication_factor`) and names
    /// the first bind marker of every prepared statement as its partition key: drivers then
    /// route statements on the keyspace's tables by token, to its replicas.
    pub fn with_routed_keyspace(mut self, keyspace: &str, replication_factor: u8) -> Self {
        tables::add_simple_keyspace(&mut self.tables, keyspace, replication_factor);
        self.first_marker_is_key = true;
        self
    }

    /// Lists `keyspace` with NetworkTopologyStrategy and `replication` (each data center's
    /// name and factor), and names the first bind marker of every prepared statement as its
    /// partition key.
    pub fn with_datacenter_keyspace(
        mut self,
        keyspace: &str,
        replication: &[(String, u8)],
    ) -> Self {
        tables::add_network_topology_keyspace(&mut self.tables, keyspace, replication);
        self.first_marker_is_key = true;
        self
    }

    /// Has ScyllaDB's `system_schema.scylla_keyspaces` (no keyspace in tablets yet). Give
    /// it after [`Self::with_topology`], which replaces the tables.
    pub fn with_scylla_keyspaces(mut self) -> Self {
        tables::add_scylla_keyspaces(&mut self.tables);
        self
    }

    /// Lists `keyspace` as ScyllaDB lists a keyspace in tablets (NetworkTopologyStrategy,
    /// `replication_factor`, `initial_tablets` in `system_schema.scylla_keyspaces`, which
    /// [`Self::with_scylla_keyspaces`] adds), and names the first bind marker of every
    /// prepared statement as its partition key.
    pub fn with_tablet_keyspace(
        mut self,
        keyspace: &str,
        replication_factor: u8,
        initial_tablets: u32,
    ) -> Self {
        tables::add_tablet_keyspace(
            &mut self.tables,
            keyspace,
            replication_factor,
            initial_tablets,
        );
        self.first_marker_is_key = true;
        self
    }

    /// Answers as node `local` of a cluster whose other nodes are `peers` (its system tables
    /// list them), the first bind marker of every prepared statement named its partition
    /// key. Replaces the system tables: give the routed keyspace after this.
    pub fn with_topology(mut self, local: &tables::NodeRow, peers: &[tables::NodeRow]) -> Self {
        self.tables = tables::node_tables(local, peers);
        self.first_marker_is_key = true;
        self
    }

    /// The prepared statement with `id`.
    #[inline]
    pub fn lookup(&self, id: &[u8]) -> Option<&Rc<PreparedEntry>> {
        self.prepared
            .iter()
            .find(|(k, _)| k.as_slice() == id)
            .map(|(_, e)| e)
    }

    /// The answer to a decoded request. `keyspace` is the connection's keyspace, updated
    /// by `USE`; `lz4` says whether the connection compresses (pre-encoded bodies come
    /// compressed then); `version` is the request's (a v5 PREPARED carries a result
    /// metadata id).
    pub fn answer(
        &mut self,
        request: &Request<'_>,
        keyspace: &mut Option<String>,
        lz4: bool,
        version: ProtocolVersion,
    ) -> Answer {
        match request {
            Request::Options => Answer::Message(Response::Supported(vec![
                ("CQL_VERSION".into(), vec!["3.4.7".into()]),
                ("COMPRESSION".into(), vec!["lz4".into()]),
                // What the stub speaks, as Cassandra 5.0 lists it (without the v3 and
                // v6-beta it does not speak).
                (
                    "PROTOCOL_VERSIONS".into(),
                    [ProtocolVersion::V4, ProtocolVersion::V5]
                        .into_iter()
                        .filter(|v| *v <= self.newest)
                        .map(|v| format!("{}/{v}", v.number()))
                        .collect(),
                ),
            ])),
            Request::Startup(_) => match &self.authenticator {
                Some(class) => Answer::Message(Response::Authenticate(class.to_string())),
                None => Answer::Message(Response::Ready),
            },
            Request::Register(_) => Answer::Message(Response::Ready),
            Request::AuthResponse(_) => Answer::Message(Response::AuthSuccess(None)),
            Request::Query(text, params) => self.query(text, params, keyspace),
            Request::Prepare { query: text, .. } => match self.prepare(text, keyspace.as_deref()) {
                Ok(mut p) => {
                    if !version.has_v5_fields() {
                        p.result_metadata_id = None;
                    }
                    Answer::Message(Response::Result(ResultBody::Prepared(Box::new(p))))
                }
                Err(e) => Answer::Message(e),
            },
            Request::Execute { id, params, .. } => match self.lookup(id) {
                Some(e) => match e.page(params) {
                    Some(page) => Answer::Message(page),
                    None => Answer::Body(e.body(params.params.skip_metadata, lz4).clone()),
                },
                None => Answer::Message(unprepared(id)),
            },
            Request::Batch { .. } => Answer::Message(Response::Result(ResultBody::Void)),
        }
    }

    /// The rows of a SELECT: a system table's (projected) or the configured shape's.
    fn select_rows(
        &self,
        text: &str,
        keyspace: Option<&str>,
    ) -> Option<Result<(Vec<ColumnSpec>, SelectRows), Response>> {
        let select = tables::parse_select(text)?;
        if let Some(table) = tables::find_table(&self.tables, &select, keyspace) {
            let columns = match tables::project(table, &select) {
                Ok(c) => c,
                Err(undefined) => {
                    return Some(Err(error(ErrorCode::Invalid, undefined.to_string())))
                }
            };
            let ks: Arc<str> = table.keyspace.into();
            let tn: Arc<str> = table.name.into();
            let specs = columns
                .iter()
                .map(|&i| ColumnSpec {
                    keyspace: ks.clone(),
                    table: tn.clone(),
                    name: table.columns[i].name.to_owned(),
                    typ: table.columns[i].typ.clone(),
                })
                .collect();
            let rows = table
                .rows
                .iter()
                .map(|r| columns.iter().map(|&i| r[i].clone()).collect())
                .collect();
            return Some(Ok((specs, SelectRows::Table(rows))));
        }
        // A system table the stub does not have is one this Cassandra does not have either
        // (ScyllaDB's `system_schema.scylla_tables`, ...): answered as Cassandra answers it,
        // not with the configured shape, which a driver reading its metadata would take for
        // a malformed table.
        if let Some(ks) = select.keyspace.filter(|ks| {
            ["system", "system_schema"]
                .iter()
                .any(|s| ks.eq_ignore_ascii_case(s))
        }) {
            return Some(Err(error(
                ErrorCode::Invalid,
                format!("unconfigured table {}.{}", ks, select.table),
            )));
        }
        let ks: Arc<str> = select.keyspace.or(keyspace).unwrap_or("stub").into();
        let spec = ColumnSpec {
            keyspace: ks,
            table: select.table.into(),
            name: "v".into(),
            typ: ColumnType::Blob,
        };
        let row = vec![Some(CqlValue::Blob(vec![0x5a; self.shape.row_bytes]))];
        Some(Ok((
            vec![spec],
            SelectRows::Shape {
                row,
                count: self.shape.rows,
            },
        )))
    }

    fn query(
        &self,
        text: &str,
        params: &DecodedParameters<'_>,
        keyspace: &mut Option<String>,
    ) -> Answer {
        let trimmed = text.trim_start();
        if trimmed.len() > 4 && trimmed[..4].eq_ignore_ascii_case("use ") {
            let ks = trimmed[4..]
                .trim()
                .trim_end_matches(';')
                .trim()
                .trim_matches('"');
            *keyspace = Some(ks.to_owned());
            return Answer::Message(Response::Result(ResultBody::SetKeyspace(ks.to_owned())));
        }
        match self.select_rows(text, keyspace.as_deref()) {
            None => Answer::Message(Response::Result(ResultBody::Void)),
            Some(Err(e)) => Answer::Message(e),
            Some(Ok((columns, rows))) => {
                // Pages by the client's page size; the paging state is the next row's index.
                let (start, end, more) = page_bounds(params, rows.len());
                Answer::Message(rows_response(
                    columns,
                    &rows.page(start, end),
                    more,
                    params.params.skip_metadata,
                ))
            }
        }
    }

    /// Prepares `text`: bind markers typed by the configured type, result columns as an
    /// EXECUTE will return them, answers encoded once.
    fn prepare(&mut self, text: &str, keyspace: Option<&str>) -> Result<Prepared, Response> {
        let id = statement_id(text, keyspace);
        let (result_columns, rows) = match self.select_rows(text, keyspace) {
            None => (Vec::new(), None),
            Some(Err(e)) => return Err(e),
            Some(Ok((c, r))) => (c.clone(), Some((c, r.into_rows()))),
        };
        // The bind markers' table: the one the statement names (so that a driver finds the
        // keyspace whose replicas it routes to), else the connection's keyspace's `t`.
        let named = tables::parse_select(text)
            .map(|s| (s.keyspace, s.table))
            .or_else(|| tables::modified_table(text));
        let (ks, tn): (Arc<str>, Arc<str>) = match named {
            Some((named_ks, table)) => {
                (named_ks.or(keyspace).unwrap_or("stub").into(), table.into())
            }
            None => (keyspace.unwrap_or("stub").into(), "t".into()),
        };
        let markers = tables::count_markers(text);
        let metadata = PreparedMetadata {
            pk_indexes: if self.first_marker_is_key && markers > 0 {
                vec![0]
            } else {
                Vec::new()
            },
            columns: (0..markers)
                .map(|i| ColumnSpec {
                    keyspace: ks.clone(),
                    table: tn.clone(),
                    name: format!("p{i}"),
                    typ: self.shape.bind_type.clone(),
                })
                .collect(),
            extension_flags: 0,
        };
        let result_metadata = RowsMetadata {
            columns_count: result_columns.len(),
            paging_state: None,
            no_metadata: result_columns.is_empty(),
            columns: result_columns,
            new_metadata_id: None,
        };
        if self.lookup(&id).is_none() {
            let answers = |skip: bool| match &rows {
                Some((c, r)) => rows_response(c.clone(), r, None, skip),
                None => Response::Result(ResultBody::Void),
            };
            let (with, bare) = (answers(false), answers(true));
            let entry = PreparedEntry {
                text: text.to_owned(),
                bodies: [body_of(&with, None), body_of(&bare, None)],
                compressed: [
                    body_of(&with, Some(Compression::Lz4)),
                    body_of(&bare, Some(Compression::Lz4)),
                ],
                pageable: rows.filter(|(_, r)| r.len() > 1),
                conditional: tables::is_conditional(text),
            };
            if self.prepared.len() >= MAX_PREPARED {
                self.prepared.remove(0);
            }
            self.prepared.push((id, Rc::new(entry)));
        }
        Ok(Prepared {
            id: Bytes::copy_from_slice(&id),
            // v5 (dropped for v4 by the caller): the stub's result columns never change, so
            // an id of the statement's own, distinct from its prepared id, serves.
            result_metadata_id: Some(Bytes::copy_from_slice(&statement_id(
                text,
                Some("result metadata"),
            ))),
            metadata,
            result_metadata,
        })
    }
}
