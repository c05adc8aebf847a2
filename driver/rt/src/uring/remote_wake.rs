//! Cross-thread wake-ups: the global registry of executors and each one's remote queue.
//!
//! The control plane (a std thread) wakes a shard's task by waking its waker on its own
//! thread; the packed word is pushed to the owning executor's [`Remote`] queue, a flag is
//! set, and the executor's eventfd is written. The executor keeps one read of that eventfd
//! armed in its ring, so a sleeping executor returns from its one `io_uring_enter` wait.
//! No `membarrier`, ever.
//!
//! Invariants:
//! - The registry (a `Mutex`) is only touched by executor start/stop and remote wakes:
//!   control-plane traffic, never the request path.
//! - The eventfd is owned by the `Remote` (an `Arc`): a waker that fetched it from the
//!   registry keeps it open while it writes, even if the executor ends meanwhile.
//! - Push, then flag, then (only if the flag was clear) write: an executor that clears the
//!   flag and then drains the queue never misses a word, and a set flag always has a write
//!   on its way.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::error::UringError;
use super::wake_word::MAX_EXECUTORS;

static REGISTRY: Mutex<Vec<Option<Arc<Remote>>>> = Mutex::new(Vec::new());

/// The part of an executor other threads may touch.
pub(crate) struct Remote {
    queue: Mutex<Vec<u64>>,
    signalled: AtomicBool,
    eventfd: OwnedFd,
}

impl Remote {
    /// A remote queue with a fresh eventfd.
    ///
    /// Blocking on purpose: io_uring reads it without blocking anyway (an internal poll on
    /// `EAGAIN`), whereas on a kernel whose eventfd lacks `FMODE_NOWAIT` an `O_NONBLOCK` fd
    /// would return `EAGAIN` to us and the re-armed read would spin. Writes never block:
    /// one is made per flag flip and every completed read resets the counter.
    pub(crate) fn new() -> Result<Remote, UringError> {
        // SAFETY: eventfd takes no pointers; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(UringError::os("eventfd", &std::io::Error::last_os_error()));
        }
        Ok(Remote {
            queue: Mutex::new(Vec::new()),
            signalled: AtomicBool::new(false),
            // SAFETY: `fd` is a new descriptor nobody else owns.
            eventfd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// The eventfd the executor reads through its ring.
    pub(crate) fn eventfd(&self) -> i32 {
        self.eventfd.as_raw_fd()
    }

    /// Queues a packed task word and makes sure the executor wakes.
    fn push(&self, word: u64) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(word);
        if !self.signalled.swap(true, Ordering::AcqRel) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to the eventfd this Remote owns (kept
            // open by our Arc). A full counter (EAGAIN) already means "wake up".
            unsafe { libc::write(self.eventfd(), (&raw const one).cast(), 8) };
        }
    }

    /// If woken from another thread, moves the queued words into `into` (swapping vectors,
    /// so both keep their capacity).
    pub(crate) fn take(&self, into: &mut Vec<u64>) -> bool {
        if !self.signalled.load(Ordering::Acquire) {
            return false;
        }
        self.signalled.store(false, Ordering::Release);
        let mut q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::swap(&mut *q, into);
        true
    }
}

/// Registers `remote` and returns its executor id (the lowest free one).
pub(crate) fn register(remote: Arc<Remote>) -> Result<u32, UringError> {
    let mut reg = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let id = match reg.iter().position(Option::is_none) {
        Some(i) => i,
        None => {
            if reg.len() >= MAX_EXECUTORS as usize - 1 {
                return Err(UringError::unavailable(
                    "too many io_uring executors in this process (65535)",
                ));
            }
            reg.push(None);
            reg.len() - 1
        }
    };
    reg[id] = Some(remote);
    Ok(id as u32)
}

/// Removes executor `id`: wakes for it become no-ops.
pub(crate) fn unregister(id: u32) {
    let mut reg = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(e) = reg.get_mut(id as usize) {
        *e = None;
    }
}

/// Wakes the task `word` names on executor `id` from another thread (or from this thread
/// while that executor is not the current one).
pub(crate) fn wake(id: u32, word: u64) {
    let remote = REGISTRY
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(id as usize)
        .cloned()
        .flatten();
    if let Some(r) = remote {
        r.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_take_and_unregistered_ids() {
        let r = Arc::new(Remote::new().expect("eventfd"));
        let id = register(r.clone()).expect("register");
        let mut got = Vec::new();
        assert!(!r.take(&mut got));
        wake(id, 42);
        wake(id, 43);
        assert!(r.take(&mut got));
        assert_eq!(got, [42, 43]);
        // The eventfd was written once (the flag suppressed the second write).
        let mut v = 0u64;
        // SAFETY: reads 8 bytes into a live u64 from an eventfd we own.
        let n = unsafe { libc::read(r.eventfd(), (&raw mut v).cast(), 8) };
        assert_eq!((n, v), (8, 1));
        unregister(id);
        wake(id, 44);
        got.clear();
        assert!(!r.take(&mut got));
    }
}
