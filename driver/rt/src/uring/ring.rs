//! The ring: one thread's io_uring and the tables the kernel's requests and the tasks live
//! in. The bottom of the runtime: it knows nothing of futures, streams or the loop that
//! turns it, and every file above reaches it through [`super::current_ring`].
//!
//! It holds:
//! - the io_uring itself, the backlog of SQEs that did not fit in a full SQ, and the count
//!   of tracked requests still in the kernel (teardown waits for them);
//! - the operation table ([`OpTable`]), the provided-buffer ring ([`BufRing`]) and the list
//!   of receives waiting for buffers to come back;
//! - the task queue ([`TaskQueue`]) and the timer heap ([`TimerHeap`]), with the last clock
//!   reading;
//! - the executor's counters.
//!
//! Its methods are narrow: push an SQE, copy CQEs out, make one `io_uring_enter`, and one
//! method per table operation the files above need. The loop that decides when to do which
//! is [`super::executor`].
//!
//! Lazy requests: a request started lazy (a connection's send, which nobody needs back
//! until it has more to send) completes while it is submitted and its CQE should not end
//! the wait on its own. So the waiting enter asks for `1 + OpTable::lazy()` completions: the
//! lazy ones, which are posted during that very enter's submission, plus one that matters.
//! A request and its answer then cost one enter, not two (one returning with the send's
//! completion, one with the answer). This needs `SUBMIT_ALL` (every queued SQE submitted, so
//! every lazy CQE is posted); without it the wait asks for one completion, as before.
//!
//! SQEs pushed while the SQ is full (bursts larger than the ring) wait, in order, in a
//! user-space backlog that the next turns move into the SQ before their enter.
//!
//! In SQPOLL mode ([`super::SqPoll`]) a kernel thread takes SQEs as soon as they are written
//! (each push publishes the SQ tail), so the loop enters only when it must
//! ([`Ring::must_enter_while_busy`]): with tasks still ready, to wake that thread when it
//! sleeps (`IORING_SQ_NEED_WAKEUP`) with SQEs queued, or to flush a CQ overflow; with nothing
//! ready, to wait for a completion (carrying `IORING_ENTER_SQ_WAKEUP` if SQEs wait for a
//! sleeping thread). Completions need no enter: the thread runs the kernel's task work and
//! posts them. The tail is published (a release store) before `NEED_WAKEUP` is read after a
//! `SeqCst` fence (`SubmissionQueue::need_wakeup`), pairing with the kernel's full barrier
//! between setting the flag and re-reading the tail, so a thread going to sleep either sees
//! the new entries or is seen asleep. Lazy requests work alike: the kernel's thread posts
//! their CQEs as it submits them, and the waiting enter's `1 + OpTable::lazy()` counts them
//! whether they are posted before or during the wait (the kernel waits for the CQ tail to
//! pass its head plus that many).
//!
//! Invariants:
//! - Every table is behind a `Cell`/`RefCell` and each method borrows it only for its own
//!   duration: no borrow is held when a method returns, so none is held while user code (a
//!   poll, a drop, a wake) runs. Futures, wakers and holds come back to the caller to be
//!   dropped or woken outside.
//! - Memory an SQE points to is the pusher's to keep alive until the request's final CQE
//!   (the contract of [`Ring::push`]).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::task::Waker;
use std::time::{Duration, Instant};

use io_uring::types::{SubmitArgs, Timespec};
use io_uring::{squeue, EnterFlags, IoUring};

use super::bufring::{BufRing, BGID};
use super::error::UringError;
use super::op_table::OpTable;
use super::stats::{bump, Counters, SetupFlags};
use super::task_queue::{BoxFuture, TaskQueue};
use super::timer_heap::TimerHeap;
use super::wait_plan::WaitPlan;

/// One thread's io_uring and its tables.
pub(crate) struct Ring {
    id: u32,
    flags: SetupFlags,
    uring: RefCell<IoUring>,
    /// SQEs that did not fit in a full SQ, oldest first.
    backlog: RefCell<VecDeque<squeue::Entry>>,
    /// Requests whose final CQE is still due.
    inflight: Cell<usize>,
    /// Operation slots.
    pub(crate) ops: RefCell<OpTable>,
    /// The provided-buffer ring.
    pub(crate) bufs: BufRing,
    /// Receive slots (index, generation) waiting for provided buffers to come back.
    pub(crate) starving: RefCell<VecDeque<(u32, u32)>>,
    /// Counters of this executor.
    pub(crate) counters: Counters,
    tasks: RefCell<TaskQueue>,
    timers: RefCell<TimerHeap>,
    /// The last clock reading (only taken when timers are armed).
    now: Cell<Option<Instant>>,
    shutting_down: Cell<bool>,
    /// Answers the thread's connections await ([`super::answers_awaited`]).
    awaited: Cell<usize>,
    /// Answers delivered (decreases of `awaited`) since the last [`Ring::learn_answers`].
    answered: Cell<usize>,
    /// Answers a receive completion brought lately: a moving average of each turn's answers
    /// delivered over its receive completions.
    answers_per_completion: Cell<f64>,
    /// Whether waits use the kernel's minimum wait (`IORING_FEAT_MIN_TIMEOUT`, and the
    /// config allows it).
    kernel_min_wait: bool,
}

impl Ring {
    /// The ring of executor `id`, over `uring` (set up with `flags`) and its buffer ring;
    /// waits use the kernel's minimum wait where `flags` says it has one and
    /// `kernel_min_wait` allows it.
    pub(crate) fn new(
        id: u32,
        flags: SetupFlags,
        uring: IoUring,
        bufs: BufRing,
        kernel_min_wait: bool,
    ) -> Ring {
        Ring {
            id,
            flags,
            uring: RefCell::new(uring),
            backlog: RefCell::new(VecDeque::new()),
            inflight: Cell::new(0),
            ops: RefCell::new(OpTable::default()),
            bufs,
            starving: RefCell::new(VecDeque::new()),
            counters: Counters::default(),
            tasks: RefCell::new(TaskQueue::default()),
            timers: RefCell::new(TimerHeap::default()),
            now: Cell::new(None),
            shutting_down: Cell::new(false),
            awaited: Cell::new(0),
            answered: Cell::new(0),
            answers_per_completion: Cell::new(1.0),
            kernel_min_wait: kernel_min_wait && flags.min_timeout,
        }
    }

    /// Answers the thread's connections await.
    pub(crate) fn awaited(&self) -> usize {
        self.awaited.get()
    }

    /// A caller's count of awaited answers went from `before` to `now`.
    #[inline]
    pub(crate) fn answers_awaited(&self, before: usize, now: usize) {
        self.awaited.set(
            self.awaited
                .get()
                .saturating_sub(before)
                .saturating_add(now),
        );
        if now < before {
            self.answered.set(self.answered.get() + (before - now));
        }
    }

    /// A turn dispatched `receives` receive completions: the answers delivered since the last
    /// call, over them, move the average of answers per completion (weight 1/8).
    pub(crate) fn learn_answers(&self, receives: usize) {
        let answered = self.answered.replace(0);
        if receives == 0 {
            return;
        }
        let sample = (answered as f64 / receives as f64).max(1.0);
        let avg = self.answers_per_completion.get();
        self.answers_per_completion.set(avg + (sample - avg) / 8.0);
    }

    /// Answers a receive completion brought lately (at least 1).
    pub(crate) fn answers_per_completion(&self) -> f64 {
        self.answers_per_completion.get()
    }

    /// Whether waits use the kernel's minimum wait.
    pub(crate) fn kernel_min_wait(&self) -> bool {
        self.kernel_min_wait
    }

    /// The id of the executor this ring belongs to (in wakers and handles).
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

    /// Teardown has started.
    pub(crate) fn start_shutdown(&self) {
        self.shutting_down.set(true);
    }

    // ---- submission and completion -----------------------------------------------------

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
            let mut uring = self.uring.borrow_mut();
            // SAFETY: the caller keeps the entry's pointers valid until its CQE.
            if unsafe { uring.submission().push(entry) }.is_ok() {
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

    /// Tracked requests whose final CQE is still due.
    pub(crate) fn inflight(&self) -> usize {
        self.inflight.get()
    }

    /// Whether SQEs wait to be submitted (in the SQ or in the backlog).
    pub(crate) fn has_queued(&self) -> bool {
        let mut uring = self.uring.borrow_mut();
        !uring.submission().is_empty() || !self.backlog.borrow().is_empty()
    }

    /// Whether SQEs wait in the backlog for room in the SQ.
    pub(crate) fn has_backlog(&self) -> bool {
        !self.backlog.borrow().is_empty()
    }

    /// Lazy one-shot requests whose CQE has not been dispatched yet (see the module doc).
    pub(crate) fn lazy_requests(&self) -> usize {
        self.ops.borrow().lazy()
    }

    /// Moves as many backlogged SQEs into the SQ as it has room for.
    pub(crate) fn flush_backlog(&self) {
        let mut backlog = self.backlog.borrow_mut();
        if backlog.is_empty() {
            return;
        }
        let mut uring = self.uring.borrow_mut();
        let mut sq = uring.submission();
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

    /// Under SQPOLL, `n` SQEs were written to the queue (its tail published): that hands them
    /// to the kernel's thread, so they count as submitted here rather than at an enter.
    #[inline]
    fn count_sqpoll_handed(&self, n: u64) {
        if self.flags.sqpoll {
            bump(&self.counters.sqes_submitted, n);
        }
    }

    /// Copies up to `batch.len()` CQEs (user data, result, flags) out of the ring; returns
    /// how many.
    pub(crate) fn copy_completions(&self, batch: &mut [(u64, i32, u32)]) -> usize {
        let mut n = 0;
        let mut uring = self.uring.borrow_mut();
        for (slot, cqe) in batch.iter_mut().zip(uring.completion()) {
            *slot = (cqe.user_data(), cqe.result(), cqe.flags());
            n += 1;
        }
        n
    }

    /// Whether a turn that still has tasks ready must make its (non-waiting) enter.
    ///
    /// Without SQPOLL: when SQEs are queued, or the kernel flags pending task work or a CQ
    /// overflow (always, if it cannot flag task work). Under SQPOLL the kernel's thread
    /// submits and completes by itself: only when it sleeps with SQEs queued (it needs
    /// `IORING_ENTER_SQ_WAKEUP`), on a CQ overflow, which only an enter flushes, or when the
    /// turn has nothing to run but SQEs waiting for room in a full SQ ([`Self::sq_stalled`]).
    pub(crate) fn must_enter_while_busy(&self) -> bool {
        let mut uring = self.uring.borrow_mut();
        let sq = uring.submission();
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
    fn enter_reason(&self, uring: &mut IoUring, wait: bool) -> Enter {
        let sq = uring.submission();
        Enter {
            sq_wakeup: self.flags.sqpoll && !sq.is_empty() && sq.need_wakeup(),
            sq_wait: !wait && self.sq_stalled(),
            cq_overflow: sq.cq_overflow(),
        }
    }

    /// One `io_uring_enter`: submit everything queued (under SQPOLL: wake the kernel's thread
    /// if it sleeps with SQEs queued) and fetch completions, waiting (if `wait`) until `want`
    /// completions are ready or `timeout` passes. `ETIME`, `EINTR`, `EBUSY` and `EAGAIN` are
    /// ordinary wake-ups.
    pub(crate) fn enter(
        &self,
        wait: bool,
        want: usize,
        timeout: Option<Duration>,
    ) -> Result<(), UringError> {
        self.enter_with(wait, want, timeout, None)
    }

    /// The waiting enter `plan` describes ([`super::wait_plan`]).
    pub(crate) fn enter_waiting(&self, plan: WaitPlan) -> Result<(), UringError> {
        self.enter_with(true, plan.want, plan.timeout, plan.min_wait_us)
    }

    /// [`Ring::enter`], with the kernel's minimum wait (`min_wait_us`, microseconds) when
    /// given: the wait then returns at the first completion once that much has passed
    /// (only with a timeout; only where the kernel has `IORING_FEAT_MIN_TIMEOUT`).
    fn enter_with(
        &self,
        wait: bool,
        want: usize,
        timeout: Option<Duration>,
        min_wait_us: Option<u32>,
    ) -> Result<(), UringError> {
        let mut uring = self.uring.borrow_mut();
        let before = uring.submission().len();
        let reason = self.enter_reason(&mut uring, wait);
        let mut flags = EnterFlags::GETEVENTS;
        if reason.sq_wakeup {
            flags |= EnterFlags::SQ_WAKEUP;
        }
        if reason.sq_wait {
            flags |= EnterFlags::SQ_WAIT;
        }
        let r = {
            let sub = uring.submitter();
            match (wait, timeout) {
                (true, Some(d)) => {
                    let ts = Timespec::from(d);
                    let args = SubmitArgs::new()
                        .min_wait_usec(min_wait_us.unwrap_or(0))
                        .timespec(&ts);
                    // SAFETY: `args` (an `io_uring_getevents_arg`, `repr(transparent)`) and
                    // the timespec it points to outlive the call; EXT_ARG tells the kernel
                    // that the argument is that struct. A minimum wait is only set where
                    // the kernel reads that field (`kernel_min_wait`); older kernels refuse
                    // a non-zero one with EINVAL, never misread it.
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
        self.count_enter(&mut uring, before, wait || reason.sq_wait, reason);
        match r {
            Ok(_) => Ok(()),
            Err(e) => match e.raw_os_error() {
                Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN) => Ok(()),
                _ => Err(UringError::os("io_uring_enter", &e)),
            },
        }
    }

    fn count_enter(&self, uring: &mut IoUring, sq_before: usize, waited: bool, reason: Enter) {
        let after = uring.submission().len();
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

    /// Unregisters the provided-buffer ring (teardown, once the kernel is done with it).
    pub(crate) fn unregister_bufs(&self) {
        let _ = self.uring.borrow().submitter().unregister_buf_ring(BGID);
    }

    // ---- tasks -------------------------------------------------------------------------

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

    /// Whether a task is queued to run.
    pub(crate) fn has_ready_tasks(&self) -> bool {
        self.tasks.borrow().has_ready()
    }

    /// The next queued task's (index, generation, future), taken out of its slot to be
    /// polled.
    pub(crate) fn next_ready_task(&self) -> Option<(u32, u32, BoxFuture)> {
        self.tasks.borrow_mut().next_ready()
    }

    /// A polled task completed: frees its slot (the caller drops the future).
    pub(crate) fn task_finished(&self, index: u32) {
        self.tasks.borrow_mut().finish(index);
    }

    /// Puts a polled, pending future back; returns it if the task was cancelled during its
    /// poll (the caller drops it).
    pub(crate) fn put_back_task(&self, index: u32, fut: BoxFuture) -> Option<BoxFuture> {
        self.tasks.borrow_mut().put_back(index, fut)
    }

    /// Takes the future of the first live task at or after slot `*from` out (teardown).
    pub(crate) fn take_next_task(&self, from: &mut usize) -> Option<BoxFuture> {
        self.tasks.borrow_mut().take_next(from)
    }

    // ---- timers ------------------------------------------------------------------------

    /// Whether any timer is armed.
    pub(crate) fn has_timers(&self) -> bool {
        !self.timers.borrow().is_empty()
    }

    /// Reads the clock (called only when timers are armed) and remembers the reading.
    pub(crate) fn read_clock(&self) -> Instant {
        let now = Instant::now();
        self.now.set(Some(now));
        now
    }

    /// Whether `deadline` passed at the last clock reading.
    pub(crate) fn already_past(&self, deadline: Instant) -> bool {
        self.now.get().is_some_and(|now| deadline <= now)
    }

    /// How long until the nearest armed deadline, from the last clock reading (or now).
    pub(crate) fn until_next_deadline(&self) -> Option<Duration> {
        self.timers.borrow_mut().next_deadline().map(|d| {
            let now = self.now.get().unwrap_or_else(Instant::now);
            d.saturating_duration_since(now)
        })
    }

    /// Fires the earliest timer due at `now`: its waker (`Some(None)` if it had none), or
    /// `None` if no timer is due.
    pub(crate) fn pop_due_timer(&self, now: Instant) -> Option<Option<Waker>> {
        self.timers.borrow_mut().pop_due(now)
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

    /// Forgets the tables the kernel may still write into (operation slots and what they
    /// hold, the provided buffers), for a teardown that could not prove the kernel done.
    pub(crate) fn leak(&mut self) {
        self.ops.get_mut().leak();
        self.bufs.leak();
    }
}

/// What an enter does besides submitting and waiting (see [`Ring::enter`]).
#[derive(Debug, Clone, Copy)]
struct Enter {
    /// It carries `IORING_ENTER_SQ_WAKEUP`.
    sq_wakeup: bool,
    /// It carries `IORING_ENTER_SQ_WAIT` (SQPOLL: waits for room in a full SQ).
    sq_wait: bool,
    /// The kernel flagged a CQ overflow (GETEVENTS flushes it).
    cq_overflow: bool,
}
