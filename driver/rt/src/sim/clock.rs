//! Virtual time and its timers.
//!
//! The clock moves only when the executor finds no task ready: it then jumps to the earliest
//! pending deadline and wakes every timer due by then. A timer dropped before its deadline
//! leaves its entry behind, which wakes nobody who still cares (a spurious wake-up is
//! harmless) and is gone once the clock passes it.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::task::Waker;
use std::time::{Duration, Instant};

/// One pending wake-up.
struct Entry {
    at: Duration,
    /// Order of registration: entries due at the same time wake in it (determinism).
    seq: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// A simulation's clock: where virtual time began and how far it has gone.
pub(super) struct Clock {
    /// The real monotonic clock's reading when the run began (virtual times are offsets).
    base: Instant,
    elapsed: Cell<Duration>,
    pending: RefCell<BinaryHeap<Reverse<Entry>>>,
    seq: Cell<u64>,
}

impl Clock {
    pub(super) fn new() -> Self {
        Self {
            base: Instant::now(),
            elapsed: Cell::new(Duration::ZERO),
            pending: RefCell::new(BinaryHeap::new()),
            seq: Cell::new(0),
        }
    }

    pub(super) fn now(&self) -> Instant {
        self.base + self.elapsed.get()
    }

    pub(super) fn elapsed(&self) -> Duration {
        self.elapsed.get()
    }

    /// `at` as an offset from the run's beginning (zero for a time before it).
    fn offset(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.base)
    }

    /// Wakes `waker` once virtual time reaches `at` (at once if it has).
    pub(super) fn wake_at(&self, at: Instant, waker: Waker) {
        let at = self.offset(at);
        if at <= self.elapsed.get() {
            waker.wake();
            return;
        }
        let seq = self.seq.get();
        self.seq.set(seq + 1);
        self.pending
            .borrow_mut()
            .push(Reverse(Entry { at, seq, waker }));
    }

    /// Moves time to the earliest pending deadline and wakes every entry due then; `false`
    /// when nothing is pending.
    pub(super) fn advance(&self) -> bool {
        let due: Vec<Waker> = {
            let mut pending = self.pending.borrow_mut();
            let Some(Reverse(first)) = pending.peek() else {
                return false;
            };
            let at = first.at.max(self.elapsed.get());
            self.elapsed.set(at);
            let mut due = Vec::new();
            while pending.peek().is_some_and(|Reverse(e)| e.at <= at) {
                if let Some(Reverse(e)) = pending.pop() {
                    due.push(e.waker);
                }
            }
            due
        };
        // Woken outside the borrow: a wake queues a task, it may not re-enter the clock, but
        // a waker of another runtime could do anything.
        for w in due {
            w.wake();
        }
        true
    }

    /// Timers pending (stale ones of dropped timers included).
    #[cfg(test)]
    pub(super) fn pending(&self) -> usize {
        self.pending.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Count(AtomicUsize);
    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Time jumps to the earliest deadline, wakes all due by then, and never goes back.
    #[test]
    fn the_clock_jumps_from_deadline_to_deadline() {
        let clock = Clock::new();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let t0 = clock.now();
        clock.wake_at(t0 + Duration::from_secs(3), waker.clone());
        clock.wake_at(t0 + Duration::from_secs(1), waker.clone());
        clock.wake_at(t0 + Duration::from_secs(1), waker.clone());
        clock.wake_at(t0, waker.clone()); // due: woken at once
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(clock.pending(), 3);
        assert!(clock.advance());
        assert_eq!(clock.elapsed(), Duration::from_secs(1));
        assert_eq!(count.0.load(Ordering::SeqCst), 3);
        assert!(clock.advance());
        assert_eq!(clock.elapsed(), Duration::from_secs(3));
        assert!(!clock.advance(), "nothing pending");
        assert_eq!(clock.now(), t0 + Duration::from_secs(3));
    }
}
