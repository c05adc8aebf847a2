//! The load curve's SVG (`curve.svg`): a panel per figure, the load (% of the slowest
//! backend's capacity) across, a line per backend in its colour (`--driver`'s order, as
//! `doppio plot` gives them) with a dot at each load, and one legend in a column of its own.
//! Panels: client CPU per request; client and node CPU per request (only when the node's
//! was measured); syscalls per request (when counted); wake-ups per request (the client's
//! sleeps: voluntary context switches, counted alike for every backend); p50 and p99
//! latency (logarithmic).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::chart::{self, DrawError, Line};
use crate::report::curve::{Curve, CurvePoint};

/// Size of one panel, pixels.
const PANEL: (u32, u32) = (560, 360);

/// Panels side by side.
const COLUMNS: usize = 2;

/// The x axis's label.
const X_DESC: &str = "load [% of the slowest backend's capacity]";

/// What a panel shows.
#[derive(Clone, Copy)]
enum Scale {
    /// A figure from 0 up.
    Linear,
    /// A latency, nanoseconds, drawn in the unit its range reads best in on a logarithmic
    /// axis.
    Latency,
}

/// One panel: its axis label (a latency's without its unit), its figure of a point, its
/// scale.
struct Panel {
    y_desc: &'static str,
    value: fn(&CurvePoint) -> Option<f64>,
    scale: Scale,
}

/// Every panel, in the order drawn (left to right, then down).
const PANELS: [Panel; 6] = [
    Panel {
        y_desc: "client CPU per request [µs]",
        value: |p| Some(p.cpu_us_per_req),
        scale: Scale::Linear,
    },
    Panel {
        y_desc: "client + node CPU per request [µs]",
        value: |p| p.client_plus_server_cpu_us_per_req,
        scale: Scale::Linear,
    },
    Panel {
        y_desc: "syscalls per request",
        value: |p| p.syscalls_per_req,
        scale: Scale::Linear,
    },
    Panel {
        y_desc: "wake-ups (sleeps) per request",
        value: |p| p.sleeps_per_req,
        scale: Scale::Linear,
    },
    Panel {
        y_desc: "p50 latency",
        value: |p| Some(p.latency_p50_ns as f64),
        scale: Scale::Latency,
    },
    Panel {
        y_desc: "p99 latency",
        value: |p| Some(p.latency_p99_ns as f64),
        scale: Scale::Latency,
    },
];

/// A panel as drawn: its axis label and its lines (a backend without the figure has none).
struct Drawn {
    y_desc: String,
    lines: Vec<Line>,
    log: bool,
}

/// The panels `c` has a figure for, their lines in the unit drawn.
fn panels_of(c: &Curve) -> Vec<Drawn> {
    PANELS
        .iter()
        .filter_map(|panel| {
            let mut lines: Vec<Line> = c
                .drivers
                .iter()
                .enumerate()
                .filter_map(|(k, name)| {
                    let points: Vec<(f64, f64)> = c
                        .backends
                        .get(name)?
                        .iter()
                        .filter_map(|p| Some((p.share * 100.0, (panel.value)(p)?)))
                        .filter(|(_, y)| y.is_finite())
                        .collect();
                    (!points.is_empty()).then(|| Line::of_backend(name.clone(), points, k))
                })
                .collect();
            if lines.is_empty() {
                return None;
            }
            let y_desc = match panel.scale {
                Scale::Linear => panel.y_desc.to_owned(),
                Scale::Latency => {
                    let (unit, per_ms) = chart::latency_unit(chart::y_max(&lines) / 1e6);
                    for line in &mut lines {
                        for p in &mut line.points {
                            p.1 = p.1 / 1e6 * per_ms;
                        }
                    }
                    format!("{} [{unit}] (log scale)", panel.y_desc)
                }
            };
            Some(Drawn {
                y_desc,
                lines,
                log: matches!(panel.scale, Scale::Latency),
            })
        })
        .collect()
}

/// Draws `c` to `path` (SVG) under `title`.
pub(crate) fn draw(c: &Curve, path: &Path, title: &str) -> Result<(), DrawError> {
    let panels = panels_of(c);
    let rows = panels.len().div_ceil(COLUMNS).max(1);
    let width = COLUMNS as u32 * PANEL.0 + chart::LEGEND_WIDTH;
    let height = rows as u32 * PANEL.1 + 40;
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (grid, legend) = root.split_horizontally(width - chart::LEGEND_WIDTH);
    let areas = grid.split_evenly((rows, COLUMNS));
    for (area, panel) in areas.iter().zip(&panels) {
        if panel.log {
            draw_log(area, panel)?;
        } else {
            draw_linear(area, panel)?;
        }
    }
    // Every backend has a client CPU figure: the first panel's lines name them all.
    if let Some(first) = panels.first() {
        chart::draw_legend(&legend, &first.lines)?;
    }
    root.present()?;
    Ok(())
}

/// A panel of figures from 0 up.
fn draw_linear<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Drawn,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let y_max = (chart::y_max(&panel.lines) * 1.1).max(1e-9);
    let mut chart = builder(area).build_cartesian_2d(0.0..100.0, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc(X_DESC)
        .y_desc(panel.y_desc.as_str())
        .x_label_formatter(&|x| chart::si(*x))
        .y_label_formatter(&|y| chart::si(*y))
        .draw()?;
    lines(&mut chart, &panel.lines)
}

/// A panel on a logarithmic y axis (values above 0 only).
fn draw_log<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Drawn,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let ys = panel
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .filter(|y| *y > 0.0 && y.is_finite());
    let (low, high) = ys.fold((f64::INFINITY, 0.0f64), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    let (low, high) = if low <= high {
        (low / 1.5, high * 1.5)
    } else {
        (1e-3, 1.0)
    };
    let mut chart = builder(area).build_cartesian_2d(0.0..100.0, (low..high).log_scale())?;
    chart
        .configure_mesh()
        .x_desc(X_DESC)
        .y_desc(panel.y_desc.as_str())
        .x_label_formatter(&|x| chart::si(*x))
        .y_label_formatter(&|y| chart::si(*y))
        .draw()?;
    lines(&mut chart, &panel.lines)
}

/// A panel's frame: margins and room for the axes' labels.
fn builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.margin(15)
        .margin_right(30)
        .x_label_area_size(45)
        .y_label_area_size(70);
    b
}

/// Each line, with a dot at each of its loads (a curve of few loads is read by its dots).
fn lines<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    lines: &[Line],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    for line in lines {
        chart::draw_line(chart, line)?;
        chart.draw_series(
            line.points
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 4, line.color.filled())),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::curve::KIND;

    fn point(share: f64, node: Option<f64>) -> CurvePoint {
        CurvePoint {
            share,
            rate: 1000.0 * share,
            throughput_rps: 1000.0 * share,
            cpu_us_per_req: 10.0 - share,
            cpu_user_us_per_req: 5.0,
            cpu_sys_us_per_req: 5.0 - share,
            server_cpu_us_per_req: node,
            client_plus_server_cpu_us_per_req: node.map(|n| n + 10.0 - share),
            syscalls_per_req: None,
            ctx_switches_per_req: 0.5,
            sleeps_per_req: Some(0.4),
            waits_per_req: None,
            latency_p50_ns: 200_000,
            latency_p99_ns: 900_000,
            send_lateness_p50_ns: None,
            kept_schedule: None,
        }
    }

    fn curve(node: Option<f64>) -> Curve {
        Curve {
            kind: KIND.into(),
            schema_version: 1,
            tool: String::new(),
            workload: "empty".into(),
            drivers: vec!["scylla".into(), "doppio".into()],
            loads: Vec::new(),
            backends: ["doppio", "scylla"]
                .iter()
                .map(|d| {
                    let series = [0.1, 0.5, 0.9].map(|s| point(s, node)).to_vec();
                    ((*d).to_owned(), series)
                })
                .collect(),
            cpu_ratios: Vec::new(),
            left_out: Vec::new(),
        }
    }

    #[test]
    fn panels_are_those_measured_each_with_a_line_per_backend_in_its_colour() {
        let c = curve(None);
        let panels = panels_of(&c);
        let labels: Vec<&str> = panels.iter().map(|p| p.y_desc.as_str()).collect();
        // No node CPU, no syscalls: their panels are left out; latency below a
        // millisecond reads in microseconds.
        assert_eq!(
            labels,
            [
                "client CPU per request [µs]",
                "wake-ups (sleeps) per request",
                "p50 latency [µs] (log scale)",
                "p99 latency [µs] (log scale)"
            ]
        );
        for p in &panels {
            let names: Vec<&str> = p.lines.iter().map(|l| l.label.as_str()).collect();
            // --driver's order: scylla the first colour, doppio the second.
            assert_eq!(names, ["scylla", "doppio"]);
            assert_eq!(p.lines[0].color, chart::PALETTE[0]);
            assert_eq!(p.lines[1].color, chart::PALETTE[1]);
        }
        assert_eq!(panels[0].lines[0].points[1], (50.0, 9.5));
        assert_eq!(panels[3].lines[0].points[0], (10.0, 900.0));
        assert!(panels[2].log && !panels[0].log);
        let with_node = panels_of(&curve(Some(20.0)));
        assert_eq!(with_node[1].y_desc, "client + node CPU per request [µs]");
        assert_eq!(with_node[1].lines[1].points[2], (90.0, 29.1));
        let dir = std::env::temp_dir().join(format!("doppio-curve-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("curve.svg");
        draw(&curve(Some(20.0)), &svg, "t").unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("client + node CPU per request [µs]"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
