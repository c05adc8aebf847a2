//! Per-statement records: what each of a workload's `[[run]]` statements did, kept beside
//! the phase's totals. A worker holds one entry per statement, indexed by the statement's
//! position in the plan (preallocated at the phase's start: recording a request only
//! indexes the array, it allocates nothing and takes no lock).
//!
//! Two granularities, chosen for cost: per sample interval, only counts and a latency sum
//! ([`StatementCounts`], a few words per statement, enough for the throughput's and the mean
//! latency's error margins); per phase, the full HDR histogram and errors by kind
//! ([`StatementTotals`], one histogram per statement per worker, not per interval).

use crate::stats::LatencyHistogram;

/// One statement's counts in one sample interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct StatementCounts {
    /// Requests completed (successes and errors).
    pub(crate) requests: u64,
    /// Errors.
    pub(crate) errors: u64,
    /// Result rows of its successful requests.
    pub(crate) rows: u64,
    /// Sum of its successes' latencies from the due time, ns (the interval's mean is this
    /// over `requests - errors`).
    pub(crate) latency_sum_ns: u64,
}

impl StatementCounts {
    /// Adds `other`'s counts.
    pub(crate) fn add(&mut self, other: &StatementCounts) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.rows += other.rows;
        self.latency_sum_ns = self.latency_sum_ns.saturating_add(other.latency_sum_ns);
    }

    /// Successful requests.
    pub(crate) fn successes(&self) -> u64 {
        self.requests.saturating_sub(self.errors)
    }

    /// The mean latency of the successes, ns (0 without any).
    pub(crate) fn mean_latency_ns(&self) -> f64 {
        match self.successes() {
            0 => 0.0,
            n => self.latency_sum_ns as f64 / n as f64,
        }
    }
}

/// Adds `part` to `total` entry by entry (statement `k` to statement `k`), growing `total`
/// when `part` has more entries.
pub(crate) fn add_counts(total: &mut Vec<StatementCounts>, part: &[StatementCounts]) {
    if total.len() < part.len() {
        total.resize(part.len(), StatementCounts::default());
    }
    for (t, p) in total.iter_mut().zip(part) {
        t.add(p);
    }
}

/// One statement's record over a whole phase.
#[derive(Debug, Clone, Default)]
pub struct StatementTotals {
    /// Requests completed (successes and errors).
    pub(crate) requests: u64,
    /// Result rows of its successful requests.
    pub(crate) rows: u64,
    /// Its successful conditional updates that were not applied (`[applied]` false).
    pub(crate) not_applied: u64,
    /// Errors by kind, each by its name (the report's key:
    /// [`ErrorKind::as_str`](super::error_kind::ErrorKind::as_str)).
    pub(crate) errors: Vec<(&'static str, u64)>,
    /// Latency from the due time of its successes.
    pub(crate) latency: LatencyHistogram,
}

impl StatementTotals {
    /// Counts one error of `kind` (allocates only for the first error of a kind).
    pub(crate) fn count_error(&mut self, kind: &'static str) {
        match self.errors.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => self.errors.push((kind, 1)),
        }
    }

    /// Errors of every kind.
    pub(crate) fn error_count(&self) -> u64 {
        self.errors.iter().map(|(_, n)| n).sum()
    }

    /// Adds everything `other` recorded (histograms added exactly).
    pub(crate) fn merge(&mut self, other: &StatementTotals) {
        self.requests += other.requests;
        self.rows += other.rows;
        self.not_applied += other.not_applied;
        for (kind, n) in &other.errors {
            match self.errors.iter_mut().find(|(k, _)| k == kind) {
                Some((_, m)) => *m += n,
                None => self.errors.push((kind, *n)),
            }
        }
        self.latency.merge(&other.latency);
    }
}

/// Merges `part` into `total` entry by entry (statement `k` into statement `k`), growing
/// `total` when `part` has more entries.
pub(crate) fn merge_totals(total: &mut Vec<StatementTotals>, part: &[StatementTotals]) {
    if total.len() < part.len() {
        total.resize_with(part.len(), StatementTotals::default);
    }
    for (t, p) in total.iter_mut().zip(part) {
        t.merge(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_totals_add_entry_by_entry() {
        let mut total = vec![StatementCounts {
            requests: 3,
            errors: 1,
            rows: 4,
            latency_sum_ns: 200,
        }];
        let part = [
            StatementCounts {
                requests: 2,
                errors: 0,
                rows: 1,
                latency_sum_ns: 100,
            },
            StatementCounts {
                requests: 5,
                errors: 5,
                rows: 0,
                latency_sum_ns: 0,
            },
        ];
        add_counts(&mut total, &part);
        assert_eq!(total.len(), 2);
        assert_eq!(
            (total[0].requests, total[0].errors, total[0].rows),
            (5, 1, 5)
        );
        assert_eq!(total[0].mean_latency_ns(), 75.0);
        assert_eq!(total[1].mean_latency_ns(), 0.0, "no success: no mean");

        let mut a = StatementTotals {
            requests: 2,
            ..StatementTotals::default()
        };
        a.count_error("timeout");
        a.latency.record(1000);
        let mut b = StatementTotals {
            requests: 3,
            rows: 7,
            ..StatementTotals::default()
        };
        b.count_error("timeout");
        b.count_error("overloaded");
        b.latency.record(3000);
        b.latency.record(5000);
        let mut merged = vec![a];
        merge_totals(&mut merged, &[b, StatementTotals::default()]);
        assert_eq!(merged.len(), 2);
        let m = &merged[0];
        assert_eq!((m.requests, m.rows, m.error_count()), (5, 7, 3));
        assert_eq!(m.errors, vec![("timeout", 2), ("overloaded", 1)]);
        assert_eq!(m.latency.count(), 3);
        assert!((4990..=5010).contains(&m.latency.max()), "{:?}", m.latency);
    }
}
