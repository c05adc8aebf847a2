//! The release grid of a paced phase (`--release-grid`): a request is released (its fiber
//! woken to send it) at the first point of the grid at or after its due time, the points
//! being the phase's start plus whole multiples of the grid's step. Every backend releases
//! from the same grid, so that all of them batch their sends alike, whatever their
//! runtime's timer resolution (tokio's is a millisecond; glommio's and doppio's own are
//! finer): the grid is the bench's, not the runtime's.
//!
//! A request's latency still counts from its due time, never from its release: the grid
//! shows as lateness (up to one step, half a step on average), it never hides it. A step
//! of zero releases each request at its own due time (every fiber on a timer of its own).
//!
//! Why a grid at all: at rates of tens of thousands per second a fiber's due times are
//! microseconds apart, and a runtime that wakes for each pays a parked cycle (send, wait,
//! wake: 17-33 µs of system time on the development VM) per request, where a backend with a
//! coarse timer wakes once per millisecond for twenty. The grid makes the comparison one
//! of drivers at the same release pattern, and its step is the knob a study turns.

use std::time::{Duration, Instant};

/// The grid's step when none is given: the finest that every backend keeps. tokio's timer
/// (the scylla backend's) rounds a deadline up to its next millisecond tick and its wait to
/// whole milliseconds, so it sends 0 to 2 ms after a grid point (median 0.7-1.2 ms on the
/// development VM): on a grid of 1 ms it kept the grid in one run of two, on 2 ms in every
/// run (`bench/MANUAL.md`, "Pacing", has the measurements).
pub(crate) const DEFAULT_STEP: Duration = Duration::from_millis(2);

/// [`DEFAULT_STEP`] as the options write it (their default value).
pub(crate) const DEFAULT_STEP_TEXT: &str = "2ms";

/// The longest step accepted: a coarser grid would turn a rate into bursts a second apart.
pub(crate) const MAX_STEP: Duration = Duration::from_secs(1);

/// A release grid: points `step` apart from a phase's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseGrid {
    step_ns: u64,
}

impl ReleaseGrid {
    /// A grid of `step` (zero: each request at its own due time; at most [`MAX_STEP`],
    /// which the option's parser checks).
    pub(crate) fn new(step: Duration) -> Self {
        Self {
            step_ns: step.min(MAX_STEP).as_nanos() as u64,
        }
    }

    /// The finest grid: every request released at its own due time.
    #[cfg(test)]
    pub(crate) fn none() -> Self {
        Self { step_ns: 0 }
    }

    /// The step.
    #[cfg(test)]
    pub(crate) fn step(&self) -> Duration {
        Duration::from_nanos(self.step_ns)
    }

    /// When a request due at `due` is released in a phase started at `start`: the first
    /// grid point at or after `due` (never before it); `due` itself without a grid, or
    /// when it is before the start or the point is past what an `Instant` holds.
    #[inline]
    pub(crate) fn release(&self, start: Instant, due: Instant) -> Instant {
        if self.step_ns == 0 {
            return due;
        }
        let Some(offset) = due.checked_duration_since(start) else {
            return due;
        };
        // An offset within a phase fits in 64 bits of nanoseconds (584 years).
        let offset = u64::try_from(offset.as_nanos()).unwrap_or(u64::MAX);
        let points = offset.div_ceil(self.step_ns);
        points
            .checked_mul(self.step_ns)
            .and_then(|ns| start.checked_add(Duration::from_nanos(ns)))
            .unwrap_or(due)
    }
}

impl Default for ReleaseGrid {
    fn default() -> Self {
        Self::new(DEFAULT_STEP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_due_time_is_released_at_the_first_grid_point_at_or_after_it() {
        let start = Instant::now();
        let grid = ReleaseGrid::new(Duration::from_micros(250));
        let at = |us: u64| start + Duration::from_micros(us);
        for (due, release) in [
            (0, 0),
            (1, 250),
            (249, 250),
            (250, 250),
            (251, 500),
            (999, 1000),
        ] {
            assert_eq!(grid.release(start, at(due)), at(release), "due at {due} us");
        }
        // Nanoseconds: one past a point goes to the next.
        let due = start + Duration::from_nanos(250_001);
        assert_eq!(grid.release(start, due), at(500));
        // Never before the due time, never more than a step after, over many due times.
        for ns in (0..5_000_000u64).step_by(7919) {
            let due = start + Duration::from_nanos(ns);
            let r = grid.release(start, due);
            assert!(r >= due && r - due < grid.step(), "{ns} ns");
            assert_eq!((r - start).as_nanos() % 250_000, 0, "{ns} ns: on the grid");
        }
    }

    #[test]
    fn without_a_step_or_before_the_start_a_request_is_released_when_due() {
        let start = Instant::now() + Duration::from_millis(10);
        let due = start + Duration::from_nanos(123_457);
        assert_eq!(ReleaseGrid::none().release(start, due), due);
        assert_eq!(ReleaseGrid::new(Duration::ZERO).release(start, due), due);
        let early = start - Duration::from_millis(1);
        assert_eq!(ReleaseGrid::default().release(start, early), early);
        assert_eq!(ReleaseGrid::default().step(), DEFAULT_STEP);
        assert_eq!(
            crate::units::duration(DEFAULT_STEP_TEXT).ok(),
            Some(DEFAULT_STEP)
        );
        // A step beyond the longest is held to it.
        assert_eq!(ReleaseGrid::new(Duration::from_secs(3600)).step(), MAX_STEP);
    }
}
