//! A cheap clock for request deadlines.
//!
//! Every request needs a deadline, and `Instant::now()` (a `CLOCK_MONOTONIC` read, with the
//! TSC arithmetic it takes) was a visible share of the client's user time in loopback
//! flamegraphs. Deadlines do not need nanoseconds: this clock reads `CLOCK_MONOTONIC_COARSE`,
//! which the vDSO answers from the time of the last scheduler tick without touching the TSC.
//!
//! On a simulation (`doppio_rt::sim`) the ticks are its virtual time, so that deadlines pass
//! as its timers do.
//!
//! Latency is measured on the precise clock instead ([`Ticks::precise`]), and only when a
//! session records it: a tick is longer than most requests take.
//!
//! Invariant: a deadline made by [`Ticks::deadline`] is never earlier than the exact time
//! plus the timeout (the clock's resolution is added), and a check against [`Ticks::now`]
//! sees it pass at most two ticks late (a few milliseconds on any kernel).

use std::cell::Cell;
use std::time::Duration;

/// A point on the coarse monotonic clock, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Ticks(u64);

fn read(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then(|| (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64)
}

/// The coarse clock's resolution (one scheduler tick), in nanoseconds: read from the kernel
/// once per thread and kept in a thread-local `Cell`, so that a request's deadline touches no
/// atomic (a `OnceLock` would be one acquire load per request).
fn resolution() -> Duration {
    thread_local! {
        static RES_NS: Cell<u64> = const { Cell::new(0) };
    }
    RES_NS.with(|res| {
        if res.get() == 0 {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid, writable timespec for the call.
            let rc = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
            let ns = if rc == 0 {
                (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
            } else {
                10_000_000
            };
            res.set(ns.max(1));
        }
        Duration::from_nanos(res.get())
    })
}

impl Ticks {
    /// Now, on the coarse clock (the precise monotonic clock if the coarse one is missing),
    /// or on a simulation's virtual clock (`doppio_rt::sim`: one thread-local read decides).
    #[inline]
    pub(crate) fn now() -> Self {
        if let Some(virtual_time) = doppio_rt::sim::elapsed() {
            return Self(virtual_time.as_nanos().min(u128::from(u64::MAX)) as u64);
        }
        Self(
            read(libc::CLOCK_MONOTONIC_COARSE)
                .or_else(|| read(libc::CLOCK_MONOTONIC))
                .unwrap_or(0),
        )
    }

    /// Now on the precise monotonic clock (`CLOCK_MONOTONIC`), or on a simulation's virtual
    /// clock: for measuring a request's latency, which the coarse clock cannot (its
    /// resolution is one scheduler tick, 4 ms on this project's machines, and a request over
    /// loopback takes tens of microseconds). Only read when latency is recorded
    /// (`session::latency`).
    #[inline]
    pub(crate) fn precise() -> Self {
        if let Some(virtual_time) = doppio_rt::sim::elapsed() {
            return Self(virtual_time.as_nanos().min(u128::from(u64::MAX)) as u64);
        }
        Self(read(libc::CLOCK_MONOTONIC).unwrap_or(0))
    }

    /// Nanoseconds from `earlier` to `self`, zero if `earlier` is later.
    #[inline]
    pub(crate) fn nanos_since(self, earlier: Ticks) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// A deadline `timeout` from now, never earlier than the exact one.
    #[inline]
    pub(crate) fn deadline(timeout: Duration) -> Self {
        Self::now() + timeout + resolution()
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub(crate) fn saturating_duration_since(self, earlier: Ticks) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

#[cfg(feature = "unstable-internals")]
/// CPU time the calling thread has run so far (user and system, `CLOCK_THREAD_CPUTIME_ID`),
/// for the request-path benchmarks' client CPU per request; zero if the clock is missing.
pub fn thread_cpu_time() -> Duration {
    Duration::from_nanos(read(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0))
}

impl std::ops::Add<Duration> for Ticks {
    type Output = Ticks;

    fn add(self, d: Duration) -> Ticks {
        Ticks(
            self.0
                .saturating_add(d.as_nanos().min(u128::from(u64::MAX)) as u64),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_grows_with_work_and_not_with_sleep() {
        let start = thread_cpu_time();
        let mut x = 0u64;
        // Spin until this thread's clock shows 10 ms of work: on a loaded machine that takes
        // longer than 10 ms of wall time, so the wall clock only bounds a clock that never
        // moves (a generous minute, never reached when it works).
        let spin = std::time::Instant::now();
        let mut worked = start;
        while worked.saturating_sub(start) < Duration::from_millis(10)
            && spin.elapsed() < Duration::from_secs(60)
        {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            worked = thread_cpu_time();
        }
        assert!(
            worked.saturating_sub(start) >= Duration::from_millis(10),
            "the thread's CPU clock did not advance with work: {worked:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_time().saturating_sub(worked);
        assert!(slept < Duration::from_millis(25), "{slept:?}");
    }

    #[test]
    fn the_coarse_clock_advances_and_deadlines_are_never_early() {
        let a = Ticks::now();
        let precise = std::time::Instant::now();
        let d = Ticks::deadline(Duration::from_millis(30));
        std::thread::sleep(Duration::from_millis(50));
        let b = Ticks::now();
        assert!(b > a);
        assert!(b.saturating_duration_since(a) >= Duration::from_millis(40));
        // The deadline has passed on the coarse clock only once 30 ms have truly passed.
        assert!(precise.elapsed() >= Duration::from_millis(30));
        assert!(b >= d || resolution() > Duration::from_millis(20));
        assert_eq!(a.saturating_duration_since(b), Duration::ZERO);
        assert!(
            resolution() <= Duration::from_millis(20),
            "{:?}",
            resolution()
        );
    }
}
