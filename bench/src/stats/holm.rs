//! Holm's step-down correction of a family of p-values for the number of tests made at once.

/// The Holm-adjusted p-values of a family of `m` tests, in the order given: with the raw
/// p-values sorted ascending, `p_(1) <= ... <= p_(m)`, the `i`-th adjusted one is the
/// largest of `min(1, (m - j + 1) * p_(j))` over `j <= i` (Holm's step-down method, made
/// monotone). A test whose adjusted p-value is below `alpha` is a difference shown with a
/// family-wise error rate of at most `alpha`, whatever the dependence between the tests.
/// A NaN p-value counts as 1, and one outside 0..=1 is clamped to it; `m = 1` leaves the
/// p-value as it is.
pub(crate) fn holm_adjusted(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let raw: Vec<f64> = p_values
        .iter()
        .map(|&p| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) })
        .collect();
    // A stable sort: ties keep their order, and get the same adjusted value anyway.
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| raw[i].total_cmp(&raw[j]));
    let mut adjusted = vec![1.0; m];
    let mut running = 0.0_f64;
    for (rank, &k) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * raw[k]).min(1.0));
        adjusted[k] = running;
    }
    adjusted
}
