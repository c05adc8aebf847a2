//! A request's way through the driver, timed stage by stage, for the requests a caller
//! picks (a benchmark samples one in N): when it was queued on its connection, when its
//! batch was handed to the runtime for sending, when the read that brought its answer
//! arrived, when its answer frame was split off and handed to its slot, and when its caller
//! polled the answer. With the caller's own times around the call, these split its latency
//! into stages that add up (see `doppio-bench`'s waterfall).
//!
//! How a request is picked, without touching the request path's types: the caller [`arm`]s
//! the thread (one executor per thread: nothing is shared) just before it starts the
//! request, polls the request's future once, and [`disarm`]s it; the first request queued
//! on any connection of this thread while armed takes the arm (and its token). The
//! connection keeps the stamps of at most [`MAX_TIMED`] requests at once; when the answer
//! is polled, they are left for the token's owner to [`take`].
//!
//! Cost when nothing is armed: one thread-local read per request queued, and one length
//! check of an empty list per answer read and per answer polled. The clock is
//! `CLOCK_MONOTONIC` (nanoseconds, through the vDSO), read only for timed requests, and once
//! per read and per flush while one is in flight.

use std::cell::Cell;

/// Requests of one connection timed at once, at most: beyond it, an armed request is not
/// timed (its caller's [`take`] finds nothing). Also the connection's list's capacity,
/// reserved once, so that timing allocates nothing per request.
pub const MAX_TIMED: usize = 64;

/// When a timed request passed each point, nanoseconds on [`now`]'s clock; 0 where it is not
/// known (a batch handed over more than 64 batches before its answer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamps {
    /// Encoded into its connection's write buffer.
    pub queued: u64,
    /// Its batch handed to the runtime for sending (glommio: the `send` follows at once; io_uring: the send
    /// goes in the ring's next submission).
    pub flushed: u64,
    /// The read that brought its answer arrived (before any frame of it was split off).
    pub read: u64,
    /// Its answer frame split off and handed to its slot.
    pub completed: u64,
    /// Its caller polled the answer (the task was woken and ran).
    pub polled: u64,
}

#[cfg(feature = "unstable-internals")]
/// Which armed request stamps belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token(u64);

thread_local! {
    /// The armed token (0: none).
    static ARMED: Cell<u64> = const { Cell::new(0) };
    /// The last token handed out.
    static LAST: Cell<u64> = const { Cell::new(0) };
    /// The stamps of the timed request whose answer was polled last, with its token.
    static FINISHED: Cell<Option<(u64, Stamps)>> = const { Cell::new(None) };
}

/// Nanoseconds on `CLOCK_MONOTONIC` (the clock of [`Stamps`]).
#[inline]
pub fn now() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

#[cfg(feature = "unstable-internals")]
/// Arms this thread: the next request queued on it is timed, under the token returned.
pub fn arm() -> Token {
    let token = LAST.with(|l| {
        let t = l.get().wrapping_add(1).max(1);
        l.set(t);
        t
    });
    ARMED.with(|a| a.set(token));
    Token(token)
}

#[cfg(feature = "unstable-internals")]
/// Disarms this thread; whether a request took `token`'s arm since [`arm`].
pub fn disarm(token: Token) -> bool {
    ARMED.with(|a| {
        let left = a.get() == token.0;
        if left {
            a.set(0);
        }
        !left
    })
}

#[cfg(feature = "unstable-internals")]
/// The stamps of `token`'s request once its answer was polled (taken: a second call finds
/// nothing), or `None` (not timed, or not answered yet).
pub fn take(token: Token) -> Option<Stamps> {
    FINISHED.with(|f| match f.get() {
        Some((t, stamps)) if t == token.0 => {
            f.set(None);
            Some(stamps)
        }
        _ => None,
    })
}

/// The armed token, taken (the connection that queues a request calls this).
#[inline]
pub(crate) fn take_armed() -> Option<u64> {
    ARMED.with(|a| {
        let t = a.get();
        if t == 0 {
            None
        } else {
            a.set(0);
            Some(t)
        }
    })
}

/// A timed request's answer was polled: its stamps, for its token's owner.
pub(crate) fn finish(token: u64, stamps: Stamps) {
    FINISHED.with(|f| f.set(Some((token, stamps))));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arm_is_taken_once_and_stamps_reach_only_their_token() {
        // Nothing armed: nothing taken.
        assert_eq!(take_armed(), None);
        let a = arm();
        assert_eq!(take_armed(), Some(a.0));
        assert_eq!(take_armed(), None, "one request takes an arm");
        assert!(disarm(a), "taken");
        // Armed and not taken: disarm says so, and the next request is not timed.
        let b = arm();
        assert!(!disarm(b));
        assert_eq!(take_armed(), None);
        // Stamps go to their own token only, once.
        let stamps = Stamps {
            queued: 1,
            flushed: 2,
            read: 3,
            completed: 4,
            polled: 5,
        };
        finish(a.0, stamps);
        assert_eq!(take(b), None);
        assert_eq!(take(a), Some(stamps));
        assert_eq!(take(a), None);
        // Tokens differ, and the clock goes forward.
        assert_ne!(arm(), arm());
        let t = now();
        assert!(t > 0 && now() >= t);
    }
}
