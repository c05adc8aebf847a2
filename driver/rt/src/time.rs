//! Timers on the current thread's runtime: glommio's, or the io_uring runtime's user-space
//! timer heap (checked once per loop turn; no timeout operation per turn).

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::runtime::Runtime;
use super::{glommio_rt, sim, uring};

/// A future that completes once `duration` has passed since it was made.
pub struct Timer(TimerInner);

enum TimerInner {
    Glommio(glommio_rt::Timer),
    Uring(uring::Timer),
    Sim(sim::Timer),
}

impl std::fmt::Debug for Timer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Timer")
    }
}

impl Timer {
    /// A timer that fires `duration` from now, on the current thread's runtime.
    pub fn new(duration: Duration) -> Self {
        Self(match Runtime::current() {
            Runtime::Glommio => TimerInner::Glommio(glommio_rt::Timer::new(duration)),
            Runtime::Uring => TimerInner::Uring(uring::Timer::new(duration)),
            Runtime::Sim => TimerInner::Sim(sim::Timer::new(duration)),
        })
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.get_mut().0 {
            TimerInner::Glommio(t) => Pin::new(t).poll(cx).map(|_| ()),
            TimerInner::Uring(t) => Pin::new(t).poll(cx),
            TimerInner::Sim(t) => Pin::new(t).poll(cx),
        }
    }
}

/// Now, on the current thread's clock: the monotonic clock, or a simulation's virtual one
/// ([`crate::sim`]). Code that a simulation runs reads time here, never from `Instant::now()`.
#[inline]
pub fn now() -> Instant {
    if crate::sim::is_running() {
        sim::now()
    } else {
        Instant::now()
    }
}

/// Waits for `duration`.
pub async fn sleep(duration: Duration) {
    Timer::new(duration).await
}

/// A timer kept from one wait to the next, for a loop that sleeps again and again (a paced
/// benchmark fiber): on glommio every new [`Timer`] is a heap allocation (glommio keeps its
/// state reference counted), while re-arming a kept one is none; on the io_uring runtime a
/// timer never allocates, and each wait makes a new one.
///
/// Invariant: after its first wait on glommio, waiting again allocates nothing of its own
/// (glommio's timer map may still grow a node: that is glommio's, bounded by the number of
/// timers pending at once).
#[derive(Default)]
pub struct Sleeper {
    /// glommio's timer, made on the first wait on glommio and re-armed by later ones.
    glommio: Option<glommio_rt::Timer>,
}

impl std::fmt::Debug for Sleeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sleeper")
    }
}

impl Sleeper {
    /// A sleeper that has not waited yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits until `deadline` (at once when it is past) on the current thread's runtime.
    pub async fn sleep_until(&mut self, deadline: Instant) {
        let now = crate::now();
        if deadline <= now {
            return;
        }
        match Runtime::current() {
            Runtime::Uring => uring::Timer::at(deadline).await,
            Runtime::Sim => sim::Timer::at(deadline).await,
            Runtime::Glommio => {
                let after = deadline - now;
                let timer = match &mut self.glommio {
                    Some(t) => {
                        t.reset(after);
                        t
                    }
                    empty => empty.insert(glommio_rt::Timer::new(after)),
                };
                poll_fn(|cx| Pin::new(&mut *timer).poll(cx).map(|_| ())).await
            }
        }
    }
}

/// The deadline of [`timeout`] passed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("timed out")]
pub struct Elapsed;

/// Runs `future` for at most `duration`.
pub async fn timeout<T>(duration: Duration, future: impl Future<Output = T>) -> Result<T, Elapsed> {
    let mut future = std::pin::pin!(future);
    let mut timer = Timer::new(duration);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = future.as_mut().poll(cx) {
            return Poll::Ready(Ok(out));
        }
        Pin::new(&mut timer).poll(cx).map(|()| Err(Elapsed))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept timer waits until each deadline (never less), again and again, after a wait
    /// that was cancelled, and not at all for a deadline past, on both runtimes.
    #[test]
    fn a_sleeper_is_rearmed_from_wait_to_wait() {
        for runtime in Runtime::ALL {
            crate::run_on(runtime, "sleeper", || async {
                let mut sleeper = Sleeper::new();
                for _ in 0..20 {
                    let deadline = Instant::now() + Duration::from_millis(2);
                    sleeper.sleep_until(deadline).await;
                    assert!(Instant::now() >= deadline);
                }
                // Cancelled while pending (the timer stays armed in glommio's map), then
                // re-armed for a nearer deadline: that one ends the wait.
                let far = Instant::now() + Duration::from_secs(3600);
                let cut = timeout(Duration::from_millis(2), sleeper.sleep_until(far)).await;
                assert_eq!(cut, Err(Elapsed));
                let deadline = Instant::now() + Duration::from_millis(3);
                sleeper.sleep_until(deadline).await;
                assert!(Instant::now() >= deadline);
                // A deadline past: no wait at all.
                sleeper.sleep_until(Instant::now()).await;
            })
            .unwrap_or_else(|e| panic!("{runtime}: {e}"));
        }
    }
}
