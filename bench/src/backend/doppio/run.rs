//! A phase on the doppio backend ([`PhaseRunner`]): its plan prepared on every shard, and
//! each shard's worker run on its session.

use std::sync::{mpsc, Arc};
use std::time::Instant;

use super::connect::DoppioBackend;
use super::error::err_of;
use super::execute::ShardSession;
use super::prepare::prepare_plan;
use crate::backend::interface::Backend;
use crate::engine::assemble::phase_statements;
use crate::engine::phase::{run_and_report, BackendError, Event, Phase, PhaseRunner, PhaseSpec};
use crate::workload::Workload;

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
