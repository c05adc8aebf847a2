//! `doppio run`: per backend a warmup and measured segments (alternating between backends
//! when there are several), the driver's overhead around each measured segment, then the text
//! report on stdout and the JSON report on disk.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::failure::{Failure, RunFailure, UsageError};
use super::measure::{
    ended, unrecorded, warm_then_measure, Flamegraph, Hardware, HdrLog, Observer, Prometheus,
    ServerCpu, Stretch,
};
use super::setup::{
    check_writable, cycles_of, result_options, with_validation, workload_of, ReportPath,
};
use crate::anatomy::Anatomy;
use crate::backend::{self, Backend, ConnectOptions, Driver, TlsOptions};
use crate::cli::RunArgs;
use crate::engine::cycles::CycleRange;
use crate::engine::drive::PhaseOutcome;
use crate::engine::grid::ReleaseGrid;
use crate::engine::order::Order;
use crate::engine::phase::{Phase, PhaseSpec, SAMPLE_BACKLOG};
use crate::engine::schedule::RateSchedule;
use crate::engine::spill::SpilledSamples;
use crate::engine::Limit;
use crate::flame::Sampling;
use crate::progress::Progress;
use crate::report::{
    text, AnatomyReport, BackendRun, EqualLoad, Report, RunConfig, StatementInfo, WorkloadInfo,
    SCHEMA_VERSION,
};
use crate::server_cpu::ServerProcesses;
use crate::workload::Workload;

/// Splits a phase limit across `segments`.
fn per_segment(limit: Limit, segments: usize) -> Limit {
    let n = segments.max(1);
    match limit {
        Limit::Time(d) => Limit::Time(d / n as u32),
        Limit::Count(c) => Limit::Count(c.div_ceil(n as u64)),
    }
}

/// `doppio run`: warmup and measured segments per driver (alternating when two), overhead
/// per driver, then the text report on stdout and the JSON report on disk. Returns the
/// report's path; a fatal error still writes the report of what was measured.
pub fn run(a: &RunArgs, argv: Vec<String>) -> Result<PathBuf, Failure> {
    let c = &a.connect;
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
    let segments = a.segments.unwrap_or(if drivers.len() > 1 { 2 } else { 1 });
    let cycles = cycles_of(&a.cycles, &workload)?;
    if let Some(cy) = &cycles {
        // Each phase starts at START: a counted one must fit in the range.
        if let Limit::Count(n) = per_segment(a.duration, segments) {
            cy.check_count("-d (per segment)", n)?;
        }
        if let Limit::Count(n) = a.warmup {
            cy.check_count("--warmup", n)?;
        }
    }
    // The node's process, when it runs here (--server-pid checked before anything starts).
    let server = match a.server_pid {
        Some(pid) => Some(ServerProcesses::given(pid).map_err(UsageError::from)?),
        None => ServerProcesses::listening_on(&options.nodes),
    };
    // Last of the checks: from here on the report's name is reserved (given back if the
    // run measures nothing).
    let output = ReportPath::choose(a.output.as_deref(), "doppio", &workload.name, &started_at)?;
    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        tool: format!("doppio-bench {}", env!("CARGO_PKG_VERSION")),
        tag: a.tag.clone(),
        started_at,
        command: argv,
        workload: WorkloadInfo {
            name: workload.name.clone(),
            description: workload.description.clone(),
            params: workload.params.iter().cloned().collect(),
            statements: workload.run.iter().map(|s| s.cql.clone()).collect(),
        },
        config: RunConfig {
            nodes: options.nodes.iter().map(ToString::to_string).collect(),
            drivers: drivers.iter().map(|d| d.name().to_owned()).collect(),
            duration: a.duration.to_string(),
            warmup: a.warmup.to_string(),
            concurrency: a.concurrency,
            threads: options.threads,
            connections: options.connections,
            rate: a.rate.as_ref().and_then(|r| r.constant()),
            rate_schedule: a.rate.as_ref().map(|r| r.text().to_owned()),
            release_grid_s: (a.rate.is_some() || a.equal_load.is_some())
                .then_some(a.release_grid.as_secs_f64()),
            sample_interval_s: a.interval.as_secs_f64(),
            consistency: options.consistency.name().to_owned(),
            request_timeout_s: options.request_timeout.as_secs_f64(),
            retries: options.retries,
            compression: options.compression.name().to_owned(),
            segments,
            username: options.username.clone(),
            spin_before_park_us: options.spin_before_park.map(|d| d.as_secs_f64() * 1e6),
            page_size: Some(a.results.page_size),
            discard_results: a.results.discard_results,
            validated: workload
                .run
                .iter()
                .filter(|s| s.validate.is_some())
                .map(|s| s.name.clone())
                .collect(),
            cycles: cycles.map(Into::into),
            serial_consistency: Some(options.serial_consistency.name().to_owned()),
            idempotent: workload
                .run
                .iter()
                .filter(|s| s.idempotent)
                .map(|s| s.name.clone())
                .collect(),
            datacenter: options.locality.datacenter.clone(),
            rack: options.locality.rack.clone(),
            retry_backoff: options.retry_backoff.map(|b| b.describe()),
            thread_cores: BTreeMap::new(),
            protocol: options.protocol,
            protocol_versions: BTreeMap::new(),
            tls: options.tls.as_ref().map(TlsOptions::describe),
            sqpoll: drivers.contains(&Driver::DoppioUringSqpoll).then_some(
                crate::report::SqPollConfig {
                    idle_ms: options.sqpoll.idle.as_millis() as u64,
                    cpu: options.sqpoll.cpu,
                },
            ),
            uring_setup: BTreeMap::new(),
            order: Some(a.order.name().to_owned()),
            rounds: (0..segments)
                .map(|r| {
                    a.order
                        .round(drivers.len(), r)
                        .map(|i| drivers[i].name().to_owned())
                        .collect()
                })
                .collect(),
            server_warmup: (!a.server_warmup.is_zero()).then(|| format!("{:?}", a.server_warmup)),
            server_pids: server.as_ref().map_or_else(Vec::new, |s| s.pids.clone()),
            server_cores: server.as_ref().map(|s| s.cores),
            // Found before the first round (run_segments).
            equal_load: None,
            syscalls: Some(a.syscalls.name().to_owned()),
            waterfall_every: a.waterfall,
        },
        fatal_error: None,
        warnings: Vec::new(),
        backends: BTreeMap::new(),
        merged_from: None,
        environment: Some(crate::environment::Environment::here()),
    };
    let mut runs: BTreeMap<Driver, BackendRun> = BTreeMap::new();
    let mut flames = crate::flame::Flames::default();
    let result = run_segments(
        a,
        &workload,
        &drivers,
        &options,
        Rounds {
            segments,
            cycles: cycles.map(|c| c.range),
            server,
        },
        Collected {
            runs: &mut runs,
            warnings: &mut report.warnings,
            flames: &mut flames,
            thread_cores: &mut report.config.thread_cores,
            protocol_versions: &mut report.config.protocol_versions,
            uring_setup: &mut report.config.uring_setup,
            equal_load: &mut report.config.equal_load,
        },
    );
    if let Some(e) = &report.config.equal_load {
        report.config.rate = Some(e.rate);
    }
    // Sampled stacks (--flamegraph, --anatomy), folded once the backends have stopped.
    let sampled = sampled_as(a);
    let folded = sampled.map(|(what, sampling)| {
        report.warnings.push(format!(
            "sampled run ({}): CPU and syscall figures include its perturbation",
            sampling.describe()
        ));
        if !a.connect.quiet {
            eprintln!("reading back the sampled stacks (perf script): this takes a while");
        }
        flames.fold().map_err(|e| {
            let why = format!("no {what}: {e}");
            report.warnings.push(why.clone());
            why
        })
    });
    if let Err(e) = &result {
        report.fatal_error = Some(e.to_string());
    }
    for (driver, r) in &runs {
        let entry = r.report(driver.name());
        if let (Some(rate), true) = (entry.mean_target_rps(), entry.elapsed_s > 0.0) {
            if entry.throughput_rps < 0.95 * rate {
                let needed = rate * entry.latency_ns.mean / 1e9;
                let what = match a.rate.as_ref().and_then(|r| r.constant()) {
                    Some(_) => format!("the rate of {rate:.0} req/s"),
                    None => format!("the schedule's mean rate of {rate:.0} req/s"),
                };
                report.warnings.push(format!(
                    "{}: {what} was not reached ({:.0} req/s); at the \
                     measured mean latency it needs a concurrency of about {:.0} (-p is {})",
                    driver.name(),
                    entry.throughput_rps,
                    needed.ceil(),
                    a.concurrency
                ));
            }
        }
        report.backends.insert(driver.name().to_owned(), entry);
    }
    if let (Some((_, sampling)), Some(Ok(folded))) = (sampled, &folded) {
        anatomy_of(&mut report, folded, &sampling, &flames.recorder_cpu);
        if let Some(prefix) = &a.flamegraph {
            match draw_flamegraphs(prefix, folded, &report) {
                Ok(files) => {
                    for f in files {
                        eprintln!("flamegraph written to {}", f.display());
                    }
                    // Where each backend's stacks are, for `show --flamediff`.
                    for (driver, b) in report.backends.iter_mut() {
                        if let Some(a) = b.anatomy.as_mut().filter(|_| folded.contains_key(driver))
                        {
                            let path = crate::flame::folded_path(prefix, driver);
                            // Absolute, so that `show` finds it from any folder.
                            let path = std::fs::canonicalize(&path).unwrap_or(path);
                            a.folded = Some(path.display().to_string());
                        }
                    }
                }
                Err(e) => report.warnings.push(format!("no flamegraph: {e}")),
            }
        }
    }
    if runs
        .values()
        .any(|r| r.segments.iter().all(SpilledSamples::is_empty))
        && result.is_ok()
    {
        report
            .warnings
            .push("a backend completed no sample: the run was too short".into());
    }
    let result = result.and_then(|()| validation_verdict(&report));
    if let Err(e @ Failure::Run(_)) = &result {
        if report.fatal_error.is_none() {
            report.fatal_error = Some(e.to_string());
        }
    }
    print!("{}", text::render(&report, a.log));
    // A run that failed before measuring anything (no node answered, a statement was
    // refused) leaves no report behind, unless one was named with -o.
    let measured = report.backends.values().any(|b| b.requests > 0);
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
    if let Some((what, _)) = sampled {
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
                b.cpu_us_per_req,
                b.requests,
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
) -> Result<Vec<PathBuf>, crate::flame::FlameError> {
    let mut files = crate::flame::draw(prefix, folded)?;
    let measured: Vec<(&str, &[u8], u64)> = report
        .config
        .drivers
        .iter()
        .filter_map(|d| {
            let requests = report.backends.get(d)?.requests;
            let stacks = folded.get(d)?;
            (requests > 0).then_some((d.as_str(), stacks.as_slice(), requests))
        })
        .collect();
    for (i, a) in measured.iter().enumerate() {
        for b in &measured[i + 1..] {
            files.push(crate::flame::draw_differential(prefix, *a, *b)?);
        }
    }
    Ok(files)
}

/// Capacity probes per backend for `--equal-load` (each backend's capacity is its best).
const PROBE_ROUNDS: usize = 2;

/// `--equal-load SHARE`: each backend's capacity (the best of [`PROBE_ROUNDS`] unrecorded
/// probes at full speed, `probe` each, in rotated order: a node's passing slowdown, a
/// collection or a flush, only ever lowers a probe, and one probe that met it would set the
/// rate of the whole run), and the rate every segment then runs at: `share` of the slowest.
/// `started`: whether a phase has run (set once a probe has).
fn equal_load_of(
    a: &RunArgs,
    workload: &Arc<Workload>,
    backends: &[(Driver, Arc<dyn Backend>)],
    share: f64,
    probe: impl Fn() -> PhaseSpec,
    started: &mut bool,
) -> Result<EqualLoad, Failure> {
    let mut capacities: BTreeMap<String, f64> = BTreeMap::new();
    for round in 0..PROBE_ROUNDS {
        for k in Order::Rotate.round(backends.len(), round) {
            let b = &backends[k];
            let outcome = before_rounds(a, workload, b, probe(), "capacity probe", started)?;
            let secs = outcome.elapsed.as_secs_f64();
            let capacity = if secs > 0.0 {
                outcome.iterations as f64 / secs
            } else {
                0.0
            };
            let best = capacities.entry(b.0.name().to_owned()).or_insert(0.0);
            *best = best.max(capacity);
        }
    }
    let rate = capacities
        .values()
        .fold(f64::INFINITY, |r, c| r.min(share * c));
    if !(rate.is_finite() && rate > 0.0) {
        return Err(RunFailure::NoCapacity(capacities).into());
    }
    eprintln!(
        "equal load: {rate:.0} iterations/s, {:.0} % of the slowest capacity ({})",
        share * 100.0,
        capacities
            .iter()
            .map(|(d, c)| format!("{d} {c:.0}/s"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(EqualLoad {
        share,
        capacities,
        rate,
    })
}

/// An unrecorded phase of `b` before the first round, `what` it is (`server warmup`, the
/// workload run with the first backend so that no segment meets a cold node; `capacity
/// probe`, a backend at full speed for `--equal-load`), through [`unrecorded`].
fn before_rounds(
    a: &RunArgs,
    workload: &Arc<Workload>,
    (driver, b): &(Driver, Arc<dyn Backend>),
    spec: PhaseSpec,
    what: &'static str,
    started: &mut bool,
) -> Result<PhaseOutcome, Failure> {
    let label = format!("{what} ({})", driver.name());
    let progress = Progress::new(
        a.connect.quiet,
        &label,
        spec.limit,
        a.connect.progress_every,
    );
    unrecorded(b, workload, spec, progress, what, started)
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
            let count = |k: &str| b.errors_by_kind.get(k).copied().unwrap_or(0);
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

/// What the segments of a run produce, besides its outcome.
struct Collected<'a> {
    runs: &'a mut BTreeMap<Driver, BackendRun>,
    warnings: &'a mut Vec<String>,
    flames: &'a mut crate::flame::Flames,
    /// The cores each connected backend pinned its request threads to.
    thread_cores: &'a mut BTreeMap<String, Vec<usize>>,
    /// The CQL protocol version each connected backend speaks.
    protocol_versions: &'a mut BTreeMap<String, u8>,
    /// The io_uring setup flags of each backend on doppio's own runtime.
    uring_setup: &'a mut BTreeMap<String, String>,
    /// `--equal-load`: the capacities found and the rate every segment ran at.
    equal_load: &'a mut Option<EqualLoad>,
}

/// The rounds a run's segments make, and what each one watches besides the client.
struct Rounds {
    /// Segments per backend (rounds).
    segments: usize,
    /// The iteration numbers every phase draws from.
    cycles: Option<CycleRange>,
    /// The node's processes, when it runs on this machine.
    server: Option<ServerProcesses>,
}

fn run_segments(
    a: &RunArgs,
    workload: &Arc<Workload>,
    drivers: &[Driver],
    options: &ConnectOptions,
    rounds: Rounds,
    out: Collected<'_>,
) -> Result<(), Failure> {
    let Rounds {
        segments,
        cycles,
        server,
    } = rounds;
    let Collected {
        runs,
        warnings,
        flames,
        thread_cores,
        protocol_versions,
        uring_setup,
        equal_load,
    } = out;
    let mut backends: Vec<(Driver, Arc<dyn Backend>)> = Vec::new();
    for &d in drivers {
        let b = backend::connect(d, options).map_err(Failure::Start)?;
        thread_cores.insert(d.name().to_owned(), b.thread_cores());
        if let Some(v) = b.protocol_version() {
            protocol_versions.insert(d.name().to_owned(), v);
        }
        if let Some(f) = b.uring_setup_flags() {
            uring_setup.insert(d.name().to_owned(), f);
        }
        backends.push((d, b));
        runs.insert(
            d,
            BackendRun {
                rows_counted: true,
                statement_info: StatementInfo::of_workload(workload),
                ..BackendRun::default()
            },
        );
    }
    let measured = per_segment(a.duration, segments);
    let live_log = match &a.hdr_log {
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
    let mut hdr_log = HdrLog::new(live_log);
    let metrics = match a.prometheus {
        Some(addr) => {
            let names = StatementInfo::of_workload(workload)
                .into_iter()
                .map(|s| s.name)
                .collect();
            let m = crate::metrics_server::MetricsServer::start(addr, names)
                .map_err(|source| UsageError::Prometheus { addr, source })?;
            eprintln!("prometheus metrics on http://{}/metrics", m.addr());
            Some(m)
        }
        None => None,
    };
    let mut prometheus = metrics.as_ref().map(Prometheus);
    // --anatomy alone keeps its recordings in the temporary folder until they are folded.
    let mut flamegraph = sampled_as(a).map(|(_, sampling)| {
        let prefix = a.flamegraph.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("doppio-anatomy-{}", std::process::id()))
        });
        Flamegraph::new(prefix, sampling)
    });
    let mut server_cpu = server.map(ServerCpu::new);
    let mut hardware = Hardware::default();
    let warmup = !matches!(a.warmup, Limit::Time(d) if d.is_zero()) && a.warmup != Limit::Count(0);
    // Whether a phase has run: until then, statements that cannot be prepared are a bad
    // workload (the run could not start), after it a failure of the run.
    let mut started = false;
    let spec = |limit: Limit, record: bool, rate: &Option<Arc<RateSchedule>>| PhaseSpec {
        phase: Phase::Run,
        concurrency: a.concurrency,
        rate: rate.clone(),
        grid: ReleaseGrid::new(a.release_grid),
        limit,
        interval: a.interval,
        record,
        max_outage: a.connect.outage_limit(),
        cycles,
    };
    let mut rate = a.rate.clone().map(Arc::new);
    let result = (|| {
        if !a.server_warmup.is_zero() {
            let warm = spec(Limit::Time(a.server_warmup), false, &None);
            before_rounds(
                a,
                workload,
                &backends[0],
                warm,
                "server warmup",
                &mut started,
            )?;
        }
        if let Some(share) = a.equal_load {
            let probe = || spec(measured, false, &None);
            let found = equal_load_of(a, workload, &backends, share, probe, &mut started)?;
            rate = Some(Arc::new(RateSchedule::steady(found.rate)));
            *equal_load = Some(found);
        }
        for segment in 0..segments {
            for (position, k) in a.order.round(backends.len(), segment).enumerate() {
                let (driver, b) = &backends[k];
                if crate::interrupt::interrupted() {
                    return Err(Failure::Interrupted);
                }
                let run = runs.entry(*driver).or_default();
                let stretch = Stretch {
                    backend: b,
                    workload,
                    // Warmup: same workload, nothing recorded.
                    warmup: warmup.then(|| spec(a.warmup, false, &rate)),
                    measured: spec(measured, true, &rate),
                    warmup_label: format!("{} warmup", driver.name()),
                    label: if segments > 1 {
                        format!("{} {}/{}", driver.name(), segment + 1, segments)
                    } else {
                        driver.name().to_owned()
                    },
                    warmup_name: "the warmup",
                    quiet: a.connect.quiet,
                    progress_every: a.connect.progress_every,
                    meter: Some(a.syscalls),
                    counters: true,
                };
                if let Some(f) = &mut flamegraph {
                    f.segment = segment;
                }
                let mut observers: Vec<&mut dyn Observer> = vec![&mut hdr_log];
                if let Some(p) = &mut prometheus {
                    observers.push(p);
                }
                if let Some(f) = &mut flamegraph {
                    observers.push(f);
                }
                if let Some(s) = &mut server_cpu {
                    observers.push(s);
                }
                observers.push(&mut hardware);
                let done = warm_then_measure(stretch, &mut started, &mut observers)?;
                if let Some(e) = hdr_log.failed() {
                    warnings.push(format!("--hdr-log stopped: {e}"));
                }
                if let Some(f) = &mut flamegraph {
                    let what = sampled_as(a).map_or("flamegraph", |(what, _)| what);
                    for e in f.failures.drain(..) {
                        warnings.push(format!("no {what}: {e}"));
                    }
                    for (d, stopped) in f.recorded.drain(..) {
                        flames.add(d.name(), stopped);
                    }
                }
                let outcome = done.outcome.map_err(|e| Failure::of_phase(e, started))?;
                for w in &outcome.failed_workers {
                    warnings.push(format!("{}: {w}", driver.name()));
                }
                if outcome.stalled.times > 0 {
                    warnings.push(format!(
                        "{}: workers waited {:.1} ms in {} sends for the coordinator to take \
                         their samples (it fell {} samples behind); requests in flight waited \
                         too: use a longer --sample interval",
                        driver.name(),
                        outcome.stalled.waited.as_secs_f64() * 1e3,
                        outcome.stalled.times,
                        SAMPLE_BACKLOG,
                    ));
                }
                if let Some(cost) = &done.cost {
                    run.add_cost(cost);
                }
                if let Some(counted) = hardware.last.take() {
                    run.add_hardware(counted);
                }
                run.mark_segment(
                    segment,
                    position,
                    done.cost.as_ref(),
                    server_cpu.as_mut().and_then(|s| s.last.take()),
                );
                if let Some((before, after)) = &done.counters {
                    run.add_counters(before, after, &outcome.requests_by_node);
                }
                let aborted = outcome.aborted.clone();
                // Everything measured so far is in `runs` before the segment's end is judged:
                // the report keeps it.
                run.add_phase(outcome);
                ended(*driver, aborted)?;
            }
        }
        Ok::<(), Failure>(())
    })();
    for (_, b) in &backends {
        b.shutdown();
    }
    result
}
