//! The rows figure: the result rows of a backend's successful requests (every page), per
//! measured second and per client CPU time, when they were counted; computed from the
//! measured samples, pooled in a merge, and its SUMMARY and OVERHEAD rows.

use serde::{Deserialize, Serialize};

use crate::report::cell::{Row, Value};
use crate::report::pool::Part;

/// A backend's result rows (`BackendReport`'s fields, flattened: the names are the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RowFigures {
    /// Result rows of the successful requests (every page), `null` when not counted.
    #[serde(default)]
    pub rows: Option<u64>,
    /// Rows per measured second, `null` when rows were not counted.
    #[serde(default)]
    pub rows_per_s: Option<f64>,
    /// Client CPU time per row, microseconds; `null` when no row was counted.
    #[serde(default)]
    pub cpu_us_per_row: Option<f64>,
}

impl RowFigures {
    /// The figure of `rows` (if `counted`) over `elapsed` seconds and `cpu_s` seconds of
    /// client CPU.
    pub(crate) fn of(counted: bool, rows: u64, elapsed: f64, cpu_s: f64) -> Self {
        RowFigures {
            rows: counted.then_some(rows),
            rows_per_s: (counted && elapsed > 0.0).then(|| rows as f64 / elapsed),
            cpu_us_per_row: (counted && rows > 0).then(|| cpu_s * 1e6 / rows as f64),
        }
    }

    /// The machines' rows: summed (`null` if a machine did not count them), rows per second
    /// summed like the throughput, CPU per row pooled over the machines' CPU time and rows.
    pub(crate) fn pooled(parts: &[Part<'_, Self>]) -> Self {
        let rows = parts.iter().map(|(_, _, b)| b.rows).sum::<Option<u64>>();
        let rows_per_s = parts
            .iter()
            .map(|(_, _, b)| b.rows_per_s)
            .sum::<Option<f64>>();
        let cpu_us_per_row = rows.filter(|r| *r > 0).and_then(|total| {
            let cpu_us = parts
                .iter()
                .map(|(_, _, b)| match (b.cpu_us_per_row, b.rows) {
                    (Some(per_row), Some(n)) => Some(per_row * n as f64),
                    (_, Some(0)) => Some(0.0),
                    _ => None,
                })
                .sum::<Option<f64>>()?;
            Some(cpu_us / total as f64)
        });
        RowFigures {
            rows,
            rows_per_s,
            cpu_us_per_row,
        }
    }

    /// Its SUMMARY rows, when some column counted rows: the rows, and per second.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        vec![
            Row::new("rows", "", 0, |b: &Self| {
                b.rows.map_or(Value::Missing, Value::Count)
            })
            .change()
            .shown_if(|b| b.rows.is_some()),
            Row::new("rows", "rows/s", 0, |b: &Self| {
                Value::or_missing(b.rows_per_s)
            })
            .change()
            .shown_if(|b| b.rows.is_some()),
        ]
    }

    /// Its OVERHEAD row (after the client CPU's): the client CPU per row.
    pub(crate) fn cpu_rows<'a>() -> Vec<Row<'a, Self>> {
        vec![Row::new("client CPU per row", "us", 3, |b: &Self| {
            Value::or_missing(b.cpu_us_per_row)
        })
        .change()
        .shown_if(|b| b.cpu_us_per_row.is_some())]
    }
}
