//! Spawning and join handles: [`Task`] (for `'static` futures) and [`ScopedTask`] (for
//! futures that borrow).
//!
//! A spawned future is wrapped so that its output lands in a shared cell (`Rc<RefCell<..>>`,
//! allocated once at spawn, with the task's box) and the handle's waker is woken. Dropping a
//! handle cancels its task: the future is removed from the executor and dropped at once (or
//! right after its current poll, if it is the task running now). [`Task::detach`] lets it
//! run on instead.
//!
//! Invariants:
//! - Handles carry the executor id: used after their executor ended (or on another
//!   executor) they do nothing.
//! - A task that panics unwinds out of [`super::run`], like a thread's panic out of `join`;
//!   the executor tears down on the way out.

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::current_ring;
use super::task_queue::BoxFuture;

/// What a task and its handle share.
struct JoinCell<T> {
    output: Option<T>,
    finished: bool,
    waker: Option<Waker>,
}

/// A spawned future that puts its output in the shared cell and wakes the handle.
struct Deliver<F: Future> {
    fut: F,
    cell: Rc<RefCell<JoinCell<F::Output>>>,
}

impl<F: Future> Future for Deliver<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `fut` is structurally pinned (never moved out of `self`, which is pinned);
        // `cell` is not pinned and only borrowed.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above: `fut` stays where it is for as long as `self` lives.
        let fut = unsafe { Pin::new_unchecked(&mut this.fut) };
        let Poll::Ready(v) = fut.poll(cx) else {
            return Poll::Pending;
        };
        let waker = {
            let mut c = this.cell.borrow_mut();
            c.output = Some(v);
            c.finished = true;
            c.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Poll::Ready(())
    }
}

/// The part common to [`Task`] and [`ScopedTask`].
struct Handle<T> {
    exec: u32,
    index: u32,
    gen: u32,
    cell: Rc<RefCell<JoinCell<T>>>,
}

impl<T> Handle<T> {
    /// Wraps `fut` and spawns it on the current executor.
    fn spawn<'a, F>(fut: F, what: &str) -> Handle<T>
    where
        F: Future<Output = T> + 'a,
        T: 'a,
    {
        let cell = Rc::new(RefCell::new(JoinCell {
            output: None,
            finished: false,
            waker: None,
        }));
        // A hand-written wrapper, not `async move { fut.await }`: such a block keeps the
        // captured future and the awaited one as two fields, doubling every task's box.
        let wrapped: Pin<Box<dyn Future<Output = ()> + 'a>> = Box::pin(Deliver {
            fut,
            cell: cell.clone(),
        });
        // SAFETY: erasing `'a` is sound because every caller guarantees the future is
        // dropped before `'a` ends: `spawn_local` requires `'a = 'static`, and
        // `spawn_scoped_local`'s caller promises to drop or await the `ScopedTask` (whose
        // drop removes and drops the future) before anything it borrows dies.
        let wrapped: BoxFuture = unsafe {
            std::mem::transmute::<Pin<Box<dyn Future<Output = ()> + 'a>>, BoxFuture>(wrapped)
        };
        let spawned = current_ring::with(|ring| (ring.id(), ring.spawn(wrapped)));
        let Some((exec, (index, gen))) = spawned else {
            panic!("doppio_rt::uring::{what} called outside an io_uring executor (call it inside doppio_rt::uring::run)");
        };
        Handle {
            exec,
            index,
            gen,
            cell,
        }
    }

    fn poll_output(&self, cx: &mut Context<'_>) -> Poll<T> {
        let mut c = self.cell.borrow_mut();
        if let Some(v) = c.output.take() {
            return Poll::Ready(v);
        }
        assert!(
            !c.finished,
            "task handle polled after it returned its output"
        );
        match &c.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => c.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    fn is_finished(&self) -> bool {
        self.cell.borrow().finished
    }

    /// Removes the task from its executor and drops its future (outside any borrow).
    fn cancel(&self) {
        if self.cell.borrow().finished {
            return;
        }
        let fut =
            current_ring::with_id(self.exec, |ring| ring.cancel(self.index, self.gen)).flatten();
        drop(fut);
    }
}

/// A handle to a task spawned with [`spawn_local`]: a future of its output. Dropping it
/// cancels the task (its future is dropped on the executor); [`Task::detach`] lets the task
/// run on.
#[must_use = "dropping a Task cancels it; call .detach() to let it run"]
pub struct Task<T> {
    handle: Handle<T>,
    detached: bool,
}

impl<T> Task<T> {
    /// Lets the task run to completion on its own; its output is dropped.
    pub fn detach(mut self) {
        self.detached = true;
    }

    /// Whether the task has completed.
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }
}

impl<T> Future for Task<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.handle.poll_output(cx)
    }
}

impl<T> std::fmt::Debug for Task<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task")
            .field("slot", &self.handle.index)
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<T> Drop for Task<T> {
    fn drop(&mut self) {
        if !self.detached {
            self.handle.cancel();
        }
    }
}

/// A handle to a task spawned with [`spawn_scoped_local`], whose future may borrow data
/// that lives for `'a`. Dropping it removes the future from the executor at once.
#[must_use = "dropping a ScopedTask cancels it"]
pub struct ScopedTask<'a, T> {
    handle: Handle<T>,
    _borrows: PhantomData<&'a ()>,
}

impl<T> ScopedTask<'_, T> {
    /// Whether the task has completed.
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// The output, if the task has completed and it was not taken yet.
    pub(crate) fn take_output(&self) -> Option<T> {
        self.handle.cell.borrow_mut().output.take()
    }
}

impl<T> Future for ScopedTask<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.handle.poll_output(cx)
    }
}

impl<T> std::fmt::Debug for ScopedTask<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopedTask")
            .field("slot", &self.handle.index)
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<T> Drop for ScopedTask<'_, T> {
    fn drop(&mut self) {
        self.handle.cancel();
    }
}

/// Spawns `fut` on the executor running on this thread.
///
/// Allocates the task's box and its output cell (spawn is a connect-time operation, not a
/// per-request one).
///
/// # Panics
///
/// If no executor runs on this thread (see [`super::run`]).
pub fn spawn_local<T: 'static>(fut: impl Future<Output = T> + 'static) -> Task<T> {
    Task {
        handle: Handle::spawn(fut, "spawn_local"),
        detached: false,
    }
}

/// Spawns `fut`, which may borrow data living for `'a`, on the executor running on this
/// thread.
///
/// # Safety
///
/// The returned [`ScopedTask`] must be awaited to completion or dropped before anything
/// `fut` borrows is dropped or moved, and must never be leaked (`mem::forget`, an `Rc`
/// cycle): the executor would otherwise poll or drop a future whose borrows dangle.
/// Dropping the `ScopedTask` drops the future immediately, except from inside the task's own
/// poll (a task must not drop its own handle), where it is dropped right after that poll.
///
/// # Panics
///
/// If no executor runs on this thread.
pub unsafe fn spawn_scoped_local<'a, T: 'a>(
    fut: impl Future<Output = T> + 'a,
) -> ScopedTask<'a, T> {
    ScopedTask {
        handle: Handle::spawn(fut, "spawn_scoped_local"),
        _borrows: PhantomData,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::super::{run, sleep, stats, yield_now, Config};
    use super::*;

    fn rt<T>(fut: impl Future<Output = T>) -> T {
        run(Config::default(), fut).expect("io_uring runtime")
    }

    #[test]
    fn spawn_and_await() {
        let v = rt(async {
            let a = spawn_local(async { 40 });
            let b = spawn_local(async {
                yield_now().await;
                2
            });
            a.await + b.await
        });
        assert_eq!(v, 42);
    }

    #[test]
    fn detached_tasks_run_on() {
        let done = Rc::new(Cell::new(0));
        let d = done.clone();
        rt(async move {
            spawn_local(async move {
                for _ in 0..3 {
                    yield_now().await;
                }
                d.set(d.get() + 1);
            })
            .detach();
            sleep(Duration::from_millis(5)).await;
        });
        assert_eq!(done.get(), 1);
    }

    #[test]
    fn dropping_a_handle_drops_the_future_at_once() {
        rt(async {
            let dropped = Rc::new(Cell::new(false));
            struct Flag(Rc<Cell<bool>>);
            impl Drop for Flag {
                fn drop(&mut self) {
                    self.0.set(true);
                }
            }
            let flag = Flag(dropped.clone());
            let t = spawn_local(async move {
                let _f = flag;
                std::future::pending::<()>().await;
            });
            yield_now().await;
            assert!(!dropped.get());
            drop(t);
            assert!(dropped.get(), "cancel drops the future immediately");
        });
    }

    #[test]
    fn scoped_task_borrows_a_local() {
        rt(async {
            let mut counter = 0u32;
            let local = Cell::new(0u32);
            {
                // SAFETY: awaited below, before `local` and `counter` go out of scope.
                let t = unsafe {
                    spawn_scoped_local(async {
                        for _ in 0..10 {
                            local.set(local.get() + 1);
                            yield_now().await;
                        }
                        counter += 1;
                        local.get()
                    })
                };
                assert_eq!(t.await, 10);
            }
            assert_eq!(counter, 1);
            // Dropped unfinished: removed from the executor at once.
            // SAFETY: dropped right away, while `local` lives.
            let t = unsafe {
                spawn_scoped_local(async {
                    loop {
                        local.set(local.get() + 1);
                        yield_now().await;
                    }
                })
            };
            yield_now().await;
            drop(t);
            let seen = local.get();
            for _ in 0..5 {
                yield_now().await;
            }
            assert_eq!(local.get(), seen);
        });
    }

    #[test]
    fn ten_thousand_tasks_woken_many_times() {
        let total = rt(async {
            let sum = Rc::new(Cell::new(0u64));
            let handles: Vec<_> = (0..10_000)
                .map(|_| {
                    let sum = sum.clone();
                    spawn_local(async move {
                        for _ in 0..20 {
                            yield_now().await;
                            sum.set(sum.get() + 1);
                        }
                    })
                })
                .collect();
            for h in handles {
                h.await;
            }
            sum.get()
        });
        assert_eq!(total, 200_000);
    }

    /// One cross-thread wake of a task whose executor sleeps in `io_uring_enter`: the
    /// latency from `wake()` on a std thread to the task running, and the remote wakes seen.
    fn cross_thread_wake() -> (Duration, u64) {
        let (tx, rx) = mpsc::channel::<std::task::Waker>();
        let helper = std::thread::spawn(move || {
            let w = rx.recv().expect("waker");
            std::thread::sleep(Duration::from_millis(50));
            let at = Instant::now();
            w.wake();
            at
        });
        let (woken_at, remote) = rt(async move {
            let before = stats();
            let mut sent = false;
            let mut tx = Some(tx);
            std::future::poll_fn(|cx| {
                if sent {
                    return std::task::Poll::Ready(());
                }
                sent = true;
                if let Some(tx) = tx.take() {
                    tx.send(cx.waker().clone()).expect("send");
                }
                std::task::Poll::Pending
            })
            .await;
            (Instant::now(), stats().since(&before).remote_wakes)
        });
        let woke = helper.join().expect("helper");
        (woken_at.duration_since(woke), remote)
    }

    #[test]
    fn waker_from_another_thread_wakes_a_sleeping_executor() {
        // Within milliseconds; one attempt in three (the machine may be busy).
        let mut seen = Vec::new();
        for _ in 0..3 {
            let (latency, remote) = cross_thread_wake();
            eprintln!("cross-thread wake latency: {latency:?}");
            assert!(remote >= 1);
            seen.push(latency);
            if latency < Duration::from_millis(20) {
                return;
            }
        }
        panic!("cross-thread wakes took {seen:?}");
    }

    #[test]
    fn a_control_plane_thread_feeding_a_mailbox_loses_no_wake() {
        use std::collections::VecDeque;
        use std::sync::{Arc, Mutex};
        struct Mailbox {
            jobs: VecDeque<u32>,
            closed: bool,
            waker: Option<std::task::Waker>,
        }
        let mailbox = Arc::new(Mutex::new(Mailbox {
            jobs: VecDeque::new(),
            closed: false,
            waker: None,
        }));
        let producer = {
            let mailbox = mailbox.clone();
            std::thread::spawn(move || {
                for job in 0..10_000u32 {
                    let waker = {
                        let mut m = mailbox.lock().unwrap();
                        m.jobs.push_back(job);
                        if job == 9_999 {
                            m.closed = true;
                        }
                        m.waker.take()
                    };
                    if let Some(w) = waker {
                        w.wake();
                    }
                    if job % 1000 == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            })
        };
        let (sum, count, remote) = rt(async move {
            let before = stats();
            let (mut sum, mut count) = (0u64, 0u32);
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let batch = std::future::poll_fn(|cx| {
                    let mut m = mailbox.lock().unwrap();
                    if !m.jobs.is_empty() || m.closed {
                        let jobs: Vec<u32> = m.jobs.drain(..).collect();
                        return std::task::Poll::Ready((jobs, m.closed));
                    }
                    m.waker = Some(cx.waker().clone());
                    std::task::Poll::Pending
                })
                .await;
                count += batch.0.len() as u32;
                sum += batch.0.iter().map(|j| *j as u64).sum::<u64>();
                if batch.1 || Instant::now() > deadline {
                    break;
                }
            }
            (sum, count, stats().since(&before).remote_wakes)
        });
        producer.join().expect("producer");
        eprintln!("10,000 control-plane jobs arrived with {remote} remote wakes");
        assert_eq!(count, 10_000);
        assert_eq!(sum, (0..10_000u64).sum::<u64>());
    }

    #[test]
    fn stale_wakers_are_no_ops() {
        rt(async {
            let polls = Rc::new(Cell::new(0u32));
            // A task that records its waker, then completes.
            let stash: Rc<Cell<Option<std::task::Waker>>> = Rc::new(Cell::new(None));
            let s = stash.clone();
            spawn_local(std::future::poll_fn(move |cx| {
                s.set(Some(cx.waker().clone()));
                std::task::Poll::Ready(())
            }))
            .await;
            let old = stash.take().expect("waker");
            // A new task reuses the slot with a new generation; the old waker must not poll it.
            let p = polls.clone();
            let t = spawn_local(std::future::poll_fn(move |_| {
                p.set(p.get() + 1);
                std::task::Poll::<()>::Pending
            }));
            yield_now().await;
            assert_eq!(polls.get(), 1);
            old.wake_by_ref();
            old.wake();
            yield_now().await;
            yield_now().await;
            assert_eq!(polls.get(), 1, "a stale waker polled a task");
            drop(t);
        });
    }

    #[test]
    fn wake_after_the_executor_is_gone_is_a_no_op() {
        let w = rt(async {
            std::future::poll_fn(|cx| std::task::Poll::Ready(cx.waker().clone())).await
        });
        w.wake_by_ref();
        std::thread::spawn(move || w.wake()).join().expect("thread");
    }

    #[test]
    fn teardown_drops_every_task_even_those_spawned_while_dropping() {
        struct SpawnOnDrop {
            dropped: Rc<Cell<u32>>,
            again: bool,
        }
        impl Drop for SpawnOnDrop {
            fn drop(&mut self) {
                self.dropped.set(self.dropped.get() + 1);
                if self.again {
                    let guard = SpawnOnDrop {
                        dropped: self.dropped.clone(),
                        again: false,
                    };
                    spawn_local(async move {
                        let _g = guard;
                        std::future::pending::<()>().await;
                    })
                    .detach();
                }
            }
        }
        let dropped = Rc::new(Cell::new(0));
        let d = dropped.clone();
        let start = Instant::now();
        rt(async move {
            for _ in 0..10_000 {
                let guard = SpawnOnDrop {
                    dropped: d.clone(),
                    again: true,
                };
                spawn_local(async move {
                    let _g = guard;
                    std::future::pending::<()>().await;
                })
                .detach();
            }
            yield_now().await;
        });
        assert_eq!(dropped.get(), 20_000);
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    #[should_panic(expected = "outside an io_uring executor")]
    fn spawn_outside_an_executor_panics_clearly() {
        drop(spawn_local(async {}));
    }

    #[test]
    #[should_panic(expected = "task panicked")]
    fn a_task_panic_propagates_out_of_run() {
        rt(async {
            spawn_local(async { panic!("task panicked") }).detach();
            sleep(Duration::from_millis(50)).await;
        });
    }
}
