//! The executor: one per thread, a loop of turns over one io_uring.
//!
//! A turn:
//! 1. drain the completion queue (no syscall) and dispatch each CQE to its slot;
//! 2. if another thread signalled, move its queued task wakes to the run queue;
//! 3. fire due timers (the clock is read only when timers are armed);
//! 4. poll ready tasks, at most `poll_budget` polls (user-space preemption);
//! 5. exactly one of: tasks still ready → one non-waiting `io_uring_enter` if SQEs are
//!    queued or the kernel flags pending task work (`IORING_SQ_TASKRUN`, CQ overflow),
//!    otherwise none; nothing ready → one `io_uring_enter` that submits everything and
//!    waits for a completion, with the nearest timer deadline as its `EXT_ARG` timeout
//!    (`ETIME`, `EINTR`, `EBUSY`, `EAGAIN` are ordinary wake-ups). Before sleeping, when
//!    timers are armed, the clock is read once more and due timers fire, so a deadline that
//!    passed while tasks ran does not cost a sleep.
//!
//! Lazy requests: a request started lazy (a connection's send, which nobody needs back
//! until it has more to send) completes while it is submitted and its CQE should not end
//! the wait on its own. So the waiting enter asks for `1 + Ops::lazy()` completions: the
//! lazy ones, which are posted during that very enter's submission, plus one that matters.
//! A request and its answer then cost one enter, not two (one returning with the send's
//! completion, one with the answer). This needs `SUBMIT_ALL` (every queued SQE submitted, so
//! every lazy CQE is posted); without it the wait asks for one completion, as before.
//!
//! So a turn makes at most one `io_uring_enter` (teardown aside). SQEs pushed while the SQ
//! is full (bursts larger than the ring) wait, in order, in a user-space backlog that the
//! next turns move into the SQ before their enter; while it is not empty the executor does
//! not sleep.
//!
//! In SQPOLL mode ([`super::SqPoll`]) a kernel thread takes SQEs as soon as they are written
//! (each push publishes the SQ tail), so step 5 enters only when it must
//! ([`Executor::must_enter_while_busy`]): with tasks still ready, to wake that thread when it
//! sleeps (`IORING_SQ_NEED_WAKEUP`) with SQEs queued, or to flush a CQ overflow; with nothing
//! ready, to wait for a completion as above (carrying `IORING_ENTER_SQ_WAKEUP` if SQEs wait
//! for a sleeping thread). Completions need no enter: the thread runs the kernel's task work
//! and posts them. The tail is published (a release store) before `NEED_WAKEUP` is read
//! after a `SeqCst` fence (`SubmissionQueue::need_wakeup`), pairing with the kernel's full
//! barrier between setting the flag and re-reading the tail, so a thread going to sleep
//! either sees the new entries or is seen asleep.
//! Lazy requests work alike: the kernel's thread posts their CQEs as it submits them, and
//! the waiting enter's `1 + Ops::lazy()` counts them whether they are posted before or
//! during the wait (the kernel waits for the CQ tail to pass its head plus that many).
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
use std::collections::VecDeque;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use io_uring::types::{CancelBuilder, SubmitArgs, Timespec};
use io_uring::{opcode, squeue, types, EnterFlags, IoUring};

use super::bufring::BufRing;
use super::config::Config;
use super::error::UringError;
use super::fd;
use super::ops::{self, Completed, Hold, Ops};
use super::recv;
use super::remote::{self, Remote};
use super::setup;
use super::stats::{bump, Counters, SetupFlags};
use super::task::ScopedTask;
use super::tasks::{BoxFuture, Tasks};
use super::timers::Timers;
use super::waker;

/// CQEs copied out of the ring per batch.
const CQE_BATCH: usize = 64;

/// One thread's executor.
pub(crate) struct Executor {
    id: u32,
    config: Config,
    flags: SetupFlags,
    ring: RefCell<IoUring>,
    /// Operation slots.
    pub(crate) ops: RefCell<Ops>,
    /// The provided-buffer ring.
    pub(crate) bufs: BufRing,
    /// Counters of this executor.
    pub(crate) counters: Counters,
    tasks: RefCell<Tasks>,
    timers: RefCell<Timers>,
    remote: Arc<Remote>,
    remote_spare: RefCell<Vec<u64>>,
    /// Where the eventfd read lands (a leaked `Box<u64>`, freed on drop unless leaked).
    wake_buf: *mut u64,
    /// SQEs that did not fit in a full SQ, oldest first.
    backlog: RefCell<VecDeque<squeue::Entry>>,
    /// Receive slots (index, generation) waiting for provided buffers to come back.
    pub(crate) starving: RefCell<VecDeque<(u32, u32)>>,
    /// Requests whose final CQE is still due.
    inflight: Cell<usize>,
    /// The last clock reading (only taken when timers are armed).
    now: Cell<Option<Instant>>,
    shutting_down: Cell<bool>,
    leaked: Cell<bool>,
}

impl Executor {
    /// Builds an executor on the current thread.
    pub(crate) fn new(config: Config) -> Result<Box<Executor>, UringError> {
        config.validate()?;
        let (ring, flags) = setup::build_ring(config.ring_entries, config.sqpoll.as_ref())?;
        let remote = Arc::new(Remote::new()?);
        let bufs = BufRing::new(&ring, config.buffers, config.buffer_size)?;
        let id = remote::register(remote.clone())?;
        let ex = Box::new(Executor {
            id,
            config,
            flags,
            ring: RefCell::new(ring),
            ops: RefCell::new(Ops::default()),
            bufs,
            counters: Counters::default(),
            tasks: RefCell::new(Tasks::default()),
            timers: RefCell::new(Timers::default()),
            remote,
            remote_spare: RefCell::new(Vec::new()),
            wake_buf: Box::into_raw(Box::new(0u64)),
            backlog: RefCell::new(VecDeque::new()),
            starving: RefCell::new(VecDeque::new()),
            inflight: Cell::new(0),
            now: Cell::new(None),
            shutting_down: Cell::new(false),
            leaked: Cell::new(false),
        });
        ex.arm_wake();
        Ok(ex)
    }

    /// This executor's id (in wakers and handles).
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// The setup flags the kernel accepted.
    pub(crate) fn flags(&self) -> SetupFlags {
        self.flags
    }

    /// Whether teardown has started (no re-arming).
    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.get()
    }

    /// Queues `entry` for the next enter; `tracked` requests count as in flight until their
    /// final CQE (teardown waits for them).
    ///
    /// # Safety
    ///
    /// Every pointer in `entry` must stay valid until the request's final CQE.
    pub(crate) unsafe fn push(&self, entry: &squeue::Entry, tracked: bool) {
        if tracked {
            self.inflight.set(self.inflight.get() + 1);
        }
        let mut backlog = self.backlog.borrow_mut();
        if backlog.is_empty() {
            let mut ring = self.ring.borrow_mut();
            // SAFETY: the caller keeps the entry's pointers valid until its CQE.
            if unsafe { ring.submission().push(entry) }.is_ok() {
                // The queue's drop published the tail: under SQPOLL the kernel has it.
                self.count_sqpoll_handed(1);
                return;
            }
        }
        // The SQ is full (a burst larger than the ring): the entry waits for the next
        // turn's enter, in order behind the others.
        backlog.push_back(entry.clone());
    }

    /// A tracked request got its final CQE.
    pub(crate) fn request_done(&self) {
        self.inflight.set(self.inflight.get() - 1);
    }

    fn count_enter(&self, ring: &mut IoUring, sq_before: usize, waited: bool, reason: Enter) {
        let after = ring.submission().len();
        bump(&self.counters.enters, 1);
        if waited {
            bump(&self.counters.enters_waiting, 1);
        }
        if reason.sq_wakeup {
            bump(&self.counters.enters_sq_wakeup, 1);
        }
        if reason.cq_overflow && !waited {
            bump(&self.counters.enters_cq_overflow, 1);
        }
        if !self.flags.sqpoll {
            bump(
                &self.counters.sqes_submitted,
                sq_before.saturating_sub(after) as u64,
            );
        }
    }

    /// Under SQPOLL, `n` SQEs were written to the queue (its tail published): that hands them
    /// to the kernel's thread, so they count as submitted here rather than at an enter.
    #[inline]
    fn count_sqpoll_handed(&self, n: u64) {
        if self.flags.sqpoll {
            bump(&self.counters.sqes_submitted, n);
        }
    }

    fn flush_backlog(&self) {
        let mut backlog = self.backlog.borrow_mut();
        if backlog.is_empty() {
            return;
        }
        let mut ring = self.ring.borrow_mut();
        let mut sq = ring.submission();
        let mut moved = 0;
        while let Some(e) = backlog.front() {
            // SAFETY: entries in the backlog were pushed under `push`'s contract.
            if unsafe { sq.push(e) }.is_err() {
                break;
            }
            backlog.pop_front();
            moved += 1;
        }
        // The queue's drop publishes the tail.
        self.count_sqpoll_handed(moved);
    }

    /// Arms the eventfd read that wakes a sleeping executor for remote wakes.
    fn arm_wake(&self) {
        let entry = opcode::Read::new(types::Fd(self.remote.eventfd()), self.wake_buf.cast(), 8)
            .build()
            .user_data(ops::user_data(ops::KIND_WAKE, 0, 0));
        // SAFETY: the read targets `wake_buf`, which lives until the executor is dropped
        // after teardown saw every CQE, or is leaked.
        unsafe { self.push(&entry, true) };
    }

    /// Runs turns until `main` has completed; returns its output.
    pub(crate) fn run_until<T>(&self, main: &ScopedTask<'_, T>) -> Result<T, UringError> {
        loop {
            bump(&self.counters.turns, 1);
            self.reap();
            self.take_remote();
            if !self.timers.borrow().is_empty() {
                let now = Instant::now();
                self.now.set(Some(now));
                self.fire_timers(now);
            }
            self.run_tasks();
            if let Some(v) = main.take_output() {
                return Ok(v);
            }
            self.io_step()?;
        }
    }

    /// Step 1: copy CQEs out of the ring in batches and dispatch them.
    fn reap(&self) {
        loop {
            let mut batch = [(0u64, 0i32, 0u32); CQE_BATCH];
            let mut n = 0;
            {
                let mut ring = self.ring.borrow_mut();
                for (slot, cqe) in batch.iter_mut().zip(ring.completion()) {
                    *slot = (cqe.user_data(), cqe.result(), cqe.flags());
                    n += 1;
                }
            }
            bump(&self.counters.cqes, n as u64);
            for &(ud, res, flags) in &batch[..n] {
                self.dispatch(ud, res, flags);
            }
            if n < CQE_BATCH {
                return;
            }
        }
    }

    fn dispatch(&self, ud: u64, res: i32, flags: u32) {
        let (kind, index, gen) = ops::split(ud);
        match kind {
            ops::KIND_OP => {
                let done = self.ops.borrow_mut().complete(index, gen, res);
                match done {
                    Completed::Wake(w) => {
                        self.request_done();
                        if let Some(w) = w {
                            w.wake();
                        }
                    }
                    Completed::Orphan(hold, res) => {
                        self.request_done();
                        self.release_hold(hold, res);
                    }
                    Completed::Stale => {}
                }
            }
            ops::KIND_RECV => recv::on_cqe(self, index, gen, res, flags),
            ops::KIND_WAKE => {
                self.request_done();
                if !self.shutting_down.get() {
                    self.arm_wake();
                }
            }
            _ => {}
        }
    }

    /// Drops what a finished request held whose future is gone (closing the fd an accept
    /// returned).
    pub(crate) fn release_hold(&self, hold: Hold, res: i32) {
        if matches!(hold, Hold::Addr { accept: true, .. }) && res >= 0 {
            fd::close_now(res);
        }
        drop(hold);
    }

    /// Step 2: task wakes from other threads.
    fn take_remote(&self) {
        let mut spare = self.remote_spare.borrow_mut();
        if !self.remote.take(&mut spare) {
            return;
        }
        bump(&self.counters.remote_wakes, spare.len() as u64);
        for word in spare.drain(..) {
            let (exec, index, gen) = waker::unpack(word);
            if exec == self.id {
                self.schedule(index, gen);
            }
        }
    }

    /// Step 3: wake every timer due at `now`.
    fn fire_timers(&self, now: Instant) {
        loop {
            let due = self.timers.borrow_mut().pop_due(now);
            let Some(w) = due else {
                return;
            };
            bump(&self.counters.timers_fired, 1);
            if let Some(w) = w {
                w.wake();
            }
        }
    }

    /// Step 4: poll ready tasks under the budget.
    fn run_tasks(&self) {
        for _ in 0..self.config.poll_budget {
            let next = self.tasks.borrow_mut().next_ready();
            let Some((index, gen, mut fut)) = next else {
                return;
            };
            let waker = waker::task_waker(self.id, index, gen);
            let mut cx = Context::from_waker(&waker);
            bump(&self.counters.tasks_polled, 1);
            match fut.as_mut().poll(&mut cx) {
                Poll::Ready(()) => {
                    self.tasks.borrow_mut().finish(index);
                    drop(fut);
                }
                Poll::Pending => {
                    let cancelled = self.tasks.borrow_mut().put_back(index, fut);
                    drop(cancelled);
                }
            }
        }
    }

    /// Step 5: at most one `io_uring_enter`.
    fn io_step(&self) -> Result<(), UringError> {
        self.flush_backlog();
        let ready = self.tasks.borrow().has_ready();
        if !ready && !self.timers.borrow().is_empty() {
            let now = Instant::now();
            self.now.set(Some(now));
            self.fire_timers(now);
        }
        let busy = self.tasks.borrow().has_ready() || !self.backlog.borrow().is_empty();
        if busy {
            if self.must_enter_while_busy() {
                self.enter(false, 0, None)?;
            }
            return Ok(());
        }
        let timeout = self.timers.borrow_mut().next_deadline().map(|d| {
            let now = self.now.get().unwrap_or_else(Instant::now);
            d.saturating_duration_since(now)
        });
        let lazy = if self.flags.submit_all {
            self.ops.borrow().lazy()
        } else {
            0
        };
        self.enter(true, 1 + lazy, timeout)
    }

    /// Whether a turn that still has tasks ready must make its (non-waiting) enter.
    ///
    /// Without SQPOLL: when SQEs are queued, or the kernel flags pending task work or a CQ
    /// overflow (always, if it cannot flag task work). Under SQPOLL the kernel's thread
    /// submits and completes by itself: only when it sleeps with SQEs queued (it needs
    /// `IORING_ENTER_SQ_WAKEUP`), on a CQ overflow, which only an enter flushes, or when the
    /// turn has nothing to run but SQEs waiting for room in a full SQ ([`Self::sq_stalled`]).
    fn must_enter_while_busy(&self) -> bool {
        let mut ring = self.ring.borrow_mut();
        let sq = ring.submission();
        if self.flags.sqpoll {
            // `need_wakeup` fences (SeqCst) after the tail that `push` published.
            return sq.cq_overflow() || (!sq.is_empty() && sq.need_wakeup()) || self.sq_stalled();
        }
        !sq.is_empty() || sq.taskrun() || sq.cq_overflow() || !self.flags.taskrun_flag
    }

    /// Under SQPOLL: no task is ready and SQEs wait in the backlog for room in the SQ (full
    /// after this turn's flush). Rather than spin turns until the kernel's thread makes room,
    /// the enter waits for it (`IORING_ENTER_SQ_WAIT`).
    fn sq_stalled(&self) -> bool {
        self.flags.sqpoll && !self.backlog.borrow().is_empty() && !self.tasks.borrow().has_ready()
    }

    /// Why an enter is made beyond submitting and waiting: whether it must wake the SQPOLL
    /// thread (it sleeps with SQEs queued), wait for room in the SQ ([`Self::sq_stalled`]),
    /// and whether the kernel flags a CQ overflow.
    fn enter_reason(&self, ring: &mut IoUring, wait: bool) -> Enter {
        let sq = ring.submission();
        Enter {
            sq_wakeup: self.flags.sqpoll && !sq.is_empty() && sq.need_wakeup(),
            sq_wait: !wait && self.sq_stalled(),
            cq_overflow: sq.cq_overflow(),
        }
    }

    /// One `io_uring_enter`: submit everything queued (under SQPOLL: wake the kernel's thread
    /// if it sleeps with SQEs queued) and fetch completions, waiting (if `wait`) until `want`
    /// completions are ready or `timeout` passes.
    fn enter(&self, wait: bool, want: usize, timeout: Option<Duration>) -> Result<(), UringError> {
        let mut ring = self.ring.borrow_mut();
        let before = ring.submission().len();
        let reason = self.enter_reason(&mut ring, wait);
        let mut flags = EnterFlags::GETEVENTS;
        if reason.sq_wakeup {
            flags |= EnterFlags::SQ_WAKEUP;
        }
        if reason.sq_wait {
            flags |= EnterFlags::SQ_WAIT;
        }
        let r = {
            let sub = ring.submitter();
            match (wait, timeout) {
                (true, Some(d)) => {
                    let ts = Timespec::from(d);
                    let args = SubmitArgs::new().timespec(&ts);
                    // SAFETY: `args` (an `io_uring_getevents_arg`, `repr(transparent)`) and
                    // the timespec it points to outlive the call; EXT_ARG tells the kernel
                    // that the argument is that struct.
                    unsafe {
                        sub.enter(
                            before as u32,
                            want as u32,
                            (flags | EnterFlags::EXT_ARG).bits(),
                            Some(&args),
                        )
                    }
                }
                // SAFETY: no argument pointer is passed; GETEVENTS with min_complete `want`
                // submits and waits for that many completions.
                (true, None) => unsafe {
                    sub.enter::<libc::sigset_t>(before as u32, want as u32, flags.bits(), None)
                },
                // SAFETY: no argument pointer is passed; GETEVENTS with min_complete 0
                // submits, runs pending task work and returns without waiting (under
                // SQPOLL with SQ_WAIT, once the SQ has room).
                (false, _) => unsafe {
                    sub.enter::<libc::sigset_t>(before as u32, 0, flags.bits(), None)
                },
            }
        };
        self.count_enter(&mut ring, before, wait || reason.sq_wait, reason);
        match r {
            Ok(_) => Ok(()),
            Err(e) => match e.raw_os_error() {
                Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN) => Ok(()),
                _ => Err(UringError::os("io_uring_enter", &e)),
            },
        }
    }

    /// Queues task `index` (generation `gen`) to run.
    #[inline]
    pub(crate) fn schedule(&self, index: u32, gen: u32) {
        self.tasks.borrow_mut().schedule(index, gen);
    }

    /// Stores and queues a new task.
    pub(crate) fn spawn(&self, fut: BoxFuture) -> (u32, u32) {
        self.tasks.borrow_mut().insert(fut)
    }

    /// Removes a task; returns its future for the caller to drop outside any borrow.
    pub(crate) fn cancel(&self, index: u32, gen: u32) -> Option<BoxFuture> {
        self.tasks.borrow_mut().cancel(index, gen)
    }

    /// Whether `deadline` passed at the last clock reading.
    pub(crate) fn already_past(&self, deadline: Instant) -> bool {
        self.now.get().is_some_and(|now| deadline <= now)
    }

    /// Arms a timer.
    pub(crate) fn insert_timer(&self, deadline: Instant, waker: &Waker) -> (u32, u32) {
        bump(&self.counters.timers_armed, 1);
        self.timers.borrow_mut().insert(deadline, waker.clone())
    }

    /// Whether a timer fired (else records the waker).
    pub(crate) fn poll_timer(&self, index: u32, gen: u32, waker: &Waker) -> bool {
        self.timers.borrow_mut().poll(index, gen, waker)
    }

    /// Disarms and frees a timer.
    pub(crate) fn remove_timer(&self, index: u32, gen: u32) {
        self.timers.borrow_mut().remove(index, gen);
    }

    /// Tears down (see the module invariants). Runs with this executor still current, so
    /// the drops it causes can reach it.
    pub(crate) fn shutdown(&self) {
        self.shutting_down.set(true);
        remote::unregister(self.id);
        // Drop every task. A dropped future may spawn (into any free slot): sweep again
        // until a sweep finds nothing.
        loop {
            let mut from = 0;
            let mut found = false;
            loop {
                let f = self.tasks.borrow_mut().take_next(&mut from);
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
            .user_data(ops::user_data(ops::KIND_IGNORE, 0, 0));
        // SAFETY: a cancel SQE carries no pointer.
        unsafe { self.push(&cancel, false) };
        let deadline = Instant::now() + self.config.teardown_wait;
        loop {
            self.flush_backlog();
            self.reap();
            let queued = {
                let mut ring = self.ring.borrow_mut();
                !ring.submission().is_empty() || !self.backlog.borrow().is_empty()
            };
            if self.inflight.get() == 0 && !queued {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let wait = self.inflight.get() > 0;
            // One completion is enough here: lazy requests are waited for like the rest.
            let _ = self.enter(wait, 1, Some(deadline - now));
        }
        if self.inflight.get() > 0 {
            self.leaked.set(true);
            bump(&self.counters.teardown_leaks, 1);
        } else {
            let _ = self
                .ring
                .borrow()
                .submitter()
                .unregister_buf_ring(super::bufring::BGID);
        }
    }
}

/// What an enter does besides submitting and waiting (see [`Executor::enter`]).
#[derive(Debug, Clone, Copy)]
struct Enter {
    /// It carries `IORING_ENTER_SQ_WAKEUP`.
    sq_wakeup: bool,
    /// It carries `IORING_ENTER_SQ_WAIT` (SQPOLL: waits for room in a full SQ).
    sq_wait: bool,
    /// The kernel flagged a CQ overflow (GETEVENTS flushes it).
    cq_overflow: bool,
}

impl Drop for Executor {
    fn drop(&mut self) {
        if self.leaked.get() {
            // The kernel may still write into these: never free them.
            self.ops.get_mut().leak();
            self.bufs.leak();
        } else {
            // SAFETY: `wake_buf` came from Box::into_raw in `new`, is freed once, and the
            // eventfd read that targeted it has completed (teardown saw every CQE).
            drop(unsafe { Box::from_raw(self.wake_buf) });
        }
    }
}
