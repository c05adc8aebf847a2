//! The coordinator's side: workers' interval samples merged into one sample per interval,
//! released as soon as every worker has moved past it.

use std::sync::Arc;
use std::time::Duration;

use crate::stats::LatencyHistogram;

use super::schedule::RateSchedule;

use super::error_kind::ErrorKind;
use super::interval::{interval_ending_at, IntervalSample};
use super::statements::{add_counts, StatementCounts};

/// All workers' results for one sample interval.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    /// Interval number since the phase start.
    pub(crate) index: u64,
    /// Offset of the interval's start from the phase start.
    pub(crate) start: Duration,
    /// The interval's length (the last one may be shorter).
    pub(crate) duration: Duration,
    /// Requests completed in the interval.
    pub(crate) requests: u64,
    /// Result rows of the interval's successful requests.
    pub(crate) rows: u64,
    /// Errors by kind, each by its name ([`ErrorKind::as_str`]: the report's key, the
    /// engine's output being where the report takes over).
    pub(crate) errors: Vec<(&'static str, u64)>,
    /// Latency from the due time, successes.
    pub(crate) latency: LatencyHistogram,
    /// Service time, successes.
    pub(crate) service: LatencyHistogram,
    /// Mean lateness of sends after their due time, ns.
    pub(crate) mean_lateness_ns: f64,
    /// Per statement of the plan (by index): its counts in the interval (empty when
    /// nothing was recorded in it).
    pub(crate) statements: Vec<StatementCounts>,
    /// Requests sent to each node (address), all workers, sorted by address (empty for a
    /// backend that does not count them).
    pub(crate) nodes: Vec<(String, u64)>,
    /// Tablet misroutes, all workers (ScyllaDB; `None` for a backend that does not count
    /// them).
    pub(crate) tablet_misroutes: Option<u64>,
    /// The rate schedule's mean over the interval, all workers, requests per second
    /// (`None`: no rate limit).
    pub(crate) target_rps: Option<f64>,
}

impl Sample {
    /// Requests per second in the interval.
    pub(crate) fn throughput(&self) -> f64 {
        let secs = self.duration.as_secs_f64();
        if secs > 0.0 {
            self.requests as f64 / secs
        } else {
            0.0
        }
    }

    /// Errors in the interval.
    pub(crate) fn error_count(&self) -> u64 {
        self.errors.iter().map(|(_, n)| n).sum()
    }
}

struct Pending {
    index: u64,
    requests: u64,
    rows: u64,
    errors: Vec<(ErrorKind, u64)>,
    latency: LatencyHistogram,
    service: LatencyHistogram,
    lateness_ns: u64,
    statements: Vec<StatementCounts>,
    nodes: Vec<(String, u64)>,
    tablet_misroutes: Option<u64>,
}

/// Merges interval samples from `workers` workers.
pub(crate) struct Collector {
    interval: Duration,
    /// The last interval of a timed phase, into which workers count answers that arrive
    /// after the phase's end (see `Recorder::last_index`); `None` for a counted phase.
    last_index: Option<u64>,
    /// Per worker: the next interval it has not reported yet; `u64::MAX` once finished.
    progress: Vec<u64>,
    pending: Vec<Pending>,
    next_release: u64,
    /// The phase's rate schedule: each released sample's target rate.
    schedule: Option<Arc<RateSchedule>>,
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
    /// A collector for `workers` workers and intervals of `interval`; `last_index` is the
    /// timed phase's last interval ([`super::interval::last_interval`]).
    pub(crate) fn new(workers: usize, interval: Duration, last_index: Option<u64>) -> Self {
        Self {
            interval,
            last_index,
            progress: vec![0; workers],
            pending: Vec::new(),
            next_release: 0,
            schedule: None,
        }
    }

    /// The phase's rate schedule, whose mean over each sample's interval is its
    /// `target_rps`.
    pub(crate) fn with_schedule(mut self, schedule: Option<Arc<RateSchedule>>) -> Self {
        self.schedule = schedule;
        self
    }

    /// Takes one worker's sample; returns the merged samples it completes, in order.
    pub(crate) fn add(&mut self, s: IntervalSample) -> Vec<Sample> {
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
                    rows: 0,
                    errors: Vec::new(),
                    latency: LatencyHistogram::new(),
                    service: LatencyHistogram::new(),
                    lateness_ns: 0,
                    statements: Vec::new(),
                    nodes: Vec::new(),
                    tablet_misroutes: None,
                });
                self.pending.len() - 1
            }
        };
        let p = &mut self.pending[pos];
        p.requests += s.requests;
        p.rows += s.rows;
        p.lateness_ns += s.lateness_ns;
        for (kind, n) in s.errors {
            match p.errors.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, m)) => *m += n,
                None => p.errors.push((kind, n)),
            }
        }
        p.latency.merge(&s.latency);
        p.service.merge(&s.service);
        add_counts(&mut p.statements, &s.statements);
        for (node, n) in s.nodes {
            match p.nodes.iter_mut().find(|(k, _)| *k == node) {
                Some((_, m)) => *m += n,
                None => p.nodes.push((node, n)),
            }
        }
        if let Some(n) = s.tablet_misroutes {
            *p.tablet_misroutes.get_or_insert(0) += n;
        }
        self.release(None)
    }

    /// Marks a worker finished.
    pub(crate) fn finish(&mut self, worker: usize) {
        if let Some(p) = self.progress.get_mut(worker) {
            *p = u64::MAX;
        }
    }

    /// Releases every interval all workers have moved past. `end` (the phase's length, once
    /// it is over and every worker has finished) closes the phase: intervals in which
    /// nothing finished up to the end are released empty, and the last interval runs from
    /// its start to `end`: shorter than the others when the phase was cut short, longer
    /// when answers sent before a timed phase's end arrived after it (they are counted in
    /// it, so its throughput must be over the time they took).
    pub(crate) fn release(&mut self, end: Option<Duration>) -> Vec<Sample> {
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
            let done = p.requests;
            let mut nodes = p.nodes;
            nodes.sort();
            out.push(Sample {
                index: p.index,
                start: self.interval * p.index as u32,
                duration: self.interval,
                requests: p.requests,
                rows: p.rows,
                errors: p.errors.iter().map(|(k, n)| (k.as_str(), *n)).collect(),
                latency: p.latency,
                service: p.service,
                mean_lateness_ns: if done > 0 {
                    p.lateness_ns as f64 / done as f64
                } else {
                    0.0
                },
                statements: p.statements,
                nodes,
                tablet_misroutes: p.tablet_misroutes,
                target_rps: None,
            });
            self.next_release = p.index + 1;
        }
        if let Some(end) = end.filter(|e| !e.is_zero() && ready_below == u64::MAX) {
            self.close(end, &mut out);
        }
        // Once each interval has its final length (the last one's is set by `close`).
        if let Some(schedule) = &self.schedule {
            for s in &mut out {
                let t0 = s.start.as_secs_f64();
                s.target_rps = Some(schedule.mean_rate(t0, t0 + s.duration.as_secs_f64()));
            }
        }
        out
    }

    /// Pads `out` with empty intervals up to the one `end` falls in (or the timed phase's
    /// last) and stretches or cuts that one to end at `end`.
    fn close(&mut self, end: Duration, out: &mut Vec<Sample>) {
        let mut last = interval_ending_at(end, self.interval);
        if let Some(cap) = self.last_index {
            last = last.min(cap);
        }
        while self.next_release <= last {
            let idx = self.next_release;
            out.push(self.empty(idx));
            self.next_release += 1;
        }
        if let Some(s) = out.last_mut() {
            if s.start < end {
                s.duration = end - s.start;
            }
        }
    }

    fn empty(&self, index: u64) -> Sample {
        Sample {
            index,
            start: self.interval * index as u32,
            duration: self.interval,
            requests: 0,
            rows: 0,
            errors: Vec::new(),
            latency: LatencyHistogram::new(),
            service: LatencyHistogram::new(),
            mean_lateness_ns: 0.0,
            statements: Vec::new(),
            nodes: Vec::new(),
            tablet_misroutes: None,
            target_rps: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(worker: usize, index: u64, requests: u64, last: bool) -> IntervalSample {
        IntervalSample {
            worker,
            index,
            requests,
            rows: 2 * requests,
            errors: Vec::new(),
            latency: LatencyHistogram::new(),
            service: LatencyHistogram::new(),
            lateness_ns: 0,
            statements: vec![StatementCounts {
                requests,
                ..StatementCounts::default()
            }],
            last,
            nodes: Vec::new(),
            tablet_misroutes: None,
        }
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// Feeds `indices` (requests each) from one worker, the last one marked last, then
    /// ends the phase at `end`.
    fn phase(last_index: Option<u64>, indices: &[(u64, u64)], end: Duration) -> Vec<Sample> {
        let mut c = Collector::new(1, MS(100), last_index);
        let mut out = Vec::new();
        for (k, &(index, requests)) in indices.iter().enumerate() {
            out.extend(c.add(sample(0, index, requests, k + 1 == indices.len())));
        }
        c.finish(0);
        out.extend(c.release(Some(end)));
        out
    }

    #[test]
    fn answers_after_a_timed_end_stretch_the_last_interval() {
        // 1 s in 100 ms intervals; the last interval also holds 5 answers that arrived in
        // the 50 ms after the end: its rate is over 150 ms, not 100 ms.
        let steady: Vec<(u64, u64)> = (0..10).map(|i| (i, if i == 9 { 15 } else { 10 })).collect();
        let out = phase(Some(9), &steady, MS(1050));
        assert_eq!(out.len(), 10);
        assert!(out[..9].iter().all(|s| s.duration == MS(100)));
        assert_eq!(out[9].duration, MS(150));
        assert!((out[9].throughput() - 100.0).abs() < 1e-9);
    }

    #[test]
    fn workers_requests_per_node_add_up_in_their_interval() {
        let mut c = Collector::new(2, MS(100), None);
        let with = |worker, index, nodes: &[(&str, u64)]| IntervalSample {
            nodes: nodes.iter().map(|(a, n)| ((*a).to_owned(), *n)).collect(),
            ..sample(worker, index, 1, false)
        };
        assert!(c.add(with(0, 0, &[("b", 2), ("a", 1)])).is_empty());
        let out = c.add(with(1, 0, &[("a", 3), ("c", 4)]));
        assert_eq!(out.len(), 1);
        let want: Vec<(String, u64)> = vec![("a".into(), 4), ("b".into(), 2), ("c".into(), 4)];
        assert_eq!(out[0].nodes, want, "summed per node, sorted by address");
    }

    #[test]
    fn workers_tablet_misroutes_add_up_and_stay_none_when_uncounted() {
        let mut c = Collector::new(2, MS(100), None);
        let with = |worker, index, misroutes| IntervalSample {
            tablet_misroutes: misroutes,
            ..sample(worker, index, 1, false)
        };
        assert!(c.add(with(0, 0, Some(3))).is_empty());
        let out = c.add(with(1, 0, Some(4)));
        assert_eq!(out[0].tablet_misroutes, Some(7));
        assert!(c.add(with(0, 1, None)).is_empty());
        let out = c.add(with(1, 1, None));
        assert_eq!(out[0].tablet_misroutes, None, "not counted: null, not 0");
    }

    #[test]
    fn a_phase_cut_short_shortens_its_last_interval() {
        let out = phase(None, &[(0, 10), (1, 10), (2, 5)], MS(250));
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].duration, MS(50));
        assert!((out[2].throughput() - 100.0).abs() < 1e-9);
    }

    #[test]
    fn quiet_intervals_up_to_the_end_are_released_empty() {
        // Answers stopped after 300 ms (a node went away); the phase ended at 800 ms.
        let out = phase(Some(9), &[(0, 10), (1, 10), (2, 10)], MS(800));
        assert_eq!(out.len(), 8);
        assert!(out[3..].iter().all(|s| s.requests == 0));
        assert!(out.iter().all(|s| s.duration == MS(100)));
        assert_eq!(
            out.iter().map(|s| s.index).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>()
        );
    }

    #[test]
    fn each_sample_carries_the_schedules_mean_rate_over_its_interval() {
        // 1k to 2k req/s over 1 s; the phase ended at 250 ms, its last interval cut short.
        let schedule = Arc::new(RateSchedule::parse("ramp:1k..2k/1s").unwrap());
        let mut c = Collector::new(1, MS(100), None).with_schedule(Some(schedule));
        let mut out = c.add(sample(0, 0, 100, false));
        out.extend(c.add(sample(0, 1, 110, false)));
        out.extend(c.add(sample(0, 2, 60, true)));
        c.finish(0);
        out.extend(c.release(Some(MS(250))));
        let targets: Vec<f64> = out.iter().map(|s| s.target_rps.unwrap()).collect();
        for (got, want) in targets.iter().zip([1050.0, 1150.0, 1225.0]) {
            assert!((got - want).abs() < 1e-6, "{targets:?}");
        }
        // Without a schedule, none.
        let out = phase(None, &[(0, 10)], MS(100));
        assert_eq!(out[0].target_rps, None);
    }

    #[test]
    fn two_workers_merge_and_nothing_is_released_before_both_moved_on() {
        let mut c = Collector::new(2, MS(100), Some(1));
        assert!(c.add(sample(0, 0, 3, false)).is_empty());
        assert!(c.add(sample(0, 1, 3, true)).is_empty());
        let first = c.add(sample(1, 0, 4, false));
        assert_eq!(first.len(), 1);
        assert_eq!((first[0].requests, first[0].rows), (7, 14));
        assert_eq!(first[0].statements[0].requests, 7, "per statement too");
        assert!(c.add(sample(1, 1, 4, true)).is_empty());
        c.finish(0);
        c.finish(1);
        let rest = c.release(Some(MS(200)));
        assert_eq!(rest.len(), 1);
        assert_eq!((rest[0].requests, rest[0].duration), (7, MS(100)));
    }
}
