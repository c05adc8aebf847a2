//! `doppio list`: one line per report of a folder (run and findmax reports, oldest first),
//! then every `.json` file it skipped and why, so that a report that no longer reads (an
//! older schema, a truncated file) is seen rather than silently missing.

use std::path::{Path, PathBuf};

use crate::failure::{Failure, UsageError};
use crate::report::file::is_report_name;
use crate::report::findmax::FindmaxReport;
use crate::report::Report;

/// One listed report: its file, tag, start, workload and figures per backend.
struct Row {
    path: PathBuf,
    tag: Option<String>,
    started_at: String,
    workload: String,
    figures: String,
}

/// `doppio list`: one line per report in `dir`, then what was skipped.
pub fn list(dir: &Path) -> Result<(), Failure> {
    if !dir.is_dir() {
        return Err(UsageError::NotAFolder {
            path: dir.to_owned(),
        }
        .into());
    }
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_report_name(p))
        .collect();
    paths.sort();
    for path in paths {
        match read_row(&path) {
            Ok(row) => rows.push(row),
            Err(why) => skipped.push((path, why)),
        }
    }
    rows.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    println!(
        "{:<34} {:<12} {:<20} {:<10} throughput [req/s] (findmax: highest rate held)",
        "file", "tag", "date", "workload"
    );
    for r in &rows {
        let name = r
            .path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        println!(
            "{:<34} {:<12} {:<20} {:<10} {}",
            name,
            r.tag.as_deref().unwrap_or("-"),
            r.started_at,
            r.workload,
            r.figures
        );
    }
    if !skipped.is_empty() {
        eprintln!(
            "skipped {} file(s) that are not doppio reports:",
            skipped.len()
        );
        for (path, why) in &skipped {
            eprintln!("  {}: {why}", path.display());
        }
    }
    Ok(())
}

/// The row of the report at `path`, or why it is not one.
fn read_row(path: &Path) -> Result<Row, String> {
    match FindmaxReport::read_if_findmax(path) {
        Ok(Some(r)) => {
            let figures: Vec<String> = r
                .backends
                .iter()
                .map(|(d, b)| match b.max_rate_rps {
                    Some(max) => format!("{d} max {max:.0}"),
                    None => format!("{d} no rate held"),
                })
                .collect();
            return Ok(Row {
                path: path.to_owned(),
                tag: r.tag,
                started_at: r.started_at,
                workload: r.workload,
                figures: format!("findmax: {}", figures.join(", ")),
            });
        }
        Ok(None) => {}
        Err(e) => return Err(e.to_string()),
    }
    let r = Report::read(path).map_err(|e| e.to_string())?;
    let figures: Vec<String> = r
        .config
        .drivers
        .iter()
        .filter_map(|d| {
            r.backends
                .get(d)
                .map(|b| format!("{d} {:.0}", b.throughput.throughput_rps))
        })
        .collect();
    Ok(Row {
        path: path.to_owned(),
        tag: r.tag,
        started_at: r.started_at,
        workload: r.workload.name,
        figures: figures.join(", "),
    })
}
