//! Tasks on the current thread's runtime.
//!
//! A task is spawned once per connection, pool slot or bench fiber, never per request.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::runtime::Runtime;
use super::{glommio_rt, sim, uring};

/// A spawned task: awaiting it yields its output; dropping it cancels it unless it was
/// [detached](Task::detach).
#[must_use = "a task is cancelled when dropped; call detach() to let it run on"]
pub struct Task<T>(TaskInner<T>);

enum TaskInner<T> {
    Glommio(glommio_rt::Task<T>),
    Uring(uring::Task<T>),
    Sim(sim::Task<T>),
}

impl<T> std::fmt::Debug for Task<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let runtime = match self.0 {
            TaskInner::Glommio(_) => Runtime::Glommio,
            TaskInner::Uring(_) => Runtime::Uring,
            TaskInner::Sim(_) => Runtime::Sim,
        };
        f.debug_struct("Task").field("runtime", &runtime).finish()
    }
}

impl<T: 'static> Task<T> {
    /// Lets the task run to completion on its own; its output is dropped.
    pub fn detach(self) {
        match self.0 {
            TaskInner::Glommio(t) => drop(t.detach()),
            TaskInner::Uring(t) => t.detach(),
            TaskInner::Sim(t) => t.detach(),
        }
    }
}

impl<T> Future for Task<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        // Both inner tasks are Unpin handles; nothing here is structurally pinned.
        match &mut self.get_mut().0 {
            TaskInner::Glommio(t) => Pin::new(t).poll(cx),
            TaskInner::Uring(t) => Pin::new(t).poll(cx),
            TaskInner::Sim(t) => Pin::new(t).poll(cx),
        }
    }
}

/// Spawns `future` on the runtime of the current thread.
pub fn spawn_local<T: 'static>(future: impl Future<Output = T> + 'static) -> Task<T> {
    Task(match Runtime::current() {
        Runtime::Glommio => TaskInner::Glommio(glommio_rt::spawn_local(future)),
        Runtime::Uring => TaskInner::Uring(uring::spawn_local(future)),
        Runtime::Sim => TaskInner::Sim(sim::spawn_local(future)),
    })
}

/// A task that may borrow from its spawner; dropping it cancels it.
#[must_use = "a scoped task is cancelled when dropped"]
pub struct ScopedTask<'a, T>(ScopedInner<'a, T>);

enum ScopedInner<'a, T> {
    Glommio(glommio_rt::ScopedTask<'a, T>),
    Uring(uring::ScopedTask<'a, T>),
    Sim(sim::ScopedTask<'a, T>),
}

impl<T> Future for ScopedTask<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match &mut self.get_mut().0 {
            ScopedInner::Glommio(t) => Pin::new(t).poll(cx),
            ScopedInner::Uring(t) => Pin::new(t).poll(cx),
            ScopedInner::Sim(t) => Pin::new(t).poll(cx),
        }
    }
}

/// Spawns a future that may borrow from the caller, as its own task of the current thread's
/// executor (the bench runs each load-generating fiber so: its wake-ups are plain pushes on
/// the executor's run queue).
///
/// # Safety
/// The returned task must be awaited or dropped before anything it borrows goes away, and
/// must never be leaked (`mem::forget`): the executor would poll a future whose borrows
/// dangle.
pub unsafe fn spawn_scoped_local<'a, T>(future: impl Future<Output = T> + 'a) -> ScopedTask<'a, T> {
    ScopedTask(match Runtime::current() {
        // SAFETY: the caller's contract is the adapters' contract.
        Runtime::Glommio => ScopedInner::Glommio(unsafe { glommio_rt::spawn_scoped_local(future) }),
        // SAFETY: as above.
        Runtime::Uring => ScopedInner::Uring(unsafe { uring::spawn_scoped_local(future) }),
        // SAFETY: as above.
        Runtime::Sim => ScopedInner::Sim(unsafe { sim::spawn_scoped_local(future) }),
    })
}
