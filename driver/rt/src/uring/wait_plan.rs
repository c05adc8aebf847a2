//! How a turn with nothing to run waits ([`plan_wait`]): how many completions it asks the
//! kernel for, for how long, and whether it uses the kernel's minimum wait. A pure function
//! of the executor's state, so that every case is tested without a ring.
//!
//! Three ideas, each off when its setting is 0:
//! - **Timer slack** ([`super::Config::timer_slack`]): the wait for the nearest timer lasts
//!   until its deadline plus the slack, so that timers due within the slack of the first
//!   fire together in one wake-up. A timer never fires before its deadline (the executor
//!   fires only timers due at the clock it reads) and, the machine willing, at most the slack
//!   after it.
//! - **Batched wait** ([`super::Config::batch_wait`]): when the thread's connections await
//!   answers ([`super::answers_awaited`]) that should come in more than one completion, the
//!   wait asks for that many completions (plus the lazy sends, which complete during the
//!   wait's own submission) and waits for them at most the batch wait; after that it
//!   returns at the first completion. Answers that trickle in are then served several per
//!   wake-up, each at most the batch wait late, while answers expected in one completion (a
//!   request at a time, or a burst that a node answers in one write) are served the moment
//!   they arrive. How many completions: the answers awaited over the answers a receive
//!   completion has brought lately (a moving average the executor keeps, since a completion
//!   may carry many answers: a closed loop whose node answers a whole batch in one write
//!   would otherwise wait out the batch wait on every turn). Where the kernel has `IORING_FEAT_MIN_TIMEOUT`
//!   (Linux 6.12) that is one wait with `min_wait_usec`; elsewhere the same in two waits: the
//!   first bounded by the batch wait, and, if it ended with no completion at all, a plain
//!   one (the executor marks the batch as expired).
//! - Lazy sends ([`super::Ring`]'s module doc): every wait asks for them on top.

use std::time::Duration;

/// The most completions a batched wait asks for (the completion queue holds four times the
/// ring's entries; a wait for more than it can post would always run to its time limit).
pub(crate) const MAX_BATCH: usize = 256;

/// The longest wait given to the kernel when no timer bounds it but the kernel's minimum
/// wait is used: without an overall timeout, the kernel ends the wait when the minimum wait
/// passes even with no completion, which is not the semantics wanted.
pub(crate) const NO_DEADLINE: Duration = Duration::from_secs(3600);

/// What the executor knows when it is about to wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WaitState {
    /// Time to the nearest timer's deadline (`None`: no timer armed).
    pub(crate) to_deadline: Option<Duration>,
    /// Lazy sends whose completions are posted during the wait's submission.
    pub(crate) lazy: usize,
    /// Answers the thread's connections await.
    pub(crate) awaited: usize,
    /// Answers a receive completion has brought lately (a moving average, at least 1).
    pub(crate) answers_per_completion: f64,
    /// The configured timer slack.
    pub(crate) slack: Duration,
    /// The configured batch wait (zero: off).
    pub(crate) batch_wait: Duration,
    /// Whether the kernel's minimum wait is used.
    pub(crate) kernel_min_wait: bool,
    /// The user-space batch's first wait ended with no completion: wait plainly now.
    pub(crate) batch_expired: bool,
}

/// One waiting `io_uring_enter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WaitPlan {
    /// Completions to wait for (`min_complete`).
    pub(crate) want: usize,
    /// The overall time limit (`None`: none).
    pub(crate) timeout: Option<Duration>,
    /// The kernel's minimum wait, whole microseconds, at least 1 (`None`: not used).
    pub(crate) min_wait_us: Option<u32>,
    /// This is the user-space batch's first wait (its ending empty expires the batch).
    pub(crate) batch_phase: bool,
}

impl WaitPlan {
    /// Whether it waits for a batch of answers (more than one completion that matters).
    pub(crate) fn batched(&self, lazy: usize) -> bool {
        self.want > lazy + 1
    }
}

/// The wait for `s` (see the module doc).
pub(crate) fn plan_wait(s: WaitState) -> WaitPlan {
    let timeout = s.to_deadline.map(|d| d.saturating_add(s.slack));
    let plain = WaitPlan {
        want: 1 + s.lazy,
        timeout,
        min_wait_us: None,
        batch_phase: false,
    };
    let expected = expected_completions(s.awaited, s.answers_per_completion);
    if s.batch_wait.is_zero() || expected < 2 || s.batch_expired {
        return plain;
    }
    let want = s.lazy + expected;
    // A timer due within the batch wait bounds the batch by itself.
    if timeout.is_some_and(|t| t <= s.batch_wait) {
        return WaitPlan {
            want,
            timeout,
            min_wait_us: None,
            batch_phase: false,
        };
    }
    if s.kernel_min_wait {
        let us = u32::try_from(s.batch_wait.as_micros())
            .unwrap_or(u32::MAX)
            .max(1);
        WaitPlan {
            want,
            timeout: Some(timeout.unwrap_or(NO_DEADLINE)),
            min_wait_us: Some(us),
            batch_phase: false,
        }
    } else {
        WaitPlan {
            want,
            timeout: Some(s.batch_wait),
            min_wait_us: None,
            batch_phase: true,
        }
    }
}

/// The completions `awaited` answers should come in, at `per_completion` answers each
/// (rounded to the nearest: an average just under the answers awaited still means one
/// completion; at most [`MAX_BATCH`]).
fn expected_completions(awaited: usize, per_completion: f64) -> usize {
    let per = if per_completion.is_finite() {
        per_completion.max(1.0)
    } else {
        1.0
    };
    ((awaited as f64 / per).round() as usize).min(MAX_BATCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> WaitState {
        WaitState {
            to_deadline: None,
            lazy: 0,
            awaited: 0,
            answers_per_completion: 1.0,
            slack: Duration::ZERO,
            batch_wait: Duration::ZERO,
            kernel_min_wait: true,
            batch_expired: false,
        }
    }

    const US: fn(u64) -> Duration = Duration::from_micros;

    #[test]
    fn without_slack_or_batch_a_wait_asks_for_one_completion_until_the_nearest_timer() {
        let p = plan_wait(WaitState {
            to_deadline: Some(US(700)),
            lazy: 2,
            awaited: 30,
            ..state()
        });
        assert_eq!(
            p,
            WaitPlan {
                want: 3,
                timeout: Some(US(700)),
                min_wait_us: None,
                batch_phase: false
            }
        );
        assert_eq!(plan_wait(state()).timeout, None, "no timer: no limit");
    }

    #[test]
    fn slack_lengthens_the_wait_for_a_timer_and_nothing_else() {
        let s = WaitState {
            slack: US(250),
            ..state()
        };
        let p = plan_wait(WaitState {
            to_deadline: Some(US(100)),
            ..s
        });
        assert_eq!(p.timeout, Some(US(350)));
        assert_eq!(p.want, 1);
        // Past due (zero left): at most the slack.
        let p = plan_wait(WaitState {
            to_deadline: Some(Duration::ZERO),
            ..s
        });
        assert_eq!(p.timeout, Some(US(250)));
        assert_eq!(
            plan_wait(s).timeout,
            None,
            "no timer: the slack adds no limit"
        );
    }

    #[test]
    fn a_batched_wait_asks_for_every_awaited_answer_for_at_most_the_batch_wait() {
        let s = WaitState {
            batch_wait: US(200),
            awaited: 40,
            lazy: 1,
            to_deadline: Some(US(1500)),
            ..state()
        };
        // The kernel's minimum wait: one wait, the timer as its overall limit.
        assert_eq!(
            plan_wait(s),
            WaitPlan {
                want: 41,
                timeout: Some(US(1500)),
                min_wait_us: Some(200),
                batch_phase: false
            }
        );
        // No timer: an overall limit all the same (the kernel would end the wait empty).
        let p = plan_wait(WaitState {
            to_deadline: None,
            ..s
        });
        assert_eq!((p.timeout, p.min_wait_us), (Some(NO_DEADLINE), Some(200)));
        // The user-space fallback: first a wait bounded by the batch wait...
        let f = WaitState {
            kernel_min_wait: false,
            ..s
        };
        assert_eq!(
            plan_wait(f),
            WaitPlan {
                want: 41,
                timeout: Some(US(200)),
                min_wait_us: None,
                batch_phase: true
            }
        );
        // ...then, once it ended empty, a plain one.
        let p = plan_wait(WaitState {
            batch_expired: true,
            ..f
        });
        assert_eq!(
            (p.want, p.timeout, p.batch_phase),
            (2, Some(US(1500)), false)
        );
        // Too many awaited for the completion queue: capped.
        let p = plan_wait(WaitState {
            awaited: 100_000,
            ..s
        });
        assert_eq!(p.want, 1 + MAX_BATCH);
    }

    /// Answers that come many to a completion are waited for in as many completions as
    /// they should take: a burst answered in one write is not batched at all.
    #[test]
    fn the_completions_waited_for_are_the_answers_over_the_answers_per_completion() {
        let s = WaitState {
            batch_wait: US(200),
            awaited: 64,
            answers_per_completion: 64.0,
            ..state()
        };
        assert_eq!(
            plan_wait(s).want,
            1,
            "one completion expected: a plain wait"
        );
        assert_eq!(plan_wait(s).min_wait_us, None);
        // An average still learning (just under the burst) rounds to one completion too.
        let p = plan_wait(WaitState {
            answers_per_completion: 45.0,
            ..s
        });
        assert_eq!((p.want, p.min_wait_us), (1, None));
        let p = plan_wait(WaitState {
            answers_per_completion: 2.5,
            ..s
        });
        assert_eq!((p.want, p.min_wait_us), (26, Some(200)));
        // A nonsense average counts as one answer per completion.
        for bad in [0.0, -3.0, f64::NAN, f64::INFINITY] {
            let p = plan_wait(WaitState {
                answers_per_completion: bad,
                awaited: 10,
                ..s
            });
            assert_eq!(p.want, 10, "{bad}");
        }
    }

    #[test]
    fn one_answer_awaited_or_a_timer_sooner_than_the_batch_wait_is_not_batched() {
        let s = WaitState {
            batch_wait: US(200),
            awaited: 1,
            ..state()
        };
        assert_eq!(plan_wait(s).want, 1, "a request at a time: served at once");
        assert_eq!(plan_wait(s).min_wait_us, None);
        // A timer due in 150 us with the slack of 20 us: the batch waits for it alone.
        let p = plan_wait(WaitState {
            awaited: 8,
            to_deadline: Some(US(150)),
            slack: US(20),
            ..s
        });
        assert_eq!(
            p,
            WaitPlan {
                want: 8,
                timeout: Some(US(170)),
                min_wait_us: None,
                batch_phase: false
            }
        );
        // Sub-microsecond batch waits still ask the kernel for one microsecond.
        let p = plan_wait(WaitState {
            awaited: 8,
            batch_wait: Duration::from_nanos(300),
            ..s
        });
        assert_eq!(p.min_wait_us, Some(1));
    }
}
