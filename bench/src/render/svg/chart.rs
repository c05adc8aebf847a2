//! What every chart of the bench (`plot`, `sweep`, `curve`) draws alike, so that they read alike:
//! the palette (a colour per backend), the stroke of a line (solid, dashed, dotted: a
//! percentile or a reference line is told apart by its stroke as well as its shade), axis
//! labels in SI (`100k`, `1.5M`, never `100000.0`), latency in the unit its range reads
//! best in, and the legend in a column of its own beside the data, never over it.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// A chart's drawing error (plotters' own, over the SVG file).
pub(crate) type DrawError = DrawingAreaErrorKind<std::io::Error>;

/// Width of the legend column beside a panel, pixels.
pub(crate) const LEGEND_WIDTH: u32 = 300;

/// One colour per backend (by its place); past the end the palette starts again.
pub(crate) const PALETTE: [RGBColor; 6] = [
    RGBColor(200, 60, 40),
    RGBColor(40, 90, 200),
    RGBColor(40, 150, 60),
    RGBColor(150, 60, 170),
    RGBColor(210, 140, 20),
    RGBColor(20, 150, 160),
];

/// The colour of reference lines (a findmax run's target rate and objective).
pub(crate) const REFERENCE: RGBColor = RGBColor(110, 110, 110);

/// How a line is stroked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stroke {
    /// A continuous line.
    Solid,
    /// Dashes.
    Dashed,
    /// Dots.
    Dotted,
}

impl Stroke {
    /// The stroke of percentile `k` of `n` (in ascending order): the highest solid, the one
    /// below it dashed, the lower ones dotted.
    pub(crate) fn of_percentile(k: usize, n: usize) -> Stroke {
        match n.saturating_sub(k + 1) {
            0 => Stroke::Solid,
            1 => Stroke::Dashed,
            _ => Stroke::Dotted,
        }
    }

    /// The dash length and the gap between dashes, in pixels (`None`: solid). One place,
    /// so that a line and its legend sample are stroked alike.
    fn dashes(self) -> Option<(u32, u32)> {
        match self {
            Stroke::Solid => None,
            Stroke::Dashed => Some((10, 6)),
            Stroke::Dotted => Some((2, 5)),
        }
    }
}

/// One line of a panel, and its legend entry.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    /// Its legend text.
    pub(crate) label: String,
    /// (x, y) in the panel's units.
    pub(crate) points: Vec<(f64, f64)>,
    /// Its colour.
    pub(crate) color: RGBColor,
    /// 1.0: opaque.
    pub(crate) opacity: f64,
    /// Its stroke.
    pub(crate) stroke: Stroke,
}

impl Line {
    /// A line of backend number `backend` (its palette colour), opaque and solid.
    pub(crate) fn of_backend(label: String, points: Vec<(f64, f64)>, backend: usize) -> Line {
        Line {
            label,
            points,
            color: PALETTE[backend % PALETTE.len()],
            opacity: 1.0,
            stroke: Stroke::Solid,
        }
    }

    /// A grey dashed reference line.
    pub(crate) fn reference(label: String, points: Vec<(f64, f64)>) -> Line {
        Line {
            label,
            points,
            color: REFERENCE,
            opacity: 1.0,
            stroke: Stroke::Dashed,
        }
    }

    fn style(&self) -> ShapeStyle {
        self.color.mix(self.opacity).stroke_width(2)
    }
}

/// `v` in SI: three significant digits at most, `k`, `M`, `G` for thousands, millions and
/// billions (`100000` is `100k`, `1500000` is `1.5M`, `0.25` stays `0.25`).
pub(crate) fn si(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = scaled.abs();
    let decimals = if s >= 100.0 || s == 0.0 {
        0
    } else if s >= 10.0 {
        1
    } else if s >= 1.0 {
        2
    } else {
        3
    };
    let mut text = format!("{scaled:.decimals$}");
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    if text == "-0" {
        text = "0".to_owned();
    }
    format!("{text}{suffix}")
}

/// The unit a latency axis whose largest value is `max_ms` milliseconds reads best in:
/// its name and the factor from milliseconds (µs below 1 ms, s from 10 s up).
pub(crate) fn latency_unit(max_ms: f64) -> (&'static str, f64) {
    if max_ms < 1.0 {
        ("µs", 1e3)
    } else if max_ms >= 10_000.0 {
        ("s", 1e-3)
    } else {
        ("ms", 1.0)
    }
}

/// The largest finite y of `lines` (0 when none).
pub(crate) fn y_max(lines: &[Line]) -> f64 {
    lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .filter(|y| y.is_finite())
        .fold(0.0f64, f64::max)
}

/// Draws `line` on a chart (of linear or logarithmic axes).
pub(crate) fn draw_line<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    line: &Line,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    let style = line.style();
    let points = line.points.iter().copied();
    match line.stroke.dashes() {
        None => chart.draw_series(LineSeries::new(points, style))?,
        Some((dash, gap)) => chart.draw_series(DashedLineSeries::new(points, dash, gap, style))?,
    };
    Ok(())
}

/// Draws the legend of `lines` into `area` (the column beside their panel): a sample of
/// each line's stroke and colour, then its label, one entry under the other from the top.
pub(crate) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[Line],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    if lines.is_empty() {
        return Ok(());
    }
    let (_, height) = area.dim_in_pixel();
    let top = 20i32;
    let step = ((height as i32 - top - 10) / lines.len() as i32).clamp(8, 22);
    let font_size = (step - 6).clamp(8, 15);
    for (k, line) in lines.iter().enumerate() {
        let y = top + step * k as i32;
        let sample = [(10, y), (46, y)];
        let style = line.style();
        match line.stroke.dashes() {
            None => area.draw(&PathElement::new(sample, style))?,
            Some((dash, gap)) => area.draw(&DashedPathElement::new(sample, dash, gap, style))?,
        }
        area.draw(&Text::new(
            line.label.clone(),
            (54, y - font_size / 2 - 1),
            ("sans-serif", font_size).into_font(),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_labels_read_as_people_write_them() {
        for (v, text) in [
            (0.0, "0"),
            (0.25, "0.25"),
            (0.0125, "0.013"),
            (1.0, "1"),
            (2.5, "2.5"),
            (12.0, "12"),
            (999.0, "999"),
            (1000.0, "1k"),
            (12_345.0, "12.3k"),
            (100_000.0, "100k"),
            (1_500_000.0, "1.5M"),
            (2_000_000_000.0, "2G"),
            (-3000.0, "-3k"),
        ] {
            assert_eq!(si(v), text, "{v}");
        }
    }

    #[test]
    fn latency_takes_the_unit_of_its_range() {
        assert_eq!(latency_unit(0.4), ("µs", 1e3));
        assert_eq!(latency_unit(3.0), ("ms", 1.0));
        assert_eq!(latency_unit(25_000.0), ("s", 1e-3));
    }

    #[test]
    fn the_highest_percentile_is_solid_and_the_lower_ones_are_not() {
        let strokes: Vec<Stroke> = (0..3).map(|k| Stroke::of_percentile(k, 3)).collect();
        assert_eq!(strokes, [Stroke::Dotted, Stroke::Dashed, Stroke::Solid]);
        assert_eq!(Stroke::of_percentile(0, 1), Stroke::Solid);
    }
}
