//! A counting global allocator for tests that bound or forbid allocation.
//!
//! A test binary installs it with
//! `#[global_allocator] static ALLOC: CountingAlloc = CountingAlloc;` and wraps the code it
//! measures in [`measure`]. Counters are per thread, so the test harness's other threads
//! (and other tests running in parallel) do not disturb a measurement.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// A wrapper of [`System`] that records, for the current thread, the number of
/// allocations, the largest single allocation, and the bytes in use and their peak.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc;

#[derive(Clone, Copy)]
struct Counters {
    active: bool,
    count: u64,
    largest: usize,
    in_use: isize,
    peak: isize,
}

thread_local! {
    static COUNTERS: Cell<Counters> = const {
        Cell::new(Counters { active: false, count: 0, largest: 0, in_use: 0, peak: 0 })
    };
}

fn record_alloc(size: usize) {
    let _ = COUNTERS.try_with(|c| {
        let mut v = c.get();
        if v.active {
            v.count += 1;
            v.largest = v.largest.max(size);
            v.in_use += size as isize;
            v.peak = v.peak.max(v.in_use);
            c.set(v);
        }
    });
}

fn record_free(size: usize) {
    let _ = COUNTERS.try_with(|c| {
        let mut v = c.get();
        if v.active {
            v.in_use -= size as isize;
            c.set(v);
        }
    });
}

// SAFETY: every call is forwarded unchanged to `System`; the bookkeeping touches only a
// const-initialised thread-local `Cell` (no allocation, no destructor).
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record_alloc(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record_alloc(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record_free(layout.size());
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record_free(layout.size());
        record_alloc(new_size);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// What [`measure`] saw on the current thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocStats {
    /// Number of allocations (a `realloc` counts as one).
    pub count: u64,
    /// The largest single allocation, in bytes.
    pub largest: usize,
    /// The most bytes allocated and not yet freed at any moment (relative to the start).
    pub peak_in_use: usize,
}

/// Runs `f` and returns its result with the allocations it made on this thread.
///
/// Only meaningful in a binary whose `#[global_allocator]` is [`CountingAlloc`]; elsewhere
/// every count is 0.
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, AllocStats) {
    COUNTERS.with(|c| {
        c.set(Counters {
            active: true,
            count: 0,
            largest: 0,
            in_use: 0,
            peak: 0,
        })
    });
    let out = f();
    let v = COUNTERS.with(|c| {
        let v = c.get();
        c.set(Counters { active: false, ..v });
        v
    });
    (
        out,
        AllocStats {
            count: v.count,
            largest: v.largest,
            peak_in_use: v.peak.max(0) as usize,
        },
    )
}
