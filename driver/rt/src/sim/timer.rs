//! Timers on virtual time.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::executor::{now, wake_at};

/// A future that completes at a virtual instant.
#[derive(Debug)]
pub struct Timer {
    at: Instant,
    /// The waker registered with the clock for the current wait, so that polling again with
    /// the same waker registers nothing new.
    registered: Option<Waker>,
}

impl Timer {
    /// A timer that fires `duration` of virtual time from now.
    pub fn new(duration: Duration) -> Self {
        Self::at(now() + duration)
    }

    /// A timer that fires at virtual instant `at`.
    pub fn at(at: Instant) -> Self {
        Self {
            at,
            registered: None,
        }
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if now() >= this.at {
            return Poll::Ready(());
        }
        if !this
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            wake_at(this.at, cx.waker().clone());
            this.registered = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}
