//! The doppio backend: one shard per thread (pinned to [`ConnectOptions::pinned_cores`], the
//! cores every backend uses, unless `--no-pin`), each running its worker's fibers on its own
//! session; on glommio (`doppio`) or on doppio's own io_uring runtime (`doppio-uring`, and
//! in SQPOLL mode `doppio-uring-sqpoll`), the same code either way.
//!
//! Children: [`rows`], a result page consumed (every row decoded, or only counted).

pub mod cost;
pub mod rows;

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use doppio_driver::config::Backoff;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::metadata::ColumnSpec;
use doppio_driver::proto::request::BatchType;
use doppio_driver::proto::types::ColumnType;
use doppio_driver::proto::values::QueryValues;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::rt::{Runtime, Sleeper};
use doppio_driver::session::{
    Batch, BatchValues, DefaultRetryPolicy, NoRetry, PagingState, RetryPolicy,
};
use doppio_driver::{Cluster, Error, PreparedStatement, Session, SessionConfig};

use super::counters::{add_counts, DriverCounters, UringEnters};
use super::driver::Driver;
use super::interface::Backend;
use super::options::{ConnectOptions, Consistency as BenchConsistency};
use super::settings::{Compression, SerialConsistency, SettingError};
use super::tasks::run_fibers_as_tasks;
use super::tls::tls_config;
use crate::engine::assemble::{assemble_plan, phase_statements, plan_statement};
use crate::engine::phase::{run_and_report, BackendError, Event, Phase, PhaseRunner, PhaseSpec};
use crate::engine::validate::Shape;
use crate::engine::{Answer, Args, BatchArgs, BenchSession, Plan, RequestError};
use crate::workload::encode::{encode, CqlKind, CqlType, Encoded, UdtType};
use crate::workload::{BatchKind, Statement, Workload};

/// A running doppio cluster client.
pub struct DoppioBackend {
    cluster: Cluster,
    driver: Driver,
    /// Count result rows without decoding them.
    discard_results: bool,
    /// Whether the shards are pinned to their cores.
    pinned: bool,
    /// `--waterfall N`: one request in N timed stage by stage.
    waterfall_every: Option<u64>,
    /// The io_uring runtime's configuration (its wait settings go in the report).
    uring: doppio_driver::rt::uring::Config,
}

/// The event loop and io_uring configuration of a doppio backend.
fn runtime_of(driver: Driver, o: &ConnectOptions) -> (Runtime, doppio_driver::rt::uring::Config) {
    let config = o
        .uring_wait
        .applied_to(doppio_driver::rt::uring::Config::default());
    match driver {
        // Not doppio (the caller connects only doppio's drivers here).
        Driver::Doppio | Driver::Scylla | Driver::Null => (Runtime::Glommio, config),
        Driver::DoppioUring => (Runtime::Uring, config),
        Driver::DoppioUringSqpoll => (
            Runtime::Uring,
            doppio_driver::rt::uring::Config {
                sqpoll: Some(doppio_driver::rt::uring::SqPoll {
                    idle: o.sqpoll.idle,
                    cpu: o.sqpoll.cpu,
                }),
                ..config
            },
        ),
    }
}

/// How an idle shard of `config` waits (on a kernel that has a minimum wait or not), as
/// CONFIG shows it beside the ring's flags.
fn wait_text(config: &doppio_driver::rt::uring::Config, kernel_has_min_wait: bool) -> String {
    let us = |d: Duration| format!("{}us", d.as_micros());
    let batch = if config.batch_wait.is_zero() {
        "no batched wait".to_owned()
    } else {
        let by = match (config.kernel_min_wait, kernel_has_min_wait) {
            (false, _) => "in user space",
            (true, false) => "in user space (the kernel has no minimum wait)",
            (true, true) => "by the kernel's minimum wait",
        };
        format!("batched wait {} {by}", us(config.batch_wait))
    };
    format!("timer slack {}, {batch}", us(config.timer_slack))
}

fn err_of(driver: Driver) -> impl Fn(String) -> BackendError {
    move |message| BackendError {
        driver: driver.name(),
        message,
    }
}

/// doppio's consistency level for the bench's.
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

/// doppio's serial consistency level for the bench's.
pub fn serial_consistency(c: SerialConsistency) -> Consistency {
    match c {
        SerialConsistency::Serial => Consistency::Serial,
        SerialConsistency::LocalSerial => Consistency::LocalSerial,
    }
}

/// The settings doppio cannot honour: a preferred rack (its load-balancing policy knows
/// data centers, not racks).
pub fn check_settings(driver: Driver, o: &ConnectOptions) -> Result<(), SettingError> {
    if o.locality.rack.is_some() {
        return Err(SettingError::Unsupported {
            driver: driver.name(),
            option: "--rack",
            why: "doppio's load-balancing policy prefers a data center, not a rack",
        });
    }
    Ok(())
}

impl DoppioBackend {
    /// Starts the shards of `driver` (doppio on one of its runtimes) and connects each.
    pub fn connect(o: &ConnectOptions, driver: Driver) -> Result<Self, BackendError> {
        let (runtime, uring) = runtime_of(driver, o);
        let err = err_of(driver);
        let retry: Arc<dyn RetryPolicy> = if o.retries == 0 {
            Arc::new(NoRetry)
        } else {
            Arc::new(DefaultRetryPolicy {
                max_retries: o.retries,
            })
        };
        let cores = o.worker_cores();
        let mut nodes = o.nodes.iter().copied();
        let first = nodes
            .next()
            .ok_or_else(|| err("no node to connect to".to_owned()))?;
        let mut s = SessionConfig::new(first)
            .with_contact_points(nodes)
            .with_connections(o.connections.max(1))
            .with_compression(o.compression == Compression::Lz4)
            .with_consistency(consistency(o.consistency))
            .with_serial_consistency(Some(serial_consistency(o.serial_consistency)))
            .with_request_timeout(o.request_timeout)
            .with_connect_timeout(o.request_timeout)
            .with_startup_timeout(o.request_timeout)
            .with_retry_policy(retry)
            .with_retry_backoff(o.retry_backoff.map(|b| Backoff::new(b.base, b.cap)))
            // Every backend asks for pages of this size and pages through to the end.
            .with_page_size(Some(o.page_size))
            .with_protocol_version(o.protocol.map(|v| {
                if v == 5 {
                    ProtocolVersion::V5
                } else {
                    ProtocolVersion::V4
                }
            }));
        if let (Some(u), Some(p)) = (&o.username, &o.password) {
            s = s.with_credentials(u, p.expose());
        }
        if let Some(dc) = &o.locality.datacenter {
            s = s.with_local_datacenter(dc);
        }
        if let Some(t) = &o.tls {
            s = s.with_tls(
                tls_config(t)
                    .map_err(|e| err(format!("--tls: {}", doppio_driver::error::Report(&e))))?,
            );
        }
        let b = Cluster::builder()
            .session_config(s)
            .cores(&cores)
            .pin(o.pin)
            .shutdown_grace(Duration::from_secs(2))
            .runtime(runtime)
            .uring_config(uring)
            .spin_before_park(o.spin_before_park);
        let cluster = b
            .build()
            .map_err(|e| err(doppio_driver::error::Report(&e).to_string()))?;
        Ok(Self {
            cluster,
            driver,
            discard_results: o.discard_results,
            pinned: o.pin,
            waterfall_every: o.waterfall_every,
            uring,
        })
    }
}

/// The type the bench encodes for a doppio column type: composites recursively (doppio
/// reads a v4 `VectorType(...)` custom type as a vector).
pub fn kind_of(t: &ColumnType) -> CqlType {
    match t {
        ColumnType::List(e) => CqlType::List(Arc::new(kind_of(e))),
        ColumnType::Set(e) => CqlType::Set(Arc::new(kind_of(e))),
        ColumnType::Map(k, v) => CqlType::Map(Arc::new((kind_of(k), kind_of(v)))),
        ColumnType::Tuple(ts) => CqlType::Tuple(ts.iter().map(kind_of).collect()),
        ColumnType::Udt { name, fields, .. } => CqlType::Udt(Arc::new(UdtType {
            name: name.clone(),
            fields: fields
                .iter()
                .map(|(n, t)| (n.clone(), kind_of(t)))
                .collect(),
        })),
        ColumnType::Vector { element, dimension } => {
            CqlType::Vector(Arc::new(kind_of(element)), *dimension)
        }
        t => CqlType::Scalar(scalar_kind_of(t)),
    }
}

fn scalar_kind_of(t: &ColumnType) -> CqlKind {
    match t {
        ColumnType::Ascii => CqlKind::Ascii,
        ColumnType::Bigint => CqlKind::BigInt,
        ColumnType::Blob => CqlKind::Blob,
        ColumnType::Boolean => CqlKind::Boolean,
        ColumnType::Counter => CqlKind::Counter,
        ColumnType::Double => CqlKind::Double,
        ColumnType::Float => CqlKind::Float,
        ColumnType::Int => CqlKind::Int,
        ColumnType::Timestamp => CqlKind::Timestamp,
        ColumnType::Uuid => CqlKind::Uuid,
        ColumnType::Varchar => CqlKind::Text,
        ColumnType::Varint => CqlKind::Varint,
        ColumnType::Timeuuid => CqlKind::TimeUuid,
        ColumnType::Date => CqlKind::Date,
        ColumnType::Time => CqlKind::Time,
        ColumnType::Smallint => CqlKind::SmallInt,
        ColumnType::Tinyint => CqlKind::TinyInt,
        _ => CqlKind::Other,
    }
}

/// The bench's kind of a doppio error: the driver's own classification
/// ([`doppio_driver::ErrorKind`]), the one the session counts by.
pub fn classify(e: &Error) -> &'static str {
    e.kind().name()
}

/// Generated arguments written straight into doppio's frame buffer: `[int length][bytes]`
/// per value, the length patched after the bytes (no allocation).
impl QueryValues for Args<'_> {
    fn count(&self) -> usize {
        self.bound.args.len()
    }

    fn write_values(
        &self,
        _columns: Option<&[ColumnSpec]>,
        buf: &mut BytesMut,
    ) -> doppio_driver::proto::error::Result<()> {
        for (k, (expr, kind)) in self.bound.args.iter().enumerate() {
            let at = buf.len();
            buf.extend_from_slice(&[0; 4]);
            let value = expr.eval(self.iteration).map_err(|e| value_error(k, e.0))?;
            match encode(value, kind, buf).map_err(|e| value_error(k, e.0))? {
                Encoded::Null => {
                    buf.truncate(at);
                    buf.extend_from_slice(&(-1i32).to_be_bytes());
                }
                Encoded::Written => {
                    let len = buf.len() - at - 4;
                    let len = i32::try_from(len).map_err(|_| value_error(k, "value too long"))?;
                    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
                }
            }
        }
        Ok(())
    }
}

fn value_error(k: usize, reason: &str) -> doppio_driver::proto::ProtoError {
    doppio_driver::proto::ProtoError::Value {
        column: format!("argument {}", k + 1),
        reason: Box::new(doppio_driver::proto::ValueError::Custom(reason.to_owned())),
    }
}

fn request_error(e: &Error) -> RequestError {
    RequestError {
        kind: classify(e),
        message: doppio_driver::error::Report(e).to_string(),
    }
}

fn rows_error(e: &rows::RowsError) -> RequestError {
    RequestError {
        kind: doppio_driver::ErrorKind::Serialization.name(),
        message: doppio_driver::error::Report(e).to_string(),
    }
}

/// A prepared statement with how it is sent: idempotent or not (its settings say), and
/// whether its answers' `[applied]` is read.
pub struct DoppioPrepared {
    /// The session's defaults, `idempotent` as the workload says.
    statement: PreparedStatement,
    /// A conditional update.
    conditional: bool,
}

/// Where every request's first page starts.
static FIRST_PAGE: PagingState = PagingState::start();

/// A batch of a plan: doppio's `Batch` of its statements (`repeat` copies of them, in the
/// order of [`BatchArgs::element`]) with its settings; the values come per iteration, in
/// [`BatchArgs`].
pub struct DoppioBatch {
    batch: Batch,
    conditional: bool,
}

/// doppio's batch type for the bench's.
fn batch_type(kind: BatchKind) -> BatchType {
    match kind {
        BatchKind::Logged => BatchType::Logged,
        BatchKind::Unlogged => BatchType::Unlogged,
        BatchKind::Counter => BatchType::Counter,
    }
}

/// A batch's values as doppio takes them: element `k`'s, made on demand (nothing is
/// collected per request).
struct Elements<'a>(BatchArgs<'a, DoppioPrepared>);

impl BatchValues for Elements<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> doppio_driver::proto::error::Result<()>,
    ) -> doppio_driver::proto::error::Result<()> {
        match self.0.element(k) {
            Some((_, args)) => f(&args),
            None => Err(doppio_driver::proto::ProtoError::InvalidValue {
                what: "batch statement",
                detail: format!("no element {k} of {}", self.0.len()),
            }),
        }
    }
}

struct ShardSession {
    session: Session,
    /// Count result rows without decoding them.
    discard_results: bool,
    /// `--waterfall N`: one request in N is timed stage by stage.
    waterfall_every: Option<u64>,
    /// Requests until the next timed one (one shard: a `Cell`, no atomic).
    countdown: std::cell::Cell<u64>,
}

impl ShardSession {
    /// Whether this request is the one in `--waterfall` N to time.
    #[inline]
    fn timed_now(&self) -> bool {
        let Some(every) = self.waterfall_every else {
            return false;
        };
        let left = self.countdown.get();
        if left <= 1 {
            self.countdown.set(every);
            true
        } else {
            self.countdown.set(left - 1);
            false
        }
    }

    /// A request timed stage by stage (`--waterfall`): its first page's way through the
    /// driver (`doppio_driver::stages`), its rows read as [`BenchSession::execute`] reads them. The
    /// driver's thread is armed for the first poll only: the request takes the arm when it
    /// is queued then (the common case); one that waits for a stream id first is not timed.
    /// A result of several pages is not timed either (its stages would not be one
    /// request's). Boxed by its caller: one allocation per timed request.
    async fn execute_timed(
        &self,
        prepared: &DoppioPrepared,
        args: Args<'_>,
    ) -> Result<Answer, RequestError> {
        use doppio_driver::stages;
        use std::future::Future;
        let conditional = prepared.conditional;
        let statement = &prepared.statement;
        let call = stages::now();
        let token = stages::arm();
        let mut request =
            std::pin::pin!(self
                .session
                .execute_single_page(statement, &args, &FIRST_PAGE));
        let mut first = true;
        let page = std::future::poll_fn(|cx| {
            let polled = request.as_mut().poll(cx);
            if std::mem::take(&mut first) {
                stages::disarm(token);
            }
            polled
        })
        .await;
        let returned = stages::now();
        let page = page.map_err(|e| request_error(&e))?;
        let stamps = stages::take(token);
        let not_applied = conditional && rows::not_applied(&page);
        let mut rows =
            rows::consume(&page, self.discard_results, args.check).map_err(|e| rows_error(&e))?;
        let Some(state) = page.next() else {
            return Ok(Answer {
                rows,
                not_applied,
                stages: stamps
                    .and_then(|s| driver_stages(call, &s, returned))
                    .map(Box::new),
            });
        };
        // Further pages, untimed.
        rows += Box::pin(self.further_pages(statement, &args, state)).await?;
        Ok(Answer {
            rows,
            not_applied,
            stages: None,
        })
    }

    /// The rows of the pages after the first, each asked for with the previous one's paging
    /// state (`state`, the first page's) once that one is consumed. Boxed by its callers:
    /// further pages are the rare path, and a single-page request's future stays as small
    /// as it was (one allocation for all the further pages).
    async fn further_pages(
        &self,
        statement: &PreparedStatement,
        args: &Args<'_>,
        mut state: PagingState,
    ) -> Result<u64, RequestError> {
        let mut rows = 0;
        loop {
            let page = self
                .session
                .execute_single_page(statement, args, &state)
                .await
                .map_err(|e| request_error(&e))?;
            rows += rows::consume(&page, self.discard_results, args.check)
                .map_err(|e| rows_error(&e))?;
            // A reference-counted handle on the page's bytes: no copy.
            match page.next() {
                Some(next) => state = next,
                None => return Ok(rows),
            }
        }
    }
}

/// A timed request's stages from the driver's stamps and the call's own times (`None` when
/// a stamp is missing: its batch was handed over too long before its answer).
fn driver_stages(
    call: u64,
    s: &doppio_driver::stages::Stamps,
    returned: u64,
) -> Option<crate::engine::waterfall::DriverStages> {
    let points = [
        call,
        s.queued,
        s.flushed,
        s.read,
        s.completed,
        s.polled,
        returned,
    ];
    if points.contains(&0) {
        return None;
    }
    let d = |k: usize| points[k + 1].saturating_sub(points[k]);
    Some(crate::engine::waterfall::DriverStages {
        queue: d(0),
        flush: d(1),
        wire: d(2),
        frame: d(3),
        wake: d(4),
        decode: d(5),
    })
}

impl BenchSession for ShardSession {
    type Prepared = DoppioPrepared;
    type Batch = DoppioBatch;
    type Sleeper = Sleeper;

    fn sleeper(&self) -> Sleeper {
        Sleeper::new()
    }

    /// The first page on the session's hot path (the statement's settings: the run's page
    /// size), each further page asked for with the previous one's paging state once that
    /// one is consumed: page after page, as the scylla backend does.
    async fn execute(
        &self,
        prepared: &DoppioPrepared,
        args: Args<'_>,
    ) -> Result<Answer, RequestError> {
        if self.timed_now() {
            return Box::pin(self.execute_timed(prepared, args)).await;
        }
        let conditional = prepared.conditional;
        let prepared = &prepared.statement;
        let page = self
            .session
            .execute_single_page(prepared, &args, &FIRST_PAGE)
            .await
            .map_err(|e| request_error(&e))?;
        let not_applied = conditional && rows::not_applied(&page);
        let mut rows =
            rows::consume(&page, self.discard_results, args.check).map_err(|e| rows_error(&e))?;
        if let Some(state) = page.next() {
            rows += Box::pin(self.further_pages(prepared, &args, state)).await?;
        }
        Ok(Answer {
            rows,
            not_applied,
            stages: None,
        })
    }

    /// One BATCH of the elements' prepared statements and values, routed by its first
    /// statement's partition key. Each element's values are made as the frame is written:
    /// nothing is collected or allocated for them.
    async fn execute_batch(
        &self,
        batch: &DoppioBatch,
        args: BatchArgs<'_, DoppioPrepared>,
    ) -> Result<Answer, RequestError> {
        let page = self
            .session
            .batch(&batch.batch, &Elements(args))
            .await
            .map_err(|e| request_error(&e))?;
        let not_applied = batch.conditional && rows::not_applied(&page);
        let rows = rows::consume(&page, self.discard_results, None).map_err(|e| rows_error(&e))?;
        Ok(Answer {
            rows,
            not_applied,
            stages: None,
        })
    }

    /// On the fiber's kept timer: glommio allocates for every new timer, not for one
    /// re-armed.
    async fn sleep_until(&self, sleeper: &mut Sleeper, deadline: Instant) {
        sleeper.sleep_until(deadline).await;
    }

    fn tablet_misroutes(&self) -> Option<u64> {
        Some(self.session.stats().tablet_payloads)
    }

    /// This shard's per-node counters (the session's nodes of now: a node removed from the
    /// cluster is gone from them).
    fn node_requests(&self) -> Vec<(String, u64)> {
        self.session
            .nodes()
            .into_iter()
            .map(|n| (n.info.addr.to_string(), n.counters.requests))
            .collect()
    }

    async fn run_fibers<Fut: std::future::Future<Output = ()>>(&self, fibers: Vec<Fut>) {
        run_fibers_as_tasks(fibers).await;
    }
}

async fn prepare_plan(
    driver: Driver,
    session: &Session,
    workload: &Workload,
    phase: Phase,
    stmts: &[Statement],
) -> Result<Plan<DoppioPrepared, DoppioBatch>, BackendError> {
    let err = err_of(driver);
    let mut plan = Vec::with_capacity(stmts.len());
    for s in stmts {
        let prepared = session
            .prepare(&s.cql)
            .await
            .map_err(|e| err(format!("prepare `{}`: {e}", s.cql)))?;
        let kinds: Vec<CqlType> = prepared
            .metadata()
            .columns
            .iter()
            .map(|c| kind_of(&c.typ))
            .collect();
        // A validated read: its writer's markers too (one more PREPARE per phase).
        let shape = match (&s.validate, workload.writer_of(s)) {
            (Some(_), Some(writer)) => {
                let writer_prepared = session
                    .prepare(&writer.cql)
                    .await
                    .map_err(|e| err(format!("prepare `{}`: {e}", writer.cql)))?;
                Some(Shape {
                    writer_markers: writer_prepared
                        .metadata()
                        .columns
                        .iter()
                        .map(|c| (c.name.clone(), kind_of(&c.typ)))
                        .collect(),
                    result_columns: prepared
                        .result_columns()
                        .iter()
                        .map(|c| c.name.clone())
                        .collect(),
                })
            }
            _ => None,
        };
        let prepared = DoppioPrepared {
            statement: prepared.with_config(|c| c.idempotent = s.idempotent),
            conditional: s.conditional,
        };
        plan.push(plan_statement(
            workload,
            s,
            prepared,
            &kinds,
            shape.as_ref(),
            driver.name(),
        )?);
    }
    assemble_plan(workload, phase, plan, |group, kind, members| {
        let of_group = &stmts[group.statements.clone()];
        // Idempotent when every statement of it is.
        let idempotent = !of_group.is_empty() && of_group.iter().all(|s| s.idempotent);
        let mut batch = Batch::new(batch_type(kind)).with_config(|c| c.idempotent = idempotent);
        for _ in 0..group.repeat {
            for m in members {
                batch.append_prepared(&m.prepared.statement);
            }
        }
        Ok(DoppioBatch {
            batch,
            conditional: members.iter().any(|m| m.prepared.conditional),
        })
    })
}

impl PhaseRunner for DoppioBackend {
    fn name(&self) -> &'static str {
        self.driver().name()
    }

    fn workers(&self) -> usize {
        self.cluster.shards()
    }

    fn prepare(&self, workload: &Arc<Workload>, phase: Phase) -> Result<(), BackendError> {
        let driver = self.driver;
        let stmts = Arc::new(phase_statements(workload, phase, driver.name())?);
        let workload = workload.clone();
        let out = self
            .cluster
            .run_on_shards(move |session| {
                let (stmts, workload) = (stmts.clone(), workload.clone());
                async move {
                    prepare_plan(driver, &session, &workload, phase, &stmts)
                        .await
                        .map(|_| ())
                }
            })
            .map_err(|e| err_of(driver)(doppio_driver::error::Report(&e).to_string()))?;
        out.into_iter().collect()
    }

    fn run_phase(
        &self,
        workload: &Arc<Workload>,
        spec: PhaseSpec,
        start: Instant,
        events: mpsc::SyncSender<Event>,
    ) -> Result<(), BackendError> {
        let driver = self.driver;
        let stmts = Arc::new(phase_statements(workload, spec.phase, driver.name())?);
        let workload = workload.clone();
        let workers = self.cluster.shards();
        let discard_results = self.discard_results;
        let waterfall_every = self.waterfall_every;
        self.cluster
            .run_on_shards_indexed(move |worker, session| {
                let (stmts, workload, events) = (stmts.clone(), workload.clone(), events.clone());
                let spec = spec.clone();
                async move {
                    // The statements are in the shard's cache since `prepare`: no network.
                    let plan =
                        match prepare_plan(driver, &session, &workload, spec.phase, &stmts).await {
                            Ok(p) => p,
                            Err(e) => {
                                let _ = events.send(Event::Finished {
                                    worker,
                                    end: Err(e),
                                    stalled: Default::default(),
                                });
                                return;
                            }
                        };
                    let wspec = spec.worker_spec(worker, workers, start);
                    let bench = ShardSession {
                        session,
                        discard_results,
                        waterfall_every,
                        countdown: std::cell::Cell::new(waterfall_every.unwrap_or(0)),
                    };
                    run_and_report(&bench, &workload, &plan, &wspec, spec.phase, events).await;
                }
            })
            .map_err(|e| err_of(driver)(doppio_driver::error::Report(&e).to_string()))?;
        Ok(())
    }
}

impl Backend for DoppioBackend {
    fn driver(&self) -> Driver {
        self.driver
    }

    fn execute_all(&self, statements: &[String]) -> Result<(), BackendError> {
        let statements: Arc<Vec<String>> = Arc::new(statements.to_vec());
        // Schema statements run once, on shard 0.
        let out = self
            .cluster
            .run_on_shards_indexed(move |shard, session| {
                let statements = statements.clone();
                async move {
                    if shard != 0 {
                        return Ok(());
                    }
                    for s in statements.iter() {
                        session
                            .query_unpaged(s, &())
                            .await
                            .map_err(|e| format!("`{s}`: {e}"))?;
                    }
                    Ok::<(), String>(())
                }
            })
            .map_err(|e| err_of(self.driver)(doppio_driver::error::Report(&e).to_string()))?;
        out.into_iter()
            .collect::<Result<(), _>>()
            .map_err(err_of(self.driver))
    }

    fn counters(&self) -> Option<DriverCounters> {
        let stats = self
            .cluster
            .run_on_shards(|session| async move {
                let status = session.nodes();
                let nodes: Vec<(String, u64)> = status
                    .iter()
                    .map(|n| (n.info.addr.to_string(), n.counters.requests))
                    .collect();
                let shards: Vec<(String, Vec<u64>)> = status
                    .into_iter()
                    .filter(|n| !n.requests_by_scylla_shard.is_empty())
                    .map(|n| (n.info.addr.to_string(), n.requests_by_scylla_shard))
                    .collect();
                let stats = session.stats();
                let uring = doppio_driver::rt::uring::is_running().then(|| {
                    let u = doppio_driver::rt::uring::stats();
                    UringEnters {
                        total: u.enters,
                        waiting: u.enters_waiting,
                        sq_wakeup: u.enters_sq_wakeup,
                        cq_overflow: u.enters_cq_overflow,
                        woke_by_completion: u.wakes_completion,
                        woke_by_remote: u.wakes_remote,
                        woke_by_timer: u.wakes_timer,
                        woke_empty: u.wakes_empty,
                    }
                });
                (
                    stats.connections,
                    (stats.retries, stats.reprepares, stats.tablet_payloads),
                    nodes,
                    (shards, uring),
                )
            })
            .ok()?;
        let mut c = DriverCounters::default();
        for (s, (retries, reprepares, misroutes), nodes, (shards, uring)) in stats {
            if let Some(u) = uring {
                c.uring_enters = Some(c.uring_enters.unwrap_or_default().plus(&u));
            }
            c.retries += retries;
            c.reprepares += reprepares;
            c.tablet_misroutes += misroutes;
            for (node, n) in nodes {
                *c.nodes.entry(node).or_default() += n;
            }
            for (node, counts) in shards {
                add_counts(c.scylla_shards.entry(node).or_default(), &counts);
            }
            c.requests += s.requests;
            c.flushes += s.flushes;
            c.reads += s.reads;
            c.bytes_written += s.bytes_written;
            c.bytes_read += s.bytes_read;
        }
        Some(c)
    }

    fn protocol_version(&self) -> Option<u8> {
        let versions = self
            .cluster
            .run_on_shards(|session| async move { session.protocol_version() })
            .ok()?;
        versions.into_iter().flatten().next().map(|v| v.number())
    }

    fn uring_setup_flags(&self) -> Option<String> {
        let uring = self.uring;
        let flags = self
            .cluster
            .run_on_shards(move |_| async move {
                doppio_driver::rt::uring::is_running()
                    .then(doppio_driver::rt::uring::setup_flags)
                    .flatten()
                    .map(|f| format!("{f}; {}", wait_text(&uring, f.min_timeout)))
            })
            .ok()?;
        let mut flags: Vec<String> = flags.into_iter().flatten().collect();
        flags.dedup();
        (!flags.is_empty()).then(|| flags.join(" / "))
    }

    fn thread_cores(&self) -> Vec<usize> {
        if self.pinned {
            self.cluster.cores()
        } else {
            Vec::new()
        }
    }

    fn shutdown(&self) {
        self.cluster.shutdown();
    }
}
