//! `doppio-alloc-count`: one counting global allocator for the whole workspace.
//!
//! [`CountingAlloc`] forwards every call to [`System`] unchanged and counts on the side.
//! A binary installs it with
//! `#[global_allocator] static ALLOC: CountingAlloc = CountingAlloc::new();`
//! (or [`CountingAlloc::with_process_bytes`]) and reads the counters below. Its users:
//! the bench's `alloc-count` feature (allocations per request of the real binary), the io_uring
//! runtime's zero-allocation test, the driver's 100,000-request memory bound, and
//! protocol-tests' hostile-input and no-allocation tests.
//!
//! What it counts, in three scopes:
//! - **process**, always: [`allocations`], every `alloc`, `alloc_zeroed` and `realloc` of
//!   every thread (one relaxed atomic add each).
//! - **process bytes**, only when installed [`with_process_bytes`](CountingAlloc::with_process_bytes):
//!   [`live_bytes`] and [`peak_bytes`] (two more atomics per call; a test that bounds the
//!   heap of a whole process wants them, the bench does not pay for them).
//! - **thread**, always: [`thread_allocations`] for the calling thread, and inside
//!   [`measure`] the count, the largest allocation and the peak of bytes in use of that
//!   thread alone, so that other threads (the test harness, tests running beside) do not
//!   disturb a measurement.
//!
//! A `realloc` counts as one allocation (it may move); for bytes it frees the old size and
//! takes the new one. Only successful allocations are counted.
//!
//! Invariants: the bookkeeping never allocates (atomics and a const-initialised
//! thread-local `Cell`), and works while a thread's locals are being destroyed (the thread
//! scope is then skipped). In a binary that does not install it every count stays 0.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The system allocator, counting (see the crate documentation for what).
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc {
    process_bytes: bool,
}

impl CountingAlloc {
    /// Counts allocations (process and thread scopes), not the process's bytes.
    pub const fn new() -> Self {
        Self {
            process_bytes: false,
        }
    }

    /// Also keeps the process's bytes in use and their peak ([`live_bytes`], [`peak_bytes`]).
    pub const fn with_process_bytes() -> Self {
        Self {
            process_bytes: true,
        }
    }
}

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// One thread's counters: the running count, and the window [`measure`] opens.
#[derive(Clone, Copy)]
struct Thread {
    allocations: u64,
    window: bool,
    count: u64,
    largest: usize,
    in_use: isize,
    peak: isize,
}

thread_local! {
    static THREAD: Cell<Thread> = const {
        Cell::new(Thread { allocations: 0, window: false, count: 0, largest: 0, in_use: 0, peak: 0 })
    };
}

impl CountingAlloc {
    fn took(&self, size: usize) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        if self.process_bytes {
            let now = LIVE.fetch_add(size, Ordering::Relaxed) + size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        // `try_with`: the allocator may run while this thread's locals are being destroyed.
        let _ = THREAD.try_with(|c| {
            let mut t = c.get();
            t.allocations += 1;
            if t.window {
                t.count += 1;
                t.largest = t.largest.max(size);
                t.in_use += size as isize;
                t.peak = t.peak.max(t.in_use);
            }
            c.set(t);
        });
    }

    fn gave_back(&self, size: usize) {
        if self.process_bytes {
            LIVE.fetch_sub(size, Ordering::Relaxed);
        }
        let _ = THREAD.try_with(|c| {
            let mut t = c.get();
            if t.window {
                t.in_use -= size as isize;
                c.set(t);
            }
        });
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so
// `System`'s guarantees carry over; the counting touches only atomics and a const-initialised
// thread-local `Cell` (no allocation, no lazy initialisation, no destructor).
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is (see the impl's comment).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.took(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.took(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.gave_back(layout.size());
            self.took(new_size);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.gave_back(layout.size());
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations (and reallocations) made by every thread of the process so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Bytes allocated and not yet freed, process-wide (0 unless installed
/// [`with_process_bytes`](CountingAlloc::with_process_bytes)).
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The most bytes in use at any moment since the start or the last [`reset_peak`].
pub fn peak_bytes() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Starts a new peak from the bytes in use now, and returns them.
pub fn reset_peak() -> usize {
    let live = live_bytes();
    PEAK.store(live, Ordering::Relaxed);
    live
}

/// Allocations (and reallocations) the calling thread has made so far.
pub fn thread_allocations() -> u64 {
    THREAD.with(|c| c.get().allocations)
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
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, AllocStats) {
    THREAD.with(|c| {
        c.set(Thread {
            window: true,
            count: 0,
            largest: 0,
            in_use: 0,
            peak: 0,
            ..c.get()
        })
    });
    let out = f();
    let t = THREAD.with(|c| {
        let t = c.get();
        c.set(Thread { window: false, ..t });
        t
    });
    (
        out,
        AllocStats {
            count: t.count,
            largest: t.largest,
            peak_in_use: t.peak.max(0) as usize,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static ALLOC: CountingAlloc = CountingAlloc::with_process_bytes();

    #[test]
    fn every_scope_counts_an_allocation_and_its_bytes() {
        let (process, thread) = (allocations(), thread_allocations());
        let (v, stats) = measure(|| {
            let v: Vec<Box<u64>> = (0..100).map(Box::new).collect();
            std::hint::black_box(&v);
            (v, live_bytes())
        });
        let (v, live) = v;
        assert!(allocations() - process >= 101, "boxes and the vector");
        assert!(thread_allocations() - thread >= 101);
        assert_eq!(
            stats.count, 101,
            "this thread's window: 100 boxes and one vector"
        );
        assert_eq!(stats.largest, 100 * std::mem::size_of::<usize>());
        assert!(stats.peak_in_use >= 100 * 8 + 800, "{stats:?}");
        assert!(live >= 1600 && peak_bytes() >= live);
        drop(v);
    }

    #[test]
    fn a_window_sees_only_its_own_thread() {
        let ((), stats) = measure(|| {
            std::thread::spawn(|| std::hint::black_box(vec![0u8; 4096]))
                .join()
                .ok();
        });
        assert!(stats.largest < 4096, "{stats:?}");
    }
}
