//! The executor's user-space timer heap.
//!
//! A min-heap of (deadline, slot, generation) entries plus a slab of timer slots holding
//! each armed timer's waker. The executor pops due entries once per turn; the nearest
//! deadline bounds its `io_uring_enter` wait.
//!
//! Invariants:
//! - Removing a timer frees its slot at once and leaves its heap entry behind (lazy
//!   deletion); an entry whose slot generation no longer matches is skipped. When such
//!   cancelled entries exceed half the heap (and 64), the heap is compacted in place, so
//!   its size stays within max(64, 2 × armed timers) + 1.
//! - The heap and slab keep their capacity: once grown, arming a timer allocates nothing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::task::Waker;
use std::time::Instant;

const GEN_MASK: u32 = 0x00FF_FFFF;

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    deadline: Instant,
    index: u32,
    gen: u32,
}

enum State {
    Free { next: Option<u32> },
    Armed { waker: Option<Waker> },
    Fired,
}

struct Slot {
    gen: u32,
    state: State,
}

/// Armed timers of one executor.
#[derive(Default)]
pub(crate) struct TimerHeap {
    heap: BinaryHeap<Reverse<Entry>>,
    slots: Vec<Slot>,
    free: Option<u32>,
    cancelled: usize,
    armed: usize,
}

impl TimerHeap {
    /// Arms a timer for `deadline`; returns (slot, generation).
    pub(crate) fn insert(&mut self, deadline: Instant, waker: Waker) -> (u32, u32) {
        let state = State::Armed { waker: Some(waker) };
        let (index, gen) = match self.free {
            Some(i) => {
                let slot = &mut self.slots[i as usize];
                self.free = match slot.state {
                    State::Free { next } => next,
                    _ => unreachable!("free list names a used timer slot"),
                };
                slot.state = state;
                (i, slot.gen)
            }
            None => {
                let i = self.slots.len() as u32;
                self.slots.push(Slot { gen: 0, state });
                (i, 0)
            }
        };
        self.heap.push(Reverse(Entry {
            deadline,
            index,
            gen,
        }));
        self.armed += 1;
        (index, gen)
    }

    /// Whether the timer has fired; if not, records `waker`.
    pub(crate) fn poll(&mut self, index: u32, gen: u32, waker: &Waker) -> bool {
        let Some(slot) = self.slots.get_mut(index as usize).filter(|s| s.gen == gen) else {
            return true;
        };
        match &mut slot.state {
            State::Armed { waker: w } => {
                match w {
                    Some(w) if w.will_wake(waker) => {}
                    _ => *w = Some(waker.clone()),
                }
                false
            }
            _ => true,
        }
    }

    /// Disarms (if still armed) and frees a timer.
    pub(crate) fn remove(&mut self, index: u32, gen: u32) {
        let free = self.free;
        let Some(slot) = self.slots.get_mut(index as usize).filter(|s| s.gen == gen) else {
            return;
        };
        if let State::Armed { .. } = slot.state {
            self.cancelled += 1;
            self.armed -= 1;
        }
        slot.state = State::Free { next: free };
        slot.gen = (slot.gen + 1) & GEN_MASK;
        self.free = Some(index);
        if self.cancelled > 64 && self.cancelled * 2 > self.heap.len() {
            self.compact();
        }
    }

    fn compact(&mut self) {
        let slots = &self.slots;
        self.heap.retain(|Reverse(e)| {
            slots[e.index as usize].gen == e.gen
                && matches!(slots[e.index as usize].state, State::Armed { .. })
        });
        self.cancelled = 0;
    }

    /// Whether any timer is armed.
    pub(crate) fn is_empty(&self) -> bool {
        self.armed == 0
    }

    /// Fires the earliest timer due at `now`: returns its waker (`Some(None)` if it had
    /// none), or `None` if no timer is due.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<Option<Waker>> {
        loop {
            let Reverse(top) = self.heap.peek()?;
            let live = self.slots[top.index as usize].gen == top.gen
                && matches!(self.slots[top.index as usize].state, State::Armed { .. });
            if live && top.deadline > now {
                return None;
            }
            let Reverse(e) = self.heap.pop()?;
            if !live {
                self.cancelled = self.cancelled.saturating_sub(1);
                continue;
            }
            self.armed -= 1;
            let slot = &mut self.slots[e.index as usize];
            let waker = match std::mem::replace(&mut slot.state, State::Fired) {
                State::Armed { waker } => waker,
                _ => None,
            };
            return Some(waker);
        }
    }

    /// The earliest armed deadline (cancelled entries at the top are dropped first).
    pub(crate) fn next_deadline(&mut self) -> Option<Instant> {
        loop {
            let Reverse(top) = self.heap.peek()?;
            let live = self.slots[top.index as usize].gen == top.gen
                && matches!(self.slots[top.index as usize].state, State::Armed { .. });
            if live {
                return Some(top.deadline);
            }
            self.heap.pop();
            self.cancelled = self.cancelled.saturating_sub(1);
        }
    }

    /// Heap entries, live or cancelled (for the boundedness test).
    #[cfg(test)]
    pub(crate) fn heap_len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn fires_in_deadline_order_and_skips_removed() {
        let mut t = TimerHeap::default();
        let base = Instant::now();
        let w = Waker::noop();
        let a = t.insert(base + Duration::from_millis(3), w.clone());
        let b = t.insert(base + Duration::from_millis(1), w.clone());
        let c = t.insert(base + Duration::from_millis(2), w.clone());
        t.remove(c.0, c.1);
        assert_eq!(t.next_deadline(), Some(base + Duration::from_millis(1)));
        assert!(t.pop_due(base).is_none());
        let later = base + Duration::from_millis(10);
        assert!(t.pop_due(later).is_some());
        assert!(t.poll(b.0, b.1, w));
        assert!(t.pop_due(later).is_some());
        assert!(t.poll(a.0, a.1, w));
        assert!(t.pop_due(later).is_none());
        assert!(t.is_empty());
    }

    #[test]
    fn cancelled_entries_stay_bounded() {
        let mut t = TimerHeap::default();
        let far = Instant::now() + Duration::from_secs(3600);
        let w = Waker::noop();
        let keep = t.insert(far, w.clone());
        for _ in 0..10_000 {
            let (i, g) = t.insert(far, w.clone());
            t.remove(i, g);
            assert!(t.heap_len() <= 64 * 2 + 2, "heap {}", t.heap_len());
        }
        assert!(!t.is_empty());
        t.remove(keep.0, keep.1);
        assert!(t.is_empty());
    }
}
