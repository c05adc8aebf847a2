//! The null backend (`--driver null`): a measuring instrument for the engine's own floor,
//! not a driver. Its requests complete at once, without any I/O, so that what a run costs
//! is the engine's per-request work alone: picking the statement, pacing (`-r`), generating
//! and encoding the arguments (into a buffer reused from request to request, as doppio
//! encodes them into its frame buffer), the clock reads, recording the latencies and
//! counting. Each request yields once to the executor before it completes, as a real request
//! waits for its answer, so the figure includes one task switch per request.
//!
//! It runs one executor of doppio's own io_uring runtime per worker (`-t`), pinned to the
//! cores every backend uses ([`ConnectOptions::pinned_cores`]), kept from connect to
//! shutdown like doppio's shards; no node is contacted (the node addresses are ignored).
//!
//! Each bind marker is written as the type its generator's values suggest
//! ([`natural_type`]: an integer as a bigint, text as text, ...), since there is no server to
//! describe the columns; a workload is not checked against any schema. It returns no rows,
//! so `--validate` is refused with it, and `schema` has nothing to do.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::BytesMut;
use doppio_driver::rt::{spawn_executor, ExecutorHandle, ExecutorSpec, Runtime, Sleeper};

use super::counters::DriverCounters;
use super::driver::Driver;
use super::interface::Backend;
use super::options::ConnectOptions;
use super::tasks::run_fibers_as_tasks;
use crate::engine::assemble::{assemble_plan, phase_statements, plan_statement};
use crate::engine::error_kind::ErrorKind;
use crate::engine::phase::{run_and_report, BackendError, Event, Phase, PhaseRunner, PhaseSpec};
use crate::engine::{Answer, Args, BatchArgs, BenchSession, PhasePlan, RequestError};
use crate::workload::encode::{encode, natural_type, Encoded};
use crate::workload::Workload;

/// The driver name in errors.
const NAME: &str = "null";

/// A unit of work for a worker's executor: makes the future it runs there.
type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// The workers' executors, each waiting for its next job.
pub(crate) struct NullBackend {
    /// Per worker: where its jobs go, and its thread (taken at shutdown).
    workers: Mutex<Vec<(mpsc::Sender<Job>, ExecutorHandle<()>)>>,
    /// How many workers.
    count: usize,
    /// The cores the workers are pinned to (empty: not pinned).
    cores: Vec<usize>,
}

fn err(message: String) -> BackendError {
    BackendError {
        driver: NAME,
        message,
    }
}

impl NullBackend {
    /// Starts one executor of doppio's io_uring runtime per thread, pinned as every backend.
    pub(crate) fn connect(o: &ConnectOptions) -> Result<Self, BackendError> {
        let cores = o.pinned_cores();
        let mut workers = Vec::new();
        for w in 0..o.threads.max(1) {
            let (tx, rx) = mpsc::channel::<Job>();
            let spec = ExecutorSpec {
                core: cores.get(w).copied(),
                ..ExecutorSpec::new(Runtime::Uring, &format!("doppio-null-{w}"))
            };
            // Between jobs the executor has nothing else to run: it blocks in `recv` until
            // the next phase (or until the backend is shut down and the channel closes).
            let handle = spawn_executor(spec, move || async move {
                while let Ok(job) = rx.recv() {
                    job().await;
                }
            })
            .map_err(|e| err(e.to_string()))?;
            workers.push((tx, handle));
        }
        Ok(Self {
            count: workers.len(),
            workers: Mutex::new(workers),
            cores,
        })
    }

    /// Runs `f(worker)` on every worker's executor and waits for every output, in worker
    /// order.
    fn on_workers<T, F, Fut>(&self, f: F) -> Result<Vec<T>, BackendError>
    where
        T: Send + 'static,
        F: Fn(usize) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = T> + 'static,
    {
        let f = Arc::new(f);
        let mut waiting = Vec::new();
        {
            let workers = self
                .workers
                .lock()
                .map_err(|_| err("a worker panicked".into()))?;
            if workers.is_empty() {
                return Err(err("the backend is shut down".into()));
            }
            for (w, (jobs, _)) in workers.iter().enumerate() {
                let (tx, rx) = mpsc::sync_channel(1);
                let f = f.clone();
                let job: Job = Box::new(move || {
                    Box::pin(async move {
                        let _ = tx.send(f(w).await);
                    })
                });
                jobs.send(job)
                    .map_err(|_| err(format!("worker {w} has stopped")))?;
                waiting.push(rx);
            }
        }
        waiting
            .into_iter()
            .enumerate()
            .map(|(w, rx)| {
                rx.recv()
                    .map_err(|_| err(format!("worker {w} stopped during the phase")))
            })
            .collect()
    }
}

/// A phase's plan: every statement bound to its generators' natural types.
fn null_plan(workload: &Workload, phase: Phase) -> Result<PhasePlan<(), ()>, BackendError> {
    let stmts = phase_statements(workload, phase, NAME)?;
    let mut plan = Vec::with_capacity(stmts.len());
    for s in &stmts {
        let mut kinds = Vec::with_capacity(s.args.len());
        for (k, e) in s.args.iter().enumerate() {
            let value = e.eval(0).map_err(|x| {
                err(format!(
                    "statement {}: argument {} (`{e}`): {x}",
                    s.label(),
                    k + 1
                ))
            })?;
            kinds.push(natural_type(&value));
        }
        plan.push(plan_statement(workload, s, (), &kinds, None, NAME)?);
    }
    assemble_plan(workload, phase, plan, |_, _, _| Ok(()))
}

/// A worker's session: a scratch buffer the arguments are encoded into.
struct NullSession {
    /// Cleared per request; grows to the largest request's arguments once.
    scratch: RefCell<BytesMut>,
}

impl NullSession {
    /// Encodes `args` as doppio writes them into its frame: `[int length][bytes]` per value.
    fn encode(&self, args: &Args<'_>) -> Result<(), RequestError> {
        let mut buf = self.scratch.borrow_mut();
        for (k, (expr, kind)) in args.bound.args.iter().enumerate() {
            let at = buf.len();
            buf.extend_from_slice(&[0; 4]);
            let written = expr
                .eval(args.iteration)
                .and_then(|value| encode(value, kind, &mut *buf))
                .map_err(|e| RequestError {
                    kind: ErrorKind::Serialization,
                    message: format!("argument {}: {e}", k + 1),
                })?;
            let len = match written {
                Encoded::Null => -1,
                Encoded::Written => {
                    i32::try_from(buf.len() - at - 4).map_err(|_| RequestError {
                        kind: ErrorKind::Serialization,
                        message: format!("argument {}: value too long", k + 1),
                    })?
                }
            };
            if len < 0 {
                buf.truncate(at + 4);
            }
            buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
        Ok(())
    }

    /// Hands the encoded bytes to nobody (kept opaque to the optimiser) and empties the
    /// buffer for the next request.
    fn discard(&self) {
        let mut buf = self.scratch.borrow_mut();
        std::hint::black_box(&buf[..]);
        buf.clear();
    }
}

/// Pending once (waking its task at once), then ready: a request's wait for its answer
/// without the answer's I/O.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl BenchSession for NullSession {
    type Prepared = ();
    type Batch = ();
    type Sleeper = Sleeper;

    fn sleeper(&self) -> Sleeper {
        Sleeper::new()
    }

    async fn execute(&self, _: &(), args: Args<'_>) -> Result<Answer, RequestError> {
        let encoded = self.encode(&args);
        self.discard();
        encoded?;
        YieldOnce(false).await;
        Ok(Answer::rows(0))
    }

    async fn execute_batch(&self, _: &(), args: BatchArgs<'_, ()>) -> Result<Answer, RequestError> {
        let mut encoded = Ok(());
        for n in 0..args.len() {
            if let Some((_, element)) = args.element(n) {
                encoded = self.encode(&element);
                if encoded.is_err() {
                    break;
                }
            }
        }
        self.discard();
        encoded?;
        YieldOnce(false).await;
        Ok(Answer::rows(0))
    }

    async fn sleep_until(&self, sleeper: &mut Sleeper, deadline: Instant) {
        sleeper.sleep_until(deadline).await;
    }

    async fn run_fibers<Fut: Future<Output = ()>>(&self, fibers: Vec<Fut>) {
        run_fibers_as_tasks(fibers).await;
    }
}

impl PhaseRunner for NullBackend {
    fn name(&self) -> &'static str {
        self.driver().name()
    }

    fn workers(&self) -> usize {
        self.count
    }

    fn prepare(&self, workload: &Arc<Workload>, phase: Phase) -> Result<(), BackendError> {
        null_plan(workload, phase).map(|_| ())
    }

    fn run_phase(
        &self,
        workload: &Arc<Workload>,
        spec: PhaseSpec,
        start: Instant,
        events: mpsc::SyncSender<Event>,
    ) -> Result<(), BackendError> {
        let workload = workload.clone();
        let workers = self.count;
        self.on_workers(move |worker| {
            let (workload, events, spec) = (workload.clone(), events.clone(), spec.clone());
            async move {
                let plan = match null_plan(&workload, spec.phase) {
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
                let session = NullSession {
                    scratch: RefCell::new(BytesMut::with_capacity(64 << 10)),
                };
                run_and_report(&session, &workload, &plan, &wspec, spec.phase, events).await;
            }
        })?;
        Ok(())
    }
}

impl Backend for NullBackend {
    fn driver(&self) -> Driver {
        Driver::Null
    }

    fn execute_all(&self, _statements: &[String]) -> Result<(), BackendError> {
        Err(err(
            "the null backend executes nothing: it has no schema to create (it is for \
             `run`, `load` and `findmax`, to measure the bench engine alone)"
                .into(),
        ))
    }

    fn counters(&self) -> Option<DriverCounters> {
        None
    }

    fn thread_cores(&self) -> Vec<usize> {
        self.cores.clone()
    }

    fn protocol_version(&self) -> Option<u8> {
        None
    }

    fn shutdown(&self) {
        let workers = match self.workers.lock() {
            Ok(mut w) => std::mem::take(&mut *w),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for (jobs, handle) in workers {
            // Closing the channel ends the executor's loop.
            drop(jobs);
            let _ = handle.join();
        }
    }
}

impl Drop for NullBackend {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_encoded_as_a_frame_carries_them_and_the_buffer_is_reused() {
        let w = Workload::from_toml(
            "t",
            r#"
            [[run]]
            statement = "SELECT * FROM t WHERE k = ? AND v = ? AND n = ?"
            args = ["i", "text(3)", "null"]
            "#,
            &[],
        )
        .unwrap();
        let plan = null_plan(&w, Phase::Run).unwrap();
        let kinds: Vec<String> = plan.statements[0]
            .args
            .args
            .iter()
            .map(|(_, t): &(_, crate::workload::encode::CqlType)| t.to_string())
            .collect();
        assert_eq!(kinds, ["bigint", "text", "blob"]);
        let session = NullSession {
            scratch: RefCell::new(BytesMut::with_capacity(64)),
        };
        let args = Args {
            bound: &plan.statements[0].args,
            iteration: 7,
            check: None,
        };
        session.encode(&args).unwrap();
        let buf = session.scratch.borrow().clone();
        assert_eq!(&buf[..12], &[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 7]);
        assert_eq!(&buf[12..16], &[0, 0, 0, 3]);
        assert_eq!(&buf[19..], &(-1i32).to_be_bytes(), "null: length -1");
        session.discard();
        assert!(session.scratch.borrow().is_empty());
    }

    #[test]
    fn a_phase_runs_on_the_workers_and_schema_is_refused() {
        let options = ConnectOptions {
            threads: 2,
            pin: false,
            ..crate::backend::options::tests::options()
        };
        let b = NullBackend::connect(&options).unwrap();
        assert_eq!(b.workers(), 2);
        assert_eq!(
            b.on_workers(|w| async move { w * 10 }).unwrap(),
            vec![0, 10]
        );
        assert!(b.execute_all(&["CREATE".into()]).is_err());
        b.shutdown();
        assert!(b.on_workers(|w| async move { w }).is_err(), "shut down");
    }
}
