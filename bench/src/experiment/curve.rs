//! The loads of `doppio curve` ([`run`]): the backends connected once, the node warmed,
//! each backend's capacity probed once, then at each load, in the order given, the rounds
//! at that share of the slowest capacity, each load's report handed to the command as it
//! ends (which writes it). A load that fails or is interrupted keeps what it measured in
//! its report (with its `fatal_error`) and ends the loads; the curve is then drawn from the
//! loads that finished.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::equal_load::{capacities_text, equal_load};
use super::measure::ServerCpu;
use super::round_report::{add_backends, warn_unsampled};
use super::rounds::{Rounds, RoundsPlan, Watchers};
use crate::backend::{ConnectOptions, Driver};
use crate::cli::{limits::Loads, CurveArgs};
use crate::engine::schedule::RateSchedule;
use crate::failure::Failure;
use crate::probe::server_cpu::ServerProcesses;
use crate::report::{EqualLoad, Report};

/// Rounds per load unless `--segments` says otherwise: the VERDICT's paired test wants 5.
pub(crate) const DEFAULT_ROUNDS: usize = crate::report::verdict::ROUNDS_WANTED;

/// What the loads run with, every option checked.
pub(crate) struct CurvePlan<'a> {
    /// The command's options (`--loads`, `-p`).
    pub(crate) a: &'a CurveArgs,
    /// The backends, in `--driver`'s order.
    pub(crate) drivers: Vec<Driver>,
    /// How they connect.
    pub(crate) options: ConnectOptions,
    /// The node's processes, when it runs on this machine.
    pub(crate) server: Option<ServerProcesses>,
    /// What every load's rounds run with.
    pub(crate) plan: RoundsPlan<'a>,
    /// Every load's report before its rounds: the options in force, no rate yet.
    pub(crate) template: Report,
}

/// The loads run: each one's report (with its file's name) as `write` wrote it, in the
/// order run, and how they ended.
pub(crate) fn run(
    p: CurvePlan<'_>,
    write: &mut dyn FnMut(&Report) -> Result<String, Failure>,
) -> (Vec<(String, Report)>, Result<(), Failure>) {
    let mut points = Vec::new();
    let result = run_loads(p, write, &mut points);
    (points, result)
}

/// The backends connected, the node warmed, the capacities probed, then each load's
/// rounds; each load's report (and its file's name) is pushed to `points` once `write` wrote
/// it.
fn run_loads(
    p: CurvePlan<'_>,
    write: &mut dyn FnMut(&Report) -> Result<String, Failure>,
    points: &mut Vec<(String, Report)>,
) -> Result<(), Failure> {
    let CurvePlan {
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
        let written = measured.then(|| write(&report)).transpose();
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
