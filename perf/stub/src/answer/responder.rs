//! One shard's answering state: what each request gets (SUPPORTED, READY, the system tables
//! and the configured shape selected, `USE`, `ALTER TABLE`, PREPARE encoding a statement's
//! answers once, EXECUTE from them).

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;
use doppio_proto::compression::Compression;
use doppio_proto::metadata::{ColumnSpec, PreparedMetadata, RowsMetadata};
use doppio_proto::request::{DecodedParameters, Request};
use doppio_proto::response::{
    ErrorCode, Prepared, Response, ResultBody, SchemaChange, SchemaTarget,
};
use doppio_proto::{MetadataIds, ProtocolVersion};

use crate::answer::errors::{error, unprepared};
use crate::answer::prepared::{body_of, metadata_id, statement_id, PreparedEntry};
use crate::answer::rows::{page_bounds, rows_response, RowSet, SelectRows};
use crate::answer::schema::{parse_alter, Alter, Schema};
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
    /// The tables `ALTER TABLE` changed.
    schema: Schema,
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
            schema: Schema::default(),
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

    /// The answer to a decoded request on a connection without ScyllaDB's result metadata
    /// ids in v4 ([`Self::answer_with`]).
    pub fn answer(
        &mut self,
        request: &Request<'_>,
        keyspace: &mut Option<String>,
        lz4: bool,
        version: ProtocolVersion,
    ) -> Answer {
        self.answer_with(request, keyspace, lz4, version, MetadataIds::ByVersion)
    }

    /// The answer to a decoded request. `keyspace` is the connection's keyspace, updated
    /// by `USE`; `lz4` says whether the connection compresses (pre-encoded bodies come
    /// compressed then); `version` is the request's and `ids` what the connection turned on
    /// (a PREPARED carries a result metadata id where either says so, and an EXECUTE that
    /// sent a stale one is answered `METADATA_CHANGED`).
    pub fn answer_with(
        &mut self,
        request: &Request<'_>,
        keyspace: &mut Option<String>,
        lz4: bool,
        version: ProtocolVersion,
        ids: MetadataIds,
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
                    if !version.has_metadata_ids(ids) {
                        p.result_metadata_id = None;
                    }
                    Answer::Message(Response::Result(ResultBody::Prepared(Box::new(p))))
                }
                Err(e) => Answer::Message(e),
            },
            Request::Execute {
                id,
                params,
                result_metadata_id: sent,
            } => match self.lookup(id) {
                Some(e) => match e.page(params, *sent) {
                    Some(page) => Answer::Message(page),
                    None => Answer::Body(e.body(params.params.skip_metadata, *sent, lz4).clone()),
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
        let ks = select.keyspace.or(keyspace).unwrap_or("stub");
        let blob = vec![0x5a; self.shape.row_bytes];
        let (specs, row) = self.schema.columns(ks, select.table, &blob);
        Some(Ok((
            specs,
            SelectRows::Shape {
                row,
                count: self.shape.rows,
            },
        )))
    }

    fn query(
        &mut self,
        text: &str,
        params: &DecodedParameters<'_>,
        keyspace: &mut Option<String>,
    ) -> Answer {
        if let Some(alter) = parse_alter(text) {
            return match alter.and_then(|a| self.alter(&a, keyspace.as_deref())) {
                Ok(change) => Answer::Message(Response::Result(ResultBody::SchemaChange(change))),
                Err(why) => Answer::Message(error(ErrorCode::Invalid, why)),
            };
        }
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
                    None,
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
        let result_metadata_id = metadata_id(&result_columns);
        let result_metadata = RowsMetadata {
            columns_count: result_columns.len(),
            paging_state: None,
            no_metadata: result_columns.is_empty(),
            columns: result_columns,
            new_metadata_id: None,
        };
        if self.lookup(&id).is_none() {
            let entry = entry_of(text, keyspace, rows);
            if self.prepared.len() >= MAX_PREPARED {
                self.prepared.remove(0);
            }
            self.prepared.push((id, Rc::new(entry)));
        }
        Ok(Prepared {
            id: Bytes::copy_from_slice(&id),
            // Dropped by the caller where the connection carries no ids (v4 without
            // ScyllaDB's extension).
            result_metadata_id: Some(Bytes::copy_from_slice(&result_metadata_id)),
            metadata,
            result_metadata,
        })
    }

    /// `ALTER TABLE`: the table's columns change (`keyspace` is the connection's, for an
    /// unqualified name), and so do the answers of every statement prepared on it, which
    /// keep their ids: as on a node where the statement was prepared again after the
    /// change, a client holding the old columns gets the new ones with their id
    /// (`METADATA_CHANGED`) where its connection carries result metadata ids. The
    /// Schema_change result, or why the table cannot change.
    fn alter(&mut self, alter: &Alter<'_>, keyspace: Option<&str>) -> Result<SchemaChange, String> {
        let ks = alter.keyspace.or(keyspace).unwrap_or("stub");
        if [
            "system",
            "system_schema",
            "system_auth",
            "system_distributed",
            "system_traces",
        ]
        .iter()
        .any(|s| ks.eq_ignore_ascii_case(s))
        {
            return Err(format!("the stub cannot alter {ks}.{}", alter.table));
        }
        self.schema.apply(ks, alter)?;
        for i in 0..self.prepared.len() {
            let entry = &self.prepared[i].1;
            let on_table = tables::parse_select(&entry.text).is_some_and(|s| {
                s.table.eq_ignore_ascii_case(alter.table)
                    && s.keyspace
                        .or(entry.keyspace.as_deref())
                        .unwrap_or("stub")
                        .eq_ignore_ascii_case(ks)
            });
            if !on_table {
                continue;
            }
            let (text, at) = (entry.text.clone(), entry.keyspace.clone());
            if let Some(Ok((c, r))) = self.select_rows(&text, at.as_deref()) {
                self.prepared[i].1 =
                    Rc::new(entry_of(&text, at.as_deref(), Some((c, r.into_rows()))));
            }
        }
        Ok(SchemaChange {
            change: "UPDATED".into(),
            target: SchemaTarget::Table(ks.to_owned(), alter.table.to_owned()),
        })
    }
}

/// A statement's entry: its answers encoded once (with metadata, without, and with
/// `METADATA_CHANGED` for a client whose result metadata id is stale; uncompressed and lz4),
/// from its result's columns and rows (`None`: it returns none, its answers are Void).
fn entry_of(text: &str, keyspace: Option<&str>, rows: Option<RowSet>) -> PreparedEntry {
    let result_metadata_id = metadata_id(rows.as_ref().map_or(&[], |(c, _)| c.as_slice()));
    let answer = |skip: bool, changed: Option<&[u8; 16]>| match &rows {
        Some((c, r)) => rows_response(c.clone(), r, None, skip, changed),
        None => Response::Result(ResultBody::Void),
    };
    let answers = [
        answer(false, None),
        answer(true, None),
        answer(true, Some(&result_metadata_id)),
    ];
    PreparedEntry {
        text: text.to_owned(),
        keyspace: keyspace.map(str::to_owned),
        result_metadata_id,
        bodies: answers.each_ref().map(|a| body_of(a, None)),
        compressed: answers
            .each_ref()
            .map(|a| body_of(a, Some(Compression::Lz4))),
        pageable: rows.filter(|(_, r)| r.len() > 1),
        conditional: tables::is_conditional(text),
    }
}
