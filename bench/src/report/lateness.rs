//! The send-lateness figure of a paced run (`backends.*.send_lateness`): its JSON shape
//! ([`LatenessReport`]), computed from a backend's recorded [`SendLateness`], pooled across
//! machines by `merge`, and judged: whether a backend kept the release grid
//! ([`LatenessReport::kept_schedule`]), which the VERDICT asks before it compares CPU at
//! equal load.
//!
//! Two distributions, nanoseconds: from each iteration's due time to its send (what its
//! latency includes besides the service time: the grid's share and the backend's own), and
//! from its release on the grid to its send (the backend's own: its timer's resolution and
//! its wake-up). A backend whose own lateness is a grid step or more releases its requests
//! in coarser batches than the grid asks for, so its CPU per request is not measured at
//! the same release pattern as the others'.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::summary::LatencySummary;
use crate::engine::lateness::SendLateness;
use crate::stats::{LatencyHistogram, StatsError};

/// On-time bound of a run without a grid (each request released at its own due time): a
/// wake-up's own latency on a busy machine is tens of microseconds; a timer that rounds to
/// the millisecond is not on time.
pub(crate) const ON_TIME_WITHOUT_GRID: Duration = Duration::from_micros(100);

/// How late a paced run's iterations were sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatenessReport {
    /// From the due time to the send, ns (its `mean_margin` is 0: not estimated).
    pub from_due_ns: LatencySummary,
    /// From the release (the grid point) to the send, ns: the backend's own lateness.
    pub from_release_ns: LatencySummary,
    /// `from_due_ns`'s histogram (HdrHistogram V2, compressed, base64), for merging.
    pub from_due_histogram: String,
    /// `from_release_ns`'s histogram.
    pub from_release_histogram: String,
}

impl LatenessReport {
    /// The figure of `l` (`None` when it holds no iteration).
    pub(crate) fn of(l: &SendLateness) -> Option<Self> {
        (l.count() > 0).then(|| Self {
            from_due_ns: LatencySummary::of(&l.from_due, &[]),
            from_release_ns: LatencySummary::of(&l.from_release, &[]),
            from_due_histogram: l.from_due.to_base64(),
            from_release_histogram: l.from_release.to_base64(),
        })
    }

    /// The histograms back.
    pub(crate) fn histograms(&self) -> Result<SendLateness, StatsError> {
        Ok(SendLateness {
            from_due: LatencyHistogram::from_base64(&self.from_due_histogram)?,
            from_release: LatencyHistogram::from_base64(&self.from_release_histogram)?,
        })
    }

    /// Whether the backend kept a release grid of `step` (zero: no grid): its median own
    /// lateness (from the release) is below one step, or within
    /// [`ON_TIME_WITHOUT_GRID`] without a grid, so that it sent each grid point's
    /// requests before the next point, as the grid asks.
    pub(crate) fn kept_schedule(&self, step: Duration) -> bool {
        let bound = step.max(ON_TIME_WITHOUT_GRID);
        Duration::from_nanos(self.from_release_ns.p50) < bound
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn lateness(own_us: u64, n: u64) -> SendLateness {
        let mut l = SendLateness::default();
        let due = Instant::now();
        for k in 0..n {
            let release = due + Duration::from_micros(k % 1000);
            l.record(due, release, release + Duration::from_micros(own_us));
        }
        l
    }

    #[test]
    fn a_backend_keeps_the_grid_when_its_own_median_lateness_is_below_a_step() {
        assert!(LatenessReport::of(&SendLateness::default()).is_none());
        let prompt = LatenessReport::of(&lateness(30, 1000)).unwrap();
        let coarse = LatenessReport::of(&lateness(1100, 1000)).unwrap();
        let ms = Duration::from_millis;
        for step in [Duration::ZERO, ms(1), ms(2)] {
            assert!(prompt.kept_schedule(step), "{step:?}");
        }
        assert!(!coarse.kept_schedule(Duration::ZERO));
        assert!(!coarse.kept_schedule(ms(1)));
        assert!(coarse.kept_schedule(ms(2)));
        // From the due time: the grid's share (0 to 999 us) and the backend's own.
        let p50 = coarse.from_due_ns.p50;
        assert!((1_590_000..=1_610_000).contains(&p50), "{p50}");
        assert!(coarse.from_due_ns.max >= 2_090_000);
        let back = coarse.histograms().unwrap();
        assert_eq!(back.count(), 1000);
        assert_eq!(LatenessReport::of(&back), Some(coarse));
    }
}
