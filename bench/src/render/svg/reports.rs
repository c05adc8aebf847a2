//! The SVG of `doppio plot REPORT... -o FILE.svg`: throughput and latency percentiles over
//! time, one line per backend of each report (a merged report is one report), two panels
//! stacked:
//! requests per second per sample, and the chosen percentiles of each sample (p50 and p99
//! from the samples' own figures, any other from their histograms). Time runs over the
//! measured samples of a backend, segments placed end to end, so that backends that
//! alternated (A B A B) are drawn over the same time axis.
//!
//! Findmax reports ([`plot_findmax`]) are drawn the same way against the target rate: the
//! achieved rate of each step above, with the target rate itself as a grey line (a step
//! on it held its rate), and its p99 below, with the run's p99 objective as a grey line.
//!
//! How they look (legend beside the data, SI axes, strokes) is [`super::chart`]'s.

use std::path::Path;

use plotters::prelude::*;

use super::chart::{self, DrawError, Line, Stroke};
use crate::failure::PlotError;
use crate::report::findmax::{FindmaxReport, Step};
use crate::report::{BackendReport, Report};
use crate::slo::Slo;
use crate::stats::LatencyHistogram;

/// One of the two panels: its lines and what its y axis measures.
struct Panel {
    lines: Vec<Line>,
    /// The y axis' description, with its unit.
    y_desc: String,
}

impl Panel {
    /// A latency panel of `lines` given in milliseconds, shown in the unit their range
    /// reads best in.
    fn latency(mut lines: Vec<Line>, what: &str) -> Panel {
        let (unit, factor) = chart::latency_unit(chart::y_max(&lines));
        for line in &mut lines {
            for p in &mut line.points {
                p.1 *= factor;
            }
        }
        Panel {
            lines,
            y_desc: format!("{what} [{unit}]"),
        }
    }
}

/// (time, throughput, [percentile ms...]) of each sample of `b`.
fn series(b: &BackendReport, percentiles: &[f64]) -> Result<Vec<(f64, f64, Vec<f64>)>, PlotError> {
    let mut out = Vec::with_capacity(b.samples.samples.len());
    let (mut offset, mut base, mut segment) = (0.0, 0.0, None);
    for s in &b.samples.samples {
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

/// `doppio plot`: draws `reports` to `output`.
pub(crate) fn plot(
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
            // One colour per backend in both panels; its percentiles from faint and dotted
            // (the lowest) to opaque and solid (the highest), so that a latency line is read
            // by its backend's colour and its percentile's stroke.
            let backend = backends;
            backends += 1;
            throughput.push(Line::of_backend(
                name.clone(),
                points.iter().map(|(t, rps, _)| (*t, *rps)).collect(),
                backend,
            ));
            for (k, p) in percentiles.iter().enumerate() {
                let mut line = Line::of_backend(
                    format!("{name} p{p}"),
                    points.iter().map(|(t, _, v)| (*t, v[k])).collect(),
                    backend,
                );
                line.opacity = 0.45 + 0.55 * (k + 1) as f64 / percentiles.len() as f64;
                line.stroke = Stroke::of_percentile(k, percentiles.len());
                latency.push(line);
            }
        }
    }
    if throughput.is_empty() {
        return Err(PlotError::NoSamples);
    }
    let top = Panel {
        lines: throughput,
        y_desc: "throughput [req/s]".into(),
    };
    let bottom = Panel::latency(latency, "latency");
    draw(&top, &bottom, "time [s]", output, title).map_err(|source| PlotError::Draw {
        path: output.to_owned(),
        source,
    })
}

/// `doppio plot` of findmax reports: against the target rate, the achieved rate (top) and
/// p99 (bottom) of each step, one line per backend of each report.
pub(crate) fn plot_findmax(
    reports: &[(String, FindmaxReport)],
    output: &Path,
    title: &str,
) -> Result<(), PlotError> {
    let several = reports.len() > 1;
    let mut achieved = Vec::new();
    let mut p99 = Vec::new();
    let mut objectives: Vec<Slo> = Vec::new();
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
            let backend = achieved.len();
            achieved.push(Line::of_backend(
                name.clone(),
                steps
                    .iter()
                    .map(|s| (s.target_rps, s.achieved_rps))
                    .collect(),
                backend,
            ));
            p99.push(Line::of_backend(
                format!("{name} p99"),
                steps
                    .iter()
                    .map(|s| (s.target_rps, s.latency_p99_ms))
                    .collect(),
                backend,
            ));
        }
        for text in &r.config.slo {
            if let Ok(slo) = Slo::parse(text) {
                if slo.percentile == 99.0 && !objectives.iter().any(|o: &Slo| o.bound == slo.bound)
                {
                    objectives.push(slo);
                }
            }
        }
    }
    if achieved.is_empty() {
        return Err(PlotError::NoSteps);
    }
    let targets = achieved
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .filter(|t| t.is_finite());
    let (low, high) = targets.fold((f64::INFINITY, 0.0f64), |(lo, hi), t| {
        (lo.min(t), hi.max(t))
    });
    if low <= high {
        achieved.push(Line::reference(
            "target rate".into(),
            vec![(low, low), (high, high)],
        ));
    }
    // The objective spans the targets tried, drawn in the latency panel's unit below.
    for slo in objectives {
        let ms = slo.bound.as_secs_f64() * 1e3;
        p99.push(Line::reference(
            format!("objective {}", slo.text),
            vec![(low.min(high), ms), (high, ms)],
        ));
    }
    let top = Panel {
        lines: achieved,
        y_desc: "achieved rate [req/s]".into(),
    };
    let bottom = Panel::latency(p99, "p99 latency");
    draw(&top, &bottom, "target rate [req/s]", output, title).map_err(|source| PlotError::Draw {
        path: output.to_owned(),
        source,
    })
}

/// Draws the two panels, each with its legend in a column beside it, to `output` (SVG).
fn draw(
    top: &Panel,
    bottom: &Panel,
    x_desc: &str,
    output: &Path,
    title: &str,
) -> Result<(), DrawError> {
    let (width, height) = (1200u32, 840u32);
    let root = SVGBackend::new(output, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (upper, lower) = root.split_vertically((height - 40) / 2);
    let x_max = [top, bottom]
        .iter()
        .flat_map(|p| p.lines.iter())
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::max);
    for (area, panel) in [(&upper, top), (&lower, bottom)] {
        let (data, legend) = area.split_horizontally(width - chart::LEGEND_WIDTH);
        let y_max = chart::y_max(&panel.lines);
        let mut chart = ChartBuilder::on(&data)
            .margin(15)
            // Room for the last x label, centred on the right edge of the data.
            .margin_right(35)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..x_max.max(1e-9), 0.0..(y_max * 1.1).max(1e-9))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(panel.y_desc.as_str())
            .x_label_formatter(&|x| chart::si(*x))
            .y_label_formatter(&|y| chart::si(*y))
            .draw()?;
        for line in &panel.lines {
            chart::draw_line(&mut chart, line)?;
        }
        chart::draw_legend(&legend, &panel.lines)?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use resvg::{tiny_skia, usvg};

    /// Two backends (red, blue), their throughput near 150k req/s and three percentiles of
    /// latency below a millisecond, drawn to `dir/plot.svg`: the SVG's text, and its pixels.
    fn sample(dir: &Path) -> (String, tiny_skia::Pixmap) {
        let mut throughput = Vec::new();
        let mut latency = Vec::new();
        for b in 0..2 {
            let base = 140_000.0 + 10_000.0 * b as f64;
            throughput.push(Line::of_backend(
                format!("backend{b}"),
                (0..20)
                    .map(|t| (t as f64, base + 500.0 * t as f64))
                    .collect(),
                b,
            ));
            for (k, p) in [50.0, 99.0, 99.9].iter().enumerate() {
                let mut line = Line::of_backend(
                    format!("backend{b} p{p}"),
                    (0..20)
                        .map(|t| {
                            (
                                t as f64,
                                0.1 + 0.2 * k as f64 + 0.03 * b as f64 + 0.005 * t as f64,
                            )
                        })
                        .collect(),
                    b,
                );
                line.stroke = Stroke::of_percentile(k, 3);
                latency.push(line);
            }
        }
        let top = Panel {
            lines: throughput,
            y_desc: "throughput [req/s]".into(),
        };
        let bottom = Panel::latency(latency, "latency");
        let svg_path = dir.join("plot.svg");
        draw(&top, &bottom, "time [s]", &svg_path, "sample").unwrap();
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        let mut options = usvg::Options::default();
        let fonts = options.fontdb_mut();
        fonts.load_system_fonts();
        // The SVG asks for "sans-serif": the font the set-up installs (fonts-dejavu-core).
        assert!(
            fonts
                .faces()
                .any(|f| f.families.iter().any(|(n, _)| n == "DejaVu Sans")),
            "no DejaVu Sans font: scripts/setup-lib.sh installs fonts-dejavu-core"
        );
        fonts.set_sans_serif_family("DejaVu Sans");
        let tree = usvg::Tree::from_str(&svg, &options).unwrap();
        let size = tree.size().to_int_size();
        let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
        resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
        pixmap.save_png(dir.join("plot.png")).unwrap();
        // Nothing drawn past the canvas (a label cut at an edge widens the drawing).
        let bounds = tree.root().abs_bounding_box();
        assert!(
            bounds.left() >= -0.5
                && bounds.top() >= -0.5
                && bounds.right() <= size.width() as f32 + 0.5
                && bounds.bottom() <= size.height() as f32 + 0.5,
            "drawn past the canvas: {bounds:?}"
        );
        (svg, pixmap)
    }

    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                Some(
                    t.split_once('>')?
                        .1
                        .split_once("</text>")?
                        .0
                        .trim()
                        .to_owned(),
                )
            })
            .collect()
    }

    /// Pixels whose colour leans to the palette's red (backend 0) or blue (backend 1),
    /// however faint, in columns `xs`.
    fn tinted(pixmap: &tiny_skia::Pixmap, xs: std::ops::Range<u32>) -> (usize, usize) {
        let (mut red, mut blue) = (0, 0);
        for y in 0..pixmap.height() {
            for x in xs.clone() {
                let p = pixmap.pixel(x, y).unwrap();
                let (r, g, b) = (p.red() as i32, p.green() as i32, p.blue() as i32);
                if r - g > 40 && r - b > 40 {
                    red += 1;
                }
                if b - r > 40 && b - g > 25 {
                    blue += 1;
                }
            }
        }
        (red, blue)
    }

    #[test]
    fn a_plot_keeps_its_legend_beside_the_data_and_labels_its_axes_in_si() {
        let dir = std::env::temp_dir().join(format!("doppio-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (svg, pixmap) = sample(&dir);
        let texts = texts(&svg);
        // SI tick labels (`150k`), never `150000.0`; latency below 1 ms in microseconds.
        assert!(texts.iter().any(|t| t.ends_with('k')), "{texts:?}");
        assert!(
            !texts
                .iter()
                .any(|t| t.len() >= 5 && t.chars().all(|c| c.is_ascii_digit() || c == '.')),
            "a raw number as a label: {texts:?}"
        );
        assert!(texts.iter().any(|t| t == "latency [µs]"), "{texts:?}");
        for t in ["backend0", "backend1 p99.9", "backend0 p50"] {
            assert!(texts.iter().any(|x| x == t), "legend {t}: {texts:?}");
        }
        // The data are drawn left of the legend column, in both colours.
        let legend_x = pixmap.width() - chart::LEGEND_WIDTH;
        let (red, blue) = tinted(&pixmap, 0..legend_x);
        assert!(
            red > 500 && blue > 500,
            "lines in the data area: {red} red, {blue} blue"
        );
        // The legend column holds the samples of the lines (its first 50 pixels), and no
        // line of the data crosses into the rest of it.
        let (red, blue) = tinted(&pixmap, legend_x..legend_x + 50);
        assert!(
            red > 0 && blue > 0,
            "legend samples: {red} red, {blue} blue"
        );
        let (red, blue) = tinted(&pixmap, legend_x + 50..pixmap.width());
        assert_eq!((red, blue), (0, 0), "data drawn over the legend column");
        // ... and its labels are drawn there, in black.
        let dark = (0..pixmap.height())
            .flat_map(|y| (legend_x + 50..pixmap.width()).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                pixmap
                    .pixel(x, y)
                    .is_some_and(|p| p.red() < 90 && p.green() < 90)
            })
            .count();
        assert!(dark > 300, "legend labels: {dark} dark pixels");
        // DOPPIO_KEEP_PLOT=1 keeps plot.svg and plot.png to look at.
        if std::env::var_os("DOPPIO_KEEP_PLOT").is_some() {
            eprintln!("kept {}", dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
