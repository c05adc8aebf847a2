//! The scylla-rust-driver backend: one `scylla::Session` on a tokio runtime, configured as
//! its users run it. With one thread the runtime is `current_thread` (the driver's
//! connection tasks and the workload share that thread, like one doppio shard); with more,
//! a multi-threaded runtime with that many workers for the driver's tasks, and one thread
//! per bench worker that drives its request loops on that runtime (`Handle::block_on`): a
//! worker's loops share cells and are `!Send`, so they are built on their thread and never
//! move (no `unsafe`).
//!
//! Cores: unless `--no-pin`, every thread that does request work is pinned (core_affinity)
//! to the cores doppio's shards use ([`ConnectOptions::pinned_cores`]): the tokio workers
//! round-robin over them, bench worker `w` to the `w`th, and with one thread the thread that
//! drives the `current_thread` runtime during a phase to the first.
//!
//! Children: [`rows`], a result page consumed (every row decoded, or only counted);
//! [`retry`], `--retries` with doppio's retry decisions.

pub mod cost;
pub mod retry;
pub mod rows;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use doppio_driver::ErrorKind;
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::{Session, TlsContext};
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use scylla::frame::types::Consistency;
use scylla::frame::Compression;
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::policies::retry::{FallthroughRetryPolicy, RetryPolicy};
use scylla::response::{PagingState, PagingStateResponse};
use scylla::serialize::batch::{BatchValues, BatchValuesIterator};
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::{CellValueBuilder, RowWriter};
use scylla::serialize::SerializationError;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::SerialConsistency;

use super::counters::DriverCounters;
use super::driver::Driver;
use super::interface::Backend;
use super::options::{ConnectOptions, Consistency as BenchConsistency};
use super::settings::{
    Compression as BenchCompression, Locality, SerialConsistency as BenchSerial, SettingError,
};
use super::tls::tls_config;
use crate::engine::assemble::{assemble_plan, phase_statements, plan_statement};
use crate::engine::phase::{run_and_report, BackendError, Event, Phase, PhaseRunner, PhaseSpec};
use crate::engine::validate::Shape;
use crate::engine::{Answer, Args, BatchArgs, BenchSession, Plan, RequestError};
use crate::workload::encode::{encode, CqlKind, CqlType, Encoded, Sink, UdtType};
use crate::workload::{BatchKind, Statement, Workload};

fn err(message: impl Into<String>) -> BackendError {
    BackendError {
        driver: "scylla",
        message: message.into(),
    }
}

/// A connected scylla-rust-driver session and its runtime.
pub struct ScyllaBackend {
    runtime: tokio::runtime::Runtime,
    session: Arc<Session>,
    threads: usize,
    /// Rows per result page.
    page_size: i32,
    /// Count result rows without decoding them.
    discard_results: bool,
    pins: Arc<Pins>,
}

/// The cores request threads are pinned to, and whether pinning one failed (a tokio
/// worker's start hook cannot return an error: it is checked after the fact).
#[derive(Debug)]
struct Pins {
    cores: Vec<usize>,
    next: AtomicUsize,
    failed: AtomicBool,
}

impl Pins {
    /// `cores` (empty: no pinning), checked against the cores this machine has.
    fn new(cores: Vec<usize>) -> Result<Self, BackendError> {
        if !cores.is_empty() {
            let available: Vec<usize> = core_affinity::get_core_ids()
                .unwrap_or_default()
                .into_iter()
                .map(|c| c.id)
                .collect();
            if let Some(missing) = cores.iter().find(|c| !available.contains(c)) {
                return Err(err(format!(
                    "cannot pin a thread to core {missing}: the cores this process may use are                      {available:?} (fewer threads, or --no-pin)"
                )));
            }
        }
        Ok(Self {
            cores,
            next: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
        })
    }

    /// Pins the calling thread to the `k`th core (round-robin), if pinning.
    fn pin(&self, k: usize) {
        if let Some(&id) = self.cores.get(k % self.cores.len().max(1)) {
            if !core_affinity::set_for_current(core_affinity::CoreId { id }) {
                self.failed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Pins the calling thread to the next core, round-robin (tokio's thread start hook).
    fn pin_next(&self) {
        self.pin(self.next.fetch_add(1, Ordering::Relaxed));
    }

    /// An error if a thread could not be pinned.
    fn check(&self) -> Result<(), BackendError> {
        if self.failed.load(Ordering::Relaxed) {
            return Err(err(format!(
                "a thread could not be pinned to its core (cores {:?}; --no-pin runs unpinned)",
                self.cores
            )));
        }
        Ok(())
    }
}

/// scylla-rust-driver's serial consistency for the bench's.
pub fn serial_consistency(c: BenchSerial) -> SerialConsistency {
    match c {
        BenchSerial::Serial => SerialConsistency::Serial,
        BenchSerial::LocalSerial => SerialConsistency::LocalSerial,
    }
}

/// The settings scylla-rust-driver cannot honour: a backoff between retries (its retry
/// policies decide where a retry goes, never when).
pub fn check_settings(o: &ConnectOptions) -> Result<(), SettingError> {
    if o.protocol == Some(5) {
        return Err(SettingError::Unsupported {
            driver: Driver::Scylla.name(),
            option: "--protocol 5",
            why: "scylla-rust-driver speaks protocol v4 only",
        });
    }
    if o.tls.as_ref().is_some_and(|t| t.server_name.is_some()) {
        return Err(SettingError::Unsupported {
            driver: Driver::Scylla.name(),
            option: "--tls-server-name",
            why: "scylla-rust-driver checks every node's certificate against its IP address",
        });
    }
    if o.retry_backoff.is_some() {
        return Err(SettingError::Unsupported {
            driver: Driver::Scylla.name(),
            option: "--retry-backoff",
            why: "scylla-rust-driver's retry policies send a retry at once, with no delay",
        });
    }
    Ok(())
}

/// The execution profile every request runs with: the bench's consistency, serial
/// consistency, timeout and retries, and the load-balancing policy of `locality`. With
/// `--retries`, the second value is the cell to store the cluster's node count in once
/// connected (see [`retry::SameAsDoppio`]).
pub fn execution_profile(o: &ConnectOptions) -> (ExecutionProfile, Option<Arc<AtomicUsize>>) {
    let (retry, nodes): (Arc<dyn RetryPolicy>, _) = if o.retries == 0 {
        (Arc::new(FallthroughRetryPolicy::new()), None)
    } else {
        // The same decisions as doppio's backends make (scylla's own default policy
        // retries at most once per kind of error, and decides otherwise).
        let policy = retry::SameAsDoppio::new(o.retries);
        let nodes = policy.nodes();
        (Arc::new(policy), Some(nodes))
    };
    let mut profile = ExecutionProfile::builder()
        .consistency(consistency(o.consistency))
        .serial_consistency(Some(serial_consistency(o.serial_consistency)))
        .request_timeout(Some(o.request_timeout))
        .retry_policy(retry);
    if let Some(policy) = load_balancing(&o.locality) {
        profile = profile.load_balancing_policy(policy);
    }
    (profile.build(), nodes)
}

/// scylla's `DefaultPolicy` preferring `locality` (`None`: the driver's default policy).
fn load_balancing(
    locality: &Locality,
) -> Option<Arc<dyn scylla::policies::load_balancing::LoadBalancingPolicy>> {
    let dc = locality.datacenter.clone()?;
    let builder = DefaultPolicy::builder();
    Some(
        match locality.rack.clone() {
            Some(rack) => builder.prefer_datacenter_and_rack(dc, rack),
            None => builder.prefer_datacenter(dc),
        }
        .build(),
    )
}

/// scylla-rust-driver's consistency level for the bench's.
fn consistency(c: BenchConsistency) -> Consistency {
    match c {
        BenchConsistency::Any => Consistency::Any,
        BenchConsistency::One => Consistency::One,
        BenchConsistency::Two => Consistency::Two,
        BenchConsistency::Three => Consistency::Three,
        BenchConsistency::Quorum => Consistency::Quorum,
        BenchConsistency::All => Consistency::All,
        BenchConsistency::LocalQuorum => Consistency::LocalQuorum,
        BenchConsistency::EachQuorum => Consistency::EachQuorum,
        BenchConsistency::LocalOne => Consistency::LocalOne,
    }
}

impl ScyllaBackend {
    /// Builds the runtime and connects the session.
    pub fn connect(o: &ConnectOptions) -> Result<Self, BackendError> {
        let threads = o.threads.max(1);
        let pins = Arc::new(Pins::new(o.pinned_cores())?);
        let runtime = if threads == 1 {
            // Its thread is whichever drives it: pinned in `run_phase`.
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        } else {
            let hook = pins.clone();
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .thread_name("scylla-bench")
                .on_thread_start(move || hook.pin_next())
                .enable_all()
                .build()
        }
        .map_err(|e| err(format!("cannot start tokio: {e}")))?;
        let (profile, retry_nodes) = execution_profile(o);
        let mut b = SessionBuilder::new()
            .known_nodes_addr(o.nodes.iter().copied())
            .default_execution_profile_handle(profile.into_handle())
            // Per ScyllaDB shard, as doppio's pools (and scylla-rust-driver's default,
            // `PerShard(1)`); a Cassandra node counts as one shard, so there it is the same
            // as `PerHost`. `PerHost` gave a ScyllaDB node one connection in all, whose
            // requests then crossed shards on the node (and never reached their tablet's
            // shard: 75 % of them misrouted on the tablet stub).
            .pool_size(PoolSize::PerShard(
                NonZeroUsize::new(o.connections.max(1)).unwrap_or(NonZeroUsize::MIN),
            ))
            .compression((o.compression == BenchCompression::Lz4).then_some(Compression::Lz4));
        if let (Some(u), Some(p)) = (&o.username, &o.password) {
            b = b.user(u, p.expose());
        }
        if let Some(t) = &o.tls {
            // The rustls configuration doppio's backends use (ring provider, same roots and
            // client certificate): both drivers verify alike.
            let tls = tls_config(t)
                .map_err(|e| err(format!("--tls: {}", doppio_driver::error::Report(&e))))?;
            b = b.tls_context(Some(TlsContext::Rustls023(tls.rustls_config())));
        }
        let session = runtime
            .block_on(b.build())
            .map_err(|e| err(format!("cannot connect: {e}")))?;
        if let Some(nodes) = retry_nodes {
            let known = session.get_cluster_state().get_nodes_info().len();
            nodes.store(known.max(1), Ordering::Relaxed);
        }
        pins.check()?;
        Ok(Self {
            runtime,
            session: Arc::new(session),
            threads,
            page_size: o.page_size,
            discard_results: o.discard_results,
            pins,
        })
    }
}

/// The type the bench encodes for a scylla column type: composites recursively.
pub fn kind_of(t: &ColumnType<'_>) -> CqlType {
    match t {
        ColumnType::Native(n) => CqlType::Scalar(native_kind_of(n)),
        ColumnType::Collection { typ, .. } => match typ {
            CollectionType::List(e) => CqlType::List(Arc::new(kind_of(e))),
            CollectionType::Set(e) => CqlType::Set(Arc::new(kind_of(e))),
            CollectionType::Map(k, v) => CqlType::Map(Arc::new((kind_of(k), kind_of(v)))),
            _ => CqlType::Scalar(CqlKind::Other),
        },
        ColumnType::Tuple(ts) => CqlType::Tuple(ts.iter().map(kind_of).collect()),
        ColumnType::UserDefinedType { definition, .. } => CqlType::Udt(Arc::new(UdtType {
            name: definition.name.to_string(),
            fields: definition
                .field_types
                .iter()
                .map(|(n, t)| (n.to_string(), kind_of(t)))
                .collect(),
        })),
        ColumnType::Vector { typ, dimensions } => {
            CqlType::Vector(Arc::new(kind_of(typ)), u32::from(*dimensions))
        }
        _ => CqlType::Scalar(CqlKind::Other),
    }
}

fn native_kind_of(n: &NativeType) -> CqlKind {
    match n {
        NativeType::Ascii => CqlKind::Ascii,
        NativeType::Boolean => CqlKind::Boolean,
        NativeType::Blob => CqlKind::Blob,
        NativeType::Counter => CqlKind::Counter,
        NativeType::Date => CqlKind::Date,
        NativeType::Double => CqlKind::Double,
        NativeType::Float => CqlKind::Float,
        NativeType::Int => CqlKind::Int,
        NativeType::BigInt => CqlKind::BigInt,
        NativeType::Text => CqlKind::Text,
        NativeType::Timestamp => CqlKind::Timestamp,
        NativeType::SmallInt => CqlKind::SmallInt,
        NativeType::TinyInt => CqlKind::TinyInt,
        NativeType::Time => CqlKind::Time,
        NativeType::Timeuuid => CqlKind::TimeUuid,
        NativeType::Uuid => CqlKind::Uuid,
        NativeType::Varint => CqlKind::Varint,
        _ => CqlKind::Other,
    }
}

/// The bench's kind of a scylla-rust-driver error, named as doppio's [`ErrorKind`] names
/// the same failure (so `errors_by_kind` compares like with like).
pub fn classify(e: &ExecutionError) -> &'static str {
    let kind = match e {
        ExecutionError::RequestTimeout(_) => ErrorKind::Timeout,
        ExecutionError::ConnectionPoolError(_) => ErrorKind::NoConnection,
        ExecutionError::LastAttemptError(a) => match a {
            RequestAttemptError::DbError(db, _) => match db {
                DbError::Unavailable { .. } => ErrorKind::Unavailable,
                DbError::Overloaded => ErrorKind::Overloaded,
                DbError::IsBootstrapping => ErrorKind::Bootstrapping,
                DbError::WriteTimeout { .. } => ErrorKind::WriteTimeout,
                DbError::ReadTimeout { .. } => ErrorKind::ReadTimeout,
                DbError::ReadFailure { .. } => ErrorKind::ReadFailure,
                DbError::WriteFailure { .. } => ErrorKind::WriteFailure,
                DbError::FunctionFailure { .. } => ErrorKind::FunctionFailure,
                DbError::SyntaxError => ErrorKind::Syntax,
                DbError::Unauthorized => ErrorKind::Unauthorized,
                DbError::Invalid => ErrorKind::Invalid,
                DbError::ConfigError => ErrorKind::ConfigError,
                DbError::AlreadyExists { .. } => ErrorKind::AlreadyExists,
                DbError::Unprepared { .. } => ErrorKind::Unprepared,
                DbError::RateLimitReached { .. } => ErrorKind::RateLimited,
                _ => ErrorKind::ServerError,
            },
            RequestAttemptError::BrokenConnectionError(_) => ErrorKind::ConnectionBroken,
            // scylla-rust-driver fails a request when a connection has no free stream id;
            // doppio makes it wait (backpressure): a kind of scylla's only.
            RequestAttemptError::UnableToAllocStreamId => return "no_stream_id",
            RequestAttemptError::SerializationError(_)
            | RequestAttemptError::CqlRequestSerialization(_) => ErrorKind::Serialization,
            _ => ErrorKind::Protocol,
        },
        _ => return "other",
    };
    kind.name()
}

/// Lets the shared encoder append straight into scylla's value buffer.
struct CellSink<'a, 'buf>(&'a mut CellValueBuilder<'buf>);

impl Sink for CellSink<'_, '_> {
    fn put(&mut self, bytes: &[u8]) {
        self.0.append_bytes(bytes);
    }
}

/// Generated arguments written straight into scylla's request buffer (no allocation).
impl SerializeRow for Args<'_> {
    fn serialize(
        &self,
        _ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter<'_>,
    ) -> Result<(), SerializationError> {
        for (expr, kind) in &self.bound.args {
            let value = expr.eval(self.iteration).map_err(SerializationError::new)?;
            let cell = writer.make_cell_writer();
            if value == crate::workload::expr::Value::Null {
                cell.set_null();
                continue;
            }
            let mut builder = cell.into_value_builder();
            match encode(value, kind, &mut CellSink(&mut builder)) {
                Ok(Encoded::Written) => {}
                // Unreachable: null was handled above; the encoder writes nothing for it.
                Ok(Encoded::Null) => {}
                Err(e) => return Err(SerializationError::new(e)),
            }
            builder.finish().map_err(SerializationError::new)?;
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.bound.args.is_empty()
    }
}

fn request_error(e: &ExecutionError) -> RequestError {
    RequestError {
        kind: classify(e),
        message: e.to_string(),
    }
}

fn rows_error(e: &rows::RowsError) -> RequestError {
    RequestError {
        kind: ErrorKind::Serialization.name(),
        message: doppio_driver::error::Report(e).to_string(),
    }
}

/// A prepared statement (marked idempotent as the workload says) and whether its answers'
/// `[applied]` is read.
pub struct ScyllaPrepared {
    statement: PreparedStatement,
    conditional: bool,
}

/// A batch entry of a plan: scylla's `Batch` of its prepared statements (`repeat` copies),
/// built once per phase; only the values come per iteration.
pub struct ScyllaBatch {
    batch: Batch,
    conditional: bool,
}

/// scylla-rust-driver's batch type for the bench's.
fn batch_type(kind: BatchKind) -> BatchType {
    match kind {
        BatchKind::Logged => BatchType::Logged,
        BatchKind::Unlogged => BatchType::Unlogged,
        BatchKind::Counter => BatchType::Counter,
    }
}

/// A batch's values, element by element, written straight into scylla's request buffer:
/// no collection of them is made (scylla-rust-driver takes them as an iterator-like object).
#[derive(Clone, Copy)]
struct ElementValues<'a> {
    args: BatchArgs<'a, ScyllaPrepared>,
}

/// [`ElementValues`]' iterator: the next element's position.
struct ElementIter<'a> {
    args: BatchArgs<'a, ScyllaPrepared>,
    next: usize,
}

impl BatchValues for ElementValues<'_> {
    type BatchValuesIter<'r>
        = ElementIter<'r>
    where
        Self: 'r;

    fn batch_values_iter(&self) -> ElementIter<'_> {
        ElementIter {
            args: self.args,
            next: 0,
        }
    }
}

impl<'bv> BatchValuesIterator<'bv> for ElementIter<'_> {
    fn serialize_next(
        &mut self,
        ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter<'_>,
    ) -> Option<Result<(), SerializationError>> {
        let (_, args) = self.args.element(self.next)?;
        self.next += 1;
        Some(args.serialize(ctx, writer))
    }

    fn is_empty_next(&mut self) -> Option<bool> {
        let (_, args) = self.args.element(self.next)?;
        self.next += 1;
        Some(args.bound.args.is_empty())
    }

    fn skip_next(&mut self) -> Option<()> {
        self.args.element(self.next)?;
        self.next += 1;
        Some(())
    }
}

struct TokioSession {
    session: Arc<Session>,
    /// Count result rows without decoding them.
    discard_results: bool,
}

impl BenchSession for TokioSession {
    type Prepared = ScyllaPrepared;
    type Batch = ScyllaBatch;
    /// tokio's timer entries live in the sleep future itself: nothing to keep.
    type Sleeper = ();

    fn sleeper(&self) {}

    /// Page after page with the paging state of the one before (the prepared statement
    /// carries the run's page size), each consumed before the next is asked for, as the
    /// doppio backend does.
    async fn execute(
        &self,
        prepared: &ScyllaPrepared,
        args: Args<'_>,
    ) -> Result<Answer, RequestError> {
        let mut state = PagingState::start();
        let mut answer = Answer::default();
        let mut first = true;
        loop {
            let (page, next) = self
                .session
                .execute_single_page(&prepared.statement, args, state)
                .await
                .map_err(|e| request_error(&e))?;
            if first && prepared.conditional {
                answer.not_applied = rows::not_applied(&page);
            }
            first = false;
            answer.rows += rows::consume(page, self.discard_results, args.check)
                .map_err(|e| rows_error(&e))?;
            match next {
                PagingStateResponse::HasMorePages { state: more } => state = more,
                PagingStateResponse::NoMorePages => return Ok(answer),
            }
        }
    }

    /// The phase's `Batch` with this iteration's values (scylla-rust-driver routes it by
    /// its first statement's token, as doppio does). The values are handed over as an
    /// iterator-like object ([`ElementValues`]): nothing of ours is allocated per batch, but
    /// scylla-rust-driver's batch path allocates more than its EXECUTE path (measured on
    /// Cassandra with the `alloc-count` feature: 14 allocations per unlogged batch of 10
    /// rows, against 11 per single-row EXECUTE); its API offers no way around that.
    async fn execute_batch(
        &self,
        batch: &ScyllaBatch,
        args: BatchArgs<'_, ScyllaPrepared>,
    ) -> Result<Answer, RequestError> {
        let page = self
            .session
            .batch(&batch.batch, ElementValues { args })
            .await
            .map_err(|e| request_error(&e))?;
        let not_applied = batch.conditional && rows::not_applied(&page);
        let rows = rows::consume(page, self.discard_results, None).map_err(|e| rows_error(&e))?;
        Ok(Answer {
            rows,
            not_applied,
            stages: None,
        })
    }

    async fn sleep_until(&self, _: &mut (), deadline: Instant) {
        tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)).await;
    }
}

async fn prepare_plan(
    session: &Session,
    workload: &Workload,
    phase: Phase,
    stmts: &[Statement],
    page_size: i32,
) -> Result<Plan<ScyllaPrepared, ScyllaBatch>, BackendError> {
    let mut plan = Vec::with_capacity(stmts.len());
    for s in stmts {
        let mut prepared = session
            .prepare(s.cql.as_str())
            .await
            .map_err(|e| err(format!("prepare `{}`: {e}", s.cql)))?;
        prepared.set_page_size(page_size);
        prepared.set_is_idempotent(s.idempotent);
        let kinds: Vec<CqlType> = prepared
            .get_variable_col_specs()
            .iter()
            .map(|c| kind_of(c.typ()))
            .collect();
        // A validated read: its writer's markers too (one more PREPARE per phase).
        let shape = match (&s.validate, workload.writer_of(s)) {
            (Some(_), Some(writer)) => {
                let writer_prepared = session
                    .prepare(writer.cql.as_str())
                    .await
                    .map_err(|e| err(format!("prepare `{}`: {e}", writer.cql)))?;
                Some(Shape {
                    writer_markers: writer_prepared
                        .get_variable_col_specs()
                        .iter()
                        .map(|c| (c.name().to_owned(), kind_of(c.typ())))
                        .collect(),
                    result_columns: prepared
                        .get_current_result_set_col_specs()
                        .get()
                        .iter()
                        .map(|c| c.name().to_owned())
                        .collect(),
                })
            }
            _ => None,
        };
        let prepared = ScyllaPrepared {
            statement: prepared,
            conditional: s.conditional,
        };
        plan.push(plan_statement(
            workload,
            s,
            prepared,
            &kinds,
            shape.as_ref(),
            "scylla",
        )?);
    }
    assemble_plan(workload, phase, plan, |group, kind, members| {
        let mut batch = Batch::new(batch_type(kind));
        for _ in 0..group.repeat {
            for m in members {
                batch.append_statement(m.prepared.statement.clone());
            }
        }
        let of_group = &stmts[group.statements.clone()];
        // Idempotent when every statement of it is.
        batch.set_is_idempotent(!of_group.is_empty() && of_group.iter().all(|s| s.idempotent));
        Ok(ScyllaBatch {
            batch,
            conditional: members.iter().any(|m| m.prepared.conditional),
        })
    })
}

impl PhaseRunner for ScyllaBackend {
    fn name(&self) -> &'static str {
        self.driver().name()
    }

    fn workers(&self) -> usize {
        self.threads
    }

    fn prepare(&self, workload: &Arc<Workload>, phase: Phase) -> Result<(), BackendError> {
        let stmts = phase_statements(workload, phase, "scylla")?;
        self.runtime
            .block_on(prepare_plan(
                &self.session,
                workload,
                phase,
                &stmts,
                self.page_size,
            ))
            .map(|_| ())
    }

    fn run_phase(
        &self,
        workload: &Arc<Workload>,
        spec: PhaseSpec,
        start: Instant,
        events: mpsc::SyncSender<Event>,
    ) -> Result<(), BackendError> {
        let stmts = phase_statements(workload, spec.phase, "scylla")?;
        let plan = Arc::new(self.runtime.block_on(prepare_plan(
            &self.session,
            workload,
            spec.phase,
            &stmts,
            self.page_size,
        ))?);
        let workers = self.threads;
        let worker_future = |worker: usize| {
            let session = TokioSession {
                session: self.session.clone(),
                discard_results: self.discard_results,
            };
            let (plan, workload, events) = (plan.clone(), workload.clone(), events.clone());
            let spec = spec.clone();
            async move {
                let wspec = spec.worker_spec(worker, workers, start);
                run_and_report(&session, &workload, &plan, &wspec, spec.phase, events).await;
            }
        };
        if workers == 1 {
            // The current_thread runtime runs its tasks (the driver's connections too) on
            // this thread while it drives the worker.
            self.pins.pin(0);
            self.pins.check()?;
            self.runtime.block_on(worker_future(0));
            return Ok(());
        }
        // A worker's future is `!Send` (its fibers share the worker's recorder in cells), so
        // it cannot be a task of the multi-threaded runtime. Each worker gets a thread of its
        // own instead, builds its future there from `Send` parts and drives it with
        // `Handle::block_on` (the runtime's timers and I/O; the driver's connection tasks
        // stay on the runtime's workers).
        let handle = self.runtime.handle();
        let worker_future = &worker_future;
        let pins = &self.pins;
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..workers)
                .map(|w| {
                    std::thread::Builder::new()
                        .name(format!("scylla-bench-{w}"))
                        .spawn_scoped(scope, move || {
                            pins.pin(w);
                            handle.block_on(worker_future(w))
                        })
                })
                .collect();
            for t in threads {
                t.map_err(|e| err(format!("cannot start a worker thread: {e}")))?
                    .join()
                    .map_err(|_| err("a worker thread panicked"))?;
            }
            self.pins.check()
        })
    }
}

impl Backend for ScyllaBackend {
    fn driver(&self) -> Driver {
        Driver::Scylla
    }

    fn execute_all(&self, statements: &[String]) -> Result<(), BackendError> {
        self.runtime.block_on(async {
            for s in statements {
                self.session
                    .query_unpaged(s.as_str(), &[])
                    .await
                    .map_err(|e| err(format!("`{s}`: {e}")))?;
            }
            Ok(())
        })
    }

    fn counters(&self) -> Option<DriverCounters> {
        // scylla-rust-driver does not count flushes or reads.
        None
    }

    fn thread_cores(&self) -> Vec<usize> {
        self.pins.cores.clone()
    }

    fn protocol_version(&self) -> Option<u8> {
        // scylla-rust-driver speaks v4 only.
        Some(4)
    }

    fn shutdown(&self) {}
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

    use std::time::Duration;

    use super::*;

    /// ScyllaDB's rate-limit error counts as doppio's kind of the same name, so that
    /// `errors_by_kind` compares like with like.
    #[test]
    fn a_rate_limited_request_is_named_as_doppio_names_it() {
        let e = ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::RateLimitReached {
                op_type: scylla::errors::OperationType::Read,
                rejected_by_coordinator: false,
            },
            "Per-partition rate limit reached".into(),
        ));
        assert_eq!(classify(&e), doppio_driver::ErrorKind::RateLimited.name());
    }

    /// The cores the calling thread may run on, as the kernel lists them (`0`, `0-1`).
    fn allowed_cores() -> String {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_owned()
    }

    #[test]
    fn tokio_workers_and_bench_threads_are_pinned_to_the_given_cores() {
        let pins = Arc::new(Pins::new(vec![0]).unwrap());
        let hook = pins.clone();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .on_thread_start(move || hook.pin_next())
            .build()
            .unwrap();
        // Each task runs on a tokio worker: both workers are on core 0 only.
        let seen: Vec<String> = runtime.block_on(async {
            let tasks: Vec<_> = (0..8)
                .map(|_| tokio::spawn(async { allowed_cores() }))
                .collect();
            let mut seen = Vec::new();
            for t in tasks {
                seen.push(t.await.unwrap());
            }
            seen
        });
        assert!(seen.iter().all(|c| c == "0"), "{seen:?}");
        let bench_thread = {
            let pins = pins.clone();
            std::thread::spawn(move || {
                pins.pin(0);
                allowed_cores()
            })
        };
        assert_eq!(bench_thread.join().unwrap(), "0");
        assert!(pins.check().is_ok());
        runtime.shutdown_timeout(Duration::from_secs(1));
    }

    #[test]
    fn no_pin_leaves_threads_alone_and_a_missing_core_is_refused() {
        let before = std::thread::spawn(allowed_cores).join().unwrap();
        let pins = Pins::new(Vec::new()).unwrap();
        let after = std::thread::scope(|s| {
            s.spawn(|| {
                pins.pin(0);
                allowed_cores()
            })
            .join()
            .unwrap()
        });
        assert_eq!(after, before, "no core list: not pinned");
        let e = Pins::new(vec![100_000]).err().unwrap();
        assert!(
            e.message.contains("cannot pin a thread to core 100000"),
            "{e}"
        );
    }

    #[test]
    fn serial_consistency_and_locality_map_to_scylla_settings() {
        assert_eq!(
            serial_consistency(BenchSerial::Serial),
            SerialConsistency::Serial
        );
        assert_eq!(
            serial_consistency(BenchSerial::LocalSerial),
            SerialConsistency::LocalSerial
        );
        assert!(
            load_balancing(&Locality::default()).is_none(),
            "the default policy"
        );
        let locality = Locality::new(Some("dc1".into()), Some("r1".into())).unwrap();
        let policy = format!("{:?}", load_balancing(&locality).unwrap());
        assert!(policy.contains("dc1") && policy.contains("r1"), "{policy}");
    }
}
