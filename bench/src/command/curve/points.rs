//! The loads of `doppio curve`: its options checked ([`prepare`]), then ([`run`]) the
//! backends connected once, the node warmed, each backend's capacity probed once, then at
//! each load, in the order given, the rounds at that share of the slowest capacity, each
//! load's report written as it ends (JSON and the text `doppio run` prints). A load that fails or is interrupted keeps what it measured
//! in its report (with its `fatal_error`) and ends the command; the curve is then drawn
//! from the loads that finished.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::super::failure::{Failure, RunFailure, UsageError};
use super::super::measure::ServerCpu;
use super::super::round_report::{
    add_backends, capacities_text, equal_load, new_report, server_of, warn_unsampled, Heading,
};
use super::super::rounds::{Plan, Rounds, Watchers};
use super::super::setup::{result_options, with_validation, workload_of};
use crate::backend::{ConnectOptions, Driver};
use crate::cli::{limits::Loads, CurveArgs};
use crate::engine::schedule::RateSchedule;
use crate::probe::server_cpu::ServerProcesses;
use crate::report::file::write_text;
use crate::report::{text, EqualLoad, Report};

/// Rounds per load unless `--segments` says otherwise: the VERDICT's paired test wants 5.
pub(crate) const DEFAULT_ROUNDS: usize = crate::report::verdict::ROUNDS_WANTED;

/// What the loads run with, every option checked.
pub(super) struct Prepared<'a> {
    a: &'a CurveArgs,
    drivers: Vec<Driver>,
    options: ConnectOptions,
    server: Option<ServerProcesses>,
    plan: Plan<'a>,
    /// Every load's report before its rounds: the options in force, no rate yet.
    template: Report,
}

/// Every check of `a` that needs no folder and no connection: workload, drivers, the
/// connection options, `--server-pid`.
pub(super) fn prepare(a: &CurveArgs, argv: Vec<String>) -> Result<Prepared<'_>, Failure> {
    let c = &a.connect;
    let workload = with_validation(workload_of(c)?, false)?;
    let drivers = c.drivers()?;
    if drivers.is_empty() {
        return Err(UsageError::NoDriver.into());
    }
    let options = result_options(c, &a.results, &drivers)?;
    let started_at = crate::report::now_rfc3339();
    let server = server_of(a.rounds.server_pid, &options)?;
    let plan = Plan {
        args: &a.rounds,
        connect: c,
        workload,
        segments: a.rounds.segments.unwrap_or(DEFAULT_ROUNDS),
        cycles: None,
    };
    let heading = Heading {
        argv,
        tag: a.tag.clone(),
        started_at,
    };
    let mut template = new_report(&plan, &drivers, &options, server.as_ref(), heading);
    // Every load is paced: the grid is in force at each.
    template.config.release_grid_s = Some(a.rounds.release_grid.as_secs_f64());
    Ok(Prepared {
        a,
        drivers,
        options,
        server,
        plan,
        template,
    })
}

/// The loads run: each one's report (with its file's name) as written, in the order run,
/// and how they ended.
pub(super) fn run(p: Prepared<'_>) -> (Vec<(String, Report)>, Result<(), Failure>) {
    let mut points = Vec::new();
    let result = run_loads(p, &mut points);
    (points, result)
}

/// The backends connected, the node warmed, the capacities probed, then each load's
/// rounds; each load's report (and its file's name) is pushed to `points` once written.
fn run_loads(p: Prepared<'_>, points: &mut Vec<(String, Report)>) -> Result<(), Failure> {
    let Prepared {
        a,
        drivers,
        options,
        server,
        plan,
        mut template,
    } = p;
    let mut runs = BTreeMap::new();
    let mut rounds = Rounds::connect(plan, &drivers, &options, &mut template.config, &mut runs)?;
    let mut watch = Watchers {
        server_cpu: server.map(ServerCpu::new),
        ..Watchers::default()
    };
    rounds.warm_server()?;
    let capacities = rounds.capacities()?;
    eprintln!("capacities: {}", capacities_text(&capacities));
    for &share in &a.loads.0 {
        if crate::interrupt::interrupted() {
            return Err(Failure::Interrupted);
        }
        let e = equal_load(share, capacities.clone())?;
        eprintln!(
            "load {} %: {:.0} iterations/s",
            Loads::percent(share),
            e.rate
        );
        let (report, result) = one_load(&mut rounds, &mut watch, &template, e, a);
        // A load that measured nothing (stopped before its first segment) leaves no report.
        let measured = report.backends.values().any(|b| b.throughput.requests > 0);
        let written = measured.then(|| write_load(&a.out, &report)).transpose();
        if let Ok(Some(name)) = &written {
            points.push((name.clone(), report));
        }
        // The load's own failure is the one that counts, then a report not written.
        result?;
        written?;
    }
    Ok(())
}

/// One load's rounds at `e`'s rate, and its report (with its `fatal_error` when they
/// failed, beside the failure).
fn one_load(
    rounds: &mut Rounds<'_>,
    watch: &mut Watchers<'_>,
    template: &Report,
    e: EqualLoad,
    a: &CurveArgs,
) -> (Report, Result<(), Failure>) {
    let mut report = template.clone();
    report.started_at = crate::report::now_rfc3339();
    report.config.rate = Some(e.rate);
    let rate = Arc::new(RateSchedule::steady(e.rate));
    report.config.equal_load = Some(e);
    let mut runs = rounds.empty_runs();
    let result = rounds.run(Some(rate), watch, &mut runs, &mut report.warnings);
    if let Err(e) = &result {
        report.fatal_error = Some(e.to_string());
    }
    add_backends(&mut report, &runs, true, a.rounds.concurrency);
    warn_unsampled(&mut report, &runs, result.is_ok());
    (report, result)
}

/// Writes a load's report to `dir` as `load-PERCENT.json` and its text as `.txt`; the
/// JSON file's name.
fn write_load(dir: &Path, report: &Report) -> Result<String, Failure> {
    let share = report.config.equal_load.as_ref().map_or(0.0, |e| e.share);
    let stem = format!("load-{}", Loads::percent(share));
    let json = dir.join(format!("{stem}.json"));
    let txt = dir.join(format!("{stem}.txt"));
    let failed = |e| Failure::Run(RunFailure::Report(e));
    report.write(&json).map_err(failed)?;
    write_text(&txt, text::render(report, false)).map_err(failed)?;
    eprintln!(
        "load report written to {} and {}",
        json.display(),
        txt.display()
    );
    Ok(format!("{stem}.json"))
}
