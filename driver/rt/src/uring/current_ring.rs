//! The ring of the executor running on this thread, reachable from futures, wakers and
//! handles: they see the ring and its tables ([`Ring`]), never the loop that turns it.
//!
//! Invariants:
//! - `CURRENT` points at the ring of the boxed executor for exactly as long as [`super::run`]
//!   runs it (set before the first poll, cleared after teardown, also when a panic unwinds),
//!   so a non-null pointer is always a live ring on this thread.
//! - Only shared references are handed out; the ring's state is behind `Cell`/`RefCell`, and
//!   no borrow of it is held while user code (a poll, a drop, a wake) runs.
//! - `CURRENT_ID` is the running executor's id, or [`NO_EXECUTOR`]: a waker compares it
//!   with the id it carries (a thread-local read, no atomic) to tell a local wake from a
//!   remote one.

use std::cell::Cell;
use std::ptr;

use super::ring::Ring;

/// `CURRENT_ID` when no executor runs on this thread.
pub(crate) const NO_EXECUTOR: u32 = u32::MAX;

thread_local! {
    static CURRENT: Cell<*const Ring> = const { Cell::new(ptr::null()) };
    static CURRENT_ID: Cell<u32> = const { Cell::new(NO_EXECUTOR) };
}

/// The id of the executor running on this thread, or [`NO_EXECUTOR`].
#[inline]
pub(crate) fn current_id() -> u32 {
    CURRENT_ID.with(Cell::get)
}

/// Runs `f` with the ring of the executor running on this thread, if any.
#[inline]
pub(crate) fn with<R>(f: impl FnOnce(&Ring) -> R) -> Option<R> {
    let p = CURRENT.with(Cell::get);
    if p.is_null() {
        return None;
    }
    // SAFETY: a non-null CURRENT is the live ring of the boxed executor of `run` on this
    // thread (see the module invariants); it is only used through shared references.
    Some(f(unsafe { &*p }))
}

/// Runs `f` with the ring of the executor running on this thread if its id is `id`.
#[inline]
pub(crate) fn with_id<R>(id: u32, f: impl FnOnce(&Ring) -> R) -> Option<R> {
    if current_id() != id {
        return None;
    }
    with(f)
}

/// Makes `ring` the current ring of this thread.
///
/// # Safety
///
/// `ring` must stay alive and unmoved until [`clear`] is called on this thread.
pub(crate) unsafe fn set(ring: &Ring) {
    CURRENT.with(|c| c.set(ring));
    CURRENT_ID.with(|c| c.set(ring.id()));
}

/// No executor runs on this thread any more.
pub(crate) fn clear() {
    CURRENT.with(|c| c.set(ptr::null()));
    CURRENT_ID.with(|c| c.set(NO_EXECUTOR));
}
