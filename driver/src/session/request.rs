//! The request path: QUERY, EXECUTE and BATCH from the caller to a connection's write
//! buffer and back, with the routing of each (a prepared statement's replicas when its
//! partition key is bound) and the pages of a result.
//!
//! The common case, a prepared statement with default options on an uncompressed
//! connection, is encoded from its [`ExecuteTemplate`](doppio_proto::request::ExecuteTemplate) with two copies plus the values;
//! when the statement is routed by token, the values serialized to compute the token are
//! copied into the frame instead of being serialized again. The answer comes back as a
//! zero-copy frame body. No task, channel or lock.
//!
//! Invariant: an answer that does not decode closes its connection on every path (the
//! node broke the protocol), as [`Connection::send`] does.

use std::future::Future;
use std::net::SocketAddr;
use std::num::NonZeroU64;
use std::rc::Rc;
use std::time::Duration;

use doppio_proto::consistency::Consistency;
use doppio_proto::frame::{Flags, Frame};
use doppio_proto::request::{
    encode_envelope, BatchElements, BatchOf, BatchStatement, BatchType, Execute, Query,
    QueryParameters, RequestBody,
};
use doppio_proto::response::{ErrorCode, ErrorDetail, ResponseFrame, ResultBody};
use doppio_proto::values::QueryValues;

use super::attempt::{
    decode_answer, encode_templated, forgotten, own_page, page_size, templated, FirstAttempt,
};
use super::config::StatementOptions;
use super::handle::Session;
use super::paging::{PageStream, Statement};
use super::plan::Placement;
use super::prepared::PreparedStatement;
use crate::connection::Connection;
use crate::error::{Error, Violation};
use crate::result::{result_in, result_of, QueryResult, ResultParts};
use crate::routing::murmur3::Token;
use crate::routing::partition_key::PlacedValues;

/// Whether an EXECUTE whose statement the node forgot is prepared again and retried.
#[derive(Clone, Copy)]
enum Heal {
    /// Once, on the same connection.
    Once,
    /// Already healed: the error (or stale result) is final.
    Done,
}

/// The statements of a [`Session::batch_prepared`], handed out one at a time: a slice of
/// [`PreparedBatchEntry`], or a caller's own type whose values are made per request.
pub trait PreparedBatchEntries {
    /// How many statements.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Statement `k` (`None` past the last).
    fn statement(&self, k: usize) -> Option<&PreparedStatement>;

    /// Calls `f` with statement `k`'s values.
    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> doppio_proto::error::Result<()>,
    ) -> doppio_proto::error::Result<()>;
}

/// One statement of a [`Session::batch_prepared`]: a prepared statement and its values.
#[derive(Clone, Copy)]
pub struct PreparedBatchEntry<'a> {
    /// The statement.
    pub statement: &'a PreparedStatement,
    /// Its values.
    pub values: &'a dyn QueryValues,
}

impl std::fmt::Debug for PreparedBatchEntry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedBatchEntry")
            .field("statement", &self.statement.cql())
            .field("values", &self.values.count())
            .finish()
    }
}

impl PreparedBatchEntries for [PreparedBatchEntry<'_>] {
    fn len(&self) -> usize {
        <[PreparedBatchEntry<'_>]>::len(self)
    }

    fn statement(&self, k: usize) -> Option<&PreparedStatement> {
        self.get(k).map(|e| e.statement)
    }

    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> doppio_proto::error::Result<()>,
    ) -> doppio_proto::error::Result<()> {
        match self.get(k) {
            Some(e) => f(e.values),
            None => Err(missing_statement(k)),
        }
    }
}

impl<const N: usize> PreparedBatchEntries for [PreparedBatchEntry<'_>; N] {
    fn len(&self) -> usize {
        N
    }

    fn statement(&self, k: usize) -> Option<&PreparedStatement> {
        self.as_slice().statement(k)
    }

    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> doppio_proto::error::Result<()>,
    ) -> doppio_proto::error::Result<()> {
        self.as_slice().with_values(k, f)
    }
}

fn missing_statement(k: usize) -> doppio_proto::ProtoError {
    doppio_proto::ProtoError::InvalidValue {
        what: "batch statement",
        detail: format!("no statement {k}"),
    }
}

/// [`PreparedBatchEntries`] as the encoder takes them: each statement's id borrowed while it
/// is written (the encoding does not wait, so a re-prepare cannot change it meanwhile).
struct Prepared<'e, E: ?Sized>(&'e E);

impl<E: PreparedBatchEntries + ?Sized> BatchElements for Prepared<'_, E> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn with_element(
        &self,
        k: usize,
        f: &mut dyn FnMut(&BatchStatement<'_>) -> doppio_proto::error::Result<()>,
    ) -> doppio_proto::error::Result<()> {
        let statement = self.0.statement(k).ok_or_else(|| missing_statement(k))?;
        let id = statement.inner.id.borrow();
        let columns = Some(statement.inner.metadata.columns.as_slice());
        self.0.with_values(k, &mut |values| {
            f(&BatchStatement::Prepared {
                id: &id,
                values,
                columns,
            })
        })
    }
}

impl Session {
    pub(super) fn params<'a>(&self, o: &StatementOptions<'a>) -> QueryParameters<'a> {
        let c = &self.inner.config;
        QueryParameters {
            consistency: o.consistency.unwrap_or(c.consistency),
            skip_metadata: false,
            page_size: page_size(o, c.page_size),
            paging_state: o.paging_state,
            serial_consistency: o.serial_consistency.or(c.serial_consistency),
            timestamp: o.timestamp,
            keyspace: None,
            now_in_seconds: None,
        }
    }

    pub(super) async fn send(
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

    /// A placement without a token (unprepared statements, batches, preparation).
    pub(super) fn place_anywhere(&self) -> Placement {
        Placement {
            view: self.view(),
            token: None,
            map: None,
            tablet: None,
            lwt: false,
        }
    }

    /// The placement of a prepared statement with `values` and `options`: its replicas when
    /// the partition key is bound and the keyspace's replication is known (the values are
    /// then serialized once, here, and the frame copies them); primary first for a
    /// lightweight transaction (ScyllaDB's LWT mark, or a SERIAL or LOCAL_SERIAL read).
    pub(super) fn place_prepared(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> (Placement, Option<NonZeroU64>) {
        let view = self.view();
        let map = {
            let mut cached = prepared.inner.replicas.borrow_mut();
            if cached.0 != view.version() || view.version() == 0 {
                let map = prepared
                    .routing_keyspace()
                    .and_then(|ks| view.replica_map(ks).cloned());
                *cached = (view.version(), map);
            }
            cached.1.clone()
        };
        // With ScyllaDB shards the token also picks the node's shard, so it is computed even
        // when the keyspace's replicas are unknown (a Cassandra node never pays the check
        // beyond a scan of its few nodes' pools).
        let (token, serialized) = match map {
            _ if map.is_some() || view.any_sharded() => {
                let m = &prepared.inner.metadata;
                let mut scratch = self.inner.scratch.borrow_mut();
                let token = scratch.token(values, &m.columns, &m.pk_indexes);
                (token, Some(scratch.generation()))
            }
            _ => (None, None),
        };
        let consistency = options.consistency.unwrap_or(self.inner.config.consistency);
        let lwt = prepared.inner.lwt
            || matches!(consistency, Consistency::Serial | Consistency::LocalSerial);
        let tablet = self.tablet_replicas(prepared, token, &view);
        (
            Placement {
                view,
                token,
                map,
                tablet,
                lwt,
            },
            serialized,
        )
    }

    /// The token of `prepared`'s partition key bound in `values`, if it is bound.
    pub fn token_of(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
    ) -> Option<Token> {
        let m = &prepared.inner.metadata;
        self.inner
            .scratch
            .borrow_mut()
            .token(values, &m.columns, &m.pk_indexes)
    }

    /// The replicas (addresses, in placement order) of `prepared` with `values`, as this
    /// shard would route it: its tablet's when this shard knows it (ScyllaDB), else the
    /// token ring's; none when it is not routed by token.
    pub fn replicas_of(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
    ) -> Vec<SocketAddr> {
        let (placement, _) = self.place_prepared(prepared, values, &StatementOptions::default());
        placement
            .routing()
            .replicas
            .iter()
            .filter_map(|&i| placement.view.info(i).map(|n| n.addr))
            .collect()
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
        self.run(self.place_anywhere(), options.idempotent, |conn| {
            self.query_once(conn, cql, values, options)
        })
        .await
    }

    async fn query_once(
        &self,
        conn: Connection,
        cql: &str,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let q = Query {
            query: cql,
            params: self.params(options),
            values,
        };
        let frame = self
            .send(&conn, options.tracing, &q, options.timeout)
            .await?;
        result_of(&conn, frame, "QUERY")
    }

    /// Executes a prepared statement with the session's defaults.
    ///
    /// The future is [`Session::execute_with`]'s own, not one wrapped around it: every
    /// level of async nesting on the request path costs a move of the result as it is
    /// handed up.
    pub fn execute<'a>(
        &'a self,
        prepared: &'a PreparedStatement,
        values: &'a (impl QueryValues + ?Sized),
    ) -> impl Future<Output = Result<QueryResult, Error>> + 'a {
        self.execute_with(prepared, values, &StatementOptions::DEFAULT)
    }

    /// Executes a prepared statement with per-statement options, on one of its replicas
    /// when its partition key is bound. If the node has forgotten the statement
    /// (UNPREPARED), it is prepared there again and executed once more.
    ///
    /// The common case (default options, a stream id free at once, the first node answers)
    /// runs as one state machine (`session::execute::Execute`); everything else (retries,
    /// re-preparing, speculative execution, other options, waiting for a stream id) goes
    /// the general way, boxed.
    pub fn execute_with<'a, V: QueryValues + ?Sized>(
        &'a self,
        prepared: &'a PreparedStatement,
        values: &'a V,
        options: &'a StatementOptions<'a>,
    ) -> impl Future<Output = Result<QueryResult, Error>> + 'a {
        super::execute::Execute::new(self, prepared, values, options)
    }

    /// [`Session::execute_with`] the general way: placed, then run along its plan, each
    /// attempt an [`Session::execute_once`].
    pub(super) async fn execute_general<V: QueryValues + ?Sized>(
        &self,
        prepared: &PreparedStatement,
        values: &V,
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let (placement, serialized) = self.place_prepared(prepared, values, options);
        self.execute_rest(prepared, values, options, placement, serialized, None)
            .await
    }

    /// Runs an EXECUTE along the plan of `placement`, after its `first` attempt if one
    /// already ran (healed here first when the node had forgotten the statement).
    pub(super) async fn execute_rest<V: QueryValues + ?Sized>(
        &self,
        prepared: &PreparedStatement,
        values: &V,
        options: &StatementOptions<'_>,
        placement: Placement,
        serialized: Option<NonZeroU64>,
        first: Option<FirstAttempt>,
    ) -> Result<QueryResult, Error> {
        // The values as the frame writes them: copied from the routing scratch when the
        // placement serialized them (and nothing has overwritten them since), else
        // serialized then.
        let values = &PlacedValues::new(&self.inner.scratch, serialized, values);
        let first = match first {
            Some(FirstAttempt {
                index,
                conn,
                result,
            }) if forgotten(&result) => Some(FirstAttempt {
                index,
                result: self.heal(&conn, prepared, values, options).await,
                conn,
            }),
            other => other,
        };
        self.run_from(placement, options.idempotent, first, |conn| {
            self.execute_once(conn, prepared, values, options, Heal::Once)
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

    /// One EXECUTE on `conn`. With `Heal::Once` it is healed once if the node has forgotten
    /// the statement (UNPREPARED) or its result no longer has the prepared number of columns
    /// (the table changed since: the result columns we read rows by are stale): prepared
    /// there again and executed once more.
    ///
    /// The healing is at the end of this function rather than in one wrapped around it:
    /// a level of async nesting less on every request (each hands its result up with a copy).
    async fn execute_once(
        &self,
        conn: Connection,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
        heal: Heal,
    ) -> Result<QueryResult, Error> {
        let conn = &conn;
        let node = conn.addr();
        let columns = Some(prepared.inner.metadata.columns.as_slice());
        let frame = if templated(prepared, options, conn) {
            // The hot path: two memcpys from the template plus the values (copied too when
            // the placement serialized them already).
            let template = Rc::clone(&prepared.inner.template.borrow());
            let page = own_page(options, self.inner.config.page_size);
            let frame = conn
                .request(options.timeout, |buf, stream| {
                    encode_templated(&template, page, buf, stream, values, columns)
                })
                .await
                .map_err(|e| Error::from_request(node, e))?;
            decode_answer(conn, &frame)?
        } else {
            let id = prepared.id();
            let result_metadata_id = prepared.result_metadata_id();
            let e = Execute {
                id: &id,
                result_metadata_id: result_metadata_id.as_deref(),
                params: QueryParameters {
                    skip_metadata: prepared.skips_metadata(),
                    ..self.params(options)
                },
                values,
                columns,
            };
            // Non-default options: a rarer path, boxed to keep the hot future small.
            Box::pin(self.send(conn, options.tracing, &e, options.timeout)).await?
        };
        // The frame is read in a block of its own: borrowed, it would otherwise be kept in
        // this future across the healing's await below (192 bytes more in every boxed
        // general path's future).
        let result = {
            let mut frame = frame;
            self.execute_result(conn, prepared, &mut frame)
        };
        if !forgotten(&result) {
            return result;
        }
        match heal {
            Heal::Once => {
                // The healing path is rare: boxed, so that it does not grow every request's
                // future.
                Box::pin(self.heal(conn, prepared, values, options)).await
            }
            Heal::Done => match result {
                Ok(r) => Err(Error::Protocol {
                    node: r.node,
                    violation: Box::new(Violation::StaleColumns {
                        cql: prepared.cql().to_owned(),
                    }),
                }),
                Err(e) => Err(e),
            },
        }
    }

    /// The result of an EXECUTE of `prepared` whose answer `frame` came on `conn` (see
    /// [`Session::execute_result`]). The decoded frame stays a local of this one function
    /// (decoding and `result_in` are inlined here) and is read where `decode` wrote it:
    /// handed between functions, re-wrapped in another `Result` (`decode_answer`'s
    /// `map_err`) or moved out of this one, it was copied once more each time (192 bytes).
    pub(super) fn execute_answer(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
        frame: &Frame,
    ) -> Result<QueryResult, Error> {
        let mut decoded = ResponseFrame::decode(frame, None, conn.config().max_frame_body);
        match decoded {
            Ok(ref mut decoded) => self.execute_result(conn, prepared, decoded),
            Err(e) => Err(Error::from_request(conn.addr(), conn.undecodable(frame, e))),
        }
    }

    /// The result of an EXECUTE of `prepared` answered by `frame` on `conn`: the RESULT (rows
    /// sent without metadata read by the prepared result columns; a v5 METADATA_CHANGED
    /// taken by the statement) or the ERROR it carries.
    #[inline]
    pub(super) fn execute_result(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
        frame: &mut ResponseFrame,
    ) -> Result<QueryResult, Error> {
        if let Some(payload) = &frame.custom_payload {
            // ScyllaDB: the request reached a node or shard without its tablet (rare).
            self.learn_tablet(prepared, payload);
        }
        let mut result = result_in(conn, frame, "EXECUTE");
        if let Ok(ResultParts {
            body: ResultBody::Rows(rows),
            columns,
            ..
        }) = result.as_deref_mut()
        {
            if rows.metadata.no_metadata {
                *columns = Some(prepared.result_columns());
            } else if let Some(new_id) = &rows.metadata.new_metadata_id {
                // v5 METADATA_CHANGED (rare: a table altered): the rows carry their new
                // columns; the statement takes them and the new id.
                self.metadata_changed(conn, prepared, (**new_id).clone(), &rows.metadata.columns)?;
            }
        }
        result
    }

    /// Sizes of the futures of `execute_with`, `run`, `execute_once` and
    /// `Connection::request` as one EXECUTE of `prepared` with `values` on `conn` builds them
    /// (unpolled, then dropped), for the request-path benchmarks (`super::bench`).
    pub(super) fn request_future_sizes<V: QueryValues + ?Sized>(
        &self,
        prepared: &PreparedStatement,
        values: &V,
        conn: &Connection,
    ) -> [usize; 4] {
        let options = &StatementOptions::DEFAULT;
        let execute_with = std::mem::size_of_val(&self.execute_with(prepared, values, options));
        let run = std::mem::size_of_val(&self.run(self.place_anywhere(), false, |conn| {
            self.execute_once(conn, prepared, values, options, Heal::Once)
        }));
        let execute_once = std::mem::size_of_val(&self.execute_once(
            conn.clone(),
            prepared,
            values,
            options,
            Heal::Once,
        ));
        let template = Rc::clone(&prepared.inner.template.borrow());
        let columns = Some(prepared.inner.metadata.columns.as_slice());
        let request = std::mem::size_of_val(&conn.request(None, |buf, stream| {
            template.encode(buf, stream, values, columns)
        }));
        [execute_with, run, execute_once, request]
    }

    /// The statement prepared again on `conn` and executed once more (not healed again).
    async fn heal(
        &self,
        conn: &Connection,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        self.reprepare(conn, prepared).await?;
        self.inner.counters.reprepared();
        self.execute_once(conn.clone(), prepared, values, options, Heal::Done)
            .await
    }

    /// Runs a BATCH of prepared statements, routed as [`Session::execute_with`] routes its
    /// first statement (to a replica of its partition key when that is bound; scylla-rust-
    /// driver routes a batch the same way). If the node has forgotten one of the statements
    /// (UNPREPARED names it), that one is prepared there again and the batch sent once more.
    ///
    /// `statements` is a slice of [`PreparedBatchEntry`], or anything that hands out its
    /// statements and values one at a time ([`PreparedBatchEntries`]): they are written
    /// straight into the frame, nothing is collected or allocated for them.
    pub async fn batch_prepared<E: PreparedBatchEntries + ?Sized>(
        &self,
        kind: BatchType,
        statements: &E,
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let mut placement = None;
        if let Some(first) = statements.statement(0) {
            // The values serialized for the token are not reused: the batch writes every
            // statement's values itself.
            let _ = statements.with_values(0, &mut |values| {
                placement = Some(self.place_prepared(first, values, options).0);
                Ok(())
            });
        }
        let placement = placement.unwrap_or_else(|| self.place_anywhere());
        self.run(placement, options.idempotent, |conn| {
            self.batch_prepared_once(conn, kind, statements, options, Heal::Once)
        })
        .await
    }

    /// One BATCH of prepared statements on `conn`, healed once (`Heal::Once`) if the node
    /// answers UNPREPARED for one of them.
    async fn batch_prepared_once<E: PreparedBatchEntries + ?Sized>(
        &self,
        conn: Connection,
        kind: BatchType,
        statements: &E,
        options: &StatementOptions<'_>,
        heal: Heal,
    ) -> Result<QueryResult, Error> {
        let result = self
            .batch_once(conn.clone(), kind, &Prepared(statements), options)
            .await;
        let forgotten = match &result {
            Err(Error::Server { error, .. }) if error.code == ErrorCode::Unprepared => {
                match &error.detail {
                    ErrorDetail::Unprepared { id } => (0..statements.len())
                        .filter_map(|k| statements.statement(k))
                        .find(|s| s.inner.id.borrow().as_ref() == id.as_ref()),
                    _ => None,
                }
            }
            _ => None,
        };
        let (Some(statement), Heal::Once) = (forgotten, heal) else {
            return result;
        };
        // Not kept across the healing's await: the batch's future stays small.
        drop(result);
        // The healing path is rare: boxed, so that it does not grow every batch's future.
        Box::pin(async {
            self.reprepare(&conn, statement).await?;
            self.inner.counters.reprepared();
            self.batch_prepared_once(conn.clone(), kind, statements, options, Heal::Done)
                .await
        })
        .await
    }

    /// Runs a BATCH of prepared and unprepared statements, on any node (no routing, no
    /// healing: [`Session::batch_prepared`] has both).
    pub async fn batch(
        &self,
        kind: BatchType,
        statements: &[BatchStatement<'_>],
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        self.run(self.place_anywhere(), options.idempotent, |conn| {
            self.batch_once(conn, kind, &statements, options)
        })
        .await
    }

    async fn batch_once(
        &self,
        conn: Connection,
        kind: BatchType,
        statements: &dyn BatchElements,
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let p = self.params(options);
        let b = BatchOf {
            kind,
            statements,
            consistency: p.consistency,
            serial_consistency: p.serial_consistency,
            timestamp: p.timestamp,
            keyspace: p.keyspace,
            now_in_seconds: p.now_in_seconds,
        };
        if options.tracing || conn.compression().is_some() {
            // The general path (tracing, compressed bodies): boxed, so that the common
            // batch's future stays as small as an EXECUTE's.
            let frame = Box::pin(self.send(&conn, options.tracing, &b, options.timeout)).await?;
            return result_of(&conn, frame, "BATCH");
        }
        // As the EXECUTE fast path: encoded straight into the write buffer, the answer
        // decoded in place (an undecodable one still closes the connection).
        let node = conn.addr();
        let version = conn.version();
        let frame = conn
            .request(options.timeout, |buf, stream| {
                encode_envelope(buf, version, stream, Flags::NONE, &b)
            })
            .await
            .map_err(|e| Error::from_request(node, e))?;
        let mut decoded = ResponseFrame::decode(&frame, None, conn.config().max_frame_body);
        match decoded {
            Ok(ref mut decoded) => result_in(&conn, decoded, "BATCH"),
            Err(e) => Err(Error::from_request(node, conn.undecodable(&frame, e))),
        }
    }
}
