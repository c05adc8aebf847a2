//! Per-thread counters of the executor loop, and the ring setup flags the kernel accepted.
//!
//! Invariants: counters are plain `Cell`s owned by the executor (no atomics: only its thread
//! touches them); when an executor ends its counts are added to a thread-local total, so
//! [`super::stats`] is cumulative per thread, across executors, and callers take differences
//! ([`Stats::since`]).

use std::cell::Cell;
use std::fmt;

/// Counts of what the executors on this thread did (cumulative since the thread started).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Loop turns.
    pub turns: u64,
    /// `io_uring_enter` calls made (submitting, fetching, or waiting). At most one per turn;
    /// teardown's few enters (waiting for cancelled requests) count here but are no turn.
    pub enters: u64,
    /// Of those, calls that waited for a completion (the executor had nothing to run), or in
    /// SQPOLL mode for room in a full submission queue (`IORING_ENTER_SQ_WAIT`: nothing to
    /// run, entries waiting in the executor's backlog).
    pub enters_waiting: u64,
    /// Of those, calls that woke the kernel's SQPOLL thread (`IORING_ENTER_SQ_WAKEUP`: it
    /// had gone to sleep with entries queued); a waiting call may carry it too. SQPOLL only.
    pub enters_sq_wakeup: u64,
    /// Of those, calls that did not wait and were made because the kernel flagged a
    /// completion-queue overflow (it then holds completions that only an enter flushes).
    pub enters_cq_overflow: u64,
    /// Submission-queue entries handed to the kernel: submitted by an enter, or in SQPOLL
    /// mode written to the queue (its tail published) for the kernel's thread to take.
    pub sqes_submitted: u64,
    /// Completion-queue entries consumed.
    pub cqes: u64,
    /// Task polls.
    pub tasks_polled: u64,
    /// Task wake-ups that came from another thread.
    pub remote_wakes: u64,
    /// Timers armed (registered in the heap on their first poll).
    pub timers_armed: u64,
    /// Timers that fired.
    pub timers_fired: u64,
    /// Multishot receives armed again after the kernel ended one (out of buffers, or other
    /// benign ends).
    pub recv_rearms: u64,
    /// Multishot receives the kernel ended because the buffer ring was empty (`ENOBUFS`).
    pub recv_enobufs: u64,
    /// Sends that the kernel took only in part, whose rest was submitted again.
    pub partial_sends: u64,
    /// Sends started lazy (`MSG_DONTWAIT`; their completion ends no wait by itself).
    pub lazy_sends: u64,
    /// Lazy sends that found the socket full (`EAGAIN`, or a part taken) and were submitted
    /// again as ordinary sends, which wait in the kernel for room.
    pub lazy_sends_retried: u64,
    /// Lazy sends hurried: more bytes were queued behind them before their completion was
    /// seen, so their completion ended the wait after all.
    pub sends_hurried: u64,
    /// Teardowns that gave up waiting for the kernel (after [`super::Config::teardown_wait`])
    /// and leaked the memory it may still write instead of freeing it.
    pub teardown_leaks: u64,
    /// Waits (waiting enters) that ended with an I/O completion that woke a task: an
    /// answer's bytes, a send or connect someone waited for. With the three below, every
    /// waiting enter's cause, judged by the turn after it.
    pub wakes_completion: u64,
    /// Waits that ended with no such completion but a wake from another thread.
    pub wakes_remote: u64,
    /// Waits that ended with none of those but a timer due.
    pub wakes_timer: u64,
    /// Waits that ended with nothing to do: a wait cut short (a signal), the first wait of a
    /// user-space batch that ran out with no completion, or one that got only completions
    /// nobody waits for (lazy sends).
    pub wakes_empty: u64,
    /// Waits that waited for a batch of answers ([`super::Config::batch_wait`]: more than one
    /// completion expected).
    pub waits_batched: u64,
}

impl Stats {
    /// The counts accumulated since `earlier` (a value this thread returned before).
    pub fn since(&self, earlier: &Stats) -> Stats {
        Stats {
            turns: self.turns - earlier.turns,
            enters: self.enters - earlier.enters,
            enters_waiting: self.enters_waiting - earlier.enters_waiting,
            enters_sq_wakeup: self.enters_sq_wakeup - earlier.enters_sq_wakeup,
            enters_cq_overflow: self.enters_cq_overflow - earlier.enters_cq_overflow,
            sqes_submitted: self.sqes_submitted - earlier.sqes_submitted,
            cqes: self.cqes - earlier.cqes,
            tasks_polled: self.tasks_polled - earlier.tasks_polled,
            remote_wakes: self.remote_wakes - earlier.remote_wakes,
            timers_armed: self.timers_armed - earlier.timers_armed,
            timers_fired: self.timers_fired - earlier.timers_fired,
            recv_rearms: self.recv_rearms - earlier.recv_rearms,
            recv_enobufs: self.recv_enobufs - earlier.recv_enobufs,
            partial_sends: self.partial_sends - earlier.partial_sends,
            lazy_sends: self.lazy_sends - earlier.lazy_sends,
            lazy_sends_retried: self.lazy_sends_retried - earlier.lazy_sends_retried,
            sends_hurried: self.sends_hurried - earlier.sends_hurried,
            teardown_leaks: self.teardown_leaks - earlier.teardown_leaks,
            wakes_completion: self.wakes_completion - earlier.wakes_completion,
            wakes_remote: self.wakes_remote - earlier.wakes_remote,
            wakes_timer: self.wakes_timer - earlier.wakes_timer,
            wakes_empty: self.wakes_empty - earlier.wakes_empty,
            waits_batched: self.waits_batched - earlier.waits_batched,
        }
    }

    fn plus(&self, o: &Stats) -> Stats {
        Stats {
            turns: self.turns + o.turns,
            enters: self.enters + o.enters,
            enters_waiting: self.enters_waiting + o.enters_waiting,
            enters_sq_wakeup: self.enters_sq_wakeup + o.enters_sq_wakeup,
            enters_cq_overflow: self.enters_cq_overflow + o.enters_cq_overflow,
            sqes_submitted: self.sqes_submitted + o.sqes_submitted,
            cqes: self.cqes + o.cqes,
            tasks_polled: self.tasks_polled + o.tasks_polled,
            remote_wakes: self.remote_wakes + o.remote_wakes,
            timers_armed: self.timers_armed + o.timers_armed,
            timers_fired: self.timers_fired + o.timers_fired,
            recv_rearms: self.recv_rearms + o.recv_rearms,
            recv_enobufs: self.recv_enobufs + o.recv_enobufs,
            partial_sends: self.partial_sends + o.partial_sends,
            lazy_sends: self.lazy_sends + o.lazy_sends,
            lazy_sends_retried: self.lazy_sends_retried + o.lazy_sends_retried,
            sends_hurried: self.sends_hurried + o.sends_hurried,
            teardown_leaks: self.teardown_leaks + o.teardown_leaks,
            wakes_completion: self.wakes_completion + o.wakes_completion,
            wakes_remote: self.wakes_remote + o.wakes_remote,
            wakes_timer: self.wakes_timer + o.wakes_timer,
            wakes_empty: self.wakes_empty + o.wakes_empty,
            waits_batched: self.waits_batched + o.waits_batched,
        }
    }
}

/// One executor's live counters.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) turns: Cell<u64>,
    pub(crate) enters: Cell<u64>,
    pub(crate) enters_waiting: Cell<u64>,
    pub(crate) enters_sq_wakeup: Cell<u64>,
    pub(crate) enters_cq_overflow: Cell<u64>,
    pub(crate) sqes_submitted: Cell<u64>,
    pub(crate) cqes: Cell<u64>,
    pub(crate) tasks_polled: Cell<u64>,
    pub(crate) remote_wakes: Cell<u64>,
    pub(crate) timers_armed: Cell<u64>,
    pub(crate) timers_fired: Cell<u64>,
    pub(crate) recv_rearms: Cell<u64>,
    pub(crate) recv_enobufs: Cell<u64>,
    pub(crate) partial_sends: Cell<u64>,
    pub(crate) lazy_sends: Cell<u64>,
    pub(crate) lazy_sends_retried: Cell<u64>,
    pub(crate) sends_hurried: Cell<u64>,
    pub(crate) teardown_leaks: Cell<u64>,
    pub(crate) wakes_completion: Cell<u64>,
    pub(crate) wakes_remote: Cell<u64>,
    pub(crate) wakes_timer: Cell<u64>,
    pub(crate) wakes_empty: Cell<u64>,
    pub(crate) waits_batched: Cell<u64>,
}

/// Adds `n` to a counter.
#[inline]
pub(crate) fn bump(c: &Cell<u64>, n: u64) {
    c.set(c.get() + n);
}

impl Counters {
    /// The counts as a [`Stats`] value.
    pub(crate) fn snapshot(&self) -> Stats {
        Stats {
            turns: self.turns.get(),
            enters: self.enters.get(),
            enters_waiting: self.enters_waiting.get(),
            enters_sq_wakeup: self.enters_sq_wakeup.get(),
            enters_cq_overflow: self.enters_cq_overflow.get(),
            sqes_submitted: self.sqes_submitted.get(),
            cqes: self.cqes.get(),
            tasks_polled: self.tasks_polled.get(),
            remote_wakes: self.remote_wakes.get(),
            timers_armed: self.timers_armed.get(),
            timers_fired: self.timers_fired.get(),
            recv_rearms: self.recv_rearms.get(),
            recv_enobufs: self.recv_enobufs.get(),
            partial_sends: self.partial_sends.get(),
            lazy_sends: self.lazy_sends.get(),
            lazy_sends_retried: self.lazy_sends_retried.get(),
            sends_hurried: self.sends_hurried.get(),
            teardown_leaks: self.teardown_leaks.get(),
            wakes_completion: self.wakes_completion.get(),
            wakes_remote: self.wakes_remote.get(),
            wakes_timer: self.wakes_timer.get(),
            wakes_empty: self.wakes_empty.get(),
            waits_batched: self.waits_batched.get(),
        }
    }
}

thread_local! {
    /// Counts of the executors that already ended on this thread.
    static ENDED: Cell<Stats> = const {
        Cell::new(Stats {
            turns: 0,
            enters: 0,
            enters_waiting: 0,
            enters_sq_wakeup: 0,
            enters_cq_overflow: 0,
            sqes_submitted: 0,
            cqes: 0,
            tasks_polled: 0,
            remote_wakes: 0,
            timers_armed: 0,
            timers_fired: 0,
            recv_rearms: 0,
            recv_enobufs: 0,
            partial_sends: 0,
            lazy_sends: 0,
            lazy_sends_retried: 0,
            sends_hurried: 0,
            teardown_leaks: 0,
            wakes_completion: 0,
            wakes_remote: 0,
            wakes_timer: 0,
            wakes_empty: 0,
            waits_batched: 0,
        })
    };
    /// Setup flags of the executor running here, or of the last one that ran here.
    static LAST_FLAGS: Cell<Option<SetupFlags>> = const { Cell::new(None) };
}

/// This thread's ended executors' counts plus `live` (the running executor's, if any).
pub(crate) fn thread_total(live: Option<&Counters>) -> Stats {
    let ended = ENDED.with(Cell::get);
    match live {
        Some(c) => ended.plus(&c.snapshot()),
        None => ended,
    }
}

/// Folds an ending executor's counts into the thread's total.
pub(crate) fn retire(c: &Counters) {
    ENDED.with(|e| e.set(e.get().plus(&c.snapshot())));
}

/// Records the flags of the executor starting on this thread.
pub(crate) fn record_flags(f: SetupFlags) {
    LAST_FLAGS.with(|l| l.set(Some(f)));
}

/// The flags of the executor running on this thread, or of the last one that ran here.
pub(crate) fn last_flags() -> Option<SetupFlags> {
    LAST_FLAGS.with(Cell::get)
}

/// The io_uring setup flags the kernel accepted for an executor's ring (it refuses the ones
/// it does not know with `EINVAL`, and the executor then tries without them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetupFlags {
    /// `IORING_SETUP_SINGLE_ISSUER`: only the executor's thread submits.
    pub single_issuer: bool,
    /// `IORING_SETUP_DEFER_TASKRUN`: completions are produced only when the executor enters
    /// the kernel to fetch them.
    pub defer_taskrun: bool,
    /// `IORING_SETUP_TASKRUN_FLAG`: the kernel flags pending completion work in the SQ ring.
    pub taskrun_flag: bool,
    /// `IORING_SETUP_SUBMIT_ALL`: a failing entry does not stop the rest of a submission.
    pub submit_all: bool,
    /// `IORING_SETUP_COOP_TASKRUN`: asked for only when `DEFER_TASKRUN` is refused.
    pub coop_taskrun: bool,
    /// `IORING_SETUP_SQPOLL`: a kernel thread takes the submissions (opt-in, see
    /// [`super::SqPoll`]); the task-run flags are never asked for with it.
    pub sqpoll: bool,
    /// `IORING_SETUP_SQ_AFF`: that thread is pinned to the CPU the config names.
    pub sq_aff: bool,
    /// `IORING_FEAT_MIN_TIMEOUT` (a feature the kernel reports, not a flag asked for): a
    /// wait may set a minimum wait (Linux 6.12). Not in the flags' text.
    pub min_timeout: bool,
}

impl fmt::Display for SetupFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (self.sqpoll, "SQPOLL"),
            (self.sq_aff, "SQ_AFF"),
            (self.single_issuer, "SINGLE_ISSUER"),
            (self.defer_taskrun, "DEFER_TASKRUN"),
            (self.taskrun_flag, "TASKRUN_FLAG"),
            (self.submit_all, "SUBMIT_ALL"),
            (self.coop_taskrun, "COOP_TASKRUN"),
        ];
        let mut first = true;
        for (on, name) in names {
            if on {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_display_lists_accepted_names() {
        let f = SetupFlags {
            single_issuer: true,
            defer_taskrun: true,
            ..SetupFlags::default()
        };
        assert_eq!(f.to_string(), "SINGLE_ISSUER|DEFER_TASKRUN");
        let sq = SetupFlags {
            sqpoll: true,
            sq_aff: true,
            single_issuer: true,
            ..SetupFlags::default()
        };
        assert_eq!(sq.to_string(), "SQPOLL|SQ_AFF|SINGLE_ISSUER");
        assert_eq!(SetupFlags::default().to_string(), "none");
    }

    #[test]
    fn since_subtracts() {
        let c = Counters::default();
        bump(&c.turns, 5);
        bump(&c.enters, 3);
        let a = c.snapshot();
        bump(&c.turns, 2);
        let d = c.snapshot().since(&a);
        assert_eq!((d.turns, d.enters), (2, 0));
    }
}
