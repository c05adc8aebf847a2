//! Means with error margins that account for correlation between samples: the samples cut
//! into about `sqrt(n)` consecutive batches, the margin from the spread of the batch means.

use super::moments::{mean, variance};
use super::student_t::student_t_quantile;

/// A mean with its confidence half-width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    /// Sample mean.
    pub(crate) mean: f64,
    /// Half-width of the confidence interval (NaN with fewer than two samples).
    pub(crate) margin: f64,
    /// Samples.
    pub(crate) n: usize,
    /// Batches the samples were grouped into (see [`batch_means`]).
    pub(crate) batches: usize,
}

/// How many batches `n` samples are grouped into: `floor(sqrt(n))`, at least 2 (or `n`
/// when `n < 2`). Batches of `sqrt(n)` samples grow with the run, so that correlation
/// spanning a few samples stays within a batch while there are still enough batches to
/// estimate a variance from.
pub(crate) fn batch_count(n: usize) -> usize {
    if n < 2 {
        return n;
    }
    let mut k = (n as f64).sqrt().floor() as usize;
    // Guard the float square root at exact squares.
    while (k + 1) * (k + 1) <= n {
        k += 1;
    }
    while k * k > n {
        k -= 1;
    }
    k.max(2)
}

/// The means of [`batch_count`]`(xs.len())` consecutive, non-overlapping batches of `xs`
/// (sizes differ by at most one; every sample is in exactly one batch).
pub(crate) fn batch_means(xs: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let k = batch_count(n);
    (0..k)
        .map(|i| mean(&xs[i * n / k..(i + 1) * n / k]))
        .collect()
}

/// The mean of `xs` and its confidence half-width at `confidence` (e.g. 0.99), from the
/// spread of its [`batch_means`] and Student's t with `batches - 1` degrees of freedom.
pub(crate) fn estimate(xs: &[f64], confidence: f64) -> Estimate {
    let n = xs.len();
    let m = mean(xs);
    if n < 2 {
        return Estimate {
            mean: m,
            margin: f64::NAN,
            n,
            batches: n,
        };
    }
    let batches = batch_means(xs);
    let k = batches.len();
    let se = (variance(&batches) / k as f64).sqrt();
    let t = student_t_quantile(0.5 + confidence / 2.0, (k - 1) as f64);
    Estimate {
        mean: m,
        margin: t * se,
        n,
        batches: k,
    }
}
