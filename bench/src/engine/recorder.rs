//! What one worker records while its fibers run ([`Recorder`]): the current sample
//! interval's counts and histograms, handed to the worker's sink once per interval, and the
//! phase's record per statement.

use std::time::{Duration, Instant};

use super::error_kind::ErrorKind;
use super::interval::{interval_end, IntervalSample};
use super::lateness::SendLateness;
use super::request::{Answer, RequestError};
use super::statements::{StatementCounts, StatementTotals};
use super::waterfall::Waterfall;
use crate::stats::LatencyHistogram;

/// Per-worker state shared by its fibers (a `RefCell`: fibers run on one thread, one at a
/// time, and never hold the borrow across an await).
pub(super) struct Recorder<F: FnMut(IntervalSample)> {
    pub(super) spec_worker: usize,
    pub(super) start: Instant,
    pub(super) interval: Duration,
    /// The last interval of a timed phase: answers that arrive after the phase's end (sent
    /// before it) are counted in it rather than in a sliver of an interval of their own.
    pub(super) last_index: Option<u64>,
    pub(super) current: u64,
    /// When the current interval ends (`None`: never, the last one of a timed phase): a
    /// request that ended before it belongs to it, found with one comparison.
    pub(super) current_end: Option<Instant>,
    /// A rate-limited phase: the service time (from the send) differs from the latency
    /// (from the due time) and is recorded on its own; otherwise they are equal, and the
    /// service histogram is the latency histogram, copied once per interval in `flush`.
    pub(super) paced: bool,
    pub(super) requests: u64,
    pub(super) rows: u64,
    pub(super) errors: Vec<(ErrorKind, u64)>,
    pub(super) latency: LatencyHistogram,
    pub(super) service: LatencyHistogram,
    pub(super) lateness_ns: u64,
    /// The current interval's counts per statement (one entry per plan statement).
    pub(super) statements: Vec<StatementCounts>,
    /// The current interval's latency per statement (one entry per plan statement): a
    /// request's latency is recorded here only, and added to `latency` and to its
    /// statement's phase histogram once per interval (in `flush`), so that a request costs
    /// one histogram record as without statements.
    pub(super) statement_latency: Vec<LatencyHistogram>,
    /// The phase's record per statement (one entry per plan statement).
    pub(super) statement_totals: Vec<StatementTotals>,
    /// Per entry: a sequence's (its latency is not a request's: not in the totals').
    pub(super) sequence: Vec<bool>,
    /// The first message of each error kind.
    pub(super) first_messages: Vec<(ErrorKind, String)>,
    /// `--waterfall`: the timed requests' stages over the phase (made at the first one).
    pub(super) waterfall: Option<Waterfall>,
    /// A paced phase being recorded: each iteration's send lateness over the whole phase.
    pub(super) send_lateness: Option<SendLateness>,
    pub(super) sink: F,
}

impl<F: FnMut(IntervalSample)> Recorder<F> {
    fn rotate_to(&mut self, index: u64) {
        while self.current < index {
            self.flush(false);
            self.current += 1;
        }
    }

    pub(super) fn flush(&mut self, last: bool) {
        for (k, (h, totals)) in self
            .statement_latency
            .iter_mut()
            .zip(self.statement_totals.iter_mut())
            .enumerate()
        {
            if !self.sequence.get(k).copied().unwrap_or(false) {
                self.latency.merge(h);
            }
            totals.latency.merge(h);
            h.clear();
        }
        let sample = IntervalSample {
            worker: self.spec_worker,
            index: self.current,
            requests: std::mem::take(&mut self.requests),
            rows: std::mem::take(&mut self.rows),
            errors: std::mem::take(&mut self.errors),
            // One fresh histogram per interval per worker (not per request); without a rate
            // the service times are the latencies (sent when due).
            service: if self.paced {
                std::mem::take(&mut self.service)
            } else {
                self.latency.clone()
            },
            latency: std::mem::take(&mut self.latency),
            lateness_ns: std::mem::take(&mut self.lateness_ns),
            // One copy per interval per worker (not per request); the counts restart at 0.
            statements: self.statements.clone(),
            last,
            // Filled by the sink, which knows the session (`phase::run_and_report`).
            nodes: Vec::new(),
            tablet_misroutes: None,
        };
        self.statements.fill(StatementCounts::default());
        (self.sink)(sample);
    }

    /// Moves to the interval `done` falls in: nothing to do while it is before the current
    /// interval's end (the usual case: one comparison per request).
    #[inline]
    fn rotate_for(&mut self, done: Instant) {
        if self.current_end.is_none_or(|end| done < end) {
            return;
        }
        let mut index = (done.saturating_duration_since(self.start).as_nanos()
            / self.interval.as_nanos().max(1)) as u64;
        if let Some(last) = self.last_index {
            index = index.min(last);
        }
        self.rotate_to(index);
        self.current_end = interval_end(self.start, self.interval, self.current, self.last_index);
    }

    /// Records one iteration of the sequence of entry `entry`: its latency from the
    /// iteration's due time to its last step's end and its steps' rows, or the kind of the
    /// error that stopped it. Not a request: the totals are its steps'.
    pub(super) fn record_sequence(
        &mut self,
        entry: usize,
        due: Instant,
        done: Instant,
        outcome: Result<u64, ErrorKind>,
    ) {
        self.rotate_for(done);
        let (Some(counts), Some(totals), Some(h)) = (
            self.statements.get_mut(entry),
            self.statement_totals.get_mut(entry),
            self.statement_latency.get_mut(entry),
        ) else {
            return;
        };
        counts.requests += 1;
        totals.requests += 1;
        match outcome {
            Ok(rows) => {
                let latency = done.saturating_duration_since(due).as_nanos() as u64;
                counts.rows += rows;
                counts.latency_sum_ns = counts.latency_sum_ns.saturating_add(latency);
                totals.rows += rows;
                h.record(latency);
            }
            Err(kind) => {
                counts.errors += 1;
                totals.count_error(kind.as_str());
            }
        }
    }

    /// Records how late an iteration due at `due` and released at `release` was sent
    /// (`sent`): once per iteration, at its first request (a sequence's later steps are due
    /// when the step before ends).
    #[inline]
    pub(super) fn record_send(&mut self, due: Instant, release: Instant, sent: Instant) {
        if let Some(l) = &mut self.send_lateness {
            l.record(due, release, sent);
        }
    }

    /// Records the outcome of a request of entry `statement` of the per-statement records.
    pub(super) fn record(
        &mut self,
        statement: usize,
        due: Instant,
        sent: Instant,
        done: Instant,
        result: Result<Answer, RequestError>,
    ) {
        self.rotate_for(done);
        self.requests += 1;
        if self.paced {
            self.lateness_ns += sent.saturating_duration_since(due).as_nanos() as u64;
        }
        // Both hold one entry per plan statement (none when not recording), and `statement`
        // indexes the plan.
        let mut own = self
            .statements
            .get_mut(statement)
            .zip(self.statement_totals.get_mut(statement));
        if let Some((counts, totals)) = own.as_mut() {
            counts.requests += 1;
            totals.requests += 1;
        }
        match result {
            Ok(Answer {
                rows,
                not_applied,
                stages,
            }) => {
                let latency = done.saturating_duration_since(due).as_nanos() as u64;
                if let Some(d) = stages {
                    // One request in `--waterfall` N: its stages (the histograms made once).
                    self.waterfall
                        .get_or_insert_with(Waterfall::default)
                        .record(
                            sent.saturating_duration_since(due).as_nanos() as u64,
                            done.saturating_duration_since(sent).as_nanos() as u64,
                            &d,
                        );
                }
                self.rows += rows;
                if self.paced {
                    self.service
                        .record(done.saturating_duration_since(sent).as_nanos() as u64);
                }
                // Into the statement's interval histogram, which `flush` adds to the
                // totals' (the totals' own when the statement has no entry).
                match (own, self.statement_latency.get_mut(statement)) {
                    (Some((counts, totals)), Some(h)) => {
                        counts.rows += rows;
                        counts.latency_sum_ns = counts.latency_sum_ns.saturating_add(latency);
                        totals.rows += rows;
                        totals.not_applied += u64::from(not_applied);
                        h.record(latency);
                    }
                    _ => self.latency.record(latency),
                }
            }
            Err(e) => {
                if let Some((counts, totals)) = own {
                    counts.errors += 1;
                    totals.count_error(e.kind.as_str());
                }
                match self.errors.iter_mut().find(|(k, _)| *k == e.kind) {
                    Some((_, n)) => *n += 1,
                    None => self.errors.push((e.kind, 1)),
                }
                if !self.first_messages.iter().any(|(k, _)| *k == e.kind) {
                    self.first_messages.push((e.kind, e.message));
                }
            }
        }
    }
}
