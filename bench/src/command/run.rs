//! `doppio run`: its options checked and made into rounds of segments (the experiment,
//! `crate::experiment::run`: per backend a warmup and measured segments, alternating
//! between backends when there are several, the driver's overhead around each measured
//! segment), then the text report on stdout and the JSON report on disk.

use std::path::PathBuf;

use super::setup::{
    check_writable, cycles_of, result_options, with_validation, workload_of, ReportPath,
};
use crate::backend::Driver;
use crate::cli::RunArgs;
use crate::engine::cycles::Cycles;
use crate::engine::Limit;
use crate::experiment::round_report::{new_report, server_of, Heading};
use crate::experiment::rounds::{per_segment, RoundsPlan};
use crate::experiment::run::Setup;
use crate::experiment::stacks::sampled_as;
use crate::failure::{Failure, RunFailure, UsageError};
use crate::render::text;
use crate::report::{Report, RunConfig};
use crate::workload::Workload;

/// `doppio run`: warmup and measured segments per driver (alternating when two), overhead
/// per driver, then the text report on stdout and the JSON report on disk. Returns the
/// report's path; a fatal error still writes the report of what was measured.
pub fn run(a: &RunArgs, argv: Vec<String>) -> Result<PathBuf, Failure> {
    let (c, r) = (&a.connect, &a.rounds);
    let workload = with_validation(workload_of(c)?, a.validate)?;
    let drivers = c.drivers()?;
    if a.validate && drivers.contains(&Driver::Null) {
        return Err(UsageError::ValidateNull.into());
    }
    let mut options = result_options(&a.connect, &a.results, &drivers)?;
    options.waterfall_every = a.waterfall;
    let started_at = crate::report::now_rfc3339();
    // Every file the run will write, checked before anything connects (the report's
    // default name reserved).
    if let Some(log) = &a.hdr_log {
        check_writable(log, "--hdr-log")?;
    }
    if let Some(prefix) = &a.flamegraph {
        let first = PathBuf::from(format!("{}-{}.svg", prefix.display(), drivers[0].name()));
        check_writable(&first, "--flamegraph")?;
    }
    // At least 1: the option's parser refuses 0 (cli::limits).
    let segments = r.segments.unwrap_or(if drivers.len() > 1 { 2 } else { 1 });
    let cycles = checked_cycles(a, &workload, segments)?;
    // The node's process, when it runs here (--server-pid checked before anything starts).
    let server = server_of(r.server_pid, &options)?;
    // Last of the checks: from here on the report's name is reserved (given back if the
    // run measures nothing).
    let output = ReportPath::choose(a.output.as_deref(), "doppio", &workload.name, &started_at)?;
    let plan = RoundsPlan {
        args: r,
        connect: c,
        workload,
        segments,
        cycles: cycles.map(|c| c.range),
    };
    let heading = Heading {
        argv,
        tag: a.tag.clone(),
        started_at,
    };
    let mut report = new_report(&plan, &drivers, &options, server.as_ref(), heading);
    pacing_of(a, &mut report.config, cycles);
    let setup = Setup {
        drivers: &drivers,
        options: &options,
        server,
    };
    let result = crate::experiment::run::run(a, plan, setup, &mut report);
    conclude(a, report, output, result)
}

/// The `--cycles` or `--loader` range, checked against the phases it bounds: each phase
/// starts at START, so a counted one must fit in the range.
fn checked_cycles(
    a: &RunArgs,
    workload: &Workload,
    segments: usize,
) -> Result<Option<Cycles>, Failure> {
    let cycles = cycles_of(&a.cycles, workload)?;
    if let Some(cy) = &cycles {
        if let Limit::Count(n) = per_segment(a.rounds.duration, segments) {
            cy.check_count("-d (per segment)", n)?;
        }
        if let Limit::Count(n) = a.rounds.warmup {
            cy.check_count("--warmup", n)?;
        }
    }
    Ok(cycles)
}

/// What the rounds of `run` add to the options of its report: its rate (`-r`; with
/// `--equal-load` found before the first round), the release grid when paced, `--cycles`
/// and `--waterfall`.
fn pacing_of(a: &RunArgs, config: &mut RunConfig, cycles: Option<Cycles>) {
    config.rate = a.rate.as_ref().and_then(|r| r.constant());
    config.rate_schedule = a.rate.as_ref().map(|r| r.text().to_owned());
    config.release_grid_s =
        (a.rate.is_some() || a.equal_load.is_some()).then_some(a.rounds.release_grid.as_secs_f64());
    config.cycles = cycles.map(Into::into);
    config.waterfall_every = a.waterfall;
}

/// The run's end: the text report on stdout, the JSON report written (unless the run
/// failed before measuring anything and its name was not given), and the exit's reason: the
/// run's own failure first, then a report that could not be written, then stacks asked for
/// and not made.
fn conclude(
    a: &RunArgs,
    mut report: Report,
    output: ReportPath,
    result: Result<(), Failure>,
) -> Result<PathBuf, Failure> {
    if let Err(e @ Failure::Run(_)) = &result {
        if report.fatal_error.is_none() {
            report.fatal_error = Some(e.to_string());
        }
    }
    print!("{}", text::render(&report, a.log));
    // A run that failed before measuring anything (no node answered, a statement was
    // refused) leaves no report behind, unless one was named with -o.
    let measured = report.backends.values().any(|b| b.throughput.requests > 0);
    if !measured && !output.keeps_unmeasured() {
        if let Err(e) = result {
            output.release();
            eprintln!("no report written: the run failed before measuring anything");
            return Err(e);
        }
    }
    let written = report.write(output.path());
    if written.is_ok() {
        // Printed on every run that wrote its report, failed or interrupted too.
        eprintln!("report written to {}", output.path().display());
    }
    // A report that cannot be written after the run started is a failure of the run; the
    // run's own failure, if any, is the one that counts.
    result?;
    written.map_err(|e| Failure::Run(RunFailure::Report(e)))?;
    // Stacks asked for and not sampled, read back or drawn fail the run once its report is
    // written: its exit code says so, not only a warning (the first reason given).
    if let Some((what, _)) = sampled_as(a) {
        let prefix = format!("no {what}: ");
        if let Some(why) = report.warnings.iter().find_map(|w| w.strip_prefix(&prefix)) {
            let why = why.to_owned();
            return Err(match what {
                "anatomy" => RunFailure::NoAnatomy(why),
                _ => RunFailure::NoFlamegraph(why),
            }
            .into());
        }
    }
    Ok(output.path().to_owned())
}
