//! `doppio load`: the workload's load statement, once per iteration of its count (or of the
//! loader's `--cycles`/`--loader` range): the options checked, the load phase run
//! (`crate::experiment::load`), and what it did printed.

use super::setup::{connect_options, cycles_of, first_driver, workload_of};
use crate::cli::LoadArgs;
use crate::experiment::load::{judged, load as load_phase, Loaded};
use crate::failure::{Failure, UsageError};

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
    let Loaded { outcome, secs } = load_phase(
        a,
        driver,
        &options,
        &workload,
        count,
        cycles.map(|c| c.range),
    )?;
    let errors = outcome.errors;
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
    judged(outcome)
}
