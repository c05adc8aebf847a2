//! How late a paced phase's requests were sent ([`SendLateness`]): each iteration's send
//! against its due time (what its latency includes besides the service time) and against
//! its release on the grid (the backend's own timer and scheduling lateness: [`super::grid`]
//! decides the rest). Kept over a whole phase, one pair of histograms per worker, recorded
//! once per iteration at its first send.

use std::time::Instant;

use crate::stats::LatencyHistogram;

/// Send lateness over a phase: from the due time and from the release.
#[derive(Debug, Clone, Default)]
pub struct SendLateness {
    /// Sent minus due, ns: the grid's share and the backend's own.
    pub(crate) from_due: LatencyHistogram,
    /// Sent minus released, ns: the backend's own (its timer's resolution, its wake-up).
    pub(crate) from_release: LatencyHistogram,
}

impl SendLateness {
    /// Records an iteration due at `due`, released at `release` (not before `due`), sent at
    /// `sent`.
    #[inline]
    pub(crate) fn record(&mut self, due: Instant, release: Instant, sent: Instant) {
        self.from_due
            .record(sent.saturating_duration_since(due).as_nanos() as u64);
        self.from_release
            .record(sent.saturating_duration_since(release).as_nanos() as u64);
    }

    /// Adds `other`'s records.
    pub(crate) fn merge(&mut self, other: &SendLateness) {
        self.from_due.merge(&other.from_due);
        self.from_release.merge(&other.from_release);
    }

    /// Iterations recorded.
    pub(crate) fn count(&self) -> u64 {
        self.from_due.count()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn lateness_counts_from_the_due_time_and_from_the_release() {
        let due = Instant::now();
        let mut l = SendLateness::default();
        let us = Duration::from_micros;
        l.record(due, due + us(700), due + us(750));
        l.record(due, due, due + us(20));
        // A send before its release (a clock read early) counts as on time, not negative.
        l.record(due, due + us(10), due + us(5));
        assert_eq!(l.count(), 3);
        // Three significant digits.
        assert!((749_000..=751_000).contains(&l.from_due.max()));
        assert!((4_990..=5_010).contains(&l.from_due.min()));
        assert!((49_900..=50_100).contains(&l.from_release.max()));
        assert!(l.from_release.min() <= 1, "{}", l.from_release.min());
        let mut all = SendLateness::default();
        all.merge(&l);
        all.merge(&l);
        assert_eq!(all.count(), 6);
    }
}
