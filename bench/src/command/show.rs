//! `doppio show`: a report as text (a findmax report's table, or a run's report alone or
//! beside a baseline).

use std::path::Path;

use super::setup::check_writable;
use crate::failure::{Failure, UsageError};
use crate::render::text;
use crate::report::findmax::FindmaxReport;
use crate::report::BackendReport;
use crate::report::Report;

/// `doppio show`: a findmax report's table, or else a run's report as
/// [`show_run`] prints it. Findmax reports are compared by `doppio plot`, not here.
pub fn show(
    report: &Path,
    baseline: Option<&Path>,
    log: bool,
    flamediff: Option<&Path>,
) -> Result<(), Failure> {
    if let Some(svg) = flamediff {
        let Some(base) = baseline else {
            return Err(UsageError::FlamediffWithoutBaseline.into());
        };
        check_writable(svg, "--flamediff")?;
        differential(report, base, svg)?;
    }
    let Some(found) = FindmaxReport::read_if_findmax(report)? else {
        return show_run(report, baseline, log);
    };
    if let Some(b) = baseline {
        return Err(UsageError::FindmaxWithBaseline {
            report: report.to_owned(),
            baseline: b.to_owned(),
        }
        .into());
    }
    print!("{}", crate::render::findmax_table::table(&found));
    Ok(())
}

/// A run's report, alone or beside `baseline`.
fn show_run(report: &Path, baseline: Option<&Path>, log: bool) -> Result<(), Failure> {
    let r = Report::read(report)?;
    match baseline {
        None => print!("{}", text::render(&r, log)),
        Some(b) => {
            let base = Report::read(b)?;
            print!("{}", text::render_pair(&r, &base));
        }
    }
    Ok(())
}

/// The first backend of a report (as `show NEW BASE` compares them), with its folded
/// stacks, requests and name.
fn stacks_of(path: &Path) -> Result<(String, Vec<u8>, u64), Failure> {
    let r = Report::read(path)?;
    let first: Option<(&String, &BackendReport)> = r
        .config
        .drivers
        .iter()
        .find_map(|d| r.backends.get(d).map(|b| (d, b)));
    let no_stacks = || UsageError::NoFoldedStacks {
        report: path.to_owned(),
    };
    let (driver, b) = first.ok_or_else(no_stacks)?;
    let folded = b
        .anatomy
        .as_ref()
        .and_then(|a| a.folded.as_ref())
        .ok_or_else(no_stacks)?;
    let stacks = std::fs::read(folded).map_err(|source| UsageError::FoldedUnreadable {
        path: folded.into(),
        report: path.to_owned(),
        source,
    })?;
    let label = match &r.tag {
        Some(t) => format!("{driver} [{t}]"),
        None => format!(
            "{driver} [{}]",
            r.started_at.get(..16).unwrap_or(&r.started_at)
        ),
    };
    Ok((label, stacks, b.throughput.requests))
}

/// `show NEW BASE --flamediff SVG`: the differential flamegraph of CPU per request, the new
/// report against the baseline.
fn differential(report: &Path, baseline: &Path, svg: &Path) -> Result<(), Failure> {
    let (new_label, new, new_requests) = stacks_of(report)?;
    let (base_label, base, base_requests) = stacks_of(baseline)?;
    crate::probe::flame::draw_differential_to(
        svg,
        (&base_label, &base, base_requests),
        (&new_label, &new, new_requests),
    )
    .map_err(UsageError::Flamediff)?;
    eprintln!("differential flamegraph written to {}", svg.display());
    Ok(())
}
