//! A latency distribution's summary ([`LatencySummary`]): its mean with the mean's error
//! margin and its percentiles, nanoseconds, as every latency-like figure of a report gives
//! it. Below the report's other files: each figure's file builds its summaries here.

use serde::{Deserialize, Serialize};

use crate::stats::{estimate, LatencyHistogram};

/// Percentiles of a latency distribution, nanoseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    /// Mean over all successful requests.
    pub mean: f64,
    /// Half-width of the confidence interval of the mean (from per-sample means, corrected
    /// for autocorrelation).
    pub mean_margin: f64,
    /// Minimum.
    pub min: u64,
    /// 25th percentile.
    pub p25: u64,
    /// Median.
    pub p50: u64,
    /// 75th percentile.
    pub p75: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// 99.99th percentile.
    pub p9999: u64,
    /// Maximum.
    pub max: u64,
}

impl LatencySummary {
    /// Summarises a histogram; `sample_means` (one per sample) give the mean's error margin
    /// (0 without them).
    pub(crate) fn of(h: &LatencyHistogram, sample_means: &[f64]) -> Self {
        let e = estimate(sample_means, 0.99);
        let p = |q: f64| h.value_at_percentile(q);
        LatencySummary {
            mean: h.mean(),
            mean_margin: if e.margin.is_finite() { e.margin } else { 0.0 },
            min: h.min(),
            p25: p(25.0),
            p50: p(50.0),
            p75: p(75.0),
            p90: p(90.0),
            p95: p(95.0),
            p99: p(99.0),
            p999: p(99.9),
            p9999: p(99.99),
            max: h.max(),
        }
    }
}
