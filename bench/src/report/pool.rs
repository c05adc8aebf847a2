//! The arithmetic every figure shares: a total over the requests ([`per_req`]), over the
//! time ([`per_second`]) or over another total ([`share`]), a mean's margin ([`margin`]), and
//! one figure pooled over the loader machines of `doppio merge` ([`pooled`], [`pooled_opt`],
//! [`pooled_ratio`], [`missing_reason`]), over any part of a backend's entry (the whole
//! entry, or one figure's struct in [`super::figure`]), with a machine's histogram read back
//! ([`decode`]) or why it could not be ([`PoolError`]).

use crate::stats::{estimate, LatencyHistogram, StatsError};

/// One machine's share of a pooled figure: its report's file, its requests, and its figure.
pub(crate) type Part<'a, T> = (&'a str, u64, &'a T);

/// `x` over `requests` (0 without requests).
pub(crate) fn per_req(x: f64, requests: u64) -> f64 {
    if requests > 0 {
        x / requests as f64
    } else {
        0.0
    }
}

/// `part` over `whole` (0 when `whole` is 0).
pub(crate) fn share(part: u64, whole: u64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64
    } else {
        0.0
    }
}

/// `n` over `seconds` (0 when no time passed).
pub(crate) fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

/// The 99 % confidence half-width of the mean of `xs` by batch means (0 when there are too
/// few samples to tell).
pub(crate) fn margin(xs: &[f64]) -> f64 {
    let e = estimate(xs, 0.99);
    if e.margin.is_finite() {
        e.margin
    } else {
        0.0
    }
}

/// Sum of `f` over the machines, weighted by their requests, over all requests: the
/// figure of the pooled totals (each figure is a total divided by the machine's requests).
pub(crate) fn pooled<T>(parts: &[Part<'_, T>], f: impl Fn(&T) -> f64) -> f64 {
    let requests: u64 = parts.iter().map(|(_, n, _)| n).sum();
    if requests == 0 {
        return 0.0;
    }
    parts.iter().map(|(_, n, b)| f(b) * *n as f64).sum::<f64>() / requests as f64
}

/// [`pooled`] of a figure that may be missing: `None` when any machine lacks it.
pub(crate) fn pooled_opt<T>(parts: &[Part<'_, T>], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    if parts.iter().any(|(_, _, b)| f(b).is_none()) {
        return None;
    }
    Some(pooled(parts, |b| f(b).unwrap_or(0.0)))
}

/// Requests per event (flush, read) of the pooled totals: total requests over the sum of
/// each machine's events (its requests over its ratio); `None` when any machine lacks it.
pub(crate) fn pooled_ratio<T>(parts: &[Part<'_, T>], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    let mut events = 0.0;
    let mut requests = 0.0;
    for (_, n, b) in parts {
        let r = f(b).filter(|r| *r > 0.0)?;
        events += *n as f64 / r;
        requests += *n as f64;
    }
    (events > 0.0).then(|| requests / events)
}

/// Why a pooled figure is missing: the first machine's reason.
pub(crate) fn missing_reason<T>(
    parts: &[Part<'_, T>],
    counted: impl Fn(&T) -> bool,
    why: impl Fn(&T) -> Option<&String>,
) -> Option<String> {
    parts.iter().find(|(_, _, b)| !counted(b)).map(|(f, _, b)| {
        format!(
            "not counted on all machines ({f}: {})",
            why(b).map_or("not counted", String::as_str)
        )
    })
}

/// Why a machine's figure could not be pooled (`doppio merge` says which driver's).
#[derive(Debug)]
pub(crate) enum PoolError {
    /// A sample of this machine's report has no wall-clock start (an older report).
    NoWallClock {
        /// The machine's report.
        file: String,
    },
    /// A histogram of this machine's report could not be decoded.
    Histogram {
        /// The machine's report.
        file: String,
        /// Why.
        source: StatsError,
    },
}

/// The histogram `text` (base64) of the machine whose report is `file`.
pub(crate) fn decode(file: &str, text: &str) -> Result<LatencyHistogram, PoolError> {
    LatencyHistogram::from_base64(text).map_err(|source| PoolError::Histogram {
        file: file.to_owned(),
        source,
    })
}
