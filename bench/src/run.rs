//! What the subcommands do: connect, run phases, measure the driver's overhead around each
//! measured segment, and write reports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::{
    self, Backend, BackendError, ConnectOptions, Driver, Locality, Phase, PhaseError, PhaseSpec,
    SettingError, TlsOptions,
};
use crate::cli::{Connect, CyclesArgs, LoadArgs, ResultArgs, RunArgs};
use crate::engine::cycles::{CycleRange, Cycles, CyclesError};
use crate::engine::spill::SpilledSamples;
use crate::engine::statements::merge_totals;
use crate::engine::Limit;
use crate::overhead::Meter;
use crate::progress::Progress;
use crate::report::merge::MergeError;
use crate::report::{
    text, BackendRun, Report, RunConfig, StatementInfo, WorkloadInfo, SCHEMA_VERSION,
};
use crate::workload::{Workload, WorkloadError};

/// A failure that ends a subcommand. [`Failure::exit_code`] maps it to the exit codes the
/// README states: 2 when the command could not start (bad arguments or workload, a node that
/// cannot be reached, a refused login, an unreadable input file), 1 when a started run
/// failed (the node went away, a phase failed, the report could not be written).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Arguments or options that do not make sense (a bad `-P`, an unknown driver, a node
    /// name that does not resolve).
    #[error("{0}")]
    Usage(String),
    /// The workload could not be read or compiled.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A backend could not connect, log in, or prepare the workload's statements; nothing
    /// was measured.
    #[error(transparent)]
    Start(BackendError),
    /// A statement of the schema was refused.
    #[error(transparent)]
    Schema(BackendError),
    /// An input file (a report, a folder) could not be read or written.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A histogram in a report could not be decoded or written.
    #[error(transparent)]
    Histogram(#[from] crate::stats::StatsError),
    /// The run (or load) started and then failed; what was measured is kept.
    #[error("{0}")]
    Run(String),
    /// `--cycles` or `--loader` cannot be used as given.
    #[error(transparent)]
    Cycles(#[from] CyclesError),
    /// Reports that cannot be merged.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// A driver setting is malformed, or one of the chosen backends cannot honour it.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// Ctrl-C or SIGTERM stopped the command; what was measured is kept.
    #[error("interrupted")]
    Interrupted,
}

impl Failure {
    /// Exit code of a command that could not start.
    pub const INPUT: u8 = 2;
    /// Exit code of a run that started and failed.
    pub const RUN: u8 = 1;

    /// The process's exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Run(_) => Self::RUN,
            Failure::Interrupted => crate::interrupt::EXIT_CODE,
            Failure::Usage(_)
            | Failure::Workload(_)
            | Failure::Start(_)
            | Failure::Schema(_)
            | Failure::Input(_)
            | Failure::Io(_)
            | Failure::Histogram(_)
            | Failure::Cycles(_)
            | Failure::Merge(_)
            | Failure::Setting(_) => Self::INPUT,
        }
    }

    /// A failure of a started run.
    pub fn run(message: impl std::fmt::Display) -> Self {
        Failure::Run(message.to_string())
    }

    /// A phase's failure: one whose statements could not be prepared before anything of
    /// this command ran could not start; any other is a failure of the started run.
    pub(crate) fn of_phase(e: PhaseError, started: bool) -> Self {
        match e {
            PhaseError::Prepare(e) if !started => Failure::Start(e),
            PhaseError::Prepare(e) | PhaseError::Run(e) => Failure::run(e),
        }
    }
}

/// The connection options of `c`, checked against every backend of `drivers` (a setting one
/// of them cannot honour is refused before anything connects).
pub(crate) fn connect_options(c: &Connect, drivers: &[Driver]) -> Result<ConnectOptions, Failure> {
    let options = ConnectOptions {
        nodes: c.node_addrs().map_err(Failure::Usage)?,
        threads: c.threads,
        connections: c.connections,
        consistency: c.consistency,
        request_timeout: c.timeout,
        retries: c.retries,
        compression: c.compression,
        username: c.user.clone(),
        password: c.password.clone(),
        pin: !c.no_pin,
        spin_before_park: c.spin,
        page_size: backend::DEFAULT_PAGE_SIZE,
        discard_results: false,
        serial_consistency: c.serial_consistency,
        locality: Locality::new(c.datacenter.clone(), c.rack.clone())?,
        retry_backoff: c.retry_backoff,
        protocol: c.protocol.or_else(|| backend::common_protocol(drivers)),
        tls: c.tls_options(),
        sqpoll: c.sqpoll_options(drivers).map_err(Failure::Usage)?,
    };
    for &d in drivers {
        backend::check_settings(d, &options)?;
    }
    Ok(options)
}

/// [`connect_options`] with the page size and how results are consumed (`run`, `findmax`).
pub(crate) fn result_options(
    c: &Connect,
    r: &ResultArgs,
    drivers: &[Driver],
) -> Result<ConnectOptions, Failure> {
    let page_size = i32::try_from(r.page_size)
        .map_err(|_| Failure::Usage(format!("--page-size {} is too large", r.page_size)))?;
    Ok(ConnectOptions {
        page_size,
        discard_results: r.discard_results,
        ..connect_options(c, drivers)?
    })
}

pub(crate) fn workload_of(c: &Connect) -> Result<Arc<Workload>, Failure> {
    let params = c.param_pairs().map_err(Failure::Usage)?;
    Ok(Arc::new(Workload::resolve(&c.workload, &params)?))
}

fn first_driver(c: &Connect) -> Result<Driver, Failure> {
    let drivers = c.drivers().map_err(Failure::Usage)?;
    drivers
        .first()
        .copied()
        .ok_or_else(|| Failure::Usage("no driver given".into()))
}

/// `doppio schema`: runs the workload's schema statements.
pub fn schema(c: &Connect) -> Result<(), Failure> {
    let workload = workload_of(c)?;
    let driver = first_driver(c)?;
    let b = backend::connect(driver, &connect_options(c, &[driver])?).map_err(Failure::Start)?;
    let result = b.execute_all(&workload.schema);
    b.shutdown();
    result.map_err(Failure::Schema)?;
    if !c.quiet {
        eprintln!(
            "schema of {}: {} statement(s) applied",
            workload.name,
            workload.schema.len()
        );
    }
    Ok(())
}

/// `doppio load`: runs the workload's load statement `count` times.
pub fn load(a: &LoadArgs) -> Result<(), Failure> {
    let workload = workload_of(&a.connect)?;
    let Some(l) = &workload.load else {
        return Err(Failure::Usage(format!(
            "workload {} has no [load] section",
            workload.name
        )));
    };
    let cycles = cycles_of(&a.cycles, &workload)?;
    // A loader's load writes its range: each of its iterations once.
    let count = cycles.map_or(l.count, |c| c.range.len());
    let driver = first_driver(&a.connect)?;
    let b = backend::connect(driver, &connect_options(&a.connect, &[driver])?)
        .map_err(Failure::Start)?;
    let spec = PhaseSpec {
        phase: Phase::Load,
        concurrency: a.concurrency,
        rate: a.rate.clone().map(Arc::new),
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
    let outcome = backend::drive_phase(&b, &workload, spec, |s| progress.sample(s));
    b.shutdown();
    let outcome = outcome.map_err(|e| Failure::of_phase(e, false))?;
    progress.done();
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
        return Err(Failure::run(why));
    }
    if errors > 0 {
        return Err(Failure::run(format!("{errors} load requests failed")));
    }
    Ok(())
}

/// The range of `--cycles` or `--loader` for `workload`, if either is given.
fn cycles_of(a: &CyclesArgs, workload: &Workload) -> Result<Option<Cycles>, Failure> {
    Ok(Cycles::choose(
        a.cycles,
        a.loader,
        workload.key_space(),
        &workload.name,
    )?)
}

/// A report's default file in the current folder: PREFIX-WORKLOAD-DATE.json (the
/// workload's file stem, the start time without separators).
pub(crate) fn default_report_path(prefix: &str, workload: &str, started_at: &str) -> PathBuf {
    PathBuf::from(format!(
        "{prefix}-{}-{}.json",
        Path::new(workload)
            .file_stem()
            .map_or("workload".into(), |s| s.to_string_lossy().into_owned()),
        started_at
            .replace([':', '-'], "")
            .replace('T', "-")
            .trim_end_matches('Z')
    ))
}

/// Refuses, before anything starts, a file the command could not write when it ends:
/// `option`'s `path` in a folder that does not exist, a folder itself, or not writable
/// (an existing file is opened for appending, which changes nothing; a new one is probed
/// with a file made and removed at once in its folder). Without this a missing folder was
/// found only after the whole run.
pub(crate) fn check_writable(path: &Path, option: &str) -> Result<(), Failure> {
    let shown = path.display();
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(Failure::Usage(format!(
            "{option} {shown}: the folder {} does not exist",
            folder.display()
        )));
    }
    if path.is_dir() {
        return Err(Failure::Usage(format!(
            "{option} {shown}: a folder, not a file"
        )));
    }
    let writable = if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
    } else {
        let probe = folder.join(format!(".doppio-probe-{}", std::process::id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map(drop)
            .and_then(|()| std::fs::remove_file(&probe))
    };
    writable.map_err(|e| {
        Failure::Usage(format!(
            "{option} {shown}: cannot write a file in {}: {e}",
            folder.display()
        ))
    })
}

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
    let drivers = c.drivers().map_err(Failure::Usage)?;
    if a.validate && drivers.contains(&Driver::Null) {
        return Err(Failure::Usage(
            "--validate: the null backend returns no rows to compare (it measures the \
             bench engine alone)"
                .into(),
        ));
    }
    let options = result_options(&a.connect, &a.results, &drivers)?;
    let started_at = crate::report::now_rfc3339();
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| default_report_path("doppio", &workload.name, &started_at));
    // Every file the run will write, checked before anything connects.
    check_writable(&output, "-o")?;
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
        },
        fatal_error: None,
        warnings: Vec::new(),
        backends: BTreeMap::new(),
        merged_from: None,
    };
    let mut runs: BTreeMap<Driver, BackendRun> = BTreeMap::new();
    let mut flames = crate::flame::Flames::default();
    let result = run_segments(
        a,
        &workload,
        &drivers,
        &options,
        segments,
        cycles.map(|c| c.range),
        Collected {
            runs: &mut runs,
            warnings: &mut report.warnings,
            flames: &mut flames,
            thread_cores: &mut report.config.thread_cores,
            protocol_versions: &mut report.config.protocol_versions,
            uring_setup: &mut report.config.uring_setup,
        },
    );
    if let Some(prefix) = &a.flamegraph {
        report.warnings.push(
            "flamegraph run: perf record sampled the measured segments, so CPU and \
             syscall figures include its perturbation"
                .into(),
        );
        match flames.render(prefix) {
            Ok(files) => {
                for f in files {
                    eprintln!("flamegraph written to {}", f.display());
                }
            }
            Err(e) => report.warnings.push(format!("no flamegraph: {e}")),
        }
    }
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
    let written = report.write(&output);
    // A report that cannot be written after the run started is a failure of the run; the
    // run's own failure, if any, is the one that counts.
    result?;
    written.map_err(|e| Failure::run(format!("the report could not be written: {e}")))?;
    eprintln!("report written to {}", output.display());
    Ok(output)
}

/// The workload as `--validate` asks: with it, at least one run statement must name the row
/// it reads (`validate`); without it, no statement is validated.
pub(crate) fn with_validation(workload: Arc<Workload>, on: bool) -> Result<Arc<Workload>, Failure> {
    let validated = workload.run.iter().any(|s| s.validate.is_some());
    if on && !validated {
        return Err(Failure::Usage(format!(
            "--validate: no run statement of workload {} says which loaded row it reads \
             (`validate = \"...\"`, see bench/workloads/README.md)",
            workload.name
        )));
    }
    if on || !validated {
        return Ok(workload);
    }
    let mut w = Workload::clone(&workload);
    for s in &mut w.run {
        s.validate = None;
    }
    Ok(Arc::new(w))
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
        Err(Failure::run(format!(
            "validation failed: {}",
            failed.join("; ")
        )))
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
}

fn run_segments(
    a: &RunArgs,
    workload: &Arc<Workload>,
    drivers: &[Driver],
    options: &ConnectOptions,
    segments: usize,
    cycles: Option<CycleRange>,
    out: Collected<'_>,
) -> Result<(), Failure> {
    let Collected {
        runs,
        warnings,
        flames,
        thread_cores,
        protocol_versions,
        uring_setup,
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
    let mut live_log = match &a.hdr_log {
        Some(path) => Some(
            crate::live_log::LiveHdrLog::create(path, std::time::SystemTime::now())
                .map_err(|e| Failure::Usage(format!("--hdr-log {}: {e}", path.display())))?,
        ),
        None => None,
    };
    let metrics = match a.prometheus {
        Some(addr) => {
            let names = StatementInfo::of_workload(workload)
                .into_iter()
                .map(|s| s.name)
                .collect();
            let m = crate::metrics_server::MetricsServer::start(addr, names)
                .map_err(|e| Failure::Usage(format!("--prometheus {addr}: {e}")))?;
            eprintln!("prometheus metrics on http://{}/metrics", m.addr());
            Some(m)
        }
        None => None,
    };
    // Whether a phase has run: until then, statements that cannot be prepared are a bad
    // workload (the run could not start), after it a failure of the run.
    let mut started = false;
    let result = (|| {
        for segment in 0..segments {
            for (driver, b) in &backends {
                if crate::interrupt::interrupted() {
                    return Err(Failure::Interrupted);
                }
                let run = runs.entry(*driver).or_default();
                let quiet = a.connect.quiet;
                // Warmup: same workload, nothing recorded.
                if !matches!(a.warmup, Limit::Time(d) if d.is_zero()) && a.warmup != Limit::Count(0)
                {
                    let mut progress = Progress::new(
                        quiet,
                        &format!("{} warmup", driver.name()),
                        a.warmup,
                        a.connect.progress_every,
                    );
                    let spec = PhaseSpec {
                        phase: Phase::Run,
                        concurrency: a.concurrency,
                        rate: a.rate.clone().map(Arc::new),
                        limit: a.warmup,
                        interval: a.interval,
                        record: false,
                        max_outage: a.connect.outage_limit(),
                        cycles,
                    };
                    let warm = backend::drive_phase(b, workload, spec, |s| progress.sample(s))
                        .map_err(|e| Failure::of_phase(e, started))?;
                    started = true;
                    progress.done();
                    if crate::interrupt::interrupted() {
                        return Err(Failure::Interrupted);
                    }
                    if let Some(why) = warm.aborted {
                        return Err(Failure::run(format!(
                            "{} (during the warmup): {why}",
                            driver.name()
                        )));
                    }
                }
                let spec = PhaseSpec {
                    phase: Phase::Run,
                    concurrency: a.concurrency,
                    rate: a.rate.clone().map(Arc::new),
                    limit: measured,
                    interval: a.interval,
                    record: true,
                    max_outage: a.connect.outage_limit(),
                    cycles,
                };
                let label = if segments > 1 {
                    format!("{} {}/{}", driver.name(), segment + 1, segments)
                } else {
                    driver.name().to_owned()
                };
                let mut progress = Progress::new(quiet, &label, measured, a.connect.progress_every);
                let counters_before = b.counters();
                let recording = match &a.flamegraph {
                    Some(prefix) => {
                        let data = PathBuf::from(format!(
                            "{}-{}-{segment}.perf.data",
                            prefix.display(),
                            driver.name()
                        ));
                        match crate::flame::Recording::start(&data) {
                            Ok(r) => Some(r),
                            Err(e) => {
                                warnings.push(format!("no flamegraph: {e}"));
                                None
                            }
                        }
                    }
                    None => None,
                };
                let meter = Meter::start();
                // The phase's intervals count from about now (drive_phase starts its clock a
                // few milliseconds later): the live log's interval starts are within that.
                let phase_wall = std::time::SystemTime::now();
                let mut log_error = None;
                let outcome = backend::drive_phase(b, workload, spec, |s| {
                    progress.sample(s);
                    if let Some(m) = &metrics {
                        m.sample(driver.name(), s);
                    }
                    if let (Some(log), None) = (live_log.as_mut(), &log_error) {
                        let began = phase_wall + s.start;
                        if let Err(e) = log.interval(driver.name(), began, s.duration, &s.latency) {
                            log_error = Some(e);
                        }
                    }
                });
                if let Some(e) = log_error {
                    warnings.push(format!("--hdr-log stopped: {e}"));
                    live_log = None;
                }
                let cost = meter.stop();
                if let Some(m) = &metrics {
                    m.segment(driver.name(), &cost);
                }
                if let Some(r) = recording {
                    match r.stop() {
                        Ok(data) => flames
                            .recorded
                            .entry(driver.name().to_owned())
                            .or_default()
                            .push(data),
                        Err(e) => warnings.push(format!("no flamegraph: {e}")),
                    }
                }
                let counters_after = b.counters();
                progress.done();
                let outcome = outcome.map_err(|e| Failure::of_phase(e, started))?;
                started = true;
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
                        backend::SAMPLE_BACKLOG,
                    ));
                }
                run.add_cost(&cost);
                if let (Some(before), Some(after)) = (counters_before, counters_after) {
                    let c = run.counters.get_or_insert_with(Default::default);
                    c.requests += after.requests.saturating_sub(before.requests);
                    c.flushes += after.flushes.saturating_sub(before.flushes);
                    c.reads += after.reads.saturating_sub(before.reads);
                    c.bytes_written += after.bytes_written.saturating_sub(before.bytes_written);
                    c.bytes_read += after.bytes_read.saturating_sub(before.bytes_read);
                    c.retries += after.retries.saturating_sub(before.retries);
                    if let (Some(b), Some(a)) = (before.uring_enters, after.uring_enters) {
                        c.uring_enters =
                            Some(c.uring_enters.unwrap_or_default().plus(&a.since(&b)));
                    }
                    c.reprepares += after.reprepares.saturating_sub(before.reprepares);
                    // Per node from the samples: the counters' difference would lose a node
                    // that left during the phase (its counters leave with it).
                    for (node, n) in &outcome.requests_by_node {
                        *c.nodes.entry(node.clone()).or_default() += n;
                    }
                    for (node, counts) in &after.scylla_shards {
                        let was = before.scylla_shards.get(node);
                        let delta: Vec<u64> = counts
                            .iter()
                            .enumerate()
                            .map(|(i, n)| {
                                n.saturating_sub(was.and_then(|w| w.get(i)).copied().unwrap_or(0))
                            })
                            .collect();
                        backend::add_counts(
                            c.scylla_shards.entry(node.clone()).or_default(),
                            &delta,
                        );
                    }
                }
                for (k, m) in outcome.first_errors {
                    run.first_errors.entry(k.to_owned()).or_insert(m);
                }
                run.elapsed_s.push(outcome.elapsed.as_secs_f64());
                run.segment_starts_unix_s.push(
                    outcome
                        .started_at
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_secs_f64()),
                );
                run.latency.merge(&outcome.latency);
                run.service.merge(&outcome.service);
                run.segments.push(outcome.samples);
                merge_totals(&mut run.statements, &outcome.statements);
                if crate::interrupt::interrupted() {
                    // Everything measured so far is in `runs`: the report keeps it.
                    return Err(Failure::Interrupted);
                }
                if let Some(why) = outcome.aborted {
                    // Everything measured so far is in `runs`: the report keeps it.
                    return Err(Failure::run(format!("{}: {why}", driver.name())));
                }
            }
        }
        Ok::<(), Failure>(())
    })();
    for (_, b) in &backends {
        b.shutdown();
    }
    result
}

/// `doppio show`.
pub fn show(report: &Path, baseline: Option<&Path>, log: bool) -> Result<(), Failure> {
    let r = Report::read(report).map_err(Failure::Input)?;
    match baseline {
        None => print!("{}", text::render(&r, log)),
        Some(b) => {
            let base = Report::read(b).map_err(Failure::Input)?;
            print!("{}", text::render_pair(&r, &base));
        }
    }
    Ok(())
}

/// `doppio hdr`: the chosen backend's samples as an HdrHistogram interval log, or with
/// `statement` that run statement's whole-run histogram as one interval.
pub fn hdr(
    report: &Path,
    output: &Path,
    driver: Option<&str>,
    statement: Option<&str>,
) -> Result<(), Failure> {
    let r = Report::read(report).map_err(Failure::Input)?;
    let name = match driver {
        Some(d) => d.to_owned(),
        None => r.config.drivers.first().cloned().unwrap_or_default(),
    };
    let Some(b) = r.backends.get(&name) else {
        return Err(Failure::Usage(format!(
            "{} has no results for driver `{name}`",
            report.display()
        )));
    };
    if let Some(wanted) = statement {
        let Some(st) = b.statements.iter().find(|s| s.name == wanted) else {
            let names: Vec<&str> = b.statements.iter().map(|s| s.name.as_str()).collect();
            return Err(Failure::Usage(format!(
                "{} has no statement `{wanted}` for driver `{name}` (it has: {})",
                report.display(),
                if names.is_empty() {
                    "none: an older report".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        };
        let h = crate::stats::LatencyHistogram::from_base64(&st.histogram)?;
        return write_hlog(
            &r,
            output,
            &[(0.0, b.elapsed_s, &h)],
            &format!("{name} {wanted}"),
        );
    }
    let mut hists = Vec::with_capacity(b.samples.len());
    let mut offset = 0.0;
    let mut last_segment = 0;
    let mut segment_base = 0.0;
    for s in &b.samples {
        if s.segment != last_segment {
            segment_base = offset;
            last_segment = s.segment;
        }
        let h = crate::stats::LatencyHistogram::from_base64(&s.histogram)?;
        let start = segment_base + s.start_s;
        offset = start + s.duration_s;
        hists.push((start, s.duration_s, h));
    }
    let intervals: Vec<(f64, f64, &crate::stats::LatencyHistogram)> =
        hists.iter().map(|(a, b, h)| (*a, *b, h)).collect();
    write_hlog(&r, output, &intervals, &name)
}

/// Writes `intervals` (offset and length in seconds, histogram) of `what` as an interval log
/// starting at the report's start.
fn write_hlog(
    r: &Report,
    output: &Path,
    intervals: &[(f64, f64, &crate::stats::LatencyHistogram)],
    what: &str,
) -> Result<(), Failure> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(output)?);
    let start_unix = crate::report::rfc3339_to_unix(&r.started_at).unwrap_or(0) as f64;
    crate::stats::write_interval_log(&mut file, start_unix, intervals)?;
    std::io::Write::flush(&mut file)?;
    eprintln!(
        "{} intervals of {what} written to {}",
        intervals.len(),
        output.display()
    );
    Ok(())
}

/// `doppio merge`: the machines' `reports` of one test run combined into `output`.
pub fn merge(reports: &[PathBuf], output: &Path, argv: Vec<String>) -> Result<(), Failure> {
    let mut inputs = Vec::with_capacity(reports.len());
    for path in reports {
        let r = Report::read(path).map_err(Failure::Input)?;
        inputs.push((path.display().to_string(), r));
    }
    let merged = crate::report::merge::merge(&inputs, argv)?;
    merged.write(output).map_err(Failure::Input)?;
    let requests: Vec<String> = merged
        .config
        .drivers
        .iter()
        .filter_map(|d| {
            merged
                .backends
                .get(d)
                .map(|b| format!("{d} {} requests", b.requests))
        })
        .collect();
    eprintln!(
        "{} reports merged into {} ({})",
        inputs.len(),
        output.display(),
        requests.join(", ")
    );
    Ok(())
}

/// `doppio list`: one line per report in `dir`.
pub fn list(dir: &Path) -> Result<(), Failure> {
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            if let Ok(r) = Report::read(&path) {
                rows.push((path, r));
            }
        }
    }
    rows.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at));
    println!(
        "{:<34} {:<12} {:<20} {:<10} throughput [req/s]",
        "file", "tag", "date", "workload"
    );
    for (path, r) in rows {
        let tp: Vec<String> = r
            .config
            .drivers
            .iter()
            .filter_map(|d| {
                r.backends
                    .get(d)
                    .map(|b| format!("{d} {:.0}", b.throughput_rps))
            })
            .collect();
        let name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        println!(
            "{:<34} {:<12} {:<20} {:<10} {}",
            name,
            r.tag.as_deref().unwrap_or("-"),
            r.started_at,
            r.workload.name,
            tp.join(", ")
        );
    }
    Ok(())
}
