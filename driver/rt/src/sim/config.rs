//! A simulation's settings, its errors and its counters.

use std::time::Duration;

/// How a simulation runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The seed of every choice: task order and network delays.
    pub seed: u64,
    /// Each send through an in-memory connection arrives after a delay drawn uniformly from
    /// this range (inclusive; bytes of one direction keep their order). Zero: at once.
    pub net_delay: (Duration, Duration),
    /// Polls after which the run ends with [`SimError::PollLimit`] (a livelock guard).
    pub poll_limit: u64,
    /// Real time to wait for a wake-up from another thread before a run with nothing ready
    /// and no timer counts as stalled (zero: at once, for a simulation alone on its thread).
    pub stall_wait: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            seed: 0,
            net_delay: (Duration::ZERO, Duration::ZERO),
            poll_limit: 100_000_000,
            stall_wait: Duration::ZERO,
        }
    }
}

impl Config {
    /// The defaults with `seed`.
    pub fn seeded(seed: u64) -> Self {
        Self {
            seed,
            ..Self::default()
        }
    }
}

/// Why a simulation ended without its main task's output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// No task was ready, no timer pending, and no wake-up came: the main task can never end.
    #[error(
        "the simulation stalled at {at:?} of virtual time: no task ready, no timer pending, \
         {tasks} task(s) parked (seed {seed})"
    )]
    Stalled {
        /// Virtual time when it stalled.
        at: Duration,
        /// Tasks still alive, all parked.
        tasks: usize,
        /// The seed that replays it.
        seed: u64,
    },
    /// The poll limit was reached before the main task ended.
    #[error("the simulation polled {polls} times without ending (seed {seed})")]
    PollLimit {
        /// Polls made.
        polls: u64,
        /// The seed that replays it.
        seed: u64,
    },
}

/// What a simulation did (cumulative over the run so far).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Task polls (the main task's included).
    pub polls: u64,
    /// Of those, polls of the peer's tasks ([`crate::sim::as_peer`]).
    pub peer_polls: u64,
    /// Tasks spawned.
    pub spawned: u64,
    /// Times the clock jumped forward to a timer.
    pub time_jumps: u64,
    /// Virtual time since the run began.
    pub elapsed: Duration,
}
