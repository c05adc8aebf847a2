//! The experiment of `doppio run` ([`run`]): the backends connected, the live outputs
//! started (`--hdr-log`, `--prometheus`), the node warmed, each backend's capacity probed
//! with `--equal-load`, then the rounds; what they measured added to the report, with the
//! sampled stacks' figures ([`super::stacks`]) and `--validate`'s verdict.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::equal_load::{capacities_text, equal_load};
use super::measure::{Flamegraph, HdrLog, Prometheus, ServerCpu};
use super::round_report::{add_backends, warn_unsampled};
use super::rounds::{Rounds, RoundsPlan, Sampled, Watchers};
use super::stacks::{anatomy_of, flamegraphs_of, fold_stacks, sampled_as};
use crate::backend::{ConnectOptions, Driver};
use crate::cli::RunArgs;
use crate::engine::schedule::RateSchedule;
use crate::failure::{Failure, RunFailure, UsageError};
use crate::probe::flame::Flames;
use crate::probe::server_cpu::ServerProcesses;
use crate::report::{BackendRun, Report, StatementInfo};
use crate::workload::Workload;

/// `doppio run`'s rounds of `plan` with `m`, everything they measured added to `report`
/// (what a failure kept too, with its `fatal_error`); the run's failure, if any, else a
/// failed `--validate`.
pub(crate) fn run(
    a: &RunArgs,
    plan: RoundsPlan<'_>,
    m: Setup<'_>,
    report: &mut Report,
) -> Result<(), Failure> {
    let mut runs: BTreeMap<Driver, BackendRun> = BTreeMap::new();
    let mut flames = Flames::default();
    let result = run_segments(a, plan, m, report, &mut runs, &mut flames);
    // Sampled stacks (--flamegraph, --anatomy), folded once the backends have stopped.
    let folded = fold_stacks(a, report, &flames);
    if let Err(e) = &result {
        report.fatal_error = Some(e.to_string());
    }
    let constant = a.rate.as_ref().and_then(|r| r.constant()).is_some();
    add_backends(report, &runs, constant, a.rounds.concurrency);
    if let (Some((_, sampling)), Some(Ok(folded))) = (sampled_as(a), &folded) {
        anatomy_of(report, folded, &sampling, &flames.recorder_cpu);
        if let Some(prefix) = &a.flamegraph {
            flamegraphs_of(report, prefix, folded);
        }
    }
    warn_unsampled(report, &runs, result.is_ok());
    result.and_then(|()| validation_verdict(report))
}

/// A validated run fails when any backend saw a value that differs or a row that is missing.
fn validation_verdict(report: &Report) -> Result<(), Failure> {
    use crate::engine::ErrorKind;
    if report.config.validated.is_empty() {
        return Ok(());
    }
    let failed: Vec<String> = report
        .backends
        .iter()
        .filter_map(|(name, b)| {
            let count = |k: ErrorKind| {
                b.throughput
                    .errors_by_kind
                    .get(k.as_str())
                    .copied()
                    .unwrap_or(0)
            };
            let (differ, missing) = (count(ErrorKind::InvalidValue), count(ErrorKind::MissingRow));
            (differ + missing > 0)
                .then(|| format!("{name}: {differ} values differ, {missing} rows missing"))
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(RunFailure::Validation(failed).into())
    }
}

/// What `run`'s rounds measure with, besides its options.
pub(crate) struct Setup<'a> {
    /// The backends, in `--driver`'s order.
    pub(crate) drivers: &'a [Driver],
    /// How they connect.
    pub(crate) options: &'a ConnectOptions,
    /// The node's processes, when it runs on this machine.
    pub(crate) server: Option<ServerProcesses>,
}

/// The backends connected, the live outputs started (`--hdr-log`, `--prometheus`), the
/// node warmed, each backend's capacity probed with `--equal-load`, then the rounds; what
/// they measured goes to `runs`, the recorded stacks to `flames`.
fn run_segments(
    a: &RunArgs,
    plan: RoundsPlan<'_>,
    m: Setup<'_>,
    report: &mut Report,
    runs: &mut BTreeMap<Driver, BackendRun>,
    flames: &mut Flames,
) -> Result<(), Failure> {
    let workload = plan.workload.clone();
    let mut rounds = Rounds::connect(plan, m.drivers, m.options, &mut report.config, runs)?;
    if let Some(w) = crate::report::connection_shape::parity(&report.config.connection_shapes) {
        eprintln!("warning: {w}");
        report.warnings.push(w);
    }
    let hdr_log = hdr_log_of(a)?;
    let metrics = prometheus_of(a, &workload)?;
    let mut watch = Watchers {
        hdr_log: Some(hdr_log),
        prometheus: metrics.as_ref().map(Prometheus),
        // --anatomy alone keeps its recordings in the temporary folder until they are
        // folded.
        sampled: sampled_as(a).map(|(what, sampling)| {
            let prefix = a.flamegraph.clone().unwrap_or_else(|| {
                std::env::temp_dir().join(format!("doppio-anatomy-{}", std::process::id()))
            });
            Sampled {
                what,
                recorder: Flamegraph::new(prefix, sampling),
                flames: Flames::default(),
            }
        }),
        server_cpu: m.server.map(ServerCpu::new),
        ..Watchers::default()
    };
    let result = (|| {
        rounds.warm_server()?;
        let mut rate = a.rate.clone().map(Arc::new);
        if let Some(share) = a.equal_load {
            let found = equal_load(share, rounds.capacities()?)?;
            eprintln!(
                "equal load: {:.0} iterations/s, {:.0} % of the slowest capacity ({})",
                found.rate,
                share * 100.0,
                capacities_text(&found.capacities)
            );
            rate = Some(Arc::new(RateSchedule::steady(found.rate)));
            report.config.rate = Some(found.rate);
            report.config.equal_load = Some(found);
        }
        rounds.run(rate, &mut watch, runs, &mut report.warnings)
    })();
    // The backends stop before the live outputs do, and before the stacks are read back.
    drop(rounds);
    if let Some(s) = watch.sampled.take() {
        *flames = s.flames;
    }
    result
}

/// `--hdr-log`: the interval log, created (an empty log without the option).
fn hdr_log_of(a: &RunArgs) -> Result<HdrLog, Failure> {
    let live = match &a.hdr_log {
        Some(path) => Some(
            crate::live_log::LiveHdrLog::create(path, std::time::SystemTime::now()).map_err(
                |source| UsageError::HdrLog {
                    path: path.clone(),
                    source,
                },
            )?,
        ),
        None => None,
    };
    Ok(HdrLog::new(live))
}

/// `--prometheus`: the metrics server of `workload`'s statements, started.
fn prometheus_of(
    a: &RunArgs,
    workload: &Workload,
) -> Result<Option<crate::render::prometheus::MetricsServer>, Failure> {
    let Some(addr) = a.prometheus else {
        return Ok(None);
    };
    let names = StatementInfo::of_workload(workload)
        .into_iter()
        .map(|s| s.name)
        .collect();
    let m = crate::render::prometheus::MetricsServer::start(addr, names)
        .map_err(|source| UsageError::Prometheus { addr, source })?;
    eprintln!("prometheus metrics on http://{}/metrics", m.addr());
    Ok(Some(m))
}
