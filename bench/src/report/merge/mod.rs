//! `doppio merge`: the reports of one test run made on several loader machines, combined
//! into one report that `show`, `hdr`, `list` and `sweep` read like any other.
//!
//! How each figure is combined, per backend:
//! - Histograms (the whole run's latency and service time) are added exactly (HdrHistogram
//!   add); the percentiles and the mean come from the sum.
//! - Requests, errors and errors by kind are summed; throughput is the sum of the
//!   machines' throughputs (they ran at the same time).
//! - Samples are aligned by their wall-clock start (`start_unix_s`, written by every
//!   `doppio run` since this field exists): per segment, on a grid of the common sample
//!   interval starting at the earliest machine's first sample, each machine's sample goes to
//!   the nearest grid interval, where requests, errors and throughputs are summed and
//!   histograms added. Machines' clocks must agree (NTP) to well under a sample interval.
//! - Per run statement (`statements`, matched by position; the workloads' statements are
//!   the same, see below): histograms added exactly, requests, errors, errors by kind and
//!   rows summed, throughput the sum of the machines'; its per-sample figures are aligned
//!   with the samples (requests, errors and throughputs summed, mean latencies weighted by
//!   successes), and its margins come from them. When an input has no per-statement
//!   figures (an older report), the merged report has none either.
//! - Overheads (CPU, syscalls, allocations per request, ...) are kept per machine in
//!   `machines`. The entry's own overhead fields are pooled over the machines' totals
//!   (summed CPU time over summed requests, ...), and `null` when any machine did not
//!   count the figure.
//! - Each input's config, command, start and warnings are kept in `merged_from`.
//!
//! Refused: fewer than two reports, an input that is itself merged, and inputs whose
//! workload (name, parameters, statements), drivers, segments or sample interval differ: a
//! merge of those would mean nothing.

use std::collections::BTreeMap;

use super::figure::anatomy::AnatomyReport;
use super::figure::client_cpu::ClientCpuFigures;
use super::figure::context_switches::ContextSwitchFigures;
use super::figure::driver_counts::DriverCountFigures;
use super::figure::hardware::HardwareFigures;
use super::figure::latency::LatencyFigures;
use super::figure::machines::{MachineList, MachineParts};
use super::figure::memory::MemoryFigures;
use super::figure::rows::RowFigures;
use super::figure::samples::SampleFigures;
use super::figure::scylla_shards::ScyllaShardFigures;
use super::figure::segments::SegmentList;
use super::figure::server_cpu::ServerCpuFigures;
use super::figure::socket_batching::SocketBatchingFigures;
use super::figure::statements::StatementFigures;
use super::figure::syscalls::SyscallFigures;
use super::figure::throughput::ThroughputFigures;
use super::figure::uring::{IoUringFigures, UringEnterFigures};
use super::figure::waterfall::WaterfallReport;
use super::figure::while_parked::WhileParked;
use super::pool::{Part, PoolError};
use super::schema::{BackendReport, MergedInput, Report, RunConfig};
use crate::stats::StatsError;

/// Why reports could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Fewer than two reports.
    #[error("merge needs at least two reports (got {0})")]
    TooFew(usize),
    /// The same report given twice (the same file, or a copy of it).
    #[error("{file} is the same report as {first}: each machine's report is given once")]
    SameReport {
        /// The first input.
        first: String,
        /// Its repetition.
        file: String,
    },
    /// Two machines' runs that did not overlap in time: not one test run.
    #[error(
        "{file} ran from {b_from:.1} to {b_to:.1} (Unix seconds) and {first} from {a_from:.1} \
         to {a_to:.1}: they do not overlap, so they are not one test run on several machines \
         (give --sequential to merge runs made one after the other)"
    )]
    NotConcurrent {
        /// One input.
        first: String,
        /// The other.
        file: String,
        /// The first's measured span.
        a_from: f64,
        /// Its end.
        a_to: f64,
        /// The other's span.
        b_from: f64,
        /// Its end.
        b_to: f64,
    },
    /// An input is itself a merged report.
    #[error("{file} is itself a merged report: merge the machines' own reports")]
    AlreadyMerged {
        /// The input.
        file: String,
    },
    /// Two inputs differ where a merge would mean nothing.
    #[error(
        "{file} cannot be merged with {first}: their {what} differ ({first}: {a}; {file}: {b})"
    )]
    Mismatch {
        /// What differs (`workload`, `drivers`, ...).
        what: &'static str,
        /// The first input.
        first: String,
        /// The input that differs.
        file: String,
        /// The first input's value.
        a: String,
        /// The other's value.
        b: String,
    },
    /// An input lacks a backend the first has.
    #[error("{file} has no results for driver {driver}, which {first} has")]
    MissingBackend {
        /// The input.
        file: String,
        /// The driver.
        driver: String,
        /// The first input.
        first: String,
    },
    /// A sample has no wall-clock start (an older report), so it cannot be aligned.
    #[error("{file}: {driver}: its samples have no wall-clock start (start_unix_s: the report was written by an older doppio), so they cannot be aligned with the other machines'")]
    NoWallClock {
        /// The input.
        file: String,
        /// The driver.
        driver: String,
    },
    /// A histogram of an input could not be decoded.
    #[error("{file}: {driver}: {source}")]
    Histogram {
        /// The input.
        file: String,
        /// The driver.
        driver: String,
        /// Why.
        #[source]
        source: StatsError,
    },
}

/// The wall-clock span (Unix seconds) of `r`'s measured samples, if they have one.
fn measured_span(r: &Report) -> Option<(f64, f64)> {
    r.backends
        .values()
        .flat_map(|b| b.samples.samples.iter())
        .filter_map(|s| s.start_unix_s.map(|t| (t, t + s.duration_s)))
        .fold(None, |span, (from, to)| match span {
            None => Some((from, to)),
            Some((a, b)) => Some((f64::min(a, from), f64::max(b, to))),
        })
}

/// Merges the reports `inputs` (file name, report) of one test run made on several
/// machines; `command` is the merge's own command line. Runs that did not overlap in time
/// are refused unless `sequential` says they were made one after the other on purpose.
pub(crate) fn merge(
    inputs: &[(String, Report)],
    command: Vec<String>,
    sequential: bool,
) -> Result<Report, MergeError> {
    let Some((first_file, first)) = inputs.first() else {
        return Err(MergeError::TooFew(0));
    };
    if inputs.len() < 2 {
        return Err(MergeError::TooFew(inputs.len()));
    }
    // A copy is the same report to the last sample (a merge input is never edited).
    let contents: Vec<Option<serde_json::Value>> = inputs
        .iter()
        .map(|(_, r)| serde_json::to_value(r).ok())
        .collect();
    for (k, (file, r)) in inputs.iter().enumerate() {
        for (j, (other, o)) in inputs[..k].iter().enumerate() {
            if contents[k].is_some() && contents[k] == contents[j] {
                return Err(MergeError::SameReport {
                    first: other.clone(),
                    file: file.clone(),
                });
            }
            if sequential {
                continue;
            }
            if let (Some((a_from, a_to)), Some((b_from, b_to))) =
                (measured_span(o), measured_span(r))
            {
                if b_from >= a_to || a_from >= b_to {
                    return Err(MergeError::NotConcurrent {
                        first: other.clone(),
                        file: file.clone(),
                        a_from,
                        a_to,
                        b_from,
                        b_to,
                    });
                }
            }
        }
    }
    for (file, r) in inputs {
        if r.merged_from.is_some() {
            return Err(MergeError::AlreadyMerged { file: file.clone() });
        }
        check_same(first_file, first, file, r)?;
    }
    let mut backends = BTreeMap::new();
    for driver in &first.config.drivers {
        if !first.backends.contains_key(driver) {
            continue;
        }
        let mut parts = Vec::with_capacity(inputs.len());
        for (file, r) in inputs {
            let b = r
                .backends
                .get(driver)
                .ok_or_else(|| MergeError::MissingBackend {
                    file: file.clone(),
                    driver: driver.clone(),
                    first: first_file.clone(),
                })?;
            parts.push((file.as_str(), b));
        }
        let merged = merge_backend(driver, &parts, first.config.sample_interval_s)?;
        backends.insert(driver.clone(), merged);
    }
    let mut config = first.config.clone();
    let mut nodes: Vec<String> = Vec::new();
    for (_, r) in inputs {
        for n in &r.config.nodes {
            if !nodes.contains(n) {
                nodes.push(n.clone());
            }
        }
    }
    config.nodes = nodes;
    config.concurrency = inputs.iter().map(|(_, r)| r.config.concurrency).sum();
    config.threads = inputs.iter().map(|(_, r)| r.config.threads).sum();
    config.rate = inputs
        .iter()
        .map(|(_, r)| r.config.rate)
        .sum::<Option<f64>>();
    // Each machine's schedule, in input order: the merged target is their sum.
    config.rate_schedule = inputs
        .iter()
        .any(|(_, r)| r.config.rate_schedule.is_some())
        .then(|| {
            inputs
                .iter()
                .map(|(_, r)| r.config.rate_schedule.as_deref().unwrap_or("unlimited"))
                .collect::<Vec<_>>()
                .join(" + ")
        });
    // The machines' grid when they all had the same; `null` when they differ.
    config.release_grid_s = first.config.release_grid_s.filter(|g| {
        inputs
            .iter()
            .all(|(_, r)| r.config.release_grid_s == Some(*g))
    });
    config.cycles = None;
    config.connection_shapes =
        super::connection_shape::summed(inputs.iter().map(|(_, r)| &r.config.connection_shapes));
    let tag = first
        .tag
        .clone()
        .filter(|t| inputs.iter().all(|(_, r)| r.tag.as_ref() == Some(t)));
    let fatal: Vec<String> = inputs
        .iter()
        .filter_map(|(f, r)| r.fatal_error.as_ref().map(|e| format!("{f}: {e}")))
        .collect();
    let mut warnings: Vec<String> = inputs
        .iter()
        .flat_map(|(f, r)| r.warnings.iter().map(move |w| format!("{f}: {w}")))
        .collect();
    warnings.extend(overlap_warnings(inputs));
    Ok(Report {
        schema_version: super::SCHEMA_VERSION,
        tool: format!("doppio-bench {}", env!("CARGO_PKG_VERSION")),
        tag,
        started_at: inputs
            .iter()
            .map(|(_, r)| r.started_at.clone())
            .min_by_key(|t| super::rfc3339_to_unix(t).unwrap_or(i64::MAX))
            .unwrap_or_else(|| first.started_at.clone()),
        command,
        workload: first.workload.clone(),
        config,
        fatal_error: (!fatal.is_empty()).then(|| fatal.join("; ")),
        warnings,
        backends,
        // Each machine's own is in `merged_from`.
        environment: None,
        merged_from: Some(
            inputs
                .iter()
                .map(|(file, r)| MergedInput {
                    file: file.clone(),
                    tag: r.tag.clone(),
                    started_at: r.started_at.clone(),
                    command: r.command.clone(),
                    config: r.config.clone(),
                    fatal_error: r.fatal_error.clone(),
                    warnings: r.warnings.clone(),
                    environment: r.environment.clone(),
                })
                .collect(),
        ),
    })
}

/// Refuses `r` when it differs from `first` where a merge would mean nothing.
fn check_same(first_file: &str, first: &Report, file: &str, r: &Report) -> Result<(), MergeError> {
    let differ = |what: &'static str, a: String, b: String| MergeError::Mismatch {
        what,
        first: first_file.to_owned(),
        file: file.to_owned(),
        a,
        b,
    };
    let (w0, w) = (&first.workload, &r.workload);
    if w0.name != w.name {
        return Err(differ("workloads", w0.name.clone(), w.name.clone()));
    }
    if w0.params != w.params {
        return Err(differ(
            "workload parameters",
            format!("{:?}", w0.params),
            format!("{:?}", w.params),
        ));
    }
    if w0.statements != w.statements {
        return Err(differ(
            "statements",
            w0.statements.join(" / "),
            w.statements.join(" / "),
        ));
    }
    let (c0, c) = (&first.config, &r.config);
    if c0.drivers != c.drivers {
        return Err(differ("drivers", c0.drivers.join(","), c.drivers.join(",")));
    }
    if c0.protocol_versions != c.protocol_versions {
        let spoken = |c: &RunConfig| format!("{:?}", c.protocol_versions);
        return Err(differ("protocol versions", spoken(c0), spoken(c)));
    }
    // Results consumed differently are different work: not one test run.
    if (c0.page_size, c0.discard_results) != (c.page_size, c.discard_results) {
        let consumed = |c: &RunConfig| {
            format!(
                "page size {}, rows {}",
                c.page_size.map_or("unknown".to_owned(), |p| p.to_string()),
                if c.discard_results {
                    "discarded"
                } else {
                    "decoded"
                }
            )
        };
        return Err(differ("result consumption", consumed(c0), consumed(c)));
    }
    if c0.segments != c.segments {
        return Err(differ(
            "segments per driver",
            c0.segments.to_string(),
            c.segments.to_string(),
        ));
    }
    if c0.sample_interval_s != c.sample_interval_s {
        return Err(differ(
            "sample intervals",
            format!("{}s", c0.sample_interval_s),
            format!("{}s", c.sample_interval_s),
        ));
    }
    Ok(())
}

/// Warnings for inputs that drew the same iteration numbers (and so the same keys).
fn overlap_warnings(inputs: &[(String, Report)]) -> Vec<String> {
    let range = |r: &Report| {
        r.config
            .cycles
            .as_ref()
            .map_or((0, u64::MAX), |c| (c.start, c.end))
    };
    let mut out = Vec::new();
    for (i, (fa, a)) in inputs.iter().enumerate() {
        for (fb, b) in &inputs[i + 1..] {
            let ((s0, e0), (s1, e1)) = (range(a), range(b));
            if s0.max(s1) < e0.min(e1) {
                out.push(format!(
                    "{fa} and {fb} drew overlapping iteration numbers ({} and {}): they sent \
                     some of the same requests (give each loader its own --loader K/N or --cycles)",
                    describe(a),
                    describe(b)
                ));
            }
        }
    }
    out
}

fn describe(r: &Report) -> String {
    r.config
        .cycles
        .as_ref()
        .map_or("0.. (no --cycles or --loader)".to_owned(), |c| {
            format!("{}..{}", c.start, c.end)
        })
}

impl MergeError {
    /// Why `driver`'s figures of the machines could not be pooled.
    fn pooling(driver: &str) -> impl Fn(PoolError) -> Self + '_ {
        move |e| match e {
            PoolError::NoWallClock { file } => MergeError::NoWallClock {
                file,
                driver: driver.to_owned(),
            },
            PoolError::Histogram { file, source } => MergeError::Histogram {
                file,
                driver: driver.to_owned(),
                source,
            },
        }
    }
}

fn merge_backend(
    driver: &str,
    parts: &[(&str, &BackendReport)],
    interval_s: f64,
) -> Result<BackendReport, MergeError> {
    let requests: u64 = parts.iter().map(|(_, b)| b.throughput.requests).sum();
    // Each machine's part of a figure, for the figures' pooling.
    fn each<'a, T>(
        parts: &[(&'a str, &'a BackendReport)],
        figure: fn(&BackendReport) -> &T,
    ) -> Vec<Part<'a, T>> {
        parts
            .iter()
            .map(|(f, b)| (*f, b.throughput.requests, figure(b)))
            .collect()
    }
    let pooling = MergeError::pooling(driver);
    let (samples, latency, service) =
        SampleFigures::pooled(&each(parts, |b| &b.samples), interval_s).map_err(&pooling)?;
    // Every machine's send lateness when each has one; else none (a partial merge would
    // pass for the whole).
    let mut lateness = Some(crate::engine::lateness::SendLateness::default());
    for (file, b) in parts {
        lateness = match (lateness, &b.latency.send_lateness) {
            (Some(mut l), Some(part)) => {
                l.merge(&part.histograms().map_err(|source| MergeError::Histogram {
                    file: (*file).to_owned(),
                    driver: driver.to_owned(),
                    source,
                })?);
                Some(l)
            }
            _ => None,
        };
    }
    let (throughputs, means) = samples.full_series(interval_s);
    let statements =
        StatementFigures::pooled(&each(parts, |b| &b.statements), &samples.samples, requests)
            .map_err(&pooling)?;
    let machines: Vec<(&str, MachineParts<'_>)> = parts
        .iter()
        .map(|(f, b)| {
            let p = MachineParts {
                throughput: &b.throughput,
                client_cpu: &b.client_cpu,
                syscalls: &b.syscalls,
                io_uring: &b.io_uring,
                context_switches: &b.context_switches,
                memory: &b.memory,
                socket_batching: &b.socket_batching,
            };
            (*f, p)
        })
        .collect();
    Ok(BackendReport {
        statements,
        segments: SegmentList::pooled(),
        server_cpu: ServerCpuFigures::pooled(),
        anatomy: AnatomyReport::pooled(),
        waterfall: WaterfallReport::pooled(),
        result_rows: RowFigures::pooled(&each(parts, |b| &b.result_rows)),
        driver: driver.to_owned(),
        throughput: ThroughputFigures::pooled(&each(parts, |b| &b.throughput), &throughputs),
        client_cpu: ClientCpuFigures::pooled(&each(parts, |b| &b.client_cpu)),
        syscalls: SyscallFigures::pooled(&each(parts, |b| &b.syscalls), requests),
        io_uring: IoUringFigures::pooled(&each(parts, |b| &b.io_uring), requests),
        hardware: HardwareFigures::pooled(&each(parts, |b| &b.hardware)),
        context_switches: ContextSwitchFigures::pooled(&each(parts, |b| &b.context_switches)),
        memory: MemoryFigures::pooled(&each(parts, |b| &b.memory)),
        socket_batching: SocketBatchingFigures::pooled(&each(parts, |b| &b.socket_batching)),
        driver_counts: DriverCountFigures::pooled(&each(parts, |b| &b.driver_counts)),
        enters: UringEnterFigures::pooled(&each(parts, |b| &b.enters), requests),
        while_parked: WhileParked::pooled(&each(parts, |b| &b.while_parked)),
        scylla_shards: ScyllaShardFigures::pooled(&each(parts, |b| &b.scylla_shards)),
        latency: LatencyFigures::pooled(
            &each(parts, |b| &b.latency),
            &latency,
            &means,
            &service,
            lateness.as_ref(),
        ),
        samples,
        machines: MachineList::pooled(&machines),
    })
}

#[cfg(test)]
mod tests;
