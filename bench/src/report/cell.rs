//! One cell of the text report's comparison tables ([`Value`]: a backend's figure as a
//! row writes and compares it), and a figure's rows over its own struct ([`Row`]), which
//! the tables of [`super::text`] read through the backend's entry.

/// A backend's figure in one row of a comparison table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
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
    pub fn or_missing(x: Option<f64>) -> Self {
        x.map_or(Value::Missing, Value::Num)
    }

    /// The cell's text with `d` decimals.
    pub fn text(self, d: usize) -> String {
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
    pub fn compared(self) -> f64 {
        match self {
            Value::Count(n) => n as f64,
            Value::Num(x) | Value::Margin(x, _) => x,
            Value::Pair(..) | Value::Percent(_) | Value::Missing => f64::NAN,
        }
    }
}

/// One row of a comparison table over a figure's struct `T` (see `Metric` in
/// [`super::text`], which reads it through the backend's entry).
pub struct Row<'a, T> {
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
    /// The row is shown only when this holds for some column.
    pub shown_if: fn(&T) -> bool,
}

impl<'a, T> Row<'a, T> {
    /// A row without a change column, always shown.
    pub fn new(
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
            shown_if: |_| true,
        }
    }

    /// Two columns show the relative change.
    pub fn change(mut self) -> Self {
        self.change = true;
        self
    }

    /// Shown only when `when` holds for some column.
    pub fn shown_if(mut self, when: fn(&T) -> bool) -> Self {
        self.shown_if = when;
        self
    }
}
