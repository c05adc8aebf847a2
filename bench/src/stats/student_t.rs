//! Student's t distribution (from `statrs`): the CDF, two-sided p-values and quantiles.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Student's t with `df` degrees of freedom (statrs); `None` when `df` is not a positive
/// number.
fn students_t(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

/// P(T <= t) for Student's t with `df` degrees of freedom (NaN when `df` is not positive).
#[cfg(test)]
pub(crate) fn student_t_cdf(t: f64, df: f64) -> f64 {
    students_t(df).map_or(f64::NAN, |d| d.cdf(t))
}

/// The two-sided p-value of `t` under Student's t with `df` degrees of freedom:
/// `P(|T| >= |t|)` (NaN when `df` is not positive).
pub(crate) fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    students_t(df).map_or(f64::NAN, |d| 2.0 * d.sf(t.abs()))
}

/// The `q` quantile of Student's t (NaN when `df` is not positive or `q` is outside 0..=1).
pub(crate) fn student_t_quantile(q: f64, df: f64) -> f64 {
    match students_t(df) {
        Some(d) if (0.0..=1.0).contains(&q) => d.inverse_cdf(q),
        _ => f64::NAN,
    }
}
