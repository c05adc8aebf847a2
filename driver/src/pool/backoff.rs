//! Reconnection delays: full-jitter exponential [`Backoff`], and the [`Jitter`] generator
//! behind them.

use std::cell::Cell;
use std::time::Duration;

/// Reconnection delays: full-jitter exponential backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Backoff {
    /// The first delay's upper bound.
    pub base: Duration,
    /// No delay exceeds this.
    pub cap: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(100),
            cap: Duration::from_secs(10),
        }
    }
}

impl Backoff {
    /// Delays of full jitter up to `min(cap, base * 2^attempt)`.
    pub const fn new(base: Duration, cap: Duration) -> Self {
        Self { base, cap }
    }

    /// The delay before reconnect attempt `attempt` (0-based), given a random `u64`.
    pub fn delay(&self, attempt: u32, random: u64) -> Duration {
        let ceiling = self
            .base
            .saturating_mul(1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX))
            .min(self.cap);
        let nanos = ceiling.as_nanos().min(u64::MAX as u128) as u64;
        Duration::from_nanos(if nanos == 0 { 0 } else { random % (nanos + 1) })
    }
}

/// A small xorshift generator for backoff jitter (the pools' and the control connection's):
/// not for anything that needs real randomness.
#[derive(Debug)]
pub(crate) struct Jitter(Cell<u64>);

impl Jitter {
    /// A generator seeded from the clock, mixed with `salt` (so that pools started in the
    /// same instant differ); on a simulation, from its seed (so that a run replays).
    pub(crate) fn seeded(salt: u64) -> Self {
        let clock = doppio_rt::sim::random_u64().unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0x9e37_79b9_7f4a_7c15, |d| d.as_nanos() as u64)
        });
        Self(Cell::new((clock ^ salt) | 1))
    }

    /// The next random value.
    pub(crate) fn next(&self) -> u64 {
        let mut x = self.0.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0.set(x);
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_exponentially_within_the_cap() {
        let b = Backoff {
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
        };
        // With the largest random value the delay is the ceiling itself.
        let max = |attempt| b.delay(attempt, u64::MAX - 1);
        assert!(max(0) <= Duration::from_millis(100));
        assert!(max(3) <= Duration::from_millis(800));
        assert!(max(10) <= Duration::from_secs(2));
        assert!(
            max(200) <= Duration::from_secs(2),
            "no overflow on many attempts"
        );
        assert_eq!(b.delay(5, 0), Duration::ZERO);
        let j = Jitter::seeded(42);
        let delays: Vec<_> = (0..100).map(|_| b.delay(4, j.next())).collect();
        assert!(delays.iter().all(|d| *d <= Duration::from_millis(1600)));
        let distinct: std::collections::HashSet<_> = delays.iter().collect();
        assert!(distinct.len() > 90, "jitter spreads the delays");
    }
}
