//! Timers: [`Timer`], [`sleep`], [`timeout`].
//!
//! A timer registers in its executor's heap on its first poll and deregisters when dropped.
//! Deadlines are `std::time::Instant`s; the executor wakes for the nearest one through the
//! timeout of its single `io_uring_enter` wait, so timers are as precise as the kernel's
//! high-resolution wait (no tick, no coarse clock).
//!
//! Invariants: no allocation per timer once the executor's heap has grown; a timer polled
//! after its deadline passed in an earlier turn completes without registering.

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::current_ring;

/// A future that completes at a deadline (`!Send`: it registers with the executor of the
/// thread that polls it).
#[derive(Debug)]
#[must_use = "a Timer does nothing unless awaited"]
pub struct Timer {
    deadline: Instant,
    /// (executor id, slot, generation) once registered.
    registered: Option<(u32, u32, u32)>,
    fired: bool,
    _not_send: PhantomData<Rc<()>>,
}

impl Timer {
    /// A timer that fires `after` from now (a duration too large for `Instant`, such as
    /// `Duration::MAX`, means about a century: never, in practice).
    pub fn new(after: Duration) -> Timer {
        let now = Instant::now();
        Timer::at(now.checked_add(after).unwrap_or_else(|| far_future(now)))
    }

    /// A timer that fires at `deadline`.
    pub fn at(deadline: Instant) -> Timer {
        Timer {
            deadline,
            registered: None,
            fired: false,
            _not_send: PhantomData,
        }
    }

    /// The deadline.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.fired {
            return Poll::Ready(());
        }
        let deadline = self.deadline;
        let fired = match self.registered {
            Some((exec, index, gen)) => {
                current_ring::with_id(exec, |ring| ring.poll_timer(index, gen, cx.waker()))
                    // The executor is gone: nothing will ever fire this timer.
                    .unwrap_or(true)
            }
            None => {
                let reg = current_ring::with(|ring| {
                    if ring.already_past(deadline) {
                        None
                    } else {
                        Some((ring.id(), ring.insert_timer(deadline, cx.waker())))
                    }
                });
                match reg {
                    None => panic!("doppio_rt::uring::Timer polled outside an io_uring executor"),
                    Some(None) => true,
                    Some(Some((exec, (index, gen)))) => {
                        self.registered = Some((exec, index, gen));
                        false
                    }
                }
            }
        };
        if fired {
            self.fired = true;
            self.deregister();
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Timer {
    fn deregister(&mut self) {
        if let Some((exec, index, gen)) = self.registered.take() {
            current_ring::with_id(exec, |ring| ring.remove_timer(index, gen));
        }
    }
}

/// About a century after `now` (or the latest instant that can be represented).
fn far_future(now: Instant) -> Instant {
    let mut d = Duration::from_secs(100 * 365 * 24 * 3600);
    loop {
        if let Some(t) = now.checked_add(d) {
            return t;
        }
        d /= 2;
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.deregister();
    }
}

/// Waits for `d`.
pub fn sleep(d: Duration) -> Timer {
    Timer::new(d)
}

/// The error of [`timeout`]: the deadline passed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("deadline elapsed")]
pub struct Elapsed;

/// Runs `fut` for at most `d` (counted from this call): its output, or [`Elapsed`] (and
/// `fut` is dropped).
pub fn timeout<F: IntoFuture>(
    d: Duration,
    fut: F,
) -> impl Future<Output = Result<F::Output, Elapsed>> {
    let mut timer = Timer::new(d);
    let fut = fut.into_future();
    async move {
        let mut fut = std::pin::pin!(fut);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(v) = fut.as_mut().poll(cx) {
                return Poll::Ready(Ok(v));
            }
            if Pin::new(&mut timer).poll(cx).is_ready() {
                return Poll::Ready(Err(Elapsed));
            }
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};

    use super::super::{run, spawn_local, stats, yield_now, Config};
    use super::*;

    fn rt<T>(fut: impl Future<Output = T>) -> T {
        run(Config::default(), fut).expect("io_uring runtime")
    }

    #[test]
    fn a_thousand_random_deadlines_fire_in_order() {
        let order = rt(async {
            let order = Rc::new(RefCell::new(Vec::with_capacity(1000)));
            let base = Instant::now() + Duration::from_millis(5);
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            let mut tasks = Vec::new();
            for _ in 0..1000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let at = base + Duration::from_micros(x % 50_000);
                let order = order.clone();
                tasks.push(spawn_local(async move {
                    Timer::at(at).await;
                    order.borrow_mut().push(at);
                }));
            }
            for t in tasks {
                t.await;
            }
            Rc::try_unwrap(order).expect("one owner").into_inner()
        });
        assert_eq!(order.len(), 1000);
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "fired out of order");
    }

    #[test]
    fn dropped_timers_never_fire() {
        let fired = rt(async {
            let fired = Rc::new(Cell::new(0u32));
            let before = stats().timers_fired;
            for _ in 0..100 {
                let f = fired.clone();
                let t = spawn_local(async move {
                    sleep(Duration::from_millis(10)).await;
                    f.set(f.get() + 1);
                });
                yield_now().await; // registered
                drop(t);
            }
            // Registered then dropped without a task around it.
            let mut timer = Timer::new(Duration::from_millis(10));
            std::future::poll_fn(|cx| {
                assert!(Pin::new(&mut timer).poll(cx).is_pending());
                Poll::Ready(())
            })
            .await;
            drop(timer);
            sleep(Duration::from_millis(30)).await;
            // Only the 30 ms sleep fired.
            assert_eq!(stats().timers_fired - before, 1);
            fired.get()
        });
        assert_eq!(fired, 0);
    }

    #[test]
    fn timeout_both_ways() {
        rt(async {
            let fast = timeout(Duration::from_millis(200), async {
                sleep(Duration::from_millis(5)).await;
                7
            })
            .await;
            assert_eq!(fast, Ok(7));
            let start = Instant::now();
            let slow = timeout(Duration::from_millis(20), sleep(Duration::from_secs(5))).await;
            assert_eq!(slow, Err(Elapsed));
            assert!(start.elapsed() >= Duration::from_millis(20));
            assert!(start.elapsed() < Duration::from_secs(1));
        });
    }

    #[test]
    fn twenty_ms_timer_is_precise() {
        // Never early; late by at most 30 ms. The machine may be busy (the tests share two
        // cores with whatever else runs), so one attempt in three must be on time.
        let mut lates = Vec::new();
        for _ in 0..3 {
            let (late, st) = rt(async {
                // Warm the executor up first so the measurement is one plain sleep.
                yield_now().await;
                let before = stats();
                let start = Instant::now();
                sleep(Duration::from_millis(20)).await;
                let took = start.elapsed();
                (took, stats().since(&before))
            });
            eprintln!(
                "20 ms timer fired after {late:?} ({} turns, {} enters)",
                st.turns, st.enters
            );
            assert!(late >= Duration::from_millis(20), "early: {late:?}");
            assert!(st.enters <= st.turns);
            lates.push(late);
            if late < Duration::from_millis(50) {
                return;
            }
        }
        panic!("a 20 ms timer fired late three times: {lates:?}");
    }

    #[test]
    fn zero_past_and_endless_deadlines() {
        rt(async {
            sleep(Duration::ZERO).await;
            Timer::at(Instant::now() - Duration::from_millis(1)).await;
            // Duration::MAX does not overflow: it just never fires.
            assert_eq!(timeout(Duration::MAX, async { 3 }).await, Ok(3));
            let never = Timer::new(Duration::MAX);
            assert!(never.deadline() > Instant::now() + Duration::from_secs(3600));
            assert_eq!(timeout(Duration::from_millis(5), never).await, Err(Elapsed));
        });
    }

    #[test]
    #[should_panic(expected = "outside an io_uring executor")]
    fn timer_outside_an_executor_panics_clearly() {
        let mut t = Timer::new(Duration::from_millis(1));
        let _ = Pin::new(&mut t).poll(&mut Context::from_waker(std::task::Waker::noop()));
    }
}
