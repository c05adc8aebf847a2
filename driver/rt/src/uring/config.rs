//! The executor's configuration: ring and provided-buffer sizes, the poll budget, the opt-in
//! SQPOLL mode, how long teardown waits for the kernel, and how an idle executor waits (the
//! timer slack and the batched wait, [`super::wait_plan`]).
//!
//! Invariant: a `Config` is plain data; it is checked when an executor is built (by
//! [`super::run`], through [`Config::validate`]), where every value the kernel or the buffer
//! ring cannot take becomes a [`super::UringError`], never a panic.

use std::time::Duration;

use super::error::UringError;

/// How an executor is built (see [`super::run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Submission-queue entries (the completion queue gets four times as many, so that
    /// multishot receives rarely overflow it). Default 256.
    pub ring_entries: u32,
    /// Provided buffers in the executor's buffer ring, shared by every stream's multishot
    /// receive: a power of two, at most 32768. Default 64.
    pub buffers: u16,
    /// Size of each provided buffer in bytes. Default 16 KiB.
    pub buffer_size: u32,
    /// At most this many task polls per loop turn before the executor turns to I/O again
    /// (user-space preemption). Default 128.
    pub poll_budget: u32,
    /// SQPOLL mode: a kernel thread polls the submission queue, so submitting needs no
    /// `io_uring_enter` (see [`SqPoll`]). Opt-in: `None` (the default) submits with the
    /// executor's own enter, once per turn at most.
    pub sqpoll: Option<SqPoll>,
    /// How long teardown waits for the completions of what it cancelled before it gives up
    /// and leaks the memory the kernel may still write (see the module docs of
    /// [`super`]): 1 ms to 60 s. Default 1 s.
    pub teardown_wait: Duration,
    /// How late a timer may fire so that timers due close together fire in one wake-up: an
    /// idle executor waits until the nearest deadline plus this. A timer never fires before
    /// its deadline. 0 to [`Config::MAX_TIMER_SLACK`]; default [`Config::TIMER_SLACK`].
    pub timer_slack: Duration,
    /// With several answers awaited ([`super::answers_awaited`]), an idle executor waits for
    /// all of them at most this long, then returns at the first completion: answers that
    /// trickle in are served several per wake-up, each at most this late. 0 (off) to
    /// [`Config::MAX_BATCH_WAIT`]; default [`Config::BATCH_WAIT`].
    pub batch_wait: Duration,
    /// Use the kernel's minimum wait for the batched wait where it has one
    /// (`IORING_FEAT_MIN_TIMEOUT`, Linux 6.12); `false` uses the user-space fallback (two
    /// waits where the kernel needs one: the first bounded by the batch wait) everywhere, as
    /// on an older kernel. Default `true`.
    pub kernel_min_wait: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ring_entries: 256,
            buffers: 64,
            buffer_size: 16 * 1024,
            poll_budget: 128,
            sqpoll: None,
            teardown_wait: Duration::from_secs(1),
            timer_slack: Self::TIMER_SLACK,
            batch_wait: Self::BATCH_WAIT,
            kernel_min_wait: true,
        }
    }
}

/// The SQPOLL mode (`IORING_SETUP_SQPOLL`): the kernel starts a thread (`iou-sqp-<tid>`,
/// named after the executor's thread, a thread of this process) that takes submission-queue
/// entries as the executor writes them.
/// The executor then enters the kernel only to wait for completions when it has nothing to
/// run, to wake that thread when it fell asleep with entries queued, and to flush a
/// completion-queue overflow.
///
/// The thread busy-polls for `idle` after the last entry it took, then sleeps; while it
/// polls it uses a whole CPU. Its CPU time is the process's (it counts in
/// `getrusage(RUSAGE_SELF)`), so put it where that is accounted for: `cpu` pins it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqPoll {
    /// How long the thread polls an empty queue before it sleeps: whole milliseconds, from
    /// 1 ms to [`SqPoll::MAX_IDLE`] (the kernel takes milliseconds, and reads 0 as one
    /// second).
    pub idle: Duration,
    /// The CPU the thread is pinned to (`IORING_SETUP_SQ_AFF`); `None`: any online CPU (the
    /// kernel does not inherit the executor's pinning).
    pub cpu: Option<u32>,
}

impl SqPoll {
    /// The longest idle time accepted: a polling thread that spins for longer after the last
    /// submission only burns a CPU.
    pub const MAX_IDLE: Duration = Duration::from_secs(10);

    /// Checks the idle time and the CPU number (whether the CPU is online and allowed is
    /// the kernel's to say, at setup).
    pub fn validate(&self) -> Result<(), UringError> {
        let ms = self.idle.as_millis();
        if self.idle.is_zero()
            || self.idle > Self::MAX_IDLE
            || Duration::from_millis(ms as u64) != self.idle
        {
            return Err(UringError::unavailable(format!(
                "invalid Config: the SQPOLL idle time must be whole milliseconds from 1 ms to \
                 {} s, not {:?}",
                Self::MAX_IDLE.as_secs(),
                self.idle
            )));
        }
        if let Some(cpu) = self.cpu {
            if cpu as usize >= libc::CPU_SETSIZE as usize {
                return Err(UringError::unavailable(format!(
                    "invalid Config: SQPOLL CPU {cpu} is beyond the largest CPU number ({})",
                    libc::CPU_SETSIZE - 1
                )));
            }
        }
        Ok(())
    }

    /// The idle time in the kernel's unit (milliseconds; valid after [`SqPoll::validate`]).
    pub(crate) fn idle_ms(&self) -> u32 {
        u32::try_from(self.idle.as_millis()).unwrap_or(u32::MAX)
    }
}

impl Config {
    /// The longest teardown wait accepted.
    pub const MAX_TEARDOWN_WAIT: Duration = Duration::from_secs(60);

    /// The default timer slack: Linux's own default for a thread's timers (`prctl`'s
    /// `PR_SET_TIMERSLACK`), 50 us.
    pub const TIMER_SLACK: Duration = Duration::from_micros(50);

    /// The longest timer slack accepted.
    pub const MAX_TIMER_SLACK: Duration = Duration::from_millis(100);

    /// The default batch wait, 200 us: against a local Cassandra 5.0 (`read`, C = 64) it
    /// halved the waits per request at 30,000 req/s (0.17-0.21 to 0.09) and cut client CPU
    /// per request by a fifth; flat out, CPU per request fell 3-20 % with throughput within
    /// the noise; on the loopback stub's closed loop (C = 8, 64, 256: answers come together,
    /// no wait is batched) nothing changed within the noise. 500 us cost a quarter of the
    /// throughput flat out.
    pub const BATCH_WAIT: Duration = Duration::from_micros(200);

    /// The longest batch wait accepted: an answer may wait this long for its company.
    pub const MAX_BATCH_WAIT: Duration = Duration::from_millis(10);

    /// Checks what can be checked before asking the kernel: the poll budget, the SQPOLL
    /// settings and the teardown wait (sizes are checked by the kernel and the buffer ring).
    pub fn validate(&self) -> Result<(), UringError> {
        if self.poll_budget == 0 {
            return Err(UringError::unavailable(
                "invalid Config: poll_budget must be at least 1",
            ));
        }
        if let Some(sq) = &self.sqpoll {
            sq.validate()?;
        }
        if self.teardown_wait < Duration::from_millis(1)
            || self.teardown_wait > Self::MAX_TEARDOWN_WAIT
        {
            return Err(UringError::unavailable(format!(
                "invalid Config: teardown_wait must be from 1 ms to {} s, not {:?}",
                Self::MAX_TEARDOWN_WAIT.as_secs(),
                self.teardown_wait
            )));
        }
        if self.timer_slack > Self::MAX_TIMER_SLACK {
            return Err(UringError::unavailable(format!(
                "invalid Config: timer_slack must be at most {:?}, not {:?}",
                Self::MAX_TIMER_SLACK,
                self.timer_slack
            )));
        }
        if self.batch_wait > Self::MAX_BATCH_WAIT {
            return Err(UringError::unavailable(format!(
                "invalid Config: batch_wait must be at most {:?}, not {:?}",
                Self::MAX_BATCH_WAIT,
                self.batch_wait
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(idle: Duration, cpu: Option<u32>) -> Config {
        Config {
            sqpoll: Some(SqPoll { idle, cpu }),
            ..Config::default()
        }
    }

    #[test]
    fn the_default_is_valid_and_has_no_sqpoll() {
        assert_eq!(Config::default().validate(), Ok(()));
        assert_eq!(Config::default().sqpoll, None);
    }

    #[test]
    fn the_longest_slack_and_batch_wait_are_accepted() {
        let c = Config {
            timer_slack: Config::MAX_TIMER_SLACK,
            batch_wait: Config::MAX_BATCH_WAIT,
            ..Config::default()
        };
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn sqpoll_idle_and_cpu_and_teardown_wait_are_checked() {
        let ms = Duration::from_millis;
        assert_eq!(sq(ms(1), None).validate(), Ok(()));
        assert_eq!(sq(SqPoll::MAX_IDLE, Some(0)).validate(), Ok(()));
        for bad in [
            sq(Duration::ZERO, None),
            sq(Duration::from_micros(1500), None),
            sq(SqPoll::MAX_IDLE + ms(1), None),
            sq(ms(10), Some(libc::CPU_SETSIZE as u32)),
            Config {
                teardown_wait: Duration::ZERO,
                ..Config::default()
            },
            Config {
                teardown_wait: Config::MAX_TEARDOWN_WAIT + ms(1),
                ..Config::default()
            },
            Config {
                timer_slack: Config::MAX_TIMER_SLACK + ms(1),
                ..Config::default()
            },
            Config {
                batch_wait: Config::MAX_BATCH_WAIT + ms(1),
                ..Config::default()
            },
        ] {
            let e = bad.validate().expect_err("refused").to_string();
            assert!(e.contains("invalid Config: "), "{e}");
        }
        assert_eq!(
            SqPoll {
                idle: ms(250),
                cpu: None
            }
            .idle_ms(),
            250
        );
    }
}
