//! `doppio findmax`: the saturation search (`crate::experiment::findmax`) of the options
//! given, then its table on stdout and its report on disk.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::setup::{contest_of, ReportPath};
use crate::cli::FindmaxArgs;
use crate::experiment::findmax::{search, HOLD_FRACTION, MAX_ERROR_RATIO};
use crate::failure::{Failure, RunFailure, UsageError};
use crate::report::findmax::{FindmaxBackend, FindmaxConfig, FindmaxReport, KIND};

/// `doppio findmax`: the search, the table on stdout, the report on disk.
pub fn findmax(a: &FindmaxArgs, argv: Vec<String>) -> Result<PathBuf, Failure> {
    let c = &a.connect;
    let (workload, drivers, options) = contest_of(c, &a.results)?;
    if a.start > a.max_rate {
        return Err(UsageError::StartAboveMaxRate {
            start: a.start,
            max_rate: a.max_rate,
        }
        .into());
    }
    let started_at = crate::report::now_rfc3339();
    let output = ReportPath::choose(
        a.output.as_deref(),
        "doppio-findmax",
        &workload.name,
        &started_at,
    )?;
    let mut report = FindmaxReport {
        kind: KIND.to_owned(),
        tool: format!("doppio-bench {}", env!("CARGO_PKG_VERSION")),
        tag: a.tag.clone(),
        started_at,
        command: argv,
        workload: workload.name.clone(),
        config: FindmaxConfig {
            nodes: options.nodes.iter().map(ToString::to_string).collect(),
            drivers: drivers.iter().map(|d| d.name().to_owned()).collect(),
            concurrency: a.concurrency,
            threads: options.threads,
            connections: options.connections,
            consistency: options.consistency.name().to_owned(),
            start_rps: a.start,
            factor: a.factor,
            max_rate_rps: a.max_rate,
            step_duration_s: a.step_duration.as_secs_f64(),
            warmup_s: a.warmup.as_secs_f64(),
            refine: a.refine,
            slo: a.slo.iter().map(|s| s.text.clone()).collect(),
            hold_fraction: HOLD_FRACTION,
            max_error_ratio: MAX_ERROR_RATIO,
            page_size: Some(a.results.page_size),
            discard_results: a.results.discard_results,
            connection_shapes: BTreeMap::new(),
        },
        backends: drivers
            .iter()
            .map(|d| (d.name().to_owned(), FindmaxBackend::default()))
            .collect(),
        fatal_error: None,
    };
    let result = search(a, &workload, &drivers, &options, &mut report);
    let failure = match result {
        Ok(()) => None,
        // Could not start (no backend connected, statements refused): nothing to report,
        // and a reserved default name is given back.
        Err(e) if !matches!(e, Failure::Run(_) | Failure::Interrupted) => {
            output.release();
            return Err(e);
        }
        Err(e) => {
            report.fatal_error = Some(e.to_string());
            Some(e)
        }
    };
    print!("{}", crate::render::findmax_table::table(&report));
    let written = report.write(output.path());
    if written.is_ok() {
        // Printed on every search that wrote its report, failed or interrupted too.
        eprintln!("report written to {}", output.path().display());
    }
    if let Some(e) = failure {
        return Err(e);
    }
    written.map_err(|e| Failure::Run(RunFailure::Report(e)))?;
    Ok(output.path().to_owned())
}
