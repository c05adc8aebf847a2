//! Task wakers without refcount or allocation.
//!
//! A waker's data pointer is not a pointer: it is a task's word ([`super::wake_word`]: the
//! executor id, the task slot's generation and its index). Cloning copies the word;
//! dropping does nothing.
//!
//! Waking compares the packed executor id with the id of this thread's current ring (a
//! thread-local read): if they match, the task is pushed on the ring's run queue; otherwise
//! the word goes through the global registry to the owning executor's remote queue
//! ([`super::remote_wake`]). A stale generation is ignored by the task slab, and a wake for an
//! executor that has ended finds nothing in the registry and does nothing.

use std::task::{RawWaker, RawWakerVTable, Waker};

use super::current_ring;
use super::remote_wake;
use super::wake_word::{pack, unpack};

const _: () = assert!(
    std::mem::size_of::<usize>() == 8,
    "wakers pack 64 bits into a pointer"
);

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake, drop_waker);

fn clone(data: *const ()) -> RawWaker {
    RawWaker::new(data, &VTABLE)
}

fn wake(data: *const ()) {
    wake_task(data.addr() as u64);
}

fn drop_waker(_: *const ()) {}

/// Wakes the task a packed word names, locally or through its executor's remote queue.
fn wake_task(word: u64) {
    let (exec, index, gen) = unpack(word);
    if current_ring::current_id() == exec {
        current_ring::with(|ring| ring.schedule(index, gen));
    } else {
        remote_wake::wake(exec, word);
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
    use super::super::wake_word::MAX_EXECUTORS;
    use super::*;

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
