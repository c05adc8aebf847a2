//! What the stub answers, per request: one [`Responder`] per shard.
//!
//! Handshake and control messages get what a one-node Cassandra 5.0 would say (SUPPORTED
//! with lz4, READY, system tables from [`crate::tables`]). An ordinary SELECT answers the
//! configured result shape (N rows of one blob column `v` of M bytes), a statement that is
//! not a SELECT answers Void, `USE ks` answers Set_keyspace.
//!
//! PREPARE computes everything an EXECUTE of the statement will answer and encodes it once:
//! the RESULT body with metadata and without (for `skip_metadata`), uncompressed and lz4.
//! An EXECUTE then costs a lookup of its 16-byte id among the shard's statements (a short
//! linear scan: drivers prepare a handful), a 9-byte header and one copy of the body.
//!
//! A prepared SELECT of more than one row also keeps its rows: an EXECUTE of it is decoded in
//! full and paged by its page size and paging state like a QUERY (encoded when asked for;
//! a request for every row at once still gets the pre-encoded body).
//!
//! Invariants: the EXECUTE path of a statement of at most one row allocates nothing and
//! parses only the id and the flags byte;
//! prepared ids are a hash of the statement text and keyspace, so they are the same on every
//! shard and across restarts (a client that re-prepares after a restart gets the same id).

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, FrameHeader, Opcode};
use doppio_proto::metadata::{ColumnSpec, PreparedMetadata, RowsMetadata};
use doppio_proto::request::{DecodedParameters, Request};
use doppio_proto::response::{
    encode_response, Envelope, ErrorCode, ErrorDetail, ErrorResponse, Prepared, Response,
    ResultBody,
};
use doppio_proto::rows::Rows;
use doppio_proto::types::ColumnType;
use doppio_proto::value::CqlValue;
use doppio_proto::ProtocolVersion;

use crate::tables::{self, Table};

/// The result shape and bind-marker type the stub serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Rows of an ordinary SELECT.
    pub rows: usize,
    /// Bytes of the one blob column of each row.
    pub row_bytes: usize,
    /// The type reported for every bind marker of a prepared statement.
    pub bind_type: ColumnType,
}

impl Default for Shape {
    fn default() -> Self {
        Self {
            rows: 1,
            row_bytes: 8,
            bind_type: ColumnType::Blob,
        }
    }
}

/// A prepared statement and its pre-encoded answers.
#[derive(Debug)]
pub struct PreparedEntry {
    /// The statement text.
    pub text: String,
    /// RESULT bodies of an EXECUTE: `[with metadata, without]`.
    bodies: [Bytes; 2],
    /// The same, lz4-compressed.
    compressed: [Bytes; 2],
    /// A SELECT's columns and rows when it has more than one row (its EXECUTEs are paged).
    pageable: Option<RowSet>,
    /// Whether the statement is conditional (a lightweight transaction).
    conditional: bool,
}

impl PreparedEntry {
    /// The RESULT body an EXECUTE gets (compressed when `lz4`).
    pub fn body(&self, skip_metadata: bool, lz4: bool) -> &Bytes {
        let i = usize::from(skip_metadata);
        if lz4 {
            &self.compressed[i]
        } else {
            &self.bodies[i]
        }
    }

    /// Whether an EXECUTE of this statement may need paging (more than one row): such an
    /// EXECUTE is decoded in full and answered by [`Responder::answer`].
    pub fn pageable(&self) -> bool {
        self.pageable.is_some()
    }

    /// Whether the statement is a lightweight transaction ([`tables::is_conditional`]).
    pub fn conditional(&self) -> bool {
        self.conditional
    }

    /// The page an EXECUTE with `params` asks for, when it is not the whole result: rows
    /// from the paging state's index (the next row's, as QUERY pages give it), at most the
    /// page size of them.
    fn page(&self, params: &DecodedParameters<'_>) -> Option<Response> {
        let (columns, rows) = self.pageable.as_ref()?;
        let (start, end, more) = page_bounds(params, rows.len());
        if start == 0 && more.is_none() {
            return None;
        }
        Some(rows_response(
            columns.clone(),
            &rows[start..end],
            more,
            params.params.skip_metadata,
        ))
    }
}

/// The rows `start..end` of `total` that a request with `params` asks for, and the paging
/// state of the next page if there is one (the next row's index, 4 bytes).
fn page_bounds(params: &DecodedParameters<'_>, total: usize) -> (usize, usize, Option<Bytes>) {
    let start = params
        .params
        .paging_state
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, |s| u32::from_be_bytes(s) as usize)
        .min(total);
    let page = params
        .params
        .page_size
        .filter(|p| *p > 0)
        .map_or(total, |p| p as usize);
    let end = start.saturating_add(page).min(total);
    let more = (end < total).then(|| Bytes::copy_from_slice(&(end as u32).to_be_bytes()));
    (start, end, more)
}

/// An answer to write: a message to encode, or a pre-encoded RESULT body.
#[derive(Debug)]
pub enum Answer {
    /// Encode this message.
    Message(Response),
    /// A RESULT whose body is ready (compressed already if the connection uses lz4).
    Body(Bytes),
}

/// A 128-bit id of a statement: two FNV-1a hashes of its text and keyspace.
fn statement_id(text: &str, keyspace: Option<&str>) -> [u8; 16] {
    let hash = |seed: u64| {
        let mut h = seed;
        for b in text
            .bytes()
            .chain([0u8])
            .chain(keyspace.unwrap_or("").bytes())
        {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    };
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&hash(0xcbf2_9ce4_8422_2325).to_be_bytes());
    id[8..].copy_from_slice(&hash(0x6c62_272e_07bb_0142).to_be_bytes());
    id
}

/// Encodes a response body (no header) with `encode_response` and strips the header.
fn body_of(response: &Response, compression: Option<Compression>) -> Bytes {
    let mut buf = BytesMut::new();
    // Encoding a response the stub built itself cannot fail but for sizes beyond 2 GiB,
    // which the stub never builds; an empty body is then sent, which the client reports.
    if encode_response(&mut buf, 0, &Envelope::default(), response, compression).is_err() {
        return Bytes::new();
    }
    buf.split_off(doppio_proto::frame::HEADER_LEN).freeze()
}

fn error(code: ErrorCode, message: impl Into<String>) -> Response {
    Response::Error(Box::new(ErrorResponse {
        code,
        message: message.into(),
        detail: ErrorDetail::None,
    }))
}

/// The answer to a request the stub cannot handle (`detail` says why).
pub fn protocol_error(detail: impl Into<String>) -> Response {
    error(ErrorCode::ProtocolError, detail)
}

/// One row's values.
type Row = Vec<Option<CqlValue>>;

/// Column specs and row values of a result, before encoding.
type RowSet = (Vec<ColumnSpec>, Vec<Row>);

/// A SELECT's rows before paging: a system table's, or the configured shape's (`count`
/// copies of one row, made only for the page a QUERY asks for: a one-row page of a
/// 50,000-row shape costs one row, not 50,000).
enum SelectRows {
    Table(Vec<Row>),
    Shape { row: Row, count: usize },
}

impl SelectRows {
    fn len(&self) -> usize {
        match self {
            Self::Table(rows) => rows.len(),
            Self::Shape { count, .. } => *count,
        }
    }

    /// Rows `start..end` (within [`Self::len`]).
    fn page(&self, start: usize, end: usize) -> std::borrow::Cow<'_, [Row]> {
        match self {
            Self::Table(rows) => std::borrow::Cow::Borrowed(&rows[start..end]),
            Self::Shape { row, .. } => std::borrow::Cow::Owned(vec![row.clone(); end - start]),
        }
    }

    /// Every row.
    fn into_rows(self) -> Vec<Row> {
        match self {
            Self::Table(rows) => rows,
            Self::Shape { row, count } => vec![row; count],
        }
    }
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

/// UNPREPARED for `id`.
pub fn unprepared(id: &[u8]) -> Response {
    Response::Error(Box::new(ErrorResponse {
        code: ErrorCode::Unprepared,
        message: "Prepared query with ID not found (doppio-stub forgot it or never saw it)".into(),
        detail: ErrorDetail::Unprepared {
            id: Bytes::copy_from_slice(id),
        },
    }))
}

/// A RESULT Rows of `rows` (values in `columns` order).
fn rows_response(
    columns: Vec<ColumnSpec>,
    rows: &[Vec<Option<CqlValue>>],
    paging_state: Option<Bytes>,
    skip_metadata: bool,
) -> Response {
    let mut content = BytesMut::new();
    for row in rows {
        for (value, spec) in row.iter().zip(&columns) {
            match value {
                None => content.put_i32(-1),
                Some(v) => {
                    let at = content.len();
                    content.put_i32(0);
                    if v.encode(&spec.typ, &mut content).is_err() {
                        // A value the stub made for its own column cannot mismatch; if it
                        // ever did, null is what the client sees.
                        content.truncate(at);
                        content.put_i32(-1);
                        continue;
                    }
                    let len = (content.len() - at - 4) as i32;
                    content[at..at + 4].copy_from_slice(&len.to_be_bytes());
                }
            }
        }
    }
    let columns_count = columns.len();
    Response::Result(ResultBody::Rows(Rows {
        metadata: RowsMetadata {
            columns_count,
            paging_state,
            columns: if skip_metadata { Vec::new() } else { columns },
            no_metadata: skip_metadata,
            new_metadata_id: None,
        },
        rows_count: rows.len(),
        content: content.freeze(),
    }))
}

/// Appends a RESULT frame carrying a pre-encoded `body` on `stream`.
#[inline]
pub fn put_body_frame(
    out: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    body: &[u8],
    compressed: bool,
) {
    let flags = if compressed {
        Flags::COMPRESSION
    } else {
        Flags::NONE
    };
    put_result_frame(out, version, stream, flags, body);
}

/// A RESULT frame: its header with `flags`, then `content` as it is.
fn put_result_frame(
    out: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    flags: Flags,
    content: &[u8],
) {
    FrameHeader {
        version,
        direction: Direction::Response,
        flags,
        stream,
        opcode: Opcode::Result,
        length: content.len() as u32,
    }
    .write_to(out);
    out.extend_from_slice(content);
}

/// A RESULT frame of the uncompressed `body` with a custom payload of one entry (`key`,
/// `value`) before it, compressed whole when `compressed` (ScyllaDB's tablet routing on a
/// misrouted request: a rare path, which allocates).
pub fn put_body_frame_with_payload(
    out: &mut BytesMut,
    version: ProtocolVersion,
    stream: i16,
    body: &[u8],
    (key, value): (&str, &[u8]),
    compressed: bool,
) {
    let mut plain = BytesMut::with_capacity(body.len() + key.len() + value.len() + 8);
    // A key under 64 KiB and a value of a few hundred bytes: nothing can fail.
    let _ = doppio_proto::wire::put_bytes_map(&mut plain, &[(key, Some(value))], "payload");
    plain.extend_from_slice(body);
    let mut flags = Flags::CUSTOM_PAYLOAD;
    let content = if compressed {
        flags = flags.with(Flags::COMPRESSION);
        let mut packed = BytesMut::new();
        let _ = Compression::Lz4.compress(&plain, &mut packed);
        packed
    } else {
        plain
    };
    put_result_frame(out, version, stream, flags, &content);
}

#[cfg(test)]
mod tests {
    use doppio_proto::consistency::Consistency;
    use doppio_proto::request::QueryParameters;

    use super::*;

    fn params(skip: bool) -> DecodedParameters<'static> {
        DecodedParameters {
            params: QueryParameters {
                consistency: Consistency::One,
                skip_metadata: skip,
                ..QueryParameters::default()
            },
            values: Vec::new(),
        }
    }

    #[test]
    fn prepared_statements_are_answered_from_their_encoded_bodies() {
        let shape = Arc::new(Shape {
            rows: 3,
            row_bytes: 5,
            ..Shape::default()
        });
        let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), shape);
        let mut ks = None;
        let Answer::Message(Response::Result(ResultBody::Prepared(p))) = r.answer(
            &Request::Prepare {
                query: "SELECT v FROM t WHERE k = ?",
                keyspace: None,
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("prepared")
        };
        assert_eq!(p.metadata.columns.len(), 1);
        assert_eq!(p.result_metadata.columns.len(), 1);
        let Answer::Body(bare) = r.answer(
            &Request::Execute {
                id: &p.id,
                result_metadata_id: None,
                params: params(true),
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("body")
        };
        // Kind, flags (GLOBAL_TABLES_SPEC | NO_METADATA, as Cassandra sends them), one
        // column, three rows of [int 5][5 bytes].
        assert_eq!(
            &bare[..16],
            &[0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 3]
        );
        assert_eq!(bare.len(), 16 + 3 * 9);
        let Answer::Body(full) = r.answer(
            &Request::Execute {
                id: &p.id,
                result_metadata_id: None,
                params: params(false),
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("body")
        };
        assert!(full.len() > bare.len(), "metadata included");
        let Answer::Message(Response::Error(e)) = r.answer(
            &Request::Execute {
                id: &[1, 2, 3],
                result_metadata_id: None,
                params: params(false),
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("unprepared")
        };
        assert_eq!(e.code, ErrorCode::Unprepared);
    }

    /// A QUERY's page of the configured shape is made from the rows it holds, not from all
    /// of them: the stub once built every row of the shape for each QUERY and then sent a
    /// page of them (a one-row page of a 50,000-row shape cost 50,000 row allocations, and
    /// made the driver's fault test against it take 80 s of CPU on glommio and io_uring).
    /// A shape of more rows than memory could hold answers its pages at once.
    #[test]
    fn a_query_s_page_of_a_huge_shape_makes_only_its_own_rows() {
        let rows = usize::MAX / 4;
        let shape = Arc::new(Shape {
            rows,
            row_bytes: 8,
            ..Shape::default()
        });
        let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), shape);
        let mut ks = None;
        let state = 1000u32.to_be_bytes();
        let mut p = params(true);
        p.params.page_size = Some(2);
        p.params.paging_state = Some(&state);
        let Answer::Message(Response::Result(ResultBody::Rows(page))) = r.answer(
            &Request::Query("SELECT v FROM t", p),
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("rows")
        };
        assert_eq!(page.rows_count, 2);
        assert_eq!(
            page.metadata.paging_state.as_deref(),
            Some(&1002u32.to_be_bytes()[..]),
            "the next page's state"
        );
    }

    #[test]
    fn executes_of_a_several_row_select_are_paged_by_page_size_and_paging_state() {
        let shape = Arc::new(Shape {
            rows: 5,
            row_bytes: 3,
            ..Shape::default()
        });
        let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), shape);
        let mut ks = None;
        let Answer::Message(Response::Result(ResultBody::Prepared(p))) = r.answer(
            &Request::Prepare {
                query: "SELECT v FROM t",
                keyspace: None,
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("prepared")
        };
        assert!(r.lookup(&p.id).unwrap().pageable());
        fn page(state: Option<&[u8]>, size: Option<i32>) -> DecodedParameters<'_> {
            let mut p = params(true);
            p.params.page_size = size;
            p.params.paging_state = state;
            p
        }
        let mut pages = Vec::new();
        let mut state: Option<Bytes> = None;
        loop {
            let Answer::Message(Response::Result(ResultBody::Rows(rows))) = r.answer(
                &Request::Execute {
                    id: &p.id,
                    result_metadata_id: None,
                    params: page(state.as_deref(), Some(2)),
                },
                &mut ks,
                false,
                ProtocolVersion::V4,
            ) else {
                panic!("a page of rows")
            };
            pages.push(rows.rows_count);
            state = rows.metadata.paging_state;
            if state.is_none() {
                break;
            }
        }
        assert_eq!(pages, vec![2, 2, 1], "5 rows in pages of 2");
        // Every row at once: the pre-encoded body, as before.
        for size in [None, Some(5), Some(5000)] {
            let answer = r.answer(
                &Request::Execute {
                    id: &p.id,
                    result_metadata_id: None,
                    params: page(None, size),
                },
                &mut ks,
                false,
                ProtocolVersion::V4,
            );
            assert!(matches!(answer, Answer::Body(_)), "{size:?}: {answer:?}");
        }
        // A one-row statement keeps the fast path (no rows kept).
        let Answer::Message(Response::Result(ResultBody::Prepared(one))) = r.answer(
            &Request::Prepare {
                query: "SELECT key FROM system.local WHERE key = 'local'",
                keyspace: None,
            },
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("prepared")
        };
        assert!(!r.lookup(&one.id).unwrap().pageable());
    }

    #[test]
    fn system_tables_and_use_are_answered_like_cassandra() {
        let mut r = Responder::new("127.0.0.1:9042".parse().unwrap(), Arc::default());
        let mut ks = None;
        let Answer::Message(Response::Result(ResultBody::SetKeyspace(k))) = r.answer(
            &Request::Query("USE \"ks1\"", params(false)),
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("use")
        };
        assert_eq!(k, "ks1");
        assert_eq!(ks.as_deref(), Some("ks1"));
        let Answer::Message(Response::Result(ResultBody::Rows(rows))) = r.answer(
            &Request::Query(
                "SELECT host_id, rpc_address, data_center, rack, tokens FROM system.local",
                params(false),
            ),
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("rows")
        };
        assert_eq!(rows.rows_count, 1);
        let names: Vec<&str> = rows.columns().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["host_id", "rpc_address", "data_center", "rack", "tokens"]
        );
        let Answer::Message(Response::Error(e)) = r.answer(
            &Request::Query("SELECT bogus FROM system.local", params(false)),
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("error")
        };
        assert_eq!(e.code, ErrorCode::Invalid);
        // A system table the stub lacks (ScyllaDB's) is unconfigured, as on Cassandra; a
        // user table gets the configured shape.
        let Answer::Message(Response::Error(e)) = r.answer(
            &Request::Query(
                "SELECT keyspace_name, table_name, partitioner FROM system_schema.scylla_tables",
                params(false),
            ),
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("error")
        };
        assert_eq!(e.code, ErrorCode::Invalid);
        assert!(e.message.contains("unconfigured table"), "{}", e.message);
        let Answer::Message(Response::Result(ResultBody::Rows(rows))) = r.answer(
            &Request::Query("SELECT v FROM ks1.kv WHERE k = 1", params(false)),
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("rows of the shape")
        };
        assert_eq!(rows.rows_count, 1);
        let Answer::Message(Response::Result(ResultBody::Void)) = r.answer(
            &Request::Query("INSERT INTO t (k) VALUES (1)", params(false)),
            &mut ks,
            false,
            ProtocolVersion::V4,
        ) else {
            panic!("void")
        };
    }

    /// ScyllaDB's table of keyspaces in tablets: empty on an emulated ScyllaDB node, the
    /// routed keyspace (NetworkTopologyStrategy) with its tablets when it is in tablets.
    #[test]
    fn scylla_keyspaces_lists_the_keyspace_in_tablets() {
        use std::collections::BTreeMap;
        let select = |r: &mut Responder, cql: &'static str| {
            let mut ks = None;
            match r.answer(
                &Request::Query(cql, params(false)),
                &mut ks,
                false,
                ProtocolVersion::V4,
            ) {
                Answer::Message(Response::Result(ResultBody::Rows(rows))) => rows,
                _ => panic!("rows of {cql}"),
            }
        };
        const TABLETS: &str =
            "SELECT keyspace_name, initial_tablets FROM system_schema.scylla_keyspaces";
        let addr = "127.0.0.1:9042".parse().unwrap();
        let mut scylla = Responder::new(addr, Arc::default()).with_scylla_keyspaces();
        assert_eq!(select(&mut scylla, TABLETS).rows_count, 0);
        let mut r = Responder::new(addr, Arc::default())
            .with_scylla_keyspaces()
            .with_tablet_keyspace("ks", 3, 24);
        let rows = select(&mut r, TABLETS);
        let got: Vec<(String, Option<i32>)> = rows
            .typed::<(String, Option<i32>)>()
            .unwrap()
            .map(|row| row.unwrap())
            .collect();
        assert_eq!(got, vec![("ks".to_owned(), Some(24))]);
        let rows = select(
            &mut r,
            "SELECT keyspace_name, replication FROM system_schema.keyspaces",
        );
        let replication: Vec<(String, BTreeMap<String, String>)> = rows
            .typed::<(String, BTreeMap<String, String>)>()
            .unwrap()
            .map(|row| row.unwrap())
            .filter(|(k, _)| k == "ks")
            .collect();
        assert_eq!(
            replication,
            vec![(
                "ks".to_owned(),
                BTreeMap::from([
                    (
                        "class".to_owned(),
                        "org.apache.cassandra.locator.NetworkTopologyStrategy".to_owned()
                    ),
                    ("datacenter1".to_owned(), "3".to_owned())
                ])
            )]
        );
    }

    #[test]
    fn ids_depend_on_text_and_keyspace_only() {
        assert_eq!(statement_id("a", None), statement_id("a", None));
        assert_ne!(statement_id("a", None), statement_id("a", Some("k")));
        assert_ne!(statement_id("a", None), statement_id("b", None));
    }
}
