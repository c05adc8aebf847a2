//! The scylla backend as the engine drives it: a phase's plan prepared and its workers run
//! (one thread each with several, pinned; [`PhaseRunner`]), and the [`Backend`] interface.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use super::connect::ScyllaBackend;
use super::error::err;
use super::execute::TokioSession;
use super::prepare::prepare_plan;
use crate::backend::counters::DriverCounters;
use crate::backend::driver::Driver;
use crate::backend::interface::Backend;
use crate::engine::assemble::phase_statements;
use crate::engine::phase::{run_and_report, BackendError, Event, Phase, PhaseRunner, PhaseSpec};
use crate::workload::Workload;

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

    fn scylla_shards(&self) -> BTreeMap<IpAddr, u16> {
        self.session
            .get_cluster_state()
            .get_nodes_info()
            .iter()
            .filter_map(|n| Some((n.address.ip(), n.sharder()?.nr_shards.get())))
            .collect()
    }

    fn idle(&self, d: Duration) {
        // With one thread the runtime is current-thread: its pool refillers run only inside
        // `block_on`.
        self.runtime
            .block_on(async move { tokio::time::sleep(d).await });
    }

    fn shutdown(&self) {}
}
