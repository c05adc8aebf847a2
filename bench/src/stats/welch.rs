//! Welch's t-test for comparing two runs: on their batch means, or textbook on independent
//! samples.

use super::batch_means::batch_means;
use super::moments::{mean, variance};
use super::student_t::student_t_two_sided_p;

/// A two-sided t-test's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    /// The t statistic (positive when `b`'s mean is larger).
    pub(crate) t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub(crate) df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Welch's t-test on the [`batch_means`] of two series of samples. Fewer than two samples
/// on a side gives p = 1 (no evidence); two constant, equal series give p = 1, constant
/// different ones p = 0.
pub(crate) fn welch_t_test(a: &[f64], b: &[f64]) -> TTest {
    // Fewer than two samples stay fewer than two batches (`batch_count`), which the raw
    // test answers with p = 1.
    welch_t_test_raw(&batch_means(a), &batch_means(b))
}

/// The textbook Welch test (independent samples), as R's `t.test(var.equal = FALSE)`.
pub fn welch_t_test_raw(a: &[f64], b: &[f64]) -> TTest {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if a.len() < 2 || b.len() < 2 {
        return TTest {
            t: 0.0,
            df: 0.0,
            p_value: 1.0,
        };
    }
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let diff = mean(b) - mean(a);
    let se2 = va + vb;
    if se2 <= 0.0 {
        return TTest {
            t: if diff == 0.0 {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            df: 0.0,
            p_value: if diff == 0.0 { 1.0 } else { 0.0 },
        };
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let p = student_t_two_sided_p(t, df);
    TTest {
        t,
        df,
        p_value: p.clamp(0.0, 1.0),
    }
}
