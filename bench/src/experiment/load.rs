//! The load phase of `doppio load`: the workload's load statement once per iteration of
//! its count (or of the loader's `--cycles`/`--loader` range), on one backend, at full speed
//! or at `-r`, with its progress line; and how its outcome ends the command ([`judged`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::measure::phase_end;
use crate::backend::{self, ConnectOptions, Driver};
use crate::cli::LoadArgs;
use crate::engine::cycles::CycleRange;
use crate::engine::drive::{drive_phase, PhaseOutcome};
use crate::engine::grid::ReleaseGrid;
use crate::engine::phase::{Phase, PhaseSpec};
use crate::engine::Limit;
use crate::failure::{Failure, RunFailure};
use crate::progress::Progress;
use crate::workload::Workload;

/// What the load phase did, and how long it took (from before its first request until the
/// backend had shut down).
pub(crate) struct Loaded {
    /// The phase's outcome.
    pub(crate) outcome: PhaseOutcome,
    /// Its length in seconds.
    pub(crate) secs: f64,
}

/// Connects `driver`, runs the load statement of `workload` `count` times (the iterations
/// of `cycles` when given) as `a` says, and shuts the backend down.
pub(crate) fn load(
    a: &LoadArgs,
    driver: Driver,
    options: &ConnectOptions,
    workload: &Arc<Workload>,
    count: u64,
    cycles: Option<CycleRange>,
) -> Result<Loaded, Failure> {
    let b = backend::connect(driver, options).map_err(Failure::Start)?;
    let spec = PhaseSpec {
        phase: Phase::Load,
        concurrency: a.concurrency,
        rate: a.rate.clone().map(Arc::new),
        grid: ReleaseGrid::new(a.release_grid),
        limit: Limit::Count(count),
        interval: Duration::from_secs(1),
        record: true,
        max_outage: a.connect.outage_limit(),
        cycles,
    };
    let mut progress = Progress::new(
        a.connect.quiet,
        "load",
        Limit::Count(count),
        a.connect.progress_every,
    );
    let started = Instant::now();
    let outcome = drive_phase(&b, workload, spec, |s| progress.sample(s));
    b.shutdown();
    progress.done(phase_end(outcome.as_ref().ok()));
    let outcome = outcome.map_err(|e| Failure::of_phase(e, false))?;
    Ok(Loaded {
        outcome,
        secs: started.elapsed().as_secs_f64(),
    })
}

/// How a load that ran ends the command: interrupted, stopped before its count (the node
/// went away), with errors, or not at all.
pub(crate) fn judged(outcome: PhaseOutcome) -> Result<(), Failure> {
    if crate::interrupt::interrupted() {
        return Err(Failure::Interrupted);
    }
    if let Some(why) = outcome.aborted {
        return Err(RunFailure::LoadAborted(why).into());
    }
    if outcome.errors > 0 {
        return Err(RunFailure::LoadErrors(outcome.errors).into());
    }
    Ok(())
}
