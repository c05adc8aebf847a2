//! The coordinator's side: workers' interval samples merged into one sample per interval,
//! released as soon as every worker has moved past it.

use std::time::Duration;

use crate::stats::LatencyHistogram;

use super::IntervalSample;

/// All workers' results for one sample interval.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Interval number since the phase start.
    pub index: u64,
    /// Offset of the interval's start from the phase start.
    pub start: Duration,
    /// The interval's length (the last one may be shorter).
    pub duration: Duration,
    /// Requests completed in the interval.
    pub requests: u64,
    /// Errors by kind.
    pub errors: Vec<(&'static str, u64)>,
    /// Latency from the due time, successes.
    pub latency: LatencyHistogram,
    /// Service time, successes.
    pub service: LatencyHistogram,
    /// Mean lateness of sends after their due time, ns.
    pub mean_lateness_ns: f64,
}

impl Sample {
    /// Requests per second in the interval.
    pub fn throughput(&self) -> f64 {
        let secs = self.duration.as_secs_f64();
        if secs > 0.0 {
            self.requests as f64 / secs
        } else {
            0.0
        }
    }

    /// Errors in the interval.
    pub fn error_count(&self) -> u64 {
        self.errors.iter().map(|(_, n)| n).sum()
    }
}

struct Pending {
    index: u64,
    requests: u64,
    errors: Vec<(&'static str, u64)>,
    latency: LatencyHistogram,
    service: LatencyHistogram,
    lateness_ns: u64,
}

/// Merges interval samples from `workers` workers.
pub struct Collector {
    interval: Duration,
    /// Per worker: the next interval it has not reported yet; `u64::MAX` once finished.
    progress: Vec<u64>,
    pending: Vec<Pending>,
    next_release: u64,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("progress", &self.progress)
            .field("next_release", &self.next_release)
            .finish()
    }
}

impl Collector {
    /// A collector for `workers` workers and intervals of `interval`.
    pub fn new(workers: usize, interval: Duration) -> Self {
        Self {
            interval,
            progress: vec![0; workers],
            pending: Vec::new(),
            next_release: 0,
        }
    }

    /// Takes one worker's sample; returns the merged samples it completes, in order.
    pub fn add(&mut self, s: IntervalSample) -> Vec<Sample> {
        // A worker's last sample is released only with the phase's end (`release(Some(_))`),
        // which knows how long that interval really was.
        let reached = if s.last { s.index } else { s.index + 1 };
        if let Some(p) = self.progress.get_mut(s.worker) {
            *p = (*p).max(reached);
        }
        let pos = match self.pending.iter().position(|p| p.index == s.index) {
            Some(pos) => pos,
            None => {
                self.pending.push(Pending {
                    index: s.index,
                    requests: 0,
                    errors: Vec::new(),
                    latency: LatencyHistogram::new(),
                    service: LatencyHistogram::new(),
                    lateness_ns: 0,
                });
                self.pending.len() - 1
            }
        };
        let p = &mut self.pending[pos];
        p.requests += s.requests;
        p.lateness_ns += s.lateness_ns;
        for (kind, n) in s.errors {
            match p.errors.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, m)) => *m += n,
                None => p.errors.push((kind, n)),
            }
        }
        p.latency.merge(&s.latency);
        p.service.merge(&s.service);
        self.release(None)
    }

    /// Marks a worker finished.
    pub fn finish(&mut self, worker: usize) {
        if let Some(p) = self.progress.get_mut(worker) {
            *p = u64::MAX;
        }
    }

    /// Releases every interval all workers have moved past; `end` (the phase's length, once
    /// it is over) shortens the last interval to what was measured.
    pub fn release(&mut self, end: Option<Duration>) -> Vec<Sample> {
        let ready_below = self.progress.iter().copied().min().unwrap_or(u64::MAX);
        let mut out = Vec::new();
        self.pending.sort_by_key(|p| p.index);
        while let Some(first) = self.pending.first() {
            if first.index >= ready_below {
                break;
            }
            let p = self.pending.remove(0);
            // Intervals in which no request finished still count (zero throughput).
            while self.next_release < p.index {
                let idx = self.next_release;
                out.push(self.empty(idx));
                self.next_release += 1;
            }
            let start = self.interval * p.index as u32;
            let mut duration = self.interval;
            if let Some(end) = end {
                if start + duration > end {
                    duration = end.saturating_sub(start);
                }
            }
            let done = p.requests;
            out.push(Sample {
                index: p.index,
                start,
                duration,
                requests: p.requests,
                errors: p.errors,
                latency: p.latency,
                service: p.service,
                mean_lateness_ns: if done > 0 {
                    p.lateness_ns as f64 / done as f64
                } else {
                    0.0
                },
            });
            self.next_release = p.index + 1;
        }
        out
    }

    fn empty(&self, index: u64) -> Sample {
        Sample {
            index,
            start: self.interval * index as u32,
            duration: self.interval,
            requests: 0,
            errors: Vec::new(),
            latency: LatencyHistogram::new(),
            service: LatencyHistogram::new(),
            mean_lateness_ns: 0.0,
        }
    }
}
