//! [`Op`]: a future for one one-shot request in the ring.
//!
//! Starting an `Op` takes an operation slot, moves what the kernel will use into it
//! ([`Hold`]) and queues the SQE (submitted by the executor's next enter). Polling returns
//! the completion and the hold.
//!
//! Invariant (cancel safety): dropping an `Op` before its completion never frees memory the
//! kernel may use. The slot becomes `Abandoned`, keeps the hold until the CQE arrives, and an
//! `ASYNC_CANCEL` for the request is queued; the CQE then frees the slot (and closes the fd
//! of an accept that completed anyway).

use std::task::{Context, Poll};

use io_uring::{opcode, squeue};

use super::current_ring;
use super::op_table::{self, Abandon, Completion, Hold};
use super::socket;

/// A one-shot request in flight.
pub(crate) struct Op {
    exec: u32,
    index: u32,
    gen: u32,
    done: bool,
}

impl Op {
    /// Queues `entry` (its `user_data` is set here) with `hold` kept in its slot.
    ///
    /// Returns `None` if no executor runs on this thread.
    ///
    /// # Safety
    ///
    /// Every pointer in `entry` must point into memory owned by `hold` (heap memory that does
    /// not move when `hold` moves, such as a `BytesMut`'s bytes or a `Box`'s contents), or
    /// otherwise stay valid until the request's CQE arrives.
    pub(crate) unsafe fn start(entry: squeue::Entry, hold: Hold) -> Option<Op> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Self::start_as(entry, hold, false) }
    }

    /// As [`Op::start`], for a request whose completion ends no wait of the executor until
    /// [`hurry`] is called (see `op_table::OpTable::lazy`).
    ///
    /// # Safety
    ///
    /// As [`Op::start`]; and the request must complete while it is submitted, without
    /// waiting on anything outside the kernel (a send with `MSG_DONTWAIT`, say), or the
    /// executor may sleep past other completions until it does.
    pub(crate) unsafe fn start_lazy(entry: squeue::Entry, hold: Hold) -> Option<Op> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Self::start_as(entry, hold, true) }
    }

    /// # Safety
    ///
    /// As [`Op::start_lazy`] when `lazy`, else as [`Op::start`].
    unsafe fn start_as(entry: squeue::Entry, hold: Hold, lazy: bool) -> Option<Op> {
        current_ring::with(|ring| {
            let (index, gen) = ring.ops.borrow_mut().alloc_op(hold, lazy);
            let entry = entry.user_data(op_table::user_data(op_table::KIND_OP, index, gen));
            // SAFETY: the caller guarantees the entry's pointers stay valid until the CQE;
            // the slot now owns `hold` until then (also if this Op is dropped).
            unsafe { ring.push(&entry, true) };
            Op {
                exec: ring.id(),
                index,
                gen,
                done: false,
            }
        })
    }

    /// The slot of this request (index, generation), to hurry it later by
    /// [`hurry`].
    pub(crate) fn slot(&self) -> (u32, u32) {
        (self.index, self.gen)
    }

    /// The completion, once the CQE has arrived.
    ///
    /// If the executor ended meanwhile the result is `-ECANCELED` and the hold is gone.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Completion> {
        if self.done {
            return Poll::Ready(ended());
        }
        let r = current_ring::with_id(self.exec, |ring| {
            ring.ops.borrow_mut().poll(self.index, self.gen, cx.waker())
        });
        match r {
            Some(None) => Poll::Pending,
            Some(Some(c)) => {
                self.done = true;
                Poll::Ready(c)
            }
            None => {
                self.done = true;
                Poll::Ready(ended())
            }
        }
    }
}

fn ended() -> Completion {
    Completion {
        res: -libc::ECANCELED,
        hold: Hold::Nothing,
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        current_ring::with_id(self.exec, |ring| {
            let found = ring.ops.borrow_mut().abandon(self.index, self.gen);
            match found {
                Abandon::InKernel => {
                    let target = op_table::user_data(op_table::KIND_OP, self.index, self.gen);
                    let cancel = opcode::AsyncCancel::new(target)
                        .build()
                        .user_data(op_table::user_data(op_table::KIND_IGNORE, 0, 0));
                    // SAFETY: a cancel SQE carries no pointer.
                    unsafe { ring.push(&cancel, false) };
                }
                Abandon::Completed(hold, res) => release_hold(hold, res),
                Abandon::Gone => {}
            }
        });
    }
}

/// The lazy request in slot (`index`, `gen`) of the current executor is now waited for: its
/// completion ends the executor's wait again. Returns whether it was lazy and still in the
/// kernel.
pub(crate) fn hurry(exec: u32, (index, gen): (u32, u32)) -> bool {
    current_ring::with_id(exec, |ring| ring.ops.borrow_mut().hurry(index, gen)).unwrap_or(false)
}

/// Drops what a finished request held whose future is gone (closing the fd an accept
/// returned): by the executor for an orphaned completion, by [`Op`]'s drop for one nobody
/// picked up.
pub(crate) fn release_hold(hold: Hold, res: i32) {
    if matches!(hold, Hold::Addr { accept: true, .. }) && res >= 0 {
        socket::close_now(res);
    }
    drop(hold);
}
