//! `doppio load`: the workload's load statement, once per iteration of its count (or of the
//! loader's `--cycles`/`--loader` range).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::setup::{connect_options, cycles_of, first_driver, workload_of};
use crate::backend;
use crate::cli::LoadArgs;
use crate::engine::drive::drive_phase;
use crate::engine::grid::ReleaseGrid;
use crate::engine::phase::{Phase, PhaseSpec};
use crate::engine::Limit;
use crate::experiment::measure::phase_end;
use crate::failure::{Failure, RunFailure, UsageError};
use crate::progress::Progress;

/// `doppio load`: runs the workload's load statement `count` times.
pub fn load(a: &LoadArgs) -> Result<(), Failure> {
    // The options first, as `run` and `findmax` check them: a bad one is named whatever
    // the workload.
    let driver = first_driver(&a.connect)?;
    let options = connect_options(&a.connect, &[driver])?;
    let workload = workload_of(&a.connect)?;
    let Some(l) = &workload.load else {
        return Err(UsageError::NoLoadSection {
            workload: workload.name.clone(),
        }
        .into());
    };
    let cycles = cycles_of(&a.cycles, &workload)?;
    // A loader's load writes its range: each of its iterations once.
    let count = cycles.map_or(l.count, |c| c.range.len());
    let b = backend::connect(driver, &options).map_err(Failure::Start)?;
    let spec = PhaseSpec {
        phase: Phase::Load,
        concurrency: a.concurrency,
        rate: a.rate.clone().map(Arc::new),
        grid: ReleaseGrid::new(a.release_grid),
        limit: Limit::Count(count),
        interval: Duration::from_secs(1),
        record: true,
        max_outage: a.connect.outage_limit(),
        cycles: cycles.map(|c| c.range),
    };
    let mut progress = Progress::new(
        a.connect.quiet,
        "load",
        Limit::Count(count),
        a.connect.progress_every,
    );
    let started = Instant::now();
    let outcome = drive_phase(&b, &workload, spec, |s| progress.sample(s));
    b.shutdown();
    progress.done(phase_end(outcome.as_ref().ok()));
    let outcome = outcome.map_err(|e| Failure::of_phase(e, false))?;
    let errors = outcome.errors;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "loaded {} rows of {}{} in {:.1}s ({:.0} rows/s), {} errors",
        outcome.iterations,
        workload.name,
        cycles.map_or(String::new(), |c| format!(
            " (iterations {}{})",
            c.range,
            c.loader.map_or(String::new(), |l| format!(", loader {l}"))
        )),
        secs,
        outcome.iterations as f64 / secs.max(1e-9),
        errors
    );
    for (kind, message) in &outcome.first_errors {
        println!("  first {kind} error: {message}");
    }
    if crate::interrupt::interrupted() {
        return Err(Failure::Interrupted);
    }
    if let Some(why) = outcome.aborted {
        return Err(RunFailure::LoadAborted(why).into());
    }
    if errors > 0 {
        return Err(RunFailure::LoadErrors(errors).into());
    }
    Ok(())
}
