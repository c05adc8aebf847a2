//! A worker's fibers run as tasks of the current executor of doppio's runtimes
//! ([`run_fibers_as_tasks`]), as the doppio and null backends run them.

/// Runs each fiber as a task of the current executor (glommio's or the io_uring runtime's):
/// its wake-ups are plain pushes on the executor's local run queue (no atomic), instead of
/// a `join_all` ready queue.
pub(crate) async fn run_fibers_as_tasks<Fut: std::future::Future<Output = ()>>(fibers: Vec<Fut>) {
    let tasks: Vec<_> = fibers
        .into_iter()
        // SAFETY: a scoped task must be awaited or dropped before what it borrows goes
        // away, never leaked. Every task is awaited below before this future completes;
        // if this future is dropped first, the tasks are dropped with it (cancelled).
        .map(|f| unsafe { doppio_driver::rt::spawn_scoped_local(f) })
        .collect();
    for t in tasks {
        t.await;
    }
}
