//! Equal load: every backend paced at one rate, a share of the slowest one's capacity
//! (probed by [`super::rounds::Rounds::capacities`]), so that their costs per request
//! compare at the same load (`run --equal-load`, each load of `curve`).

use std::collections::BTreeMap;

use crate::failure::{Failure, RunFailure};
use crate::report::EqualLoad;

/// The equal load at `share` of the slowest of `capacities` (iterations per second by
/// driver name): the rate every segment runs at. A backend that completed nothing at full
/// speed leaves no rate to share.
pub(crate) fn equal_load(
    share: f64,
    capacities: BTreeMap<String, f64>,
) -> Result<EqualLoad, Failure> {
    let rate = capacities
        .values()
        .fold(f64::INFINITY, |r, c| r.min(share * c));
    if !(rate.is_finite() && rate > 0.0) {
        return Err(RunFailure::NoCapacity(capacities).into());
    }
    Ok(EqualLoad {
        share,
        capacities,
        rate,
    })
}

/// The capacities as a line says them: `doppio 7712/s, scylla 6903/s`.
pub(crate) fn capacities_text(capacities: &BTreeMap<String, f64>) -> String {
    capacities
        .iter()
        .map(|(d, c)| format!("{d} {c:.0}/s"))
        .collect::<Vec<_>>()
        .join(", ")
}
