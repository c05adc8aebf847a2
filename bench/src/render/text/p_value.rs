//! The p-values two columns show: Welch's t-test of a figure's per-sample values (the
//! backend's, a latency percentile's from each sample's histogram, or a run statement's).

use super::layout::Column;
use crate::report::cell::{SampleFigure, TESTED_PERCENTILES};
use crate::report::{BackendReport, SampleReport};
use crate::stats::welch_t_test;

/// `what` of every full sample (a partial last one under half an interval would skew it
/// and is left out, as in the report's margins); for latency figures only samples that
/// answered something.
pub(super) fn per_sample(samples: &[SampleReport], what: SampleFigure) -> Vec<f64> {
    let full = samples.first().map_or(0.0, |s| s.duration_s) * 0.5;
    samples
        .iter()
        .filter(|s| s.duration_s >= full && s.duration_s > 0.0)
        .filter(|s| what == SampleFigure::Throughput || s.requests > s.errors)
        .filter_map(|s| match what {
            SampleFigure::Throughput => Some(s.throughput_rps),
            SampleFigure::MeanLatency => Some(s.latency_mean_ns),
            // Tested from the histograms (`percentile_p_value`).
            SampleFigure::Percentile(_) => None,
        })
        .collect()
}

/// Each full sample's [`TESTED_PERCENTILES`], ns, from its histogram (decoded once per
/// column); samples without a readable histogram (older reports) are left out.
pub(super) fn sample_percentiles(samples: &[SampleReport]) -> Vec<[f64; TESTED_PERCENTILES.len()]> {
    let full = samples.first().map_or(0.0, |s| s.duration_s) * 0.5;
    samples
        .iter()
        .filter(|s| s.duration_s >= full && s.duration_s > 0.0 && s.requests > s.errors)
        .filter_map(|s| crate::stats::LatencyHistogram::from_base64(&s.histogram).ok())
        .filter(|h| h.count() > 0)
        .map(|h| TESTED_PERCENTILES.map(|p| h.value_at_percentile(p) as f64))
        .collect()
}

/// Per-column [`sample_percentiles`], computed on first need by one table.
pub(super) type PercentileCache = Vec<Option<Vec<[f64; TESTED_PERCENTILES.len()]>>>;

/// The p-value of Welch's t-test (on batch means) of the two columns' per-sample
/// percentile `k` of [`TESTED_PERCENTILES`].
pub(super) fn percentile_p_value(
    columns: &[Column<'_>],
    k: usize,
    cache: &mut PercentileCache,
) -> Option<f64> {
    if columns.len() != 2 {
        return None;
    }
    cache.resize(columns.len(), None);
    let mut series = Vec::with_capacity(2);
    for (i, (_, b)) in columns.iter().enumerate() {
        let all = cache[i].get_or_insert_with(|| sample_percentiles(&b.samples.samples));
        series.push(all.iter().map(|p| p[k]).collect::<Vec<f64>>());
    }
    if series.iter().any(|s| s.len() < 2) {
        return None;
    }
    Some(welch_t_test(&series[0], &series[1]).p_value)
}

pub(super) fn p_value(columns: &[Column<'_>], what: SampleFigure) -> Option<f64> {
    if columns.len() != 2 {
        return None;
    }
    let a = per_sample(&columns[0].1.samples.samples, what);
    let b = per_sample(&columns[1].1.samples.samples, what);
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    Some(welch_t_test(&a, &b).p_value)
}

/// The per-sample figure whose p-value a row shows: the backend's, or a run statement's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tested<'a> {
    /// The backend's figure.
    Backend(SampleFigure),
    /// The figure of the run statement of this name.
    Statement(&'a str, SampleFigure),
}

/// The p-value of Welch's t-test (on batch means) of run statement `name`'s per-sample
/// `what` in two columns; `None` unless both have two or more samples that carry the
/// statement's figures (reports written before them do not).
pub(super) fn statement_p_value(
    columns: &[Column<'_>],
    name: &str,
    what: SampleFigure,
) -> Option<f64> {
    let [(_, a), (_, b)] = columns else {
        return None;
    };
    let series = |r: &BackendReport| {
        let k = r
            .statements
            .statements
            .iter()
            .position(|s| s.name == name)?;
        if r.samples.samples.iter().any(|s| s.statements.len() <= k) {
            return None;
        }
        let (throughputs, means) =
            crate::report::figure::statements::statement_series(&r.samples.samples, k);
        Some(match what {
            SampleFigure::Throughput => throughputs,
            SampleFigure::MeanLatency => means,
            // A statement's samples carry no histogram: not tested.
            SampleFigure::Percentile(_) => return None,
        })
    };
    let (a, b) = (series(a)?, series(b)?);
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    Some(welch_t_test(&a, &b).p_value)
}
