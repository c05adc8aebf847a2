//! The session API a shard's user code calls: query, prepare, execute, batch, use_keyspace.
//!
//! A [`Session`] belongs to one shard (`!Send`, cheap to clone). It owns the shard's pool of
//! connections to the node and its prepared-statement cache (keyed by CQL text and
//! keyspace). This slice talks to one node (its contact point); routing across a cluster is
//! the cluster-awareness work.
//!
//! Per request: the statement is encoded straight into a connection's write buffer (prepared
//! statements from their pre-encoded [`ExecuteTemplate`]), the caller parks on its stream id,
//! and the answer comes back as a zero-copy frame body. No task, channel or lock.

pub mod paging;
pub mod result;
pub mod retry;
pub mod stats;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use doppio_proto::consistency::Consistency;
use doppio_proto::frame::Flags;
use doppio_proto::metadata::{ColumnSpec, PreparedMetadata, RowsMetadata};
use doppio_proto::request::{
    Batch, BatchStatement, BatchType, Execute, ExecuteTemplate, Prepare, Query, QueryParameters,
    RequestBody,
};
use doppio_proto::response::{ErrorCode, Response, ResponseFrame, ResultBody};
use doppio_proto::values::QueryValues;

use crate::connection::{Connection, ConnectionConfig};
use crate::error::Error;
use crate::handshake::{handshake, HandshakeConfig};
use crate::pool::{Backoff, ConnectFn, NodePool};
pub use paging::{PageStream, Statement};
pub use result::QueryResult;
pub use retry::{DefaultRetryPolicy, NoRetry, RetryDecision, RetryPolicy};
pub use stats::{ErrorCounts, SessionStats};

/// How a session connects and what its statements default to.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The node to talk to.
    pub node: SocketAddr,
    /// Connections to the node (per shard).
    pub connections: usize,
    /// Connection tunables (stream ids, timeouts, buffers, keepalive).
    pub connection: ConnectionConfig,
    /// Handshake: compression and credentials.
    pub handshake: HandshakeConfig,
    /// Reconnection backoff.
    pub backoff: Backoff,
    /// Default consistency.
    pub consistency: Consistency,
    /// Default serial consistency (for conditional statements).
    pub serial_consistency: Option<Consistency>,
    /// Default page size.
    pub page_size: Option<i32>,
    /// How long `connect` waits for the first connection.
    pub connect_timeout: Duration,
    /// Which failed requests are sent again (consulted only on failure).
    pub retry_policy: Arc<dyn RetryPolicy>,
}

impl SessionConfig {
    /// Defaults for `node`: one connection, LOCAL_QUORUM, pages of 5000 rows.
    pub fn new(node: SocketAddr) -> Self {
        Self {
            node,
            connections: 1,
            connection: ConnectionConfig::default(),
            handshake: HandshakeConfig::default(),
            backoff: Backoff::default(),
            consistency: Consistency::LocalQuorum,
            serial_consistency: None,
            page_size: Some(5000),
            connect_timeout: Duration::from_secs(10),
            retry_policy: Arc::new(DefaultRetryPolicy::default()),
        }
    }
}

/// Options of one statement; `None` fields take the session's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatementOptions<'a> {
    /// Consistency.
    pub consistency: Option<Consistency>,
    /// Serial consistency.
    pub serial_consistency: Option<Consistency>,
    /// Default timestamp, microseconds since the epoch.
    pub timestamp: Option<i64>,
    /// Page size (`Some(0)`: no paging).
    pub page_size: Option<i32>,
    /// Continue from this paging state.
    pub paging_state: Option<&'a [u8]>,
    /// Ask the node to trace the request (the result carries the tracing id).
    pub tracing: bool,
    /// Whether the statement may be applied twice safely (for retry policies).
    pub idempotent: bool,
    /// Request timeout.
    pub timeout: Option<Duration>,
}

/// A prepared statement: its id, metadata and pre-encoded EXECUTE. Cheap to clone.
#[derive(Debug, Clone)]
pub struct PreparedStatement {
    inner: Rc<PreparedInner>,
}

#[derive(Debug)]
struct PreparedInner {
    cql: String,
    keyspace: Option<String>,
    id: RefCell<Bytes>,
    metadata: PreparedMetadata,
    /// The columns an execution returns, from the latest PREPARE. Executions ask the node
    /// to skip sending them (`skip_metadata`) and read rows by these instead, shared with
    /// each result by an `Rc` clone: no allocation, no atomic per request.
    result_columns: RefCell<Rc<[ColumnSpec]>>,
    /// EXECUTE with the session's default options; rebuilt on re-prepare. An `Rc` so that a
    /// request can hold it across awaits without a `RefCell` borrow or a copy.
    template: RefCell<Rc<ExecuteTemplate>>,
}

impl PreparedStatement {
    /// The CQL text.
    pub fn cql(&self) -> &str {
        &self.inner.cql
    }

    /// The prepared id.
    pub fn id(&self) -> Bytes {
        self.inner.id.borrow().clone()
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

    /// Whether executions skip the result metadata (statements that return rows).
    fn skips_metadata(&self) -> bool {
        !self.inner.result_columns.borrow().is_empty()
    }
}

struct Inner {
    config: SessionConfig,
    pool: Rc<NodePool>,
    keyspace: Rc<RefCell<Option<String>>>,
    prepared: RefCell<HashMap<(String, Option<String>), PreparedStatement>>,
    stats: Cell<SessionStats>,
}

/// A shard's handle to the database. `!Send`: it lives on its shard.
#[derive(Clone)]
pub struct Session {
    inner: Rc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("node", &self.inner.config.node)
            .field("keyspace", &self.inner.keyspace.borrow())
            .finish()
    }
}

impl Session {
    /// Opens the session's connections (TCP, handshake, and `USE` of the session keyspace on
    /// every replacement connection) and waits for the first one.
    pub async fn connect(config: SessionConfig) -> Result<Self, Error> {
        let keyspace: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
        // A handshake that the node refuses (credentials, protocol version) is kept here so
        // that `connect` can fail at once with it instead of retrying until its timeout.
        let refused: Rc<RefCell<Option<Error>>> = Rc::new(RefCell::new(None));
        let connect: ConnectFn = {
            let conn_config = config.connection.clone();
            let hs = config.handshake.clone();
            let keyspace = keyspace.clone();
            let refused = refused.clone();
            Rc::new(move |addr| {
                let conn_config = conn_config.clone();
                let hs = hs.clone();
                let keyspace = keyspace.borrow().clone();
                let refused = refused.clone();
                Box::pin(async move {
                    let conn = Connection::connect(addr, conn_config).await?;
                    let fail = |e: Error| crate::connection::ConnectionError::Closed {
                        addr,
                        reason: e.to_string(),
                    };
                    if let Err(e) = handshake(&conn, &hs).await {
                        let refusal = match &e {
                            Error::Authentication { .. } | Error::Handshake { .. } => true,
                            // A node that does not speak v4 says so with a PROTOCOL_ERROR.
                            Error::Server { error, .. } => error.code == ErrorCode::ProtocolError,
                            _ => false,
                        };
                        if refusal {
                            *refused.borrow_mut() = Some(e.clone());
                        }
                        conn.close("handshake failed");
                        return Err(fail(e));
                    }
                    if let Some(ks) = keyspace {
                        use_keyspace_on(&conn, &ks).await.map_err(fail)?;
                    }
                    Ok(conn)
                })
            })
        };
        let pool = NodePool::start(config.node, config.connections, connect, config.backoff);
        let deadline = std::time::Instant::now() + config.connect_timeout;
        while pool.open_count() == 0 {
            if let Some(e) = refused.borrow_mut().take() {
                pool.close("the node refused the handshake");
                return Err(e);
            }
            if std::time::Instant::now() >= deadline {
                pool.close("connect timed out");
                let why = pool.last_error().map_or_else(
                    || format!("no connection opened within {:?}", config.connect_timeout),
                    |e| e.to_string(),
                );
                return Err(Error::NoConnection(format!("{}: {why}", config.node)));
            }
            // Control path (once per session): a short sleep keeps this loop simple.
            glommio::timer::sleep(Duration::from_millis(2)).await;
        }
        Ok(Self {
            inner: Rc::new(Inner {
                config,
                pool,
                keyspace,
                prepared: RefCell::new(HashMap::new()),
                stats: Cell::new(SessionStats::default()),
            }),
        })
    }

    /// The node this session talks to.
    pub fn node(&self) -> SocketAddr {
        self.inner.config.node
    }

    /// The session's connection pool (for statistics).
    pub fn pool(&self) -> &NodePool {
        &self.inner.pool
    }

    /// This session's counters: requests, retries and errors by kind, plus the traffic of
    /// its open connections (see [`SessionStats`]).
    pub fn stats(&self) -> SessionStats {
        let mut s = self.inner.stats.get();
        s.connections = self.inner.pool.connection_stats();
        s
    }

    fn count(&self, result: &Result<QueryResult, Error>, retried: u32) {
        let mut s = self.inner.stats.get();
        s.requests += 1;
        s.retries += u64::from(retried);
        if let Err(e) = result {
            s.errors.count(e);
        }
        self.inner.stats.set(s);
    }

    /// Runs `attempt` until it succeeds or the retry policy says stop.
    async fn with_retries<F, Fut>(&self, idempotent: bool, attempt: F) -> Result<QueryResult, Error>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<QueryResult, Error>>,
    {
        let mut retries = 0u32;
        loop {
            let result = attempt().await;
            if let Err(e) = &result {
                if self
                    .inner
                    .config
                    .retry_policy
                    .decide(e, idempotent, retries)
                    == RetryDecision::Retry
                {
                    retries += 1;
                    continue;
                }
            }
            self.count(&result, retries);
            return result;
        }
    }

    /// The keyspace set by [`Session::use_keyspace`].
    pub fn keyspace(&self) -> Option<String> {
        self.inner.keyspace.borrow().clone()
    }

    fn connection(&self) -> Result<Connection, Error> {
        self.inner.pool.pick().ok_or_else(|| {
            if let Some(reason) = self.inner.pool.closed_reason() {
                return Error::Closed(reason);
            }
            Error::NoConnection(match self.inner.pool.last_error() {
                Some(e) => format!("{} is down: {e}", self.node()),
                None => format!("{} has no open connection", self.node()),
            })
        })
    }

    fn params<'a>(&self, o: &StatementOptions<'a>) -> QueryParameters<'a> {
        let c = &self.inner.config;
        QueryParameters {
            consistency: o.consistency.unwrap_or(c.consistency),
            skip_metadata: false,
            page_size: match o.page_size.or(c.page_size) {
                Some(p) if p > 0 => Some(p),
                _ => None,
            },
            paging_state: o.paging_state,
            serial_consistency: o.serial_consistency.or(c.serial_consistency),
            timestamp: o.timestamp,
        }
    }

    async fn send(
        &self,
        conn: &Connection,
        tracing: bool,
        request: &impl RequestBody,
        timeout: Option<Duration>,
    ) -> Result<ResponseFrame, Error> {
        let flags = if tracing { Flags::TRACING } else { Flags::NONE };
        conn.send(flags, request, timeout)
            .await
            .map_err(|e| Error::from_request(conn.addr(), e))
    }

    /// Runs an unprepared statement with the session's defaults.
    pub async fn query(
        &self,
        cql: &str,
        values: &(impl QueryValues + ?Sized),
    ) -> Result<QueryResult, Error> {
        self.query_with(cql, values, &StatementOptions::default())
            .await
    }

    /// Runs an unprepared statement with per-statement options.
    pub async fn query_with(
        &self,
        cql: &str,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        self.with_retries(options.idempotent, || self.query_once(cql, values, options))
            .await
    }

    async fn query_once(
        &self,
        cql: &str,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let conn = self.connection()?;
        let q = Query {
            query: cql,
            params: self.params(options),
            values,
        };
        let frame = self
            .send(&conn, options.tracing, &q, options.timeout)
            .await?;
        result_of(conn.addr(), frame, "QUERY")
    }

    /// Prepares a statement, or returns it from this shard's cache (keyed by CQL text and
    /// the session keyspace).
    pub async fn prepare(&self, cql: &str) -> Result<PreparedStatement, Error> {
        let key = (cql.to_owned(), self.keyspace());
        if let Some(p) = self.inner.prepared.borrow().get(&key) {
            return Ok(p.clone());
        }
        let (id, metadata, result_metadata) = self.prepare_on_node(cql).await?;
        let result_columns: Rc<[ColumnSpec]> = result_metadata.columns.into();
        let template = self.template(&id, metadata.columns.len(), !result_columns.is_empty())?;
        let prepared = PreparedStatement {
            inner: Rc::new(PreparedInner {
                cql: cql.to_owned(),
                keyspace: key.1.clone(),
                id: RefCell::new(id),
                metadata,
                result_columns: RefCell::new(result_columns),
                template: RefCell::new(Rc::new(template)),
            }),
        };
        self.inner
            .prepared
            .borrow_mut()
            .insert(key, prepared.clone());
        Ok(prepared)
    }

    fn template(
        &self,
        id: &[u8],
        markers: usize,
        skip_metadata: bool,
    ) -> Result<ExecuteTemplate, Error> {
        let params = QueryParameters {
            skip_metadata,
            ..self.params(&StatementOptions::default())
        };
        ExecuteTemplate::new(id, markers, &params, Flags::NONE).map_err(Error::Serialization)
    }

    async fn prepare_on_node(
        &self,
        cql: &str,
    ) -> Result<(Bytes, PreparedMetadata, RowsMetadata), Error> {
        let conn = self.connection()?;
        let frame = self
            .send(&conn, false, &Prepare { query: cql }, None)
            .await?;
        match result_of(conn.addr(), frame, "PREPARE")?.body {
            ResultBody::Prepared(p) => Ok((p.id, p.metadata, p.result_metadata)),
            _ => Err(Error::UnexpectedResponse {
                node: conn.addr(),
                request: "PREPARE",
                got: "a RESULT that is not Prepared",
            }),
        }
    }

    /// Executes a prepared statement with the session's defaults.
    pub async fn execute(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
    ) -> Result<QueryResult, Error> {
        self.execute_with(prepared, values, &StatementOptions::default())
            .await
    }

    /// Executes a prepared statement with per-statement options. If the node has forgotten
    /// the statement (UNPREPARED), it is prepared again and executed once more.
    pub async fn execute_with(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        self.with_retries(options.idempotent, || {
            self.execute_healing(prepared, values, options)
        })
        .await
    }

    /// The pages of an unprepared statement's result, each fetched while the caller reads
    /// the one before (see [`PageStream`]). The page size is the statement's
    /// or the session's; `options.paging_state` resumes an earlier stream.
    pub fn query_pages<'a, V: QueryValues + ?Sized>(
        &self,
        cql: &'a str,
        values: &'a V,
        options: StatementOptions<'a>,
    ) -> PageStream<'a, V> {
        PageStream::new(self.clone(), Statement::Query(cql), values, options)
    }

    /// The pages of a prepared statement's result, each fetched while the caller reads the
    /// one before (see [`PageStream`]).
    pub fn execute_pages<'a, V: QueryValues + ?Sized>(
        &self,
        prepared: &'a PreparedStatement,
        values: &'a V,
        options: StatementOptions<'a>,
    ) -> PageStream<'a, V> {
        PageStream::new(self.clone(), Statement::Prepared(prepared), values, options)
    }

    /// One execution, healed once if the node has forgotten the statement (UNPREPARED) or
    /// its result no longer has the prepared number of columns (the table changed since:
    /// the result columns we read rows by are stale).
    async fn execute_healing(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        match self.execute_once(prepared, values, options).await {
            Err(e) if e.server_code() == Some(ErrorCode::Unprepared) => {}
            Ok(r) if r.stale_columns() => {}
            other => return other,
        }
        self.reprepare(prepared).await?;
        let result = self.execute_once(prepared, values, options).await?;
        if result.stale_columns() {
            return Err(Error::Protocol {
                node: result.node,
                detail: format!(
                    "the result of `{}` does not match its prepared columns even after \
                     preparing it again",
                    prepared.cql()
                ),
            });
        }
        Ok(result)
    }

    /// Prepares `prepared` again and takes the node's current id and result columns.
    async fn reprepare(&self, prepared: &PreparedStatement) -> Result<(), Error> {
        let (id, _, result_metadata) = self.prepare_on_node(&prepared.inner.cql).await?;
        let result_columns: Rc<[ColumnSpec]> = result_metadata.columns.into();
        let template = self.template(
            &id,
            prepared.inner.metadata.columns.len(),
            !result_columns.is_empty(),
        )?;
        *prepared.inner.id.borrow_mut() = id;
        *prepared.inner.result_columns.borrow_mut() = result_columns;
        *prepared.inner.template.borrow_mut() = Rc::new(template);
        Ok(())
    }

    async fn execute_once(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let conn = self.connection()?;
        let node = conn.addr();
        let columns = Some(prepared.inner.metadata.columns.as_slice());
        let defaults = *options == StatementOptions::default();
        let frame = if defaults && conn.compression().is_none() {
            // The hot path: two memcpys from the template plus the values.
            let template = Rc::clone(&prepared.inner.template.borrow());
            let frame = conn
                .request(None, |buf, stream| {
                    template.encode(buf, stream, values, columns)
                })
                .await
                .map_err(|e| Error::from_request(node, e))?;
            ResponseFrame::decode(&frame, conn.compression(), conn.config().max_frame_body)
                .map_err(|e| Error::Protocol {
                    node,
                    detail: e.to_string(),
                })?
        } else {
            let id = prepared.id();
            let e = Execute {
                id: &id,
                params: QueryParameters {
                    skip_metadata: prepared.skips_metadata(),
                    ..self.params(options)
                },
                values,
                columns,
            };
            self.send(&conn, options.tracing, &e, options.timeout)
                .await?
        };
        let mut result = result_of(node, frame, "EXECUTE")?;
        // Rows sent without metadata are read by the prepared result columns.
        if let ResultBody::Rows(rows) = &result.body {
            if rows.metadata.no_metadata {
                result.columns = Some(prepared.result_columns());
            }
        }
        Ok(result)
    }

    /// Runs a BATCH of prepared and unprepared statements.
    pub async fn batch(
        &self,
        kind: BatchType,
        statements: &[BatchStatement<'_>],
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        self.with_retries(options.idempotent, || {
            self.batch_once(kind, statements, options)
        })
        .await
    }

    async fn batch_once(
        &self,
        kind: BatchType,
        statements: &[BatchStatement<'_>],
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let conn = self.connection()?;
        let p = self.params(options);
        let b = Batch {
            kind,
            statements,
            consistency: p.consistency,
            serial_consistency: p.serial_consistency,
            timestamp: p.timestamp,
        };
        let frame = self
            .send(&conn, options.tracing, &b, options.timeout)
            .await?;
        result_of(conn.addr(), frame, "BATCH")
    }

    /// Sets the session keyspace on every open connection and on connections opened later.
    pub async fn use_keyspace(&self, keyspace: &str) -> Result<(), Error> {
        let conn = self.connection()?;
        use_keyspace_on(&conn, keyspace).await?;
        *self.inner.keyspace.borrow_mut() = Some(keyspace.to_owned());
        // The other open connections: a USE each (control path, not per request).
        for _ in 1..self.inner.config.connections {
            if let Some(other) = self.inner.pool.pick() {
                use_keyspace_on(&other, keyspace).await?;
            }
        }
        Ok(())
    }
}

async fn use_keyspace_on(conn: &Connection, keyspace: &str) -> Result<(), Error> {
    let node = conn.addr();
    // Quote the name so that case and special characters survive.
    let cql = format!("USE \"{}\"", keyspace.replace('"', "\"\""));
    let q = Query {
        query: &cql,
        params: QueryParameters::default(),
        values: &(),
    };
    let frame = conn
        .send(Flags::NONE, &q, None)
        .await
        .map_err(|e| Error::from_request(node, e))?;
    match frame.response {
        Response::Result(ResultBody::SetKeyspace(_)) => Ok(()),
        Response::Error(error) => Err(Error::Server { node, error }),
        other => Err(Error::UnexpectedResponse {
            node,
            request: "USE",
            got: other.opcode().name(),
        }),
    }
}

/// The RESULT in `frame`, or the ERROR it carries as an [`Error`].
fn result_of(
    node: SocketAddr,
    frame: ResponseFrame,
    request: &'static str,
) -> Result<QueryResult, Error> {
    match frame.response {
        Response::Result(body) => Ok(QueryResult {
            node,
            body,
            warnings: frame.warnings,
            tracing_id: frame.tracing_id,
            columns: None,
        }),
        Response::Error(error) => Err(Error::Server { node, error }),
        other => Err(Error::UnexpectedResponse {
            node,
            request,
            got: other.opcode().name(),
        }),
    }
}
