//! `doppio run`: per backend a warmup and measured segments (alternating between backends
//! when there are several), the driver's overhead around each measured segment, then the text
//! report on stdout and the JSON report on disk.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::failure::{Failure, RunFailure, UsageError};
use super::measure::{Flamegraph, HdrLog, Prometheus, ServerCpu};
use super::round_report::{
    add_backends, capacities_text, equal_load, new_report, server_of, warn_unsampled, Heading,
};
use super::rounds::{per_segment, Plan, Rounds, Sampled, Watchers};
use super::setup::{
    check_writable, cycles_of, result_options, with_validation, workload_of, ReportPath,
};
use crate::backend::{ConnectOptions, Driver};
use crate::cli::RunArgs;
use crate::engine::cycles::Cycles;
use crate::engine::schedule::RateSchedule;
use crate::engine::Limit;
use crate::probe::anatomy::Anatomy;
use crate::probe::flame::{Flames, Sampling};
use crate::probe::server_cpu::ServerProcesses;
use crate::report::{text, AnatomyReport, BackendRun, Report, RunConfig, StatementInfo};
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
    let plan = Plan {
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
    let mut runs: BTreeMap<Driver, BackendRun> = BTreeMap::new();
    let mut flames = Flames::default();
    let setup = Setup {
        drivers: &drivers,
        options: &options,
        server,
    };
    let result = run_segments(a, plan, setup, &mut report, &mut runs, &mut flames);
    // Sampled stacks (--flamegraph, --anatomy), folded once the backends have stopped.
    let folded = fold_stacks(a, &mut report, &flames);
    if let Err(e) = &result {
        report.fatal_error = Some(e.to_string());
    }
    let constant = a.rate.as_ref().and_then(|r| r.constant()).is_some();
    add_backends(&mut report, &runs, constant, r.concurrency);
    if let (Some((_, sampling)), Some(Ok(folded))) = (sampled_as(a), &folded) {
        anatomy_of(&mut report, folded, &sampling, &flames.recorder_cpu);
        if let Some(prefix) = &a.flamegraph {
            flamegraphs_of(&mut report, prefix, folded);
        }
    }
    warn_unsampled(&mut report, &runs, result.is_ok());
    let result = result.and_then(|()| validation_verdict(&report));
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

/// `--flamegraph` or `--anatomy`: the recorded stacks folded (with a warning that the
/// figures include the sampling's perturbation), or why they could not be (a warning too);
/// `None` when the run sampled none.
fn fold_stacks(
    a: &RunArgs,
    report: &mut Report,
    flames: &Flames,
) -> Option<Result<BTreeMap<String, Vec<u8>>, String>> {
    let (what, sampling) = sampled_as(a)?;
    report.warnings.push(format!(
        "sampled run ({}): CPU and syscall figures include its perturbation",
        sampling.describe()
    ));
    if !a.connect.quiet {
        eprintln!("reading back the sampled stacks (perf script): this takes a while");
    }
    Some(flames.fold().map_err(|e| {
        let why = format!("no {what}: {e}");
        report.warnings.push(why.clone());
        why
    }))
}

/// `--flamegraph`: the flamegraphs drawn, and where each backend's folded stacks are (for
/// `show --flamediff`); a failure to draw them is a warning.
fn flamegraphs_of(
    report: &mut Report,
    prefix: &std::path::Path,
    folded: &BTreeMap<String, Vec<u8>>,
) {
    match draw_flamegraphs(prefix, folded, report) {
        Ok(files) => {
            for f in files {
                eprintln!("flamegraph written to {}", f.display());
            }
            for (driver, b) in report.backends.iter_mut() {
                if let Some(a) = b.anatomy.as_mut().filter(|_| folded.contains_key(driver)) {
                    let path = crate::probe::flame::folded_path(prefix, driver);
                    // Absolute, so that `show` finds it from any folder.
                    let path = std::fs::canonicalize(&path).unwrap_or(path);
                    a.folded = Some(path.display().to_string());
                }
            }
        }
        Err(e) => report.warnings.push(format!("no flamegraph: {e}")),
    }
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

/// Whether the run samples its stacks, named as its failures are (`flamegraph`,
/// `anatomy`), and how densely.
fn sampled_as(a: &RunArgs) -> Option<(&'static str, Sampling)> {
    match (&a.flamegraph, a.anatomy) {
        (Some(_), _) => Some(("flamegraph", Sampling::FLAMEGRAPH)),
        (None, true) => Some(("anatomy", Sampling::ANATOMY)),
        (None, false) => None,
    }
}

/// Each backend's CPU per request split by layer, from its folded stacks.
fn anatomy_of(
    report: &mut Report,
    folded: &BTreeMap<String, Vec<u8>>,
    sampling: &Sampling,
    recorder_cpu: &BTreeMap<String, std::time::Duration>,
) {
    for (driver, stacks) in folded {
        if let Some(b) = report.backends.get_mut(driver) {
            let anatomy = Anatomy::from_folded(&String::from_utf8_lossy(stacks));
            b.anatomy = Some(AnatomyReport::new(
                &anatomy,
                sampling,
                b.client_cpu.cpu_us_per_req,
                b.throughput.requests,
                recorder_cpu.get(driver).copied(),
            ));
        }
    }
}

/// `--flamegraph`: each backend's flamegraph, and a differential one of CPU per request for
/// each pair of backends that measured requests (the later in `--driver` against the
/// earlier).
fn draw_flamegraphs(
    prefix: &std::path::Path,
    folded: &BTreeMap<String, Vec<u8>>,
    report: &Report,
) -> Result<Vec<PathBuf>, crate::probe::flame::FlameError> {
    let mut files = crate::probe::flame::draw(prefix, folded)?;
    let measured: Vec<(&str, &[u8], u64)> = report
        .config
        .drivers
        .iter()
        .filter_map(|d| {
            let requests = report.backends.get(d)?.throughput.requests;
            let stacks = folded.get(d)?;
            (requests > 0).then_some((d.as_str(), stacks.as_slice(), requests))
        })
        .collect();
    for (i, a) in measured.iter().enumerate() {
        for b in &measured[i + 1..] {
            files.push(crate::probe::flame::draw_differential(prefix, *a, *b)?);
        }
    }
    Ok(files)
}

/// A validated run fails when any backend saw a value that differs or a row that is missing.
fn validation_verdict(report: &Report) -> Result<(), Failure> {
    use crate::engine::validate::{MISMATCH, MISSING};
    if report.config.validated.is_empty() {
        return Ok(());
    }
    let failed: Vec<String> = report
        .backends
        .iter()
        .filter_map(|(name, b)| {
            let count = |k: &str| b.throughput.errors_by_kind.get(k).copied().unwrap_or(0);
            let (differ, missing) = (count(MISMATCH), count(MISSING));
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
struct Setup<'a> {
    /// The backends, in `--driver`'s order.
    drivers: &'a [Driver],
    /// How they connect.
    options: &'a ConnectOptions,
    /// The node's processes, when it runs on this machine.
    server: Option<ServerProcesses>,
}

/// The backends connected, the live outputs started (`--hdr-log`, `--prometheus`), the
/// node warmed, each backend's capacity probed with `--equal-load`, then the rounds; what
/// they measured goes to `runs`, the recorded stacks to `flames`.
fn run_segments(
    a: &RunArgs,
    plan: Plan<'_>,
    m: Setup<'_>,
    report: &mut Report,
    runs: &mut BTreeMap<Driver, BackendRun>,
    flames: &mut Flames,
) -> Result<(), Failure> {
    let workload = plan.workload.clone();
    let mut rounds = Rounds::connect(plan, m.drivers, m.options, &mut report.config, runs)?;
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
) -> Result<Option<crate::metrics_server::MetricsServer>, Failure> {
    let Some(addr) = a.prometheus else {
        return Ok(None);
    };
    let names = StatementInfo::of_workload(workload)
        .into_iter()
        .map(|s| s.name)
        .collect();
    let m = crate::metrics_server::MetricsServer::start(addr, names)
        .map_err(|source| UsageError::Prometheus { addr, source })?;
    eprintln!("prometheus metrics on http://{}/metrics", m.addr());
    Ok(Some(m))
}
