//! The executor: one per thread, a loop of turns over one ring ([`Ring`]), on top of
//! everything else in this runtime (it is the only file that dispatches CQEs to the leaves
//! that own them: one-shot requests, multishot receives, the eventfd read).
//!
//! A turn:
//! 1. drain the completion queue (no syscall) and dispatch each CQE to its slot;
//! 2. if another thread signalled, move its queued task wakes to the run queue;
//! 3. fire due timers (the clock is read only when timers are armed);
//! 4. poll ready tasks, at most `poll_budget` polls (user-space preemption);
//! 5. exactly one of: tasks still ready → one non-waiting `io_uring_enter` if SQEs are
//!    queued or the kernel flags pending task work (`IORING_SQ_TASKRUN`, CQ overflow),
//!    otherwise none; nothing ready → one `io_uring_enter` that submits everything and
//!    waits as [`plan_wait`] says: for a completion (`1 + lazy` of them, see [`Ring`]) until
//!    the nearest timer deadline plus the timer slack, or, with a batch wait and several
//!    answers awaited, for all of them at most the batch wait (the kernel's minimum wait, or
//!    its user-space fallback). Before sleeping, when timers are armed, the clock is read
//!    once more and due timers fire, so a deadline that passed while tasks ran does not cost
//!    a sleep.
//!
//! The turn after a waiting enter counts why it woke ([`super::Stats::wakes_completion`] and
//! the three others): an I/O completion that woke a task, else a wake from another thread,
//! else a timer due, else nothing (a wait that ran out with nothing to do).
//!
//! So a turn makes at most one `io_uring_enter` (teardown aside). While SQEs wait in the
//! ring's backlog (a burst larger than the SQ) the executor does not sleep. Under SQPOLL
//! step 5 enters only when it must ([`Ring::must_enter_while_busy`]).
//!
//! Invariants:
//! - No `RefCell` borrow is held while user code runs (a poll, a drop, a wake): futures are
//!   taken out of their slots, CQEs are copied out of the ring before dispatch, wakers and
//!   held resources are dropped after borrows end.
//! - Teardown drops every task, cancels everything in flight (`ASYNC_CANCEL` with `ANY`) and
//!   waits (at most [`Config::teardown_wait`], 1 s by default) for every outstanding CQE
//!   before freeing anything the kernel may reference; if the wait times out, that memory
//!   (operation slots, provided buffers, the eventfd read buffer) is leaked instead, and
//!   [`super::Stats::teardown_leaks`] counts it.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use io_uring::types::CancelBuilder;
use io_uring::{opcode, types};

use super::bufring::BufRing;
use super::config::Config;
use super::error::UringError;
use super::multishot_recv;
use super::op_future::release_hold;
use super::op_table::{self, Completed};
use super::remote_wake::{self, Remote};
use super::ring::Ring;
use super::setup;
use super::spawn::ScopedTask;
use super::stats::bump;
use super::task_waker::task_waker;
use super::wait_plan::{plan_wait, WaitState};
use super::wake_word::unpack;

/// CQEs copied out of the ring per batch.
const CQE_BATCH: usize = 64;

/// One thread's executor.
pub(crate) struct Executor {
    /// The ring and its tables (what the thread's futures and handles see).
    pub(crate) ring: Ring,
    config: Config,
    remote: Arc<Remote>,
    remote_spare: RefCell<Vec<u64>>,
    /// Where the eventfd read lands (a leaked `Box<u64>`, freed on drop unless leaked).
    wake_buf: *mut u64,
    leaked: Cell<bool>,
    /// The last turn ended in a waiting enter (`Some(batch_phase)`): this turn says why it
    /// woke, and a user-space batch's first wait that woke to nothing expires the batch.
    after_wait: Cell<Option<bool>>,
    /// The user-space batch's first wait ended with nothing: the next wait is a plain one.
    batch_expired: Cell<bool>,
}

/// What a turn found after a wait: what its CQEs woke.
#[derive(Debug, Clone, Copy, Default)]
struct Reaped {
    /// A completion woke a task (a receive, or a one-shot request someone waits for).
    io: bool,
    /// The eventfd was read (another thread woke a task here).
    remote: bool,
    /// Receive completions dispatched.
    receives: usize,
}

impl Executor {
    /// Builds an executor on the current thread.
    pub(crate) fn new(config: Config) -> Result<Box<Executor>, UringError> {
        config.validate()?;
        let (uring, flags) = setup::build_ring(config.ring_entries, config.sqpoll.as_ref())?;
        let remote = Arc::new(Remote::new()?);
        let bufs = BufRing::new(&uring, config.buffers, config.buffer_size)?;
        let id = remote_wake::register(remote.clone())?;
        let ex = Box::new(Executor {
            ring: Ring::new(id, flags, uring, bufs, config.kernel_min_wait),
            config,
            remote,
            remote_spare: RefCell::new(Vec::new()),
            wake_buf: Box::into_raw(Box::new(0u64)),
            leaked: Cell::new(false),
            after_wait: Cell::new(None),
            batch_expired: Cell::new(false),
        });
        ex.arm_wake();
        Ok(ex)
    }

    /// Arms the eventfd read that wakes a sleeping executor for remote wakes.
    fn arm_wake(&self) {
        let entry = opcode::Read::new(types::Fd(self.remote.eventfd()), self.wake_buf.cast(), 8)
            .build()
            .user_data(op_table::user_data(op_table::KIND_WAKE, 0, 0));
        // SAFETY: the read targets `wake_buf`, which lives until the executor is dropped
        // after teardown saw every CQE, or is leaked.
        unsafe { self.ring.push(&entry, true) };
    }

    /// Runs turns until `main` has completed; returns its output.
    pub(crate) fn run_until<T>(&self, main: &ScopedTask<'_, T>) -> Result<T, UringError> {
        loop {
            bump(&self.ring.counters.turns, 1);
            let reaped = self.reap();
            let remote = self.take_remote();
            let mut fired = 0;
            if self.ring.has_timers() {
                let now = self.ring.read_clock();
                fired = self.fire_timers(now);
            }
            if let Some(batch_phase) = self.after_wait.take() {
                self.count_wake(reaped, remote || reaped.remote, fired > 0, batch_phase);
            }
            self.run_tasks();
            // The readers ran: what they delivered over this turn's receives.
            self.ring.learn_answers(reaped.receives);
            if let Some(v) = main.take_output() {
                return Ok(v);
            }
            self.io_step()?;
        }
    }

    /// Counts why the wait before this turn ended (see the module doc); a user-space batch's
    /// first wait that ended with no completion expires the batch (the next wait is plain),
    /// any completion starts a new one.
    fn count_wake(&self, reaped: Reaped, remote: bool, timer: bool, batch_phase: bool) {
        let c = &self.ring.counters;
        let cause = if reaped.io {
            &c.wakes_completion
        } else if remote {
            &c.wakes_remote
        } else if timer {
            &c.wakes_timer
        } else {
            &c.wakes_empty
        };
        bump(cause, 1);
        if reaped.io {
            self.batch_expired.set(false);
        } else if batch_phase {
            self.batch_expired.set(true);
        }
    }

    /// Step 1: copy CQEs out of the ring in batches and dispatch them.
    fn reap(&self) -> Reaped {
        let mut reaped = Reaped::default();
        loop {
            let mut batch = [(0u64, 0i32, 0u32); CQE_BATCH];
            let n = self.ring.copy_completions(&mut batch);
            bump(&self.ring.counters.cqes, n as u64);
            for &(ud, res, flags) in &batch[..n] {
                self.dispatch(ud, res, flags, &mut reaped);
            }
            if n < CQE_BATCH {
                return reaped;
            }
        }
    }

    fn dispatch(&self, ud: u64, res: i32, flags: u32, reaped: &mut Reaped) {
        let (kind, index, gen) = op_table::split(ud);
        match kind {
            op_table::KIND_OP => {
                let done = self.ring.ops.borrow_mut().complete(index, gen, res);
                match done {
                    Completed::Wake(w) => {
                        self.ring.request_done();
                        if let Some(w) = w {
                            reaped.io = true;
                            w.wake();
                        }
                    }
                    Completed::Orphan(hold, res) => {
                        self.ring.request_done();
                        release_hold(hold, res);
                    }
                    Completed::Stale => {}
                }
            }
            op_table::KIND_RECV => {
                reaped.io = true;
                reaped.receives += 1;
                multishot_recv::on_cqe(&self.ring, index, gen, res, flags);
            }
            op_table::KIND_WAKE => {
                reaped.remote = true;
                self.ring.request_done();
                if !self.ring.is_shutting_down() {
                    self.arm_wake();
                }
            }
            _ => {}
        }
    }

    /// Step 2: task wakes from other threads; whether there were any.
    fn take_remote(&self) -> bool {
        let mut spare = self.remote_spare.borrow_mut();
        if !self.remote.take(&mut spare) {
            return false;
        }
        bump(&self.ring.counters.remote_wakes, spare.len() as u64);
        for word in spare.drain(..) {
            let (exec, index, gen) = unpack(word);
            if exec == self.ring.id() {
                self.ring.schedule(index, gen);
            }
        }
        true
    }

    /// Step 3: wake every timer due at `now` (never one due later); how many fired.
    fn fire_timers(&self, now: Instant) -> u64 {
        let mut fired = 0;
        loop {
            let due = self.ring.pop_due_timer(now);
            let Some(w) = due else {
                return fired;
            };
            fired += 1;
            bump(&self.ring.counters.timers_fired, 1);
            if let Some(w) = w {
                w.wake();
            }
        }
    }

    /// Step 4: poll ready tasks under the budget.
    fn run_tasks(&self) {
        for _ in 0..self.config.poll_budget {
            let next = self.ring.next_ready_task();
            let Some((index, gen, mut fut)) = next else {
                return;
            };
            let waker = task_waker(self.ring.id(), index, gen);
            let mut cx = Context::from_waker(&waker);
            bump(&self.ring.counters.tasks_polled, 1);
            match fut.as_mut().poll(&mut cx) {
                Poll::Ready(()) => {
                    self.ring.task_finished(index);
                    drop(fut);
                }
                Poll::Pending => {
                    let cancelled = self.ring.put_back_task(index, fut);
                    drop(cancelled);
                }
            }
        }
    }

    /// Step 5: at most one `io_uring_enter`.
    fn io_step(&self) -> Result<(), UringError> {
        let ring = &self.ring;
        ring.flush_backlog();
        if !ring.has_ready_tasks() && ring.has_timers() {
            let now = ring.read_clock();
            self.fire_timers(now);
        }
        let busy = ring.has_ready_tasks() || ring.has_backlog();
        if busy {
            if ring.must_enter_while_busy() {
                ring.enter(false, 0, None)?;
            }
            return Ok(());
        }
        let lazy = if ring.flags().submit_all {
            ring.lazy_requests()
        } else {
            0
        };
        let plan = plan_wait(WaitState {
            to_deadline: ring.until_next_deadline(),
            lazy,
            awaited: ring.awaited(),
            answers_per_completion: ring.answers_per_completion(),
            slack: self.config.timer_slack,
            batch_wait: self.config.batch_wait,
            kernel_min_wait: ring.kernel_min_wait(),
            batch_expired: self.batch_expired.get(),
        });
        if plan.batched(lazy) {
            bump(&ring.counters.waits_batched, 1);
        }
        self.after_wait.set(Some(plan.batch_phase));
        ring.enter_waiting(plan)
    }

    /// Tears down (see the module invariants). Runs with this executor's ring still
    /// current, so the drops it causes can reach it.
    pub(crate) fn shutdown(&self) {
        let ring = &self.ring;
        ring.start_shutdown();
        remote_wake::unregister(ring.id());
        // Drop every task. A dropped future may spawn (into any free slot): sweep again
        // until a sweep finds nothing.
        loop {
            let mut from = 0;
            let mut found = false;
            loop {
                let f = ring.take_next_task(&mut from);
                let Some(f) = f else {
                    break;
                };
                found = true;
                drop(f);
            }
            if !found {
                break;
            }
        }
        let cancel = opcode::AsyncCancel2::new(CancelBuilder::any())
            .build()
            .user_data(op_table::user_data(op_table::KIND_IGNORE, 0, 0));
        // SAFETY: a cancel SQE carries no pointer.
        unsafe { ring.push(&cancel, false) };
        let deadline = Instant::now() + self.config.teardown_wait;
        loop {
            ring.flush_backlog();
            self.reap();
            if ring.inflight() == 0 && !ring.has_queued() {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let wait = ring.inflight() > 0;
            // One completion is enough here: lazy requests are waited for like the rest.
            let _ = ring.enter(wait, 1, Some(deadline - now));
        }
        if ring.inflight() > 0 {
            self.leaked.set(true);
            bump(&ring.counters.teardown_leaks, 1);
        } else {
            ring.unregister_bufs();
        }
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        if self.leaked.get() {
            // The kernel may still write into these: never free them.
            self.ring.leak();
        } else {
            // SAFETY: `wake_buf` came from Box::into_raw in `new`, is freed once, and the
            // eventfd read that targeted it has completed (teardown saw every CQE).
            drop(unsafe { Box::from_raw(self.wake_buf) });
        }
    }
}
