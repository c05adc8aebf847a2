//! The report of the rounds ([`super::rounds`]), what `run` and `curve` share: its heading
//! and every option in force before the rounds run ([`new_report`]), and each backend's
//! entry made from what its segments measured, with the warnings they call for
//! ([`add_backends`], [`warn_unsampled`]).

use std::collections::BTreeMap;

use super::rounds::RoundsPlan;
use crate::backend::{ConnectOptions, Driver, TlsOptions};
use crate::engine::spill::SpilledSamples;
use crate::failure::{Failure, UsageError};
use crate::probe::server_cpu::ServerProcesses;
use crate::report::{BackendRun, Report, RunConfig, WorkloadInfo, SCHEMA_VERSION};

/// What a report says of itself besides its options.
pub(crate) struct Heading {
    /// The command line (the password redacted).
    pub(crate) argv: Vec<String>,
    /// `--tag`.
    pub(crate) tag: Option<String>,
    /// When the command started, RFC 3339.
    pub(crate) started_at: String,
}

/// The node's processes whose CPU each segment measures: `--server-pid`'s (checked before
/// anything starts), else those listening on a node's address on this machine.
pub(crate) fn server_of(
    pid: Option<u32>,
    options: &ConnectOptions,
) -> Result<Option<ServerProcesses>, Failure> {
    Ok(match pid {
        Some(pid) => Some(ServerProcesses::given(pid).map_err(UsageError::from)?),
        None => ServerProcesses::listening_on(&options.nodes),
    })
}

/// The report of `plan`'s rounds of `drivers` before they run: no backend yet, no rate
/// (the caller sets `rate`, `rate_schedule`, `release_grid_s`, `equal_load` and
/// `waterfall_every` as its rounds run them); the backends' cores, protocol versions and
/// io_uring setup are added as they connect.
pub(crate) fn new_report(
    plan: &RoundsPlan<'_>,
    drivers: &[Driver],
    options: &ConnectOptions,
    server: Option<&ServerProcesses>,
    heading: Heading,
) -> Report {
    let workload = &plan.workload;
    Report {
        schema_version: SCHEMA_VERSION,
        tool: format!("doppio-bench {}", env!("CARGO_PKG_VERSION")),
        tag: heading.tag,
        started_at: heading.started_at,
        command: heading.argv,
        workload: WorkloadInfo {
            name: workload.name.clone(),
            description: workload.description.clone(),
            params: workload.params.iter().cloned().collect(),
            statements: workload.run.iter().map(|s| s.cql.clone()).collect(),
        },
        config: config_of(plan, drivers, options, server),
        fatal_error: None,
        warnings: Vec::new(),
        backends: BTreeMap::new(),
        merged_from: None,
        environment: Some(crate::probe::environment::Environment::here()),
    }
}

/// [`new_report`]'s `config`.
fn config_of(
    plan: &RoundsPlan<'_>,
    drivers: &[Driver],
    options: &ConnectOptions,
    server: Option<&ServerProcesses>,
) -> RunConfig {
    let (a, workload) = (plan.args, &plan.workload);
    let names_of = |f: fn(&crate::workload::Statement) -> bool| -> Vec<String> {
        workload
            .run
            .iter()
            .filter(|s| f(s))
            .map(|s| s.name.clone())
            .collect()
    };
    RunConfig {
        nodes: options.nodes.iter().map(ToString::to_string).collect(),
        drivers: drivers.iter().map(|d| d.name().to_owned()).collect(),
        duration: a.duration.to_string(),
        warmup: a.warmup.to_string(),
        concurrency: a.concurrency,
        threads: options.threads,
        connections: options.connections,
        rate: None,
        rate_schedule: None,
        release_grid_s: None,
        sample_interval_s: a.interval.as_secs_f64(),
        consistency: options.consistency.name().to_owned(),
        request_timeout_s: options.request_timeout.as_secs_f64(),
        retries: options.retries,
        compression: options.compression.name().to_owned(),
        segments: plan.segments,
        username: options.username.clone(),
        spin_before_park_us: options.spin_before_park.map(|d| d.as_secs_f64() * 1e6),
        // Checked to fit a protocol's page size (result_options), so it converts back.
        page_size: u32::try_from(options.page_size).ok(),
        discard_results: options.discard_results,
        validated: names_of(|s| s.validate.is_some()),
        cycles: None,
        serial_consistency: Some(options.serial_consistency.name().to_owned()),
        idempotent: names_of(|s| s.idempotent),
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
        connection_shapes: BTreeMap::new(),
        order: Some(a.order.name().to_owned()),
        rounds: plan.round_names(drivers),
        server_warmup: (!a.server_warmup.is_zero()).then(|| format!("{:?}", a.server_warmup)),
        server_pids: server.map_or_else(Vec::new, |s| s.pids.clone()),
        server_cores: server.map(|s| s.cores),
        equal_load: None,
        syscalls: Some(a.syscalls.name().to_owned()),
        waterfall_every: None,
    }
}

/// Each backend's entry of `report` from its `runs`, with a warning for one that did not
/// reach its rate (`constant`: a constant rate, else a schedule's mean) saying the
/// concurrency it needed at its mean latency beside `concurrency` (`-p`).
pub(crate) fn add_backends(
    report: &mut Report,
    runs: &BTreeMap<Driver, BackendRun>,
    constant: bool,
    concurrency: usize,
) {
    for (driver, r) in runs {
        let entry = r.report(driver.name());
        if let (Some(rate), true) = (
            entry.samples.mean_target_rps(),
            entry.throughput.elapsed_s > 0.0,
        ) {
            if entry.throughput.throughput_rps < 0.95 * rate {
                let needed = rate * entry.latency.latency_ns.mean / 1e9;
                let what = if constant {
                    format!("the rate of {rate:.0} req/s")
                } else {
                    format!("the schedule's mean rate of {rate:.0} req/s")
                };
                report.warnings.push(format!(
                    "{}: {what} was not reached ({:.0} req/s); at the measured mean latency \
                     it needs a concurrency of about {:.0} (-p is {concurrency})",
                    driver.name(),
                    entry.throughput.throughput_rps,
                    needed.ceil(),
                ));
            }
        }
        report.backends.insert(driver.name().to_owned(), entry);
    }
}

/// Warns when rounds that succeeded (`ok`) left a backend without a single sample: they
/// were too short.
pub(crate) fn warn_unsampled(report: &mut Report, runs: &BTreeMap<Driver, BackendRun>, ok: bool) {
    let unsampled = runs
        .values()
        .any(|r| r.segments.iter().all(SpilledSamples::is_empty));
    if unsampled && ok {
        report
            .warnings
            .push("a backend completed no sample: the run was too short".into());
    }
}
