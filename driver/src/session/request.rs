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
    encode_envelope, BatchElements, BatchOf, BatchType, Execute, Query, QueryParameters,
    RequestBody, WithTabletBlock,
};
use doppio_proto::response::{ErrorCode, ErrorDetail, ResponseFrame, ResultBody};
use doppio_proto::values::QueryValues;

use super::attempt::{
    decode_answer, encode_templated, forgotten, own_page, page_size, templated, whole, FirstAttempt,
};
use super::batch::{check_count, Batch, BatchValues, Bound as BoundBatch};
use super::config::StatementOptions;
use super::execute::Answered;
use super::handle::Session;
use super::paging::PageStream;
use super::plan::Placement;
use super::prepared::PreparedStatement;
use super::statement::{Page, Paging, PagingState, Statement};
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

    /// The placement of a prepared statement with `values` at `consistency` (`None`: the
    /// session's): its replicas when the partition key is bound and the keyspace's
    /// replication is known (the values are then serialized once, here, and the frame
    /// copies them); primary first for a lightweight transaction (ScyllaDB's LWT mark, or a
    /// SERIAL or LOCAL_SERIAL read).
    pub(super) fn place_prepared(
        &self,
        prepared: &PreparedStatement,
        values: &(impl QueryValues + ?Sized),
        consistency: Option<Consistency>,
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
        let consistency = consistency.unwrap_or(self.inner.config.consistency);
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
        let (placement, _) = self.place_prepared(prepared, values, None);
        placement
            .routing()
            .replicas
            .iter()
            .filter_map(|&i| placement.view.info(i).map(|n| n.addr))
            .collect()
    }

    /// Runs an unprepared statement and returns its whole result: no page size is sent, so
    /// the node answers with every row at once. A node that answers with one page anyway
    /// (a paging state) fails the call ([`Violation::PagedAnswer`]) rather than handing
    /// part of the result back as all of it. For results too big for one answer, use
    /// [`Session::query_iter`] or [`Session::query_single_page`].
    pub async fn query_unpaged(
        &self,
        statement: impl Into<Statement>,
        values: &(impl QueryValues + ?Sized),
    ) -> Result<QueryResult, Error> {
        let statement = statement.into();
        let options = statement.config().options(Paging::Unpaged);
        whole(self.query_with(statement.cql(), values, &options).await)
    }

    /// One page of an unprepared statement's result, from `from` ([`PagingState::start`]
    /// for the first), of the statement's page size (or the session's); the page says
    /// where the next one starts ([`Page::next`]).
    pub async fn query_single_page(
        &self,
        statement: impl Into<Statement>,
        values: &(impl QueryValues + ?Sized),
        from: &PagingState,
    ) -> Result<Page, Error> {
        let statement = statement.into();
        let options = statement.config().options(Paging::Page(from));
        let result = self.query_with(statement.cql(), values, &options).await?;
        Ok(Page::new(result))
    }

    /// Every page of an unprepared statement's result, each asked for while the caller
    /// reads the one before ([`PageStream`]; [`PageStream::rows`] for its rows).
    pub fn query_iter<'a, V: QueryValues + ?Sized>(
        &self,
        statement: impl Into<Statement>,
        values: &'a V,
    ) -> PageStream<'a, V> {
        PageStream::query(self.clone(), statement.into(), values, PagingState::start())
    }

    /// Runs an unprepared statement with `options` (the paging as they say).
    pub(super) async fn query_with(
        &self,
        cql: &str,
        values: &(impl QueryValues + ?Sized),
        options: &StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        self.run(self.place_anywhere(), self.attempts(options), |conn| {
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

    /// Executes a prepared statement with its settings and returns its whole result (no
    /// page size is sent), on one of its replicas when its partition key is bound. A node
    /// that answers with one page anyway fails the call ([`Violation::PagedAnswer`]);
    /// for results too big for one answer, use [`Session::execute_iter`] or
    /// [`Session::execute_single_page`]. If the node has forgotten the statement
    /// (UNPREPARED), it is prepared there again and executed once more.
    ///
    /// The common case (a stream id free at once, the first node answers) runs as one
    /// state machine (`session::execute::Execute`); everything else (retries, re-preparing,
    /// speculative execution, settings of its own, waiting for a stream id) goes the
    /// general way, boxed.
    pub fn execute_unpaged<'a, V: QueryValues + ?Sized>(
        &'a self,
        prepared: &'a PreparedStatement,
        values: &'a V,
    ) -> impl Future<Output = Result<QueryResult, Error>> + 'a {
        // The future checks an unpaged answer itself (`Execute::partial`).
        self.execute_with(prepared, values, Paging::Unpaged)
    }

    /// One page of a prepared statement's result, from `from` ([`PagingState::start`] for
    /// the first), of the statement's page size (or the session's), routed and healed as
    /// [`Session::execute_unpaged`]; the page says where the next one starts
    /// ([`Page::next`]).
    pub fn execute_single_page<'a, V: QueryValues + ?Sized>(
        &'a self,
        prepared: &'a PreparedStatement,
        values: &'a V,
        from: &'a PagingState,
    ) -> impl Future<Output = Result<Page, Error>> + 'a {
        Answered::new(
            self.execute_with(prepared, values, Paging::Page(from)),
            |r: Result<QueryResult, Error>| r.map(Page::new),
        )
    }

    /// Every page of a prepared statement's result, each asked for while the caller reads
    /// the one before ([`PageStream`]; [`PageStream::rows`] for its rows).
    pub fn execute_iter<'a, V: QueryValues + ?Sized>(
        &self,
        prepared: &'a PreparedStatement,
        values: &'a V,
    ) -> PageStream<'a, V> {
        PageStream::prepared(self.clone(), prepared, values, PagingState::start())
    }

    /// Executes a prepared statement with its settings, paged as `paging` says: the future
    /// of every EXECUTE (`session::execute::Execute`).
    pub(super) fn execute_with<'a, V: QueryValues + ?Sized>(
        &'a self,
        prepared: &'a PreparedStatement,
        values: &'a V,
        paging: Paging<'a>,
    ) -> super::execute::Execute<'a, V> {
        super::execute::Execute::new(self, prepared, values, paging)
    }

    /// [`Session::execute_with`] the general way: placed, then run along its plan, each
    /// attempt an [`Session::execute_once`].
    pub(super) async fn execute_general<V: QueryValues + ?Sized>(
        &self,
        prepared: &PreparedStatement,
        values: &V,
        options: StatementOptions<'_>,
    ) -> Result<QueryResult, Error> {
        let (placement, serialized) = self.place_prepared(prepared, values, options.consistency);
        self.execute_rest(prepared, values, options, placement, serialized, None)
            .await
    }

    /// Runs an EXECUTE along the plan of `placement`, after its `first` attempt if one
    /// already ran (healed here first when the node had forgotten the statement).
    pub(super) async fn execute_rest<V: QueryValues + ?Sized>(
        &self,
        prepared: &PreparedStatement,
        values: &V,
        options: StatementOptions<'_>,
        placement: Placement,
        serialized: Option<NonZeroU64>,
        first: Option<FirstAttempt>,
    ) -> Result<QueryResult, Error> {
        let options = &options;
        // The values as the frame writes them: copied from the routing scratch when the
        // placement serialized them (and nothing has overwritten them since), else
        // serialized then.
        let values = &PlacedValues::new(&self.inner.scratch, serialized, values);
        // Under tablets routing v2, the block every attempt of this request sends.
        let block = placement.tablet_block();
        let first = match first {
            Some(FirstAttempt {
                index,
                conn,
                result,
            }) if forgotten(&result) => Some(FirstAttempt {
                index,
                result: self.heal(&conn, prepared, values, options, block).await,
                conn,
            }),
            other => other,
        };
        self.run_from(placement, self.attempts(options), first, |conn| {
            self.execute_once(conn, prepared, values, options, block, Heal::Once)
        })
        .await
    }

    /// One EXECUTE on `conn`, ending with tablet version block `block` when `conn` reads one
    /// (tablets routing v2). With `Heal::Once` it is healed once if the node has forgotten
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
        block: u8,
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
                    encode_templated(&template, page, block, buf, stream, values, columns)
                })
                .await
                .map_err(|e| Error::from_request(node, e))?;
            decode_answer(conn, &frame)?
        } else {
            let id = prepared.id();
            let result_metadata_id = prepared.result_metadata_id();
            let metadata_ids = conn.metadata_ids();
            let e = Execute {
                id: &id,
                // A statement prepared where no id came (a v4 node without ScyllaDB's
                // extension) sends an empty one where the connection carries ids: it
                // matches no columns, so the node answers with its columns and their id
                // (METADATA_CHANGED), which the statement then takes.
                result_metadata_id: result_metadata_id.as_deref().or_else(|| {
                    conn.version()
                        .has_metadata_ids(metadata_ids)
                        .then_some(&[][..])
                }),
                metadata_ids,
                params: QueryParameters {
                    skip_metadata: prepared.skips_metadata(),
                    ..self.params(options)
                },
                values,
                columns,
            };
            // Non-default options: a rarer path, boxed to keep the hot future small.
            if conn.extensions().tablets_routing_v2 {
                let e = WithTabletBlock { body: &e, block };
                Box::pin(self.send(conn, options.tracing, &e, options.timeout)).await?
            } else {
                Box::pin(self.send(conn, options.tracing, &e, options.timeout)).await?
            }
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
                Box::pin(self.heal(conn, prepared, values, options, block)).await
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
        let mut decoded = ResponseFrame::decode_with(
            frame,
            None,
            conn.config().max_frame_body,
            conn.metadata_ids(),
        );
        match decoded {
            Ok(ref mut decoded) => self.execute_result(conn, prepared, decoded),
            Err(e) => Err(Error::from_request(conn.addr(), conn.undecodable(frame, e))),
        }
    }

    /// The result of an EXECUTE of `prepared` answered by `frame` on `conn`: the RESULT (rows
    /// sent without metadata read by the prepared result columns; a METADATA_CHANGED, v5's
    /// or v4's with ScyllaDB's extension, taken by the statement) or the ERROR it carries.
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
                // METADATA_CHANGED (v5, or v4 with ScyllaDB's extension; rare: a table
                // altered): the rows carry their new columns; the statement takes them and
                // the new id.
                self.metadata_changed(conn, prepared, (**new_id).clone(), &rows.metadata.columns)?;
            }
        }
        result
    }

    #[cfg(feature = "unstable-internals")]
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
        let execute_with =
            std::mem::size_of_val(&self.execute_with(prepared, values, Paging::Unpaged));
        let run = std::mem::size_of_val(&self.run(
            self.place_anywhere(),
            self.own_attempts(false),
            |conn| self.execute_once(conn, prepared, values, options, 0, Heal::Once),
        ));
        let execute_once = std::mem::size_of_val(&self.execute_once(
            conn.clone(),
            prepared,
            values,
            options,
            0,
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
        block: u8,
    ) -> Result<QueryResult, Error> {
        self.reprepare(conn, prepared).await?;
        self.inner.counters.reprepared();
        self.execute_once(conn.clone(), prepared, values, options, block, Heal::Done)
            .await
    }

    /// Runs `batch` with `values` (one set per statement: [`BatchValues`]) and its settings,
    /// routed as [`Session::execute_unpaged`] routes its first statement when that one is
    /// prepared (to a replica of its partition key when that is bound; scylla-rust-driver
    /// routes a batch the same way), else to any node. If the node has forgotten one of its
    /// prepared statements (UNPREPARED names it), that one is prepared there again and the
    /// batch sent once more. A count of values that is not the batch's is refused before
    /// anything is sent ([`Error::Serialization`]).
    ///
    /// The statements and their values are written straight into the frame, one at a time:
    /// nothing is collected or allocated for them.
    pub async fn batch(
        &self,
        batch: &Batch,
        values: &(impl BatchValues + ?Sized),
    ) -> Result<QueryResult, Error> {
        check_count(batch, values).map_err(Error::Serialization)?;
        let options = batch.config().options(Paging::Unpaged);
        let mut placement = None;
        if let Some(first) = batch.prepared(0) {
            // The values serialized for the token are not reused: the batch writes every
            // statement's values itself.
            let _ = values.with_values(0, &mut |values| {
                placement = Some(self.place_prepared(first, values, options.consistency).0);
                Ok(())
            });
        }
        let placement = placement.unwrap_or_else(|| self.place_anywhere());
        self.run(placement, self.attempts(&options), |conn| {
            self.batch_healed(conn, batch, values, &options, Heal::Once)
        })
        .await
    }

    /// One BATCH on `conn`, healed once (`Heal::Once`) if the node answers UNPREPARED for one
    /// of its prepared statements.
    async fn batch_healed<V: BatchValues + ?Sized>(
        &self,
        conn: Connection,
        batch: &Batch,
        values: &V,
        options: &StatementOptions<'_>,
        heal: Heal,
    ) -> Result<QueryResult, Error> {
        let bound = BoundBatch { batch, values };
        let result = self
            .batch_once(conn.clone(), batch.kind(), &bound, options)
            .await;
        let forgotten = match &result {
            Err(Error::Server { error, .. }) if error.code == ErrorCode::Unprepared => {
                match &error.detail {
                    ErrorDetail::Unprepared { id } => batch.prepared_with_id(id),
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
            self.batch_healed(conn.clone(), batch, values, options, Heal::Done)
                .await
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
        let mut decoded = ResponseFrame::decode_with(
            &frame,
            None,
            conn.config().max_frame_body,
            conn.metadata_ids(),
        );
        match decoded {
            Ok(ref mut decoded) => result_in(&conn, decoded, "BATCH"),
            Err(e) => Err(Error::from_request(node, conn.undecodable(&frame, e))),
        }
    }
}
