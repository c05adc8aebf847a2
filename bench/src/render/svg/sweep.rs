//! The SVG of `doppio sweep`: throughput and client CPU per request against concurrency
//! (log scale), a line per backend, the legend in a column of its own.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use super::chart::{self, DrawError, Line};
use crate::failure::SweepError;
use crate::report::BackendReport;

/// One report's backends at its concurrency.
pub(crate) struct Point {
    /// Its `-p`.
    pub(crate) concurrency: usize,
    /// Its backends' figures, by name.
    pub(crate) backends: BTreeMap<String, BackendReport>,
}

/// Draws req/s and CPU per request against concurrency (log scale), a line per backend,
/// the legend in a column of its own.
pub(crate) fn plot(points: &[Point], path: &Path, title: &str) -> Result<(), SweepError> {
    let err = |source: DrawError| SweepError::Draw {
        path: path.to_owned(),
        source,
    };
    let width = 1300u32;
    let root = SVGBackend::new(path, (width, 470)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(err)?;
    let (panels, legend) = root.split_horizontally(width - chart::LEGEND_WIDTH);
    let (left, right) = panels.split_horizontally((width - chart::LEGEND_WIDTH) / 2);
    let names: Vec<String> = {
        let mut n: Vec<String> = points
            .iter()
            .flat_map(|p| p.backends.keys().cloned())
            .collect();
        n.sort();
        n.dedup();
        n
    };
    let c_min = points.first().map_or(1, |p| p.concurrency).max(1) as f64;
    let c_max = points.last().map_or(1, |p| p.concurrency).max(2) as f64;
    let mut legend_lines = Vec::new();
    for (area, label, value) in [
        (
            &left,
            "throughput [req/s]",
            (|b: &BackendReport| b.throughput.throughput_rps) as fn(&BackendReport) -> f64,
        ),
        (
            &right,
            "client CPU per request [µs]",
            |b: &BackendReport| b.client_cpu.cpu_us_per_req,
        ),
    ] {
        let lines: Vec<Line> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let series = points
                    .iter()
                    .filter_map(|p| {
                        p.backends
                            .get(name)
                            .map(|b| (p.concurrency.max(1) as f64, value(b)))
                    })
                    .collect();
                Line::of_backend(name.clone(), series, i)
            })
            .collect();
        let y_max = chart::y_max(&lines) * 1.1;
        let mut chart = ChartBuilder::on(area)
            .margin(15)
            .margin_right(30)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((c_min..c_max).log_scale(), 0.0..y_max.max(1e-9))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("concurrency (log scale)")
            .y_desc(label)
            .x_label_formatter(&|x| chart::si(*x))
            .y_label_formatter(&|y| chart::si(*y))
            .draw()
            .map_err(err)?;
        for line in &lines {
            chart::draw_line(&mut chart, line).map_err(err)?;
            chart
                .draw_series(
                    line.points
                        .iter()
                        .map(|&(x, y)| Circle::new((x, y), 4, line.color.filled())),
                )
                .map_err(err)?;
        }
        legend_lines = lines;
    }
    chart::draw_legend(&legend, &legend_lines).map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
