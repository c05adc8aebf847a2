//! The engine's clock for the end of each request: the CPU's time-stamp counter where it is
//! invariant, read through the `quanta` crate, else the monotonic clock.
//!
//! Why: without a rate the engine reads the clock once per request, and on the development
//! VM (clocksource `tsc`, `constant_tsc nonstop_tsc` in `/proc/cpuinfo`) a
//! `clock_gettime(CLOCK_MONOTONIC)` through the vDSO costs about 57 ns, a bare `rdtsc` about
//! 23 ns (`perf/results/2026-11-25-bench-floor/`): a third of the engine's own cost per
//! request went into the clock.
//!
//! How: `quanta` calibrates the counter's rate against the monotonic clock once per process
//! (up to 200 ms: [`calibrate`] does it before anything is measured) and uses the counter
//! only when the CPU says it is invariant and has `rdtscp`; otherwise it reads the monotonic
//! clock itself. A [`Clock`] anchors the counter to one `std::time::Instant` when it is made
//! and returns `Instant`s (anchor + scaled counter delta), so that everything downstream
//! carries real durations in the monotonic clock's domain.
//!
//! Only a run without a rate uses the counter ([`Clock::new`] with `paced` false): there
//! every latency is the difference of two readings of the same clock (a request's end and its
//! fiber's previous end), so a calibration error of the rate scales a latency, never adds a
//! drift to it. A paced run's due times are on the monotonic clock (the schedule counts from
//! the phase's start), so it reads the monotonic clock for its ends too: a counter anchored
//! once would drift from it by its rate's error times the time since the anchor.
//!
//! `tests` below compare the two clocks over sleeps of 10 ms to 1 s and across threads
//! pinned to different cores.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The process's calibrated counter (once; `None` when it fell back to the monotonic clock).
fn counter() -> Option<&'static quanta::Clock> {
    static COUNTER: OnceLock<Option<quanta::Clock>> = OnceLock::new();
    COUNTER
        .get_or_init(|| {
            let clock = quanta::Clock::new();
            // quanta reads the monotonic clock itself when the counter is not usable: its
            // raw readings are then nanoseconds, and a delta of 1 ms scales to 1 ms exactly.
            // Told apart by whether the raw values are those of the monotonic clock.
            counter_is_tsc(&clock).then_some(clock)
        })
        .as_ref()
}

/// Whether `clock` reads the time-stamp counter (rather than the monotonic clock it falls
/// back to): the CPU's own flags, as `quanta` checks them.
fn counter_is_tsc(clock: &quanta::Clock) -> bool {
    // A fallback clock's raw value is the monotonic clock in nanoseconds, which `delta` does
    // not scale; a counter's raw values are ticks, scaled by the calibration. One tick is
    // not one nanosecond on any x86 CPU at a few GHz.
    clock.delta_as_nanos(0, 1 << 40) != 1 << 40
}

/// Calibrates the counter now (up to 200 ms, once per process), so that no measured phase
/// pays for it. Returns whether the counter is used.
pub(crate) fn calibrate() -> bool {
    counter().is_some()
}

/// A worker's clock for the ends of its requests: `Instant`s, from the counter (anchored
/// when the clock is made) or from the monotonic clock.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    /// The counter and its anchor: the `Instant` and the raw reading taken together.
    tsc: Option<(&'static quanta::Clock, Instant, u64)>,
}

impl Clock {
    /// The clock of a phase: the counter when it is usable and the phase has no rate
    /// (`paced` false), the monotonic clock otherwise.
    pub(crate) fn new(paced: bool) -> Self {
        let tsc = match counter() {
            Some(c) if !paced => {
                let raw = c.raw();
                Some((c, Instant::now(), raw))
            }
            _ => None,
        };
        Self { tsc }
    }

    /// The monotonic clock only.
    #[cfg(test)]
    pub(crate) fn monotonic() -> Self {
        Self { tsc: None }
    }

    /// Whether it reads the counter.
    #[cfg(test)]
    pub(crate) fn is_counter(&self) -> bool {
        self.tsc.is_some()
    }

    /// Now.
    #[inline]
    pub(crate) fn now(&self) -> Instant {
        match self.tsc {
            Some((c, anchor, raw)) => anchor + Duration::from_nanos(c.delta_as_nanos(raw, c.raw())),
            None => Instant::now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a` within `tolerance` of `b`.
    fn close(a: Duration, b: Duration, tolerance: Duration) -> bool {
        a.abs_diff(b) <= tolerance
    }

    #[test]
    fn the_counter_agrees_with_the_monotonic_clock_over_10_ms_to_1_s() {
        let uses_counter = calibrate();
        eprintln!("time-stamp counter in use: {uses_counter}");
        let clock = Clock::new(false);
        assert_eq!(clock.is_counter(), uses_counter);
        for wait in [10u64, 100, 1000].map(Duration::from_millis) {
            let (c0, m0) = (clock.now(), Instant::now());
            std::thread::sleep(wait);
            let (c1, m1) = (clock.now(), Instant::now());
            let (counted, measured) = (c1 - c0, m1 - m0);
            // Both read within a microsecond of each other at each end; the rate's
            // calibration error scales the interval: 0.05 % is 500 us in a second (quanta
            // aims at far less), generous on a noisy machine.
            let tolerance = Duration::from_micros(20) + measured / 2000;
            assert!(
                close(counted, measured, tolerance),
                "over {wait:?}: counter {counted:?}, monotonic {measured:?}"
            );
            eprintln!("over {wait:?}: counter {counted:?}, monotonic {measured:?}");
        }
        // A paced phase's clock is the monotonic clock.
        assert!(!Clock::new(true).is_counter());
        assert!(!Clock::monotonic().is_counter());
    }

    #[test]
    fn readings_on_different_cores_follow_each_other_and_the_monotonic_clock() {
        calibrate();
        let clock = Clock::new(false);
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        if cores.len() < 2 {
            eprintln!("one core: nothing to compare across cores");
            return;
        }
        // Two threads pinned to different cores hand a reading back and forth: each reading
        // is after the one before it, by both clocks alike.
        let (to_b, from_a) = std::sync::mpsc::channel::<(Instant, Instant)>();
        let (to_a, from_b) = std::sync::mpsc::channel::<(Instant, Instant)>();
        let (ca, cb) = (clock.clone(), clock.clone());
        let (core_a, core_b) = (cores[0], cores[1]);
        let a = std::thread::spawn(move || {
            assert!(core_affinity::set_for_current(core_a));
            let mut worst = Duration::ZERO;
            for _ in 0..200 {
                to_b.send((ca.now(), Instant::now())).unwrap();
                let (c, m) = from_b.recv().unwrap();
                let (c2, m2) = (ca.now(), Instant::now());
                assert!(c2 >= c, "the counter went back from core b to core a");
                worst = worst.max((c2 - c).abs_diff(m2 - m));
            }
            worst
        });
        let b = std::thread::spawn(move || {
            assert!(core_affinity::set_for_current(core_b));
            let mut worst = Duration::ZERO;
            for _ in 0..200 {
                let (c, m) = from_a.recv().unwrap();
                let (c2, m2) = (cb.now(), Instant::now());
                assert!(c2 >= c, "the counter went back from core a to core b");
                worst = worst.max((c2 - c).abs_diff(m2 - m));
                to_a.send((cb.now(), Instant::now())).unwrap();
            }
            worst
        });
        let worst = a.join().unwrap().max(b.join().unwrap());
        eprintln!("largest difference of the two clocks over a hand-over: {worst:?}");
        // A hand-over takes microseconds; the two clocks agree on it within a few (the two
        // readings at each end are not simultaneous, and the VM may be descheduled between).
        assert!(worst < Duration::from_millis(1), "{worst:?}");
    }
}
