//! Task wakers without refcount or allocation.
//!
//! A waker's data pointer is not a pointer: it is a 64-bit word packing the executor id
//! (16 bits), the task slot's generation (24 bits) and the slot index (24 bits). Cloning
//! copies the word; dropping does nothing.
//!
//! Waking compares the packed executor id with this thread's current executor id (a
//! thread-local read): if they match, the task is pushed on the local run queue; otherwise
//! the word goes through the global registry to the owning executor's remote queue
//! ([`super::remote`]). A stale generation is ignored by the task slab, and a wake for an
//! executor that has ended finds nothing in the registry and does nothing.

use std::task::{RawWaker, RawWakerVTable, Waker};

use super::{context, remote};

const _: () = assert!(
    std::mem::size_of::<usize>() == 8,
    "wakers pack 64 bits into a pointer"
);

/// Largest task slot index a waker can carry (exclusive).
pub(crate) const MAX_TASKS: u32 = 1 << 24;
/// Generations wrap at this mask.
pub(crate) const GEN_MASK: u32 = (1 << 24) - 1;
/// Largest executor id (exclusive).
pub(crate) const MAX_EXECUTORS: u32 = 1 << 16;

/// Packs (executor id, slot index, generation).
#[inline]
pub(crate) fn pack(exec: u32, index: u32, gen: u32) -> u64 {
    debug_assert!(exec < MAX_EXECUTORS && index < MAX_TASKS);
    (exec as u64) << 48 | ((gen & GEN_MASK) as u64) << 24 | index as u64
}

/// Splits a packed word into (executor id, slot index, generation).
#[inline]
pub(crate) fn unpack(word: u64) -> (u32, u32, u32) {
    (
        (word >> 48) as u32,
        (word as u32) & (MAX_TASKS - 1),
        ((word >> 24) as u32) & GEN_MASK,
    )
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake, drop_waker);

fn clone(data: *const ()) -> RawWaker {
    RawWaker::new(data, &VTABLE)
}

fn wake(data: *const ()) {
    wake_word(data.addr() as u64);
}

fn drop_waker(_: *const ()) {}

/// Wakes the task a packed word names, locally or through its executor's remote queue.
pub(crate) fn wake_word(word: u64) {
    let (exec, index, gen) = unpack(word);
    if context::current_id() == exec {
        context::with(|ex| ex.schedule(index, gen));
    } else {
        remote::wake(exec, word);
    }
}

/// The waker of task slot `index` (generation `gen`) of executor `exec`.
#[inline]
pub(crate) fn task_waker(exec: u32, index: u32, gen: u32) -> Waker {
    let data = std::ptr::without_provenance::<()>(pack(exec, index, gen) as usize);
    // SAFETY: the vtable functions never dereference `data` (it is a packed word, not a
    // pointer), are thread-safe (a remote wake goes through the registry's lock), and
    // clone/drop need no bookkeeping, so the RawWaker contract holds trivially.
    unsafe { Waker::from_raw(RawWaker::new(data, &VTABLE)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips() {
        let w = pack(65_535, MAX_TASKS - 1, 0xFF_FFFF);
        assert_eq!(unpack(w), (65_535, MAX_TASKS - 1, 0xFF_FFFF));
        assert_eq!(unpack(pack(3, 7, 9)), (3, 7, 9));
    }

    #[test]
    fn a_waker_for_no_executor_is_a_no_op() {
        // Executor id 65_535 is never registered in a unit-test process with few executors.
        let w = task_waker(MAX_EXECUTORS - 1, 1, 1);
        let w2 = w.clone();
        assert!(w.will_wake(&w2));
        w2.wake();
        w.wake_by_ref();
    }
}
