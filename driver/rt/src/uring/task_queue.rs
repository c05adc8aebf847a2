//! The task slab and run queue of one executor.
//!
//! A task slot holds the task's boxed future, its generation and its scheduling flags. The
//! run queue is a `VecDeque` of slot indices; a slot's `queued` flag keeps it in the queue
//! at most once.
//!
//! Invariants:
//! - While a task is polled its future is taken out of the slot (`running`), so spawning
//!   (which may grow the `Vec`) or cancelling other tasks from inside a poll is safe; a task
//!   cancelled while it runs is dropped right after its poll returns.
//! - A slot's generation changes when it is freed; wakes and cancels that name an old
//!   generation do nothing.
//! - Futures are always dropped by the caller, outside any borrow of the slab: dropping a
//!   future may run arbitrary code that spawns, cancels or wakes.
//! - The queue may still hold the index of a freed slot; popping it polls whatever lives
//!   there now (a spurious poll, harmless) or skips an empty slot.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use super::wake_word::{GEN_MASK, MAX_TASKS};

/// A type-erased task future.
pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;

struct Slot {
    gen: u32,
    future: Option<BoxFuture>,
    live: bool,
    queued: bool,
    running: bool,
    cancelled: bool,
    next_free: Option<u32>,
}

/// The task slab and run queue.
#[derive(Default)]
pub(crate) struct TaskQueue {
    slots: Vec<Slot>,
    free: Option<u32>,
    queue: VecDeque<u32>,
    live: usize,
}

impl TaskQueue {
    /// Stores a new task and queues it; returns (index, generation).
    pub(crate) fn insert(&mut self, future: BoxFuture) -> (u32, u32) {
        let index = match self.free {
            Some(i) => {
                self.free = self.slots[i as usize].next_free;
                i
            }
            None => {
                let i = self.slots.len() as u32;
                assert!(i < MAX_TASKS, "too many tasks on one executor (2^24)");
                self.slots.push(Slot {
                    gen: 0,
                    future: None,
                    live: false,
                    queued: false,
                    running: false,
                    cancelled: false,
                    next_free: None,
                });
                i
            }
        };
        let slot = &mut self.slots[index as usize];
        slot.future = Some(future);
        slot.live = true;
        slot.running = false;
        slot.cancelled = false;
        slot.next_free = None;
        if !slot.queued {
            slot.queued = true;
            self.queue.push_back(index);
        }
        self.live += 1;
        (index, slot.gen)
    }

    /// Queues task `index` if it is alive with generation `gen` and not queued yet.
    #[inline]
    pub(crate) fn schedule(&mut self, index: u32, gen: u32) {
        if let Some(slot) = self.slots.get_mut(index as usize) {
            if slot.live && slot.gen == gen && !slot.queued {
                slot.queued = true;
                self.queue.push_back(index);
            }
        }
    }

    /// Whether a task is queued.
    pub(crate) fn has_ready(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Live tasks.
    #[cfg(test)]
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// The next queued task's (index, generation, future), taken out of its slot.
    pub(crate) fn next_ready(&mut self) -> Option<(u32, u32, BoxFuture)> {
        while let Some(index) = self.queue.pop_front() {
            let slot = &mut self.slots[index as usize];
            slot.queued = false;
            if let Some(f) = slot.future.take() {
                slot.running = true;
                return Some((index, slot.gen, f));
            }
        }
        None
    }

    /// Puts a polled, pending future back; returns it if the task was cancelled during its
    /// poll (the caller drops it).
    pub(crate) fn put_back(&mut self, index: u32, future: BoxFuture) -> Option<BoxFuture> {
        let slot = &mut self.slots[index as usize];
        slot.running = false;
        if slot.cancelled {
            self.release(index);
            return Some(future);
        }
        slot.future = Some(future);
        None
    }

    /// A polled task completed: frees its slot (the caller drops the future).
    pub(crate) fn finish(&mut self, index: u32) {
        self.release(index);
    }

    /// Removes task `index` (generation `gen`): returns its future for the caller to drop,
    /// or marks it cancelled if it is being polled right now.
    pub(crate) fn cancel(&mut self, index: u32, gen: u32) -> Option<BoxFuture> {
        let slot = self.slots.get_mut(index as usize)?;
        if !slot.live || slot.gen != gen {
            return None;
        }
        if slot.running {
            slot.cancelled = true;
            return None;
        }
        let f = slot.future.take();
        self.release(index);
        f
    }

    /// Takes the future of the first live task at or after slot `*from` out (freeing its
    /// slot) and moves `*from` past it, for teardown.
    pub(crate) fn take_next(&mut self, from: &mut usize) -> Option<BoxFuture> {
        let offset = self.slots[(*from).min(self.slots.len())..]
            .iter()
            .position(|s| s.live && s.future.is_some())?;
        let index = *from + offset;
        *from = index + 1;
        let f = self.slots[index].future.take();
        self.release(index as u32);
        f
    }

    fn release(&mut self, index: u32) {
        let slot = &mut self.slots[index as usize];
        slot.gen = (slot.gen + 1) & GEN_MASK;
        slot.live = false;
        slot.running = false;
        slot.cancelled = false;
        slot.future = None;
        slot.next_free = self.free;
        self.free = Some(index);
        self.live -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() -> BoxFuture {
        Box::pin(async {})
    }

    #[test]
    fn queued_at_most_once_and_stale_generations_ignored() {
        let mut t = TaskQueue::default();
        let (i, g) = t.insert(noop());
        t.schedule(i, g);
        t.schedule(i, g);
        let (j, gj, f) = t.next_ready().expect("ready");
        assert_eq!((j, gj), (i, g));
        assert!(t.next_ready().is_none());
        t.finish(j);
        drop(f);
        t.schedule(i, g); // stale: ignored
        assert!(!t.has_ready());
        let (i2, g2) = t.insert(noop());
        assert_eq!((i2, g2), (i, g + 1));
        assert_eq!(t.live(), 1);
    }

    #[test]
    fn cancel_while_running_drops_after_the_poll() {
        let mut t = TaskQueue::default();
        let (i, g) = t.insert(noop());
        let (_, _, f) = t.next_ready().expect("ready");
        assert!(t.cancel(i, g).is_none());
        assert!(t.put_back(i, f).is_some());
        assert_eq!(t.live(), 0);
        assert!(t.take_next(&mut 0).is_none());
    }
}
