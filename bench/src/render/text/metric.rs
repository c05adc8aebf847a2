//! A comparison table's row over a backend's entry ([`Metric`]: a figure's row read
//! through the entry, or one of its own), and one table written.

use super::layout::{change_from_written, header, row, Column};
use super::p_value::{p_value, percentile_p_value, statement_p_value, PercentileCache, Tested};
use crate::report::cell::{Row, SampleFigure, Value};
use crate::report::BackendReport;

/// A backend's figure as a table row reads it.
pub(super) type Getter<'a> = Box<dyn Fn(&BackendReport) -> Value + 'a>;

/// One row of a comparison table: what it is called and in which unit, how a backend's
/// figure is read and written, and how two columns are compared.
pub(super) struct Metric<'a> {
    /// The row's name (indented when it breaks down the row above).
    name: String,
    /// The unit, written in brackets after the name ("" for none).
    unit: &'static str,
    /// A backend's figure.
    get: Getter<'a>,
    /// Decimals of the figure as written.
    decimals: usize,
    /// Whether two columns show the relative change (second vs first).
    change: bool,
    /// The per-sample figure whose p-value two columns show.
    tested: Option<Tested<'a>>,
    /// The row is shown only when this holds for some column.
    shown_if: Box<dyn Fn(&BackendReport) -> bool + 'a>,
}

impl<'a> Metric<'a> {
    /// A row without a change column.
    pub(super) fn new(
        name: impl Into<String>,
        unit: &'static str,
        decimals: usize,
        get: impl Fn(&BackendReport) -> Value + 'a,
    ) -> Self {
        Metric {
            name: name.into(),
            unit,
            get: Box::new(get),
            decimals,
            change: false,
            tested: None,
            shown_if: Box::new(|_| true),
        }
    }

    /// A figure's `row`, read from the part of a backend's entry `part` picks.
    pub(super) fn of<T: 'a>(row: Row<'a, T>, part: fn(&BackendReport) -> &T) -> Self {
        let (get, shown_if) = (row.get, row.shown_if);
        Metric {
            name: row.name,
            unit: row.unit,
            get: Box::new(move |b| get(part(b))),
            decimals: row.decimals,
            change: row.change,
            tested: row.tested.map(Tested::Backend),
            shown_if: Box::new(move |b| shown_if(part(b))),
        }
    }

    /// Every row of `rows`, as [`Self::of`].
    pub(super) fn all<T: 'a>(rows: Vec<Row<'a, T>>, part: fn(&BackendReport) -> &T) -> Vec<Self> {
        rows.into_iter().map(|r| Self::of(r, part)).collect()
    }

    /// Two columns show the relative change.
    pub(super) fn change(mut self) -> Self {
        self.change = true;
        self
    }

    /// Two columns show the change and the p-value of run statement `name`'s `figure`.
    pub(super) fn tested_statement(mut self, name: &'a str, figure: SampleFigure) -> Self {
        self.change = true;
        self.tested = Some(Tested::Statement(name, figure));
        self
    }

    /// Shown only when `when` holds for some column.
    pub(super) fn shown_if(mut self, when: fn(&BackendReport) -> bool) -> Self {
        self.shown_if = Box::new(when);
        self
    }

    pub(super) fn label(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} [{}]", self.name, self.unit)
        }
    }
}

/// Writes one table: its header, then each row shown for these columns.
pub(super) fn table(out: &mut String, title: &str, metrics: &[Metric<'_>], columns: &[Column<'_>]) {
    header(out, title, columns);
    let mut percentiles = PercentileCache::new();
    for m in metrics {
        if !columns.iter().any(|(_, b)| (m.shown_if)(b)) {
            continue;
        }
        let values: Vec<Value> = columns.iter().map(|(_, b)| (m.get)(b)).collect();
        let cells: Vec<String> = values.iter().map(|v| v.text(m.decimals)).collect();
        let change = match values.as_slice() {
            [a, b] if m.change => change_from_written(a.compared(), b.compared(), m.decimals),
            _ => None,
        };
        // No p-value beside a figure a column lacks.
        let p = m
            .tested
            .filter(|_| !values.contains(&Value::Missing))
            .and_then(|t| match t {
                Tested::Backend(SampleFigure::Percentile(k)) => {
                    percentile_p_value(columns, k, &mut percentiles)
                }
                Tested::Backend(f) => p_value(columns, f),
                Tested::Statement(name, f) => statement_p_value(columns, name, f),
            });
        row(out, &m.label(), &cells, change, p);
    }
}
