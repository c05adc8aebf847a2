//! `doppio sweep REPORT.json...`: a series of runs at different concurrencies (one report
//! each, every backend in it) as a markdown table (written by `crate::render::sweep_table`)
//! and a plot of throughput and client CPU per request against concurrency, one line per
//! backend (drawn by `crate::render::svg::sweep`): the reports read, the table printed, the
//! files written.

use std::path::{Path, PathBuf};

use crate::failure::SweepError;
use crate::render::svg::sweep::{plot, Point};
use crate::render::sweep_table::markdown;
use crate::report::Report;

fn load(paths: &[PathBuf]) -> Result<Vec<Point>, SweepError> {
    let mut points = Vec::new();
    for p in paths {
        let r = Report::read(p).map_err(|source| SweepError::Read {
            path: p.clone(),
            source,
        })?;
        points.push(Point {
            concurrency: r.config.concurrency,
            backends: r.backends,
        });
    }
    points.sort_by_key(|p| p.concurrency);
    Ok(points)
}

/// `doppio sweep`: prints the markdown table; writes it and the plot where asked.
pub fn sweep(
    reports: &[PathBuf],
    markdown_out: Option<&Path>,
    svg_out: Option<&Path>,
    title: &str,
) -> Result<(), SweepError> {
    let points = load(reports)?;
    if points.is_empty() {
        return Err(SweepError::NoReport);
    }
    let table = markdown(&points);
    print!("{table}");
    if let Some(p) = markdown_out {
        std::fs::write(p, &table).map_err(|source| SweepError::Write {
            path: p.to_owned(),
            source,
        })?;
    }
    if let Some(p) = svg_out {
        plot(&points, p, title)?;
        eprintln!("plot written to {}", p.display());
    }
    Ok(())
}
