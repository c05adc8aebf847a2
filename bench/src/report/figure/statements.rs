//! The statements figure: what each run statement of the workload measured over a
//! backend's run; made from the statements' totals and the samples' per-statement figures,
//! and pooled in a merge statement by statement (its text is a section of its own,
//! STATEMENTS, in `render/text/statements.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::samples::SampleReport;
use crate::engine::statements::StatementTotals;
use crate::report::pool::{decode, margin, per_second, share, Part, PoolError};
use crate::report::summary::LatencySummary;
use crate::stats::LatencyHistogram;

/// A backend's run statements (`BackendReport`'s field, flattened: the name is the JSON's).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StatementFigures {
    /// Each run statement's own figures, in the workload's order (the totals above are
    /// theirs added up); empty in reports written before this field existed.
    #[serde(default)]
    pub statements: Vec<StatementReport>,
}

/// What one run statement of the workload measured over a backend's whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatementReport {
    /// Its name as the workload gives it (`[[run]] name`, else `run1`, `run2`, ...; a
    /// sequence's step: `order.insert`).
    pub name: String,
    /// Its CQL, parameters substituted.
    pub cql: String,
    /// What the entry stands for when it is not a statement's requests: `sequence` (a
    /// sequence's iterations: `requests` counts iterations, its latency is the whole
    /// sequence's, from the iteration's due time to its last step's end), or
    /// `logged_batch`, `unlogged_batch`, `counter_batch` (one BATCH request per iteration).
    /// Absent for a statement (a single one, or a step of a sequence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Conditional updates (`IF NOT EXISTS`, `IF ...`) that succeeded but were not applied
    /// (their `[applied]` column was false; not errors). Present only for a conditional
    /// statement (or a batch holding one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applied: Option<u64>,
    /// Its weight as the workload gives it.
    pub weight: f64,
    /// Its share of the workload's weights (0 to 1): the fraction of iterations that run it.
    pub weight_share: f64,
    /// Requests completed (successes and errors); the statements' requests add up to the
    /// backend's.
    pub requests: u64,
    /// Its requests' share of the backend's requests (0 to 1).
    pub request_share: f64,
    /// Requests per second (its requests over the measured time).
    pub throughput_rps: f64,
    /// Confidence half-width of its throughput (per-sample, autocorrelation-corrected, as
    /// the backend's).
    pub throughput_margin_rps: f64,
    /// Errors.
    pub errors: u64,
    /// Errors by kind.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Result rows of its successful requests, `null` when not counted.
    pub rows: Option<u64>,
    /// Latency from the due time of its successes (the mean's margin from its per-sample
    /// means).
    pub latency_ns: LatencySummary,
    /// Its latency histogram (HdrHistogram V2, compressed, base64).
    pub histogram: String,
}

/// A run statement as the report names it: from the workload, for the run's accumulation
/// (`report::accumulate::BackendRun`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatementInfo {
    /// Its name.
    pub name: String,
    /// Its CQL.
    pub cql: String,
    /// `sequence`, `*_batch`, or `None` for a statement (see [`StatementReport::kind`]).
    pub kind: Option<String>,
    /// A conditional statement: its not-applied answers are counted.
    pub conditional: bool,
    /// Its weight as the workload gives it.
    pub weight: f64,
    /// Its share of all the weights.
    pub weight_share: f64,
}

impl StatementInfo {
    /// Every entry of `workload`'s per-statement records, in order (see
    /// [`crate::workload::Workload::entries`]): a step or a batch has its `[[run]]`
    /// entry's weight.
    pub(crate) fn of_workload(workload: &crate::workload::Workload) -> Vec<Self> {
        use crate::workload::EntryKind;
        workload
            .entries()
            .into_iter()
            .map(|e| {
                let (weight, weight_share) = workload.weight(e.group).unwrap_or((0.0, 0.0));
                Self {
                    name: e.name,
                    cql: e.cql,
                    kind: match e.kind {
                        EntryKind::Statement => None,
                        EntryKind::Sequence => Some("sequence".to_owned()),
                        EntryKind::Batch(b) => Some(format!("{}_batch", b.name())),
                    },
                    conditional: e.conditional,
                    weight,
                    weight_share,
                }
            })
            .collect()
    }
}

/// The share of `all` requests of an entry of `kind` with `requests`: a sequence's
/// iterations are not requests, so it has none.
fn request_share(kind: Option<&str>, requests: u64, all: u64) -> f64 {
    if kind == Some("sequence") {
        0.0
    } else {
        share(requests, all)
    }
}

impl StatementReport {
    /// The report of statement `info` whose totals over the measured segments are `t`,
    /// of `requests` in all over `elapsed` seconds, with its margins from the backend's
    /// `samples` (statement `k`'s per-interval figures); its rows when `rows_counted`.
    fn of(
        k: usize,
        info: &StatementInfo,
        t: &StatementTotals,
        samples: &[SampleReport],
        elapsed: f64,
        requests: u64,
        rows_counted: bool,
    ) -> Self {
        let (throughputs, means) = statement_series(samples, k);
        StatementReport {
            name: info.name.clone(),
            cql: info.cql.clone(),
            kind: info.kind.clone(),
            not_applied: info.conditional.then_some(t.not_applied),
            weight: info.weight,
            weight_share: info.weight_share,
            requests: t.requests,
            request_share: request_share(info.kind.as_deref(), t.requests, requests),
            throughput_rps: per_second(t.requests, elapsed),
            throughput_margin_rps: margin(&throughputs),
            errors: t.error_count(),
            errors_by_kind: t
                .errors
                .iter()
                .map(|(k, n)| ((*k).to_owned(), *n))
                .collect(),
            rows: rows_counted.then_some(t.rows),
            latency_ns: LatencySummary::of(&t.latency, &means),
            histogram: t.latency.to_base64(),
        }
    }
}

impl StatementFigures {
    /// Each run statement's entry (`info`, in order) from its `totals` over the measured
    /// segments, of `requests` in all over `elapsed` seconds, with its margins from the
    /// backend's `samples` (which carry every statement's per-interval figures); their rows
    /// when `rows_counted`.
    pub(crate) fn of(
        info: &[StatementInfo],
        totals: &[StatementTotals],
        samples: &[SampleReport],
        elapsed: f64,
        requests: u64,
        rows_counted: bool,
    ) -> Self {
        let empty = StatementTotals::default();
        StatementFigures {
            statements: info
                .iter()
                .enumerate()
                .map(|(k, info)| {
                    let t = totals.get(k).unwrap_or(&empty);
                    StatementReport::of(k, info, t, samples, elapsed, requests, rows_counted)
                })
                .collect(),
        }
    }

    /// The machines' statements merged: statement `k` of each machine into statement `k`
    /// (histograms added exactly; requests, errors, errors by kind and rows summed;
    /// throughput the sum of the machines'; margins from the aligned `samples`); none when
    /// a machine has none or a different number of them (an older report). `requests` is
    /// the merged total.
    pub(crate) fn pooled(
        parts: &[Part<'_, Self>],
        samples: &[SampleReport],
        requests: u64,
    ) -> Result<Self, PoolError> {
        let Some((_, _, first)) = parts.first() else {
            return Ok(Self::default());
        };
        let n = first.statements.len();
        if n == 0 || parts.iter().any(|(_, _, b)| b.statements.len() != n) {
            return Ok(Self::default());
        }
        let mut out = Vec::with_capacity(n);
        for (k, head) in first.statements.iter().enumerate() {
            let each = || parts.iter().map(move |(_, _, b)| &b.statements[k]);
            let mut latency = LatencyHistogram::new();
            let mut errors_by_kind: BTreeMap<String, u64> = BTreeMap::new();
            for (file, _, b) in parts {
                let st = &b.statements[k];
                latency.merge(&decode(file, &st.histogram)?);
                for (kind, m) in &st.errors_by_kind {
                    *errors_by_kind.entry(kind.clone()).or_default() += m;
                }
            }
            let total: u64 = each().map(|st| st.requests).sum();
            let (throughputs, means) = statement_series(samples, k);
            out.push(StatementReport {
                name: head.name.clone(),
                cql: head.cql.clone(),
                kind: head.kind.clone(),
                not_applied: each().map(|st| st.not_applied).sum::<Option<u64>>(),
                weight: head.weight,
                weight_share: head.weight_share,
                requests: total,
                request_share: request_share(head.kind.as_deref(), total, requests),
                throughput_rps: each().map(|st| st.throughput_rps).sum(),
                throughput_margin_rps: margin(&throughputs),
                errors: each().map(|st| st.errors).sum(),
                errors_by_kind,
                rows: each().map(|st| st.rows).sum::<Option<u64>>(),
                latency_ns: LatencySummary::of(&latency, &means),
                histogram: latency.to_base64(),
            });
        }
        Ok(StatementFigures { statements: out })
    }
}

/// Statement `k`'s per-sample throughputs and mean latencies (the latter of the samples in
/// which it succeeded) over the full samples: a last sample under half an interval is
/// left out, as in the totals' margins.
pub(crate) fn statement_series(samples: &[SampleReport], k: usize) -> (Vec<f64>, Vec<f64>) {
    let half = samples.first().map_or(0.0, |s| s.duration_s) * 0.5;
    let mut throughputs = Vec::new();
    let mut means = Vec::new();
    for s in samples
        .iter()
        .filter(|s| s.duration_s > 0.0 && s.duration_s >= half)
    {
        let st = s.statements.get(k).cloned().unwrap_or_default();
        throughputs.push(st.throughput_rps);
        if st.requests > st.errors {
            means.push(st.latency_mean_ns);
        }
    }
    (throughputs, means)
}
