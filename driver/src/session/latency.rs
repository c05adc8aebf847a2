//! Per-shard request latency: an HDR histogram ([`hdrhistogram`]) in the session's own
//! state, one per shard, and the snapshots read from it ([`Latency`]).
//!
//! A request's latency runs from the first poll of its future to its result (after retries,
//! re-preparing and speculative executions: what the caller waited), failures included,
//! measured on the precise monotonic clock (`clock::Ticks::precise`; the coarse clock of the
//! deadlines ticks every few milliseconds). Each page of a paged read is one request.
//!
//! Off by default ([`SessionConfig::latency`] `None`): recording cost about 205 instructions
//! per request on `doppio cost`'s `insert` (3599 -> 3804, +5.7 %; no allocation), past the
//! project's 2 % gate, so it is the user's choice.
//!
//! Recording costs two clock reads and one histogram update per request: the histogram is
//! sized once, when the session connects, for values up to [`LatencyConfig::highest`]
//! (larger ones count as that value), so recording never allocates; it sits in a `RefCell`
//! of the shard (a flag check, no lock, no atomic). With [`SessionConfig::latency`] `None`
//! nothing is read or recorded (one branch per request).
//!
//! Invariant: the histogram is recorded into only on its shard; a snapshot is a copy, and
//! [`Latency::merge`] adds shards' snapshots (what [`crate::Cluster::latency`] does).
//!
//! [`SessionConfig::latency`]: super::SessionConfig::latency

use std::cell::RefCell;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::clock::Ticks;

/// The bounds of a session's latency histogram ([`SessionConfig::latency`]).
///
/// [`SessionConfig::latency`]: super::SessionConfig::latency
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LatencyConfig {
    /// The largest latency told apart; a longer request is counted as this long. At least
    /// 2 ns.
    pub highest: Duration,
    /// Significant decimal digits kept of each value (0 to 5): 3 keeps each value within
    /// 0.1 %. Memory grows tenfold with each digit: 3 digits up to a minute take about
    /// 220 KiB per shard, 2 digits about 30 KiB.
    pub significant_digits: u8,
}

impl Default for LatencyConfig {
    /// Up to one minute, 3 significant digits.
    fn default() -> Self {
        Self {
            highest: Duration::from_secs(60),
            significant_digits: 3,
        }
    }
}

impl LatencyConfig {
    /// An empty histogram of these bounds (clamped to what the crate accepts).
    fn histogram(&self) -> Option<Histogram<u64>> {
        let highest = u64::try_from(self.highest.as_nanos()).unwrap_or(u64::MAX);
        Histogram::new_with_bounds(1, highest.max(2), self.significant_digits.min(5)).ok()
    }
}

/// Request latencies in nanoseconds: a copy of a session's histogram ([`Session::latency`])
/// or several shards' merged ([`crate::Cluster::latency`]).
///
/// [`Session::latency`]: super::Session::latency
#[derive(Clone, PartialEq)]
pub struct Latency {
    histogram: Histogram<u64>,
}

impl std::fmt::Debug for Latency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Latency")
            .field("count", &self.count())
            .field("min", &self.min())
            .field("p50", &self.quantile(0.5))
            .field("p99", &self.quantile(0.99))
            .field("max", &self.max())
            .finish()
    }
}

impl Latency {
    /// Requests recorded.
    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// The shortest (zero when empty).
    pub fn min(&self) -> Duration {
        Duration::from_nanos(if self.count() == 0 {
            0
        } else {
            self.histogram.min()
        })
    }

    /// The longest, as recorded (zero when empty).
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.histogram.max())
    }

    /// The mean (zero when empty).
    pub fn mean(&self) -> Duration {
        Duration::from_nanos(self.histogram.mean() as u64)
    }

    /// The latency at quantile `q` (0.0 to 1.0: 0.99 is the 99th percentile), to the
    /// histogram's precision; zero when empty.
    pub fn quantile(&self, q: f64) -> Duration {
        Duration::from_nanos(self.histogram.value_at_quantile(q.clamp(0.0, 1.0)))
    }

    /// Adds `other`'s requests (another shard's, or an earlier interval's). Values beyond
    /// this histogram's range count as its highest.
    pub fn merge(&mut self, other: &Latency) {
        if self.histogram.add(&other.histogram).is_err() {
            for v in other.histogram.iter_recorded() {
                self.histogram
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// The histogram itself (the crate `hdrhistogram`, 7.x), in nanoseconds: for its
    /// iterators, or to serialize it with that crate's serializers.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.histogram
    }
}

/// When a request started, if its session records latency.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Started(Option<Ticks>);

impl Started {
    /// Not started yet (a future not polled): records nothing.
    pub(crate) const NOT_YET: Started = Started(None);
}

/// A session's latency histogram, recorded into on the request path.
#[derive(Debug)]
pub(crate) struct LatencyRecorder {
    histogram: Option<RefCell<Histogram<u64>>>,
}

impl LatencyRecorder {
    /// A recorder with a histogram of `config`'s bounds, or none (records nothing).
    pub(crate) fn new(config: Option<LatencyConfig>) -> Self {
        Self {
            histogram: config.and_then(|c| c.histogram()).map(RefCell::new),
        }
    }

    /// A request starts: the precise clock, read only if latency is recorded.
    #[inline]
    pub(crate) fn start(&self) -> Started {
        Started(self.histogram.as_ref().map(|_| Ticks::precise()))
    }

    /// The request that started at `started` ended: its latency recorded (no allocation:
    /// the histogram is sized; a value beyond it counts as its highest). With latency off
    /// `started` holds no time ([`LatencyRecorder::start`]): one test, inlined.
    #[inline(always)]
    pub(crate) fn record(&self, started: Started) {
        if let Some(start) = started.0 {
            self.record_since(start);
        }
    }

    /// [`LatencyRecorder::record`] of a request that started at `start`.
    #[inline(never)]
    fn record_since(&self, start: Ticks) {
        if let Some(h) = &self.histogram {
            let nanos = Ticks::precise().nanos_since(start);
            // Not borrowed anywhere across an await or a call out: never contended.
            if let Ok(mut h) = h.try_borrow_mut() {
                h.saturating_record(nanos);
            }
        }
    }

    /// A copy of the histogram (`None` if latency is not recorded).
    pub(crate) fn snapshot(&self) -> Option<Latency> {
        let h = self.histogram.as_ref()?.borrow();
        Some(Latency {
            histogram: h.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(config: LatencyConfig, nanos: &[u64]) -> Latency {
        let r = LatencyRecorder::new(Some(config));
        for &n in nanos {
            if let Some(h) = &r.histogram {
                h.borrow_mut().saturating_record(n);
            }
        }
        r.snapshot().expect("recording")
    }

    #[test]
    fn quantiles_come_from_the_recorded_values_and_beyond_the_highest_saturates() {
        let config = LatencyConfig::default();
        let values: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        let l = recorded(config, &values);
        assert_eq!(l.count(), 100);
        assert_eq!(l.min(), Duration::from_micros(1));
        let p50 = l.quantile(0.5).as_nanos() as f64;
        assert!((p50 - 50_000.0).abs() <= 50.0, "{p50}");
        let p99 = l.quantile(0.99).as_nanos() as f64;
        assert!((p99 - 99_000.0).abs() <= 99.0, "{p99}");
        let max = l.max().as_nanos() as f64;
        assert!((max - 100_000.0).abs() <= 100.0, "{max}");
        let hour = recorded(config, &[3_600_000_000_000]);
        let max = hour.max();
        assert!(
            max >= Duration::from_secs(59) && max <= Duration::from_secs(61),
            "{max:?}"
        );
    }

    #[test]
    fn merging_adds_counts_even_across_different_bounds() {
        let mut a = recorded(LatencyConfig::default(), &[1000, 2000]);
        let b = recorded(LatencyConfig::default(), &[3000]);
        a.merge(&b);
        assert_eq!(a.count(), 3);
        let small = LatencyConfig {
            highest: Duration::from_micros(10),
            significant_digits: 2,
        };
        let mut c = recorded(small, &[500]);
        c.merge(&recorded(LatencyConfig::default(), &[1_000_000]));
        assert_eq!(c.count(), 2);
        assert!(c.max() <= Duration::from_micros(11), "{:?}", c.max());
    }

    #[test]
    fn without_a_config_nothing_is_read_or_recorded() {
        let r = LatencyRecorder::new(None);
        let s = r.start();
        assert!(s.0.is_none());
        r.record(s);
        assert!(r.snapshot().is_none());
        // Bounds out of the crate's range are clamped, not refused.
        let odd = LatencyConfig {
            highest: Duration::ZERO,
            significant_digits: 9,
        };
        assert!(LatencyRecorder::new(Some(odd)).snapshot().is_some());
    }

    #[test]
    fn an_empty_snapshot_reads_as_zeros() {
        let l = recorded(LatencyConfig::default(), &[]);
        assert_eq!(
            (l.count(), l.min(), l.max()),
            (0, Duration::ZERO, Duration::ZERO)
        );
        assert_eq!(
            (l.mean(), l.quantile(0.99)),
            (Duration::ZERO, Duration::ZERO)
        );
    }
}
