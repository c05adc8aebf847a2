//! `doppio plot REPORT... -o FILE.svg`: throughput and latency percentiles over time, one
//! line per backend of each report (a merged report is one report), two panels stacked:
//! requests per second per sample, and the chosen percentiles of each sample (p50 and p99
//! from the samples' own figures, any other from their histograms). Time runs over the
//! measured samples of a backend, segments placed end to end, so that backends that
//! alternated (A B A B) are drawn over the same time axis.
//!
//! Findmax reports ([`plot_findmax`]) are drawn the same way against the target rate: the
//! achieved rate of each step above, its p99 below, one line per backend.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::failure::{Failure, PlotError, UsageError};
use crate::report::findmax::{FindmaxReport, Step};
use crate::report::{BackendReport, Report};
use crate::stats::LatencyHistogram;

/// One line of a panel.
struct Line {
    label: String,
    points: Vec<(f64, f64)>,
    /// Its backend's place in the palette.
    color: usize,
    /// 1.0: solid.
    opacity: f64,
}

/// (time, throughput, [percentile ms...]) of each sample of `b`.
fn series(b: &BackendReport, percentiles: &[f64]) -> Result<Vec<(f64, f64, Vec<f64>)>, PlotError> {
    let mut out = Vec::with_capacity(b.samples.len());
    let (mut offset, mut base, mut segment) = (0.0, 0.0, None);
    for s in &b.samples {
        if segment != Some(s.segment) {
            base = offset;
            segment = Some(s.segment);
        }
        let end = base + s.start_s + s.duration_s;
        offset = end;
        let mut values = Vec::with_capacity(percentiles.len());
        let mut histogram = None;
        for &p in percentiles {
            let ns = if p == 50.0 {
                s.latency_p50_ns
            } else if p == 99.0 {
                s.latency_p99_ns
            } else {
                let h = match &histogram {
                    Some(h) => h,
                    None => histogram.insert(
                        LatencyHistogram::from_base64(&s.histogram)
                            .map_err(PlotError::Histogram)?,
                    ),
                };
                h.value_at_percentile(p)
            };
            values.push(ns as f64 / 1e6);
        }
        out.push((end, s.throughput_rps, values));
    }
    Ok(out)
}

/// Parses `--percentiles` ("50,99,99.9").
pub fn parse_percentiles(text: &str) -> Result<Vec<f64>, PlotError> {
    let ps: Vec<f64> = text
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| PlotError::Percentile(p.to_owned()))
        })
        .collect::<Result<_, _>>()?;
    if ps.is_empty() {
        return Err(PlotError::NoPercentile);
    }
    Ok(ps)
}

/// `doppio plot`: draws `reports` to `output`.
pub fn plot(
    reports: &[(String, Report)],
    percentiles: &[f64],
    output: &Path,
    title: &str,
) -> Result<(), PlotError> {
    let several = reports.len() > 1;
    let mut backends = 0;
    let mut throughput = Vec::new();
    let mut latency = Vec::new();
    for (file, r) in reports {
        for driver in &r.config.drivers {
            let Some(b) = r.backends.get(driver) else {
                continue;
            };
            let name = if several {
                format!("{} {driver}", r.tag.clone().unwrap_or_else(|| file.clone()))
            } else {
                driver.clone()
            };
            let points = series(b, percentiles)?;
            // One colour per backend in both panels; its percentiles from faint (the lowest)
            // to solid (the highest), so that a latency line is read by its backend's colour.
            let color = backends;
            backends += 1;
            throughput.push(Line {
                label: name.clone(),
                points: points.iter().map(|(t, rps, _)| (*t, *rps)).collect(),
                color,
                opacity: 1.0,
            });
            for (k, p) in percentiles.iter().enumerate() {
                latency.push(Line {
                    label: format!("{name} p{p}"),
                    points: points.iter().map(|(t, _, v)| (*t, v[k])).collect(),
                    color,
                    opacity: 0.35 + 0.65 * (k + 1) as f64 / percentiles.len() as f64,
                });
            }
        }
    }
    if throughput.is_empty() {
        return Err(PlotError::NoSamples);
    }
    draw(&throughput, &latency, "time [s]", output, title).map_err(|source| PlotError::Draw {
        path: output.to_owned(),
        source,
    })
}

/// `doppio plot` of findmax reports: against the target rate, the achieved rate (top) and
/// p99 (bottom) of each step, one line per backend of each report.
pub fn plot_findmax(
    reports: &[(String, FindmaxReport)],
    output: &Path,
    title: &str,
) -> Result<(), PlotError> {
    let several = reports.len() > 1;
    let mut achieved = Vec::new();
    let mut p99 = Vec::new();
    for (file, r) in reports {
        for driver in &r.config.drivers {
            let Some(b) = r.backends.get(driver).filter(|b| !b.steps.is_empty()) else {
                continue;
            };
            let name = if several {
                format!("{} {driver}", r.tag.clone().unwrap_or_else(|| file.clone()))
            } else {
                driver.clone()
            };
            // Bisection steps come after the search: in order of target for the lines.
            let mut steps: Vec<&Step> = b.steps.iter().collect();
            steps.sort_by(|x, y| x.target_rps.total_cmp(&y.target_rps));
            let color = achieved.len();
            achieved.push(Line {
                label: name.clone(),
                points: steps
                    .iter()
                    .map(|s| (s.target_rps, s.achieved_rps))
                    .collect(),
                color,
                opacity: 1.0,
            });
            p99.push(Line {
                label: format!("{name} p99"),
                points: steps
                    .iter()
                    .map(|s| (s.target_rps, s.latency_p99_ms))
                    .collect(),
                color,
                opacity: 1.0,
            });
        }
    }
    if achieved.is_empty() {
        return Err(PlotError::NoSteps);
    }
    draw(&achieved, &p99, "target rate [req/s]", output, title).map_err(|source| PlotError::Draw {
        path: output.to_owned(),
        source,
    })
}

fn draw(
    throughput: &[Line],
    latency: &[Line],
    x_desc: &str,
    output: &Path,
    title: &str,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let root = SVGBackend::new(output, (1100, 800)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (top, bottom) = root.split_vertically(380);
    let palette = [
        RGBColor(200, 60, 40),
        RGBColor(40, 90, 200),
        RGBColor(40, 150, 60),
        RGBColor(150, 60, 170),
        RGBColor(210, 140, 20),
        RGBColor(20, 150, 160),
    ];
    for (area, lines, y_desc) in [
        (&top, throughput, "throughput [req/s]"),
        (&bottom, latency, "latency [ms]"),
    ] {
        let x_max = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .fold(0.0f64, f64::max);
        let y_max = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .filter(|y| y.is_finite())
            .fold(0.0f64, f64::max);
        let mut chart = ChartBuilder::on(area)
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..x_max.max(1e-9), 0.0..(y_max * 1.1).max(1e-9))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()?;
        for line in lines {
            let color = palette[line.color % palette.len()].mix(line.opacity);
            chart
                .draw_series(LineSeries::new(line.points.clone(), color.stroke_width(2)))?
                .label(line.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// `doppio plot`: `reports` drawn over time to `output`.
pub fn command(
    reports: &[PathBuf],
    output: &Path,
    percentiles: &str,
    title: Option<&str>,
) -> Result<(), Failure> {
    let percentiles = parse_percentiles(percentiles)?;
    let mut findmax = Vec::new();
    for path in reports {
        if let Some(r) = FindmaxReport::read_if_findmax(path)? {
            findmax.push((path.display().to_string(), r));
        }
    }
    if !findmax.is_empty() {
        if findmax.len() != reports.len() {
            return Err(UsageError::MixedPlot.into());
        }
        let title = title.unwrap_or("achieved rate and p99 against target rate");
        plot_findmax(&findmax, output, title)?;
        eprintln!("plot written to {}", output.display());
        return Ok(());
    }
    let mut loaded = Vec::with_capacity(reports.len());
    for path in reports {
        loaded.push((path.display().to_string(), Report::read(path)?));
    }
    let title = title.unwrap_or("throughput and latency over time");
    plot(&loaded, &percentiles, output, title)?;
    eprintln!("plot written to {}", output.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_parse_or_say_which_is_wrong() {
        assert_eq!(
            parse_percentiles("50, 99,99.9").unwrap(),
            vec![50.0, 99.0, 99.9]
        );
        assert!(parse_percentiles("50,101")
            .unwrap_err()
            .to_string()
            .contains("`101`"));
        assert!(parse_percentiles("p99")
            .unwrap_err()
            .to_string()
            .contains("`p99`"));
    }
}
