//! Handles of spawned tasks: awaiting one yields the task's output; dropping one cancels
//! the task unless it was detached.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::executor::{self, TaskId};

/// Where a task leaves its output for its handle.
struct Join<T> {
    output: RefCell<Option<T>>,
    done: Cell<bool>,
    waiter: RefCell<Option<Waker>>,
}

impl<T> Join<T> {
    fn poll(&self, cx: &mut Context<'_>) -> Poll<T> {
        if let Some(out) = self.output.borrow_mut().take() {
            return Poll::Ready(out);
        }
        assert!(
            !self.done.get(),
            "a simulated task's output was taken twice"
        );
        *self.waiter.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Boxes `future` so that it leaves its output in `join`, and spawns it.
fn spawn_joined<'a, T: 'a>(future: impl Future<Output = T> + 'a) -> (TaskId, Rc<Join<T>>) {
    let join = Rc::new(Join {
        output: RefCell::new(None),
        done: Cell::new(false),
        waiter: RefCell::new(None),
    });
    let theirs = join.clone();
    let task: Pin<Box<dyn Future<Output = ()> + 'a>> = Box::pin(async move {
        let out = future.await;
        *theirs.output.borrow_mut() = Some(out);
        theirs.done.set(true);
        let waiter = theirs.waiter.borrow_mut().take();
        if let Some(w) = waiter {
            w.wake();
        }
    });
    // SAFETY: the arena holds futures as `'static`; a `'static` future is one, and a scoped
    // one's borrows are kept alive by `spawn_scoped`'s caller until its handle is dropped,
    // which cancels (drops) the future first.
    let task: Pin<Box<dyn Future<Output = ()> + 'static>> = unsafe { std::mem::transmute(task) };
    let id = executor::with(|sim| sim.spawn(task))
        .expect("doppio_rt::sim::spawn_local called off a simulation's thread");
    (id, join)
}

fn cancel(id: TaskId) {
    // Off the simulation (its thread ending) there is nothing left to cancel.
    let _ = executor::with(|sim| sim.cancel(id));
}

/// A spawned task of the simulation.
#[must_use = "a task is cancelled when dropped; call detach() to let it run on"]
pub struct Task<T> {
    id: TaskId,
    join: Rc<Join<T>>,
    detached: bool,
}

impl<T> std::fmt::Debug for Task<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("sim::Task").field("id", &self.id).finish()
    }
}

fn spawn<T: 'static>(future: impl Future<Output = T> + 'static) -> Task<T> {
    let (id, join) = spawn_joined(future);
    Task {
        id,
        join,
        detached: false,
    }
}

impl<T> Task<T> {
    /// Lets the task run to completion on its own; its output is dropped.
    pub fn detach(mut self) {
        self.detached = true;
    }
}

impl<T> Future for Task<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.join.poll(cx)
    }
}

impl<T> Drop for Task<T> {
    fn drop(&mut self) {
        if !self.detached && !self.join.done.get() {
            cancel(self.id);
        }
    }
}

/// A spawned task that may borrow from its spawner; dropping it cancels it.
#[must_use = "a scoped task is cancelled when dropped"]
pub struct ScopedTask<'a, T> {
    id: TaskId,
    join: Rc<Join<T>>,
    _borrows: PhantomData<&'a ()>,
}

impl<T> std::fmt::Debug for ScopedTask<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("sim::ScopedTask")
            .field("id", &self.id)
            .finish()
    }
}

/// # Safety
/// As [`spawn_scoped_local`].
unsafe fn spawn_scoped<'a, T>(future: impl Future<Output = T> + 'a) -> ScopedTask<'a, T> {
    let (id, join) = spawn_joined(future);
    ScopedTask {
        id,
        join,
        _borrows: PhantomData,
    }
}

impl<T> Future for ScopedTask<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.join.poll(cx)
    }
}

impl<T> Drop for ScopedTask<'_, T> {
    fn drop(&mut self) {
        if !self.join.done.get() {
            cancel(self.id);
        }
    }
}

/// Spawns `future` as a task of this thread's simulation.
///
/// # Panics
/// Off a simulation's thread.
pub fn spawn_local<T: 'static>(future: impl Future<Output = T> + 'static) -> Task<T> {
    spawn(future)
}

/// Spawns a future that may borrow from the caller, as a task of this thread's simulation.
///
/// # Safety
/// As [`crate::spawn_scoped_local`]: the task must be awaited or dropped before anything it
/// borrows goes away, and never leaked.
pub unsafe fn spawn_scoped_local<'a, T>(future: impl Future<Output = T> + 'a) -> ScopedTask<'a, T> {
    // SAFETY: the caller's contract.
    unsafe { spawn_scoped(future) }
}
