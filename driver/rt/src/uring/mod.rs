//! doppio's own io_uring runtime: a thread-per-core executor whose loop turn makes at most
//! one `io_uring_enter`, moves socket data through the ring (multishot receive into
//! provided buffers, `IORING_OP_SEND`), keeps timers in user space, and allocates nothing per
//! turn or per request once warmed up.
//!
//! A connection's flusher sends with [`TcpStream::send_lazy`]: a send that completes while
//! it is submitted (`MSG_DONTWAIT`) and whose completion does not end the executor's wait on
//! its own, so that a request and its answer cost one `io_uring_enter` (the wait asks for
//! the lazy completions plus one); whoever queues bytes behind it calls
//! [`TcpStream::hurry_send`]. The buffer stays owned by the operation until its completion
//! arrives, as for every send.
//!
//! Entry points: [`run`] builds an executor on the current thread and runs a future to
//! completion; inside it, [`spawn_local`] / [`spawn_scoped_local`] spawn tasks, [`Timer`],
//! [`sleep`] and [`timeout`] wait, [`TcpStream`] and [`TcpListener`] do network I/O, and
//! [`stats`] / [`setup_flags`] report what the executor did and which ring flags the kernel
//! accepted.
//!
//! Parts, one concern per file, in layers: a file imports only files of the layers below
//! it, and no file imports another in a circle (`scripts/import-graph.sh --files driver/rt`
//! checks it), as in tokio and monoio, where the I/O driver sits below the scheduler.
//! 1. Plain parts, importing nothing of the runtime but each other: `config`, `error`,
//!    `stats` (counters), `setup` (ring flags), `sockaddr`, `bufring` (provided buffers),
//!    `wake_word` (the 64-bit word naming a task), `stream_state` (what a stream and its
//!    receive slot share), and the tables: `op_table` (operation slots, `user_data`),
//!    `task_queue` (task slab and run queue), `timer_heap`, `wait_plan` (how an idle turn
//!    waits: timer slack, batched wait).
//! 2. `ring`: the io_uring, its SQ backlog and the tables above, with narrow methods (push,
//!    copy CQEs out, one enter, one method per table operation); `current_ring`: the ring
//!    of the executor running on this thread (a thread-local pointer), how every file above
//!    reaches it.
//! 3. The leaves, which see the ring and never the loop: `remote_wake` (the registry of
//!    executors and cross-thread wakes), `task_waker` (allocation-free wakers), `socket`
//!    (socket setup calls, closing through the ring), `op_future` (the one-shot request
//!    future), `timer_future` (`Timer`, `sleep`, `timeout`), `spawn` (spawning, join
//!    handles), `multishot_recv` (a stream's receive and the socket's last owner),
//!    `stream`, `listener`.
//! 4. `executor`: the loop turn, which dispatches CQEs to the leaves that own them; this
//!    file (`run`, `stats`) on top.
//!
//! Invariants:
//! - Everything is `!Send` and used on the executor's thread; the only cross-thread entry
//!   is waking a waker (control plane: a lock, an eventfd write; no `membarrier`).
//! - Memory the kernel may touch (send buffers, socket addresses, provided buffers, the
//!   eventfd read buffer) is never freed before the CQE that releases it; at teardown it is
//!   leaked rather than freed if the kernel does not answer within
//!   [`Config::teardown_wait`] (1 s by default; [`Stats::teardown_leaks`] counts it).
//!
//! SQPOLL (opt-in, [`Config::sqpoll`], never the default): the kernel's submission thread
//! (`iou-sqp-<tid>`, named after the executor's thread, a thread of this process whose
//! CPU time `getrusage(RUSAGE_SELF)` includes) takes SQEs as the executor writes them; the executor enters only to wait when
//! it has nothing to run, to wake that thread when it sleeps with SQEs queued, or to flush a
//! CQ overflow ([`Stats::enters_waiting`], [`Stats::enters_sq_wakeup`],
//! [`Stats::enters_cq_overflow`]). The kernel refuses the task-run flags beside it; the
//! flags used are in [`SetupFlags`].
//! - Requires Linux 6.0+ (multishot receive, provided-buffer rings); anything missing at
//!   setup is an [`UringError`], never a panic.

mod bufring;
mod config;
mod current_ring;
mod error;
mod executor;
mod listener;
mod multishot_recv;
mod op_future;
mod op_table;
mod remote_wake;
mod ring;
mod setup;
pub(crate) mod sockaddr;
mod socket;
mod spawn;
mod stats;
mod stream;
mod stream_state;
mod task_queue;
mod task_waker;
#[cfg(test)]
mod teardown_test;
mod timer_future;
mod timer_heap;
mod wait_plan;
mod wake_word;

use std::future::Future;

pub use config::{Config, SqPoll};
pub use error::UringError;
pub use listener::TcpListener;
pub use spawn::{spawn_local, spawn_scoped_local, ScopedTask, Task};
pub use stats::{SetupFlags, Stats};
pub use stream::TcpStream;
pub use timer_future::{sleep, timeout, Elapsed, Timer};

use executor::Executor;

/// Builds an executor on the current thread, runs `fut` as its main task (it may spawn
/// others) until it completes, then drops the remaining tasks, cancels what is still in the
/// kernel and tears down; returns `fut`'s output.
///
/// A task that panics makes the panic propagate out of `run` (like a thread's panic), after
/// the executor has torn down.
///
/// # Errors
///
/// [`UringError::Unavailable`] if io_uring or a feature it needs is refused here (or the
/// config asks for something impossible), or if `io_uring_enter` fails mid-run.
///
/// # Panics
///
/// If an executor already runs on this thread.
pub fn run<T>(config: Config, fut: impl Future<Output = T>) -> Result<T, UringError> {
    assert!(
        !is_running(),
        "doppio_rt::uring::run called on a thread that already runs an io_uring executor"
    );
    let ex = Executor::new(config)?;
    stats::record_flags(ex.ring.flags());
    let running = Running(ex);
    // SAFETY: the executor is boxed (its ring never moves) and `Running`'s drop clears the
    // current ring before the box is freed, also when a panic unwinds through here.
    unsafe { current_ring::set(&running.0.ring) };
    // SAFETY: `main` is dropped at the end of this function (also when unwinding, before
    // `running`), and `fut` borrows only what outlives this call.
    let main = unsafe { spawn_scoped_local(fut) };
    let out = running.0.run_until(&main);
    drop(main);
    drop(running);
    out
}

/// The running executor; its drop tears it down.
struct Running(Box<Executor>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.shutdown();
        stats::retire(&self.0.ring.counters);
        current_ring::clear();
    }
}

/// Whether an io_uring executor runs on this thread.
pub fn is_running() -> bool {
    current_ring::current_id() != current_ring::NO_EXECUTOR
}

/// This thread's executor counters, cumulative over every executor that ran on it (take
/// differences with [`Stats::since`]).
pub fn stats() -> Stats {
    current_ring::with(|ring| stats::thread_total(Some(&ring.counters)))
        .unwrap_or_else(|| stats::thread_total(None))
}

/// The ring setup flags the kernel accepted for the executor running on this thread (or
/// the last one that ran here); `None` if none has.
pub fn setup_flags() -> Option<SetupFlags> {
    stats::last_flags()
}

/// Tells the executor running on this thread that a caller's count of answers awaited (the
/// requests its connection sent and has no answer to yet) went from `before` to `now`: the
/// batched wait ([`Config::batch_wait`]) waits for all of the thread's awaited answers at
/// most that long. Nothing when no io_uring executor runs here. Call it when the count
/// changes (a connection: after it hands a batch to the kernel, after it read answers,
/// and with `now` 0 when it closes), not per request.
#[inline]
pub fn answers_awaited(before: usize, now: usize) {
    current_ring::with(|ring| ring.answers_awaited(before, now));
}

/// Yields once: the task is queued again behind every ready task.
pub async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}
