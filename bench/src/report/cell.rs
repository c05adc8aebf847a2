//! One cell of the text report's comparison tables ([`Value`]: a backend's figure as a
//! row writes and compares it), a figure's rows over its own struct ([`Row`]), which
//! the tables of `render::text` read through the backend's entry, and the per-sample
//! figures a row's p-value is tested on ([`SampleFigure`]).

/// A backend's figure in one row of a comparison table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    /// A count, written whole.
    Count(u64),
    /// A number.
    Num(f64),
    /// A mean and its error margin, `m ± e`.
    Margin(f64, f64),
    /// Two parts of one figure, `a / b` (user and system CPU).
    Pair(f64, f64),
    /// A share in percent, `x %`.
    Percent(f64),
    /// Not measured for this backend (`n/a`).
    Missing,
}

impl Value {
    /// A figure the backend may lack.
    pub(crate) fn or_missing(x: Option<f64>) -> Self {
        x.map_or(Value::Missing, Value::Num)
    }

    /// The cell's text with `d` decimals.
    pub(crate) fn text(self, d: usize) -> String {
        match self {
            Value::Count(n) => n.to_string(),
            Value::Num(x) => format!("{x:.d$}"),
            Value::Margin(m, e) => format!("{m:.d$} ± {e:.d$}"),
            Value::Pair(a, b) => format!("{a:.d$} / {b:.d$}"),
            Value::Percent(x) => format!("{x:.d$} %"),
            Value::Missing => "n/a".to_owned(),
        }
    }

    /// The number two columns are compared on (NaN where there is none: no change shown).
    pub(crate) fn compared(self) -> f64 {
        match self {
            Value::Count(n) => n as f64,
            Value::Num(x) | Value::Margin(x, _) => x,
            Value::Pair(..) | Value::Percent(_) | Value::Missing => f64::NAN,
        }
    }
}

/// The per-sample figures `doppio show` tests for a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SampleFigure {
    /// Each sample's throughput.
    Throughput,
    /// Each sample's mean latency.
    MeanLatency,
    /// A latency percentile of each sample (its index in [`TESTED_PERCENTILES`]).
    Percentile(usize),
}

/// The latency percentiles whose rows get a p-value, tested on each sample's own
/// percentile (from its histogram), batch means as for the other figures.
pub(crate) const TESTED_PERCENTILES: [f64; 8] = [25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// One row of a comparison table over a figure's struct `T` (see `Metric` in
/// `render::text`, which reads it through the backend's entry).
pub(crate) struct Row<'a, T> {
    /// The row's name (indented when it breaks down the row above).
    pub name: String,
    /// The unit, written in brackets after the name ("" for none).
    pub unit: &'static str,
    /// Decimals of the figure as written.
    pub decimals: usize,
    /// The figure.
    pub get: Box<dyn Fn(&T) -> Value + 'a>,
    /// Whether two columns show the relative change (second vs first).
    pub change: bool,
    /// The per-sample figure whose p-value two columns show.
    pub tested: Option<SampleFigure>,
    /// The row is shown only when this holds for some column.
    pub shown_if: fn(&T) -> bool,
}

impl<'a, T> Row<'a, T> {
    /// A row without a change column, always shown.
    pub(crate) fn new(
        name: impl Into<String>,
        unit: &'static str,
        decimals: usize,
        get: impl Fn(&T) -> Value + 'a,
    ) -> Self {
        Row {
            name: name.into(),
            unit,
            decimals,
            get: Box::new(get),
            change: false,
            tested: None,
            shown_if: |_| true,
        }
    }

    /// Two columns show the relative change.
    pub(crate) fn change(mut self) -> Self {
        self.change = true;
        self
    }

    /// Two columns show the change and the p-value of `figure`.
    pub(crate) fn tested(mut self, figure: SampleFigure) -> Self {
        self.change = true;
        self.tested = Some(figure);
        self
    }

    /// Shown only when `when` holds for some column.
    pub(crate) fn shown_if(mut self, when: fn(&T) -> bool) -> Self {
        self.shown_if = when;
        self
    }
}
