//! The text report: CONFIG, LOG, SUMMARY, LATENCY, OVERHEAD, STATEMENTS and ERRORS sections,
//! at most 100 columns wide. One backend prints one column; two (one run of `--driver doppio,scylla`,
//! or `show A.json B.json`) print side by side with the relative change and, where
//! per-sample data allow it, the p-value of Welch's t-test corrected for autocorrelation.
//!
//! The comparison tables (SUMMARY, LATENCY, OVERHEAD) are data: `compare::tables` lists each row
//! once as a `Metric` (name, unit, how a backend's figure is read and written, whether two
//! columns show its change and p-value, when it is shown), and one loop writes them.
//!
//! STATEMENTS (workloads of several `[[run]]` statements only): with one backend, one line
//! per statement (weight, requests and their share, throughput, errors, latency); with two
//! or more, one table per statement with the backends side by side, as SUMMARY (p-values of
//! its throughput and mean latency from its per-sample figures).
//!
//! Children (each figure's own rows are in its file of [`crate::report::figure`]): [`config`],
//! CONFIG and the differences of machine and build; [`log`], LOG; [`compare`], the
//! comparison tables as data, their notes, and PAIRS; [`metric`], a table's row over the
//! entry and one table written; [`layout`], the columns, widths, header and row lines;
//! [`p_value`], the p-values two columns show; [`statements`], STATEMENTS; [`machines`],
//! MACHINES of a merged report; [`notes`], NOTES and the VERDICT.

mod compare;
mod config;
#[cfg(test)]
mod environment_and_anatomy_tests;
mod layout;
mod log;
mod machines;
mod metric;
mod notes;
mod p_value;
mod statements;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use crate::report::{BackendReport, Report};
use compare::{compare_sections, pairs_section};
use config::{config_section, environment_differences};
use layout::measured_columns;
use log::log_section;
use machines::machines_section;
use notes::{notes_section, verdict_section};

/// Renders `report` in full (every backend side by side, LOG lines included if `log`).
pub(crate) fn render(report: &Report, log: bool) -> String {
    let (columns, not_run) = measured_columns(&report.config.drivers, &report.backends);
    let mut out = String::new();
    config_section(&mut out, report);
    if log {
        for (label, b) in &columns {
            log_section(&mut out, label, &b.samples.samples);
        }
    }
    // A run that failed before any backend measured anything has no figures to show.
    if !columns.is_empty() {
        compare_sections(&mut out, &columns);
        pairs_section(&mut out, &columns);
        machines_section(&mut out, &columns);
    }
    if !not_run.is_empty() {
        let _ = writeln!(
            out,
            "NOT RUN          {} (no request measured: the run stopped before its turn, or it \
             could not start; no figure is shown for it, rather than zeros)\n",
            not_run.join(", ")
        );
    }
    notes_section(&mut out, report);
    verdict_section(&mut out, report);
    out
}

/// Renders two reports' first backends side by side (`show NEW.json BASELINE.json`).
pub(crate) fn render_pair(new: &Report, baseline: &Report) -> String {
    let mut out = String::new();
    config_section(&mut out, new);
    environment_differences(&mut out, new, baseline);
    fn first(r: &Report) -> Option<(String, &BackendReport)> {
        r.config
            .drivers
            .iter()
            .find_map(|d| r.backends.get(d).map(|b| (d.clone(), b)))
    }
    let (Some(a), Some(b)) = (first(new), first(baseline)) else {
        out.push_str("one of the reports has no backend results\n");
        return out;
    };
    let label = |r: &Report, d: &str| match &r.tag {
        Some(t) => format!("{d} [{t}]"),
        None => format!("{d} [{}]", &r.started_at.get(..16).unwrap_or(&r.started_at)),
    };
    // Baseline first, new second: the change reads as new relative to baseline.
    let columns = vec![(label(baseline, &b.0), b.1), (label(new, &a.0), a.1)];
    compare_sections(&mut out, &columns);
    notes_section(&mut out, new);
    out
}
