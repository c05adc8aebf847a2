//! `doppio show`: a report as text (a findmax report's table, or a run's report alone or
//! beside a baseline).

use std::path::Path;

use super::failure::{Failure, UsageError};
use crate::report::findmax::FindmaxReport;
use crate::report::{text, Report};

/// `doppio show`: a findmax report's table, or else a run's report as
/// [`show_run`] prints it. Findmax reports are compared by `doppio plot`, not here.
pub fn show(report: &Path, baseline: Option<&Path>, log: bool) -> Result<(), Failure> {
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
    print!("{}", found.render());
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
