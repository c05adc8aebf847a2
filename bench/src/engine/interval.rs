//! Sample intervals: one worker's record of one ([`IntervalSample`]) and where they begin
//! and end ([`last_interval`], [`interval_ending_at`], `interval_end`).

use std::time::{Duration, Instant};

use super::error_kind::ErrorKind;
use super::limit::Limit;
use super::statements::StatementCounts;
use crate::stats::LatencyHistogram;

/// One worker's record of one sample interval.
#[derive(Debug, Clone)]
pub struct IntervalSample {
    /// The worker.
    pub(crate) worker: usize,
    /// Interval number since the phase start.
    pub(crate) index: u64,
    /// Requests completed (successes and errors).
    pub requests: u64,
    /// Result rows of the successful requests (all their pages).
    pub(crate) rows: u64,
    /// Errors by kind.
    pub(crate) errors: Vec<(ErrorKind, u64)>,
    /// Latency from the due time (coordinated-omission corrected), successes only.
    pub(crate) latency: LatencyHistogram,
    /// Service time from the actual send, successes only.
    pub(crate) service: LatencyHistogram,
    /// Sum of how late requests were sent after their due time, ns (rate-limited only).
    pub(crate) lateness_ns: u64,
    /// Per statement of the plan (by index): its counts in the interval.
    pub(crate) statements: Vec<StatementCounts>,
    /// The worker's last sample of the phase (its interval may be cut short).
    pub(crate) last: bool,
    /// Requests the worker's session sent to each node (address) since its previous sample,
    /// read when the sample is handed over (empty for a backend that does not count them).
    pub(crate) nodes: Vec<(String, u64)>,
    /// Tablet misroutes of the worker's session since its previous sample (ScyllaDB), read
    /// when the sample is handed over (`None` for a backend that does not count them).
    pub(crate) tablet_misroutes: Option<u64>,
}

/// The last sample interval of a phase limited by time (the one its end falls in), into
/// which answers that arrive after the end are counted; `None` for a counted phase.
pub(crate) fn last_interval(limit: Limit, interval: Duration) -> Option<u64> {
    match limit {
        Limit::Time(d) => Some(interval_ending_at(d, interval)),
        Limit::Count(_) => None,
    }
}

/// The index of the interval of length `interval` in which the time `end` (from the phase's
/// start) falls, an end exactly on a boundary belonging to the interval it closes.
pub(crate) fn interval_ending_at(end: Duration, interval: Duration) -> u64 {
    (end.as_nanos().div_ceil(interval.as_nanos().max(1)) as u64).saturating_sub(1)
}

/// When interval `index` (of length `interval`, from `start`) ends: `None` when it is the
/// phase's last (`last`), which takes every later answer, or past what an `Instant` holds.
pub(super) fn interval_end(
    start: Instant,
    interval: Duration,
    index: u64,
    last: Option<u64>,
) -> Option<Instant> {
    if last.is_some_and(|l| index >= l) {
        return None;
    }
    let n = u32::try_from(index.checked_add(1)?).ok()?;
    start.checked_add(interval.max(Duration::from_nanos(1)).checked_mul(n)?)
}
