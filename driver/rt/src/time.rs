//! Timers on the current thread's runtime: glommio's, or the io_uring runtime's user-space
//! timer heap (checked once per loop turn; no timeout operation per turn).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::{glommio_rt, uring, Runtime};

/// A future that completes once `duration` has passed since it was made.
pub struct Timer(TimerInner);

enum TimerInner {
    Glommio(glommio_rt::Timer),
    Uring(uring::Timer),
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
        })
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.get_mut().0 {
            TimerInner::Glommio(t) => Pin::new(t).poll(cx).map(|_| ()),
            TimerInner::Uring(t) => Pin::new(t).poll(cx),
        }
    }
}

/// Waits for `duration`.
pub async fn sleep(duration: Duration) {
    Timer::new(duration).await
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
