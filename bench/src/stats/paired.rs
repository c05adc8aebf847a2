//! The ratio of two figures measured side by side in rounds: a paired t-test on the
//! logarithms of the pairs' ratios, optionally adjusted for a drift within rounds.

use super::moments::{mean, variance};
use super::student_t::{student_t_quantile, student_t_two_sided_p};

/// The ratio of `b` to `a` estimated from pairs `(a_i, b_i)` measured side by side (one
/// pair per round of an interleaved run), with its interval and a paired t-test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PairedRatio {
    /// The geometric mean of the pairs' ratios `b_i / a_i`.
    pub(crate) ratio: f64,
    /// The interval's low end (NaN with fewer than two pairs).
    pub(crate) low: f64,
    /// The interval's high end (NaN with fewer than two pairs).
    pub(crate) high: f64,
    /// The two-sided p-value of "the ratio is 1" (1 with fewer than two pairs).
    pub(crate) p_value: f64,
    /// The pairs used (both figures positive and finite).
    pub(crate) pairs: usize,
    /// Whether the ratio was adjusted for a drift within rounds
    /// ([`paired_ratio_adjusted`]).
    pub(crate) adjusted: bool,
}

/// [`PairedRatio`] at `confidence` (e.g. 0.99): the paired t-test on the logarithms of the
/// pairs' ratios, with `pairs - 1` degrees of freedom, its interval taken back to a ratio.
/// Pairing by round removes whatever drifts from round to round (a node warming up, a
/// neighbour's load); what drifts within a round cancels only when the order rotates. A
/// pair with a figure that is not positive and finite is left out. Identical ratios give
/// an interval of no width, and p = 0 (1 when they are all 1).
pub(crate) fn paired_ratio(pairs: &[(f64, f64)], confidence: f64) -> PairedRatio {
    let logs: Vec<f64> = pairs
        .iter()
        .filter(|&&(a, b)| ratio_defined(a, b))
        .map(|(a, b)| (b / a).ln())
        .collect();
    let n = logs.len();
    let m = mean(&logs);
    if n < 2 {
        return PairedRatio {
            ratio: if n == 1 { m.exp() } else { f64::NAN },
            low: f64::NAN,
            high: f64::NAN,
            p_value: 1.0,
            pairs: n,
            adjusted: false,
        };
    }
    let se = (variance(&logs) / n as f64).sqrt();
    ratio_of_log(m, se, (n - 1) as f64, n, false, confidence)
}

/// Whether `b / a` has a logarithm: both positive and finite.
fn ratio_defined(a: f64, b: f64) -> bool {
    a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0
}

/// A [`PairedRatio`] from the estimate `m` of a log-ratio, its standard error `se` on `df`
/// degrees of freedom, from `pairs`.
fn ratio_of_log(
    m: f64,
    se: f64,
    df: f64,
    pairs: usize,
    adjusted: bool,
    confidence: f64,
) -> PairedRatio {
    let (margin, p_value) = if se > 0.0 {
        let q = student_t_quantile(0.5 + confidence / 2.0, df);
        (q * se, student_t_two_sided_p(m / se, df).clamp(0.0, 1.0))
    } else {
        (0.0, if m == 0.0 { 1.0 } else { 0.0 })
    };
    PairedRatio {
        ratio: m.exp(),
        low: (m - margin).exp(),
        high: (m + margin).exp(),
        p_value,
        pairs,
        adjusted,
    }
}

/// [`paired_ratio`] adjusted for a drift within rounds. Each pair `(a, b, gap)` says how
/// many places later `b` ran than `a` in its round (negative: earlier). A steady drift
/// within rounds moves each round's log-ratio in proportion to its gap, so the log-ratios
/// are fitted as `tau + beta * gap` by least squares and `tau`, the ratio had the two run at
/// the same moment, is reported with `pairs - 2` degrees of freedom (the crossover design's
/// period effect). A rotated order varies the gaps and makes this possible; when every pair
/// has the same gap (a fixed order) the drift cannot be told apart from the difference, and
/// with fewer than three pairs there is no room to fit it: both are [`paired_ratio`].
pub(crate) fn paired_ratio_adjusted(pairs: &[(f64, f64, f64)], confidence: f64) -> PairedRatio {
    let points: Vec<(f64, f64)> = pairs
        .iter()
        .filter(|&&(a, b, g)| ratio_defined(a, b) && g.is_finite())
        .map(|(a, b, g)| (*g, (b / a).ln()))
        .collect();
    let n = points.len();
    let gaps: Vec<f64> = points.iter().map(|p| p.0).collect();
    let g_mean = mean(&gaps);
    let sxx: f64 = gaps.iter().map(|g| (g - g_mean) * (g - g_mean)).sum();
    if n < 3 || sxx <= 0.0 {
        let plain: Vec<(f64, f64)> = pairs.iter().map(|&(a, b, _)| (a, b)).collect();
        return paired_ratio(&plain, confidence);
    }
    let y_mean = mean(&points.iter().map(|p| p.1).collect::<Vec<_>>());
    let sxy: f64 = points
        .iter()
        .map(|(g, y)| (g - g_mean) * (y - y_mean))
        .sum();
    let beta = sxy / sxx;
    let tau = y_mean - beta * g_mean;
    let residual: f64 = points
        .iter()
        .map(|(g, y)| {
            let r = y - tau - beta * g;
            r * r
        })
        .sum();
    let df = (n - 2) as f64;
    let se = (residual / df * (1.0 / n as f64 + g_mean * g_mean / sxx)).sqrt();
    ratio_of_log(tau, se, df, n, true, confidence)
}
