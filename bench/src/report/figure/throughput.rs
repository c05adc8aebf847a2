//! The throughput figure: a backend's requests, errors (by kind, with each kind's first
//! message), measured time and the throughput they make, with its margin; computed from
//! the measured samples, pooled in a merge, and its SUMMARY rows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::cell::{Row, SampleFigure, Value};
use crate::report::pool::{margin, Part};

/// A backend's requests, errors and throughput (`BackendReport`'s fields, flattened: the
/// names are the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThroughputFigures {
    /// Mean throughput, requests per second (requests over measured time).
    pub throughput_rps: f64,
    /// Confidence half-width of the throughput (per-sample, autocorrelation-corrected).
    pub throughput_margin_rps: f64,
    /// Requests completed (successes and errors).
    pub requests: u64,
    /// Errors.
    pub errors: u64,
    /// Errors by kind.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The first message of each error kind.
    pub first_errors: BTreeMap<String, String>,
    /// Measured time, seconds (all segments).
    pub elapsed_s: f64,
}

impl ThroughputFigures {
    /// The figure of `requests` over `elapsed` seconds, its margin from the full samples'
    /// `throughputs`, and the errors counted by kind with each kind's first message.
    pub(crate) fn of(
        requests: u64,
        elapsed: f64,
        throughputs: &[f64],
        errors_by_kind: BTreeMap<String, u64>,
        first_errors: BTreeMap<String, String>,
    ) -> Self {
        ThroughputFigures {
            throughput_rps: if elapsed > 0.0 {
                requests as f64 / elapsed
            } else {
                0.0
            },
            throughput_margin_rps: margin(throughputs),
            requests,
            errors: errors_by_kind.values().sum(),
            errors_by_kind,
            first_errors,
            elapsed_s: elapsed,
        }
    }

    /// The machines' figures combined: their throughputs, requests and errors summed (the
    /// margin from the wall-clock-aligned samples' `throughputs`), each kind's first message
    /// from the first machine that had it (named), the longest measured time.
    pub(crate) fn pooled(parts: &[Part<'_, Self>], throughputs: &[f64]) -> Self {
        let mut errors_by_kind: BTreeMap<String, u64> = BTreeMap::new();
        let mut first_errors: BTreeMap<String, String> = BTreeMap::new();
        for (file, _, b) in parts {
            for (k, n) in &b.errors_by_kind {
                *errors_by_kind.entry(k.clone()).or_default() += n;
            }
            for (k, m) in &b.first_errors {
                first_errors
                    .entry(k.clone())
                    .or_insert_with(|| format!("{file}: {m}"));
            }
        }
        ThroughputFigures {
            throughput_rps: parts.iter().map(|(_, _, b)| b.throughput_rps).sum(),
            throughput_margin_rps: margin(throughputs),
            requests: parts.iter().map(|(_, _, b)| b.requests).sum(),
            errors: parts.iter().map(|(_, _, b)| b.errors).sum(),
            errors_by_kind,
            first_errors,
            elapsed_s: parts
                .iter()
                .map(|(_, _, b)| b.elapsed_s)
                .fold(0.0, f64::max),
        }
    }

    /// Its first SUMMARY rows: the throughput (tested on the samples'), the requests and
    /// the errors.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        vec![
            Row::new("throughput", "req/s", 0, |b: &Self| {
                Value::Margin(b.throughput_rps, b.throughput_margin_rps)
            })
            .tested(SampleFigure::Throughput),
            Row::new("requests", "", 0, |b: &Self| Value::Count(b.requests)).change(),
            Row::new("errors", "", 0, |b: &Self| Value::Count(b.errors)),
        ]
    }

    /// Its SUMMARY row of the measured time (after the retries' rows).
    pub(crate) fn time_row<'a>() -> Row<'a, Self> {
        Row::new("measured time", "s", 2, |b: &Self| Value::Num(b.elapsed_s))
    }
}
