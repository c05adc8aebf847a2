//! The waterfall figure (`--waterfall N`): the latency of the requests doppio timed, stage
//! by stage; computed from the measured segments' stages, left out of a merge, and its
//! WATERFALL rows and notes (the end-to-end row, which falls back on the entry's latency,
//! over the entry through the two parts it reads).

use serde::{Deserialize, Serialize};

use super::latency::LatencyFigures;
use crate::report::cell::{Row, Value};

/// The timed requests' latency split into stages ([`crate::engine::waterfall`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaterfallReport {
    /// Requests timed.
    pub timed: u64,
    /// Each stage in the order a request passes them; their means add up to
    /// `end_to_end.mean_ns`.
    pub stages: Vec<StageReport>,
    /// The timed requests' latency (due time to end).
    pub end_to_end: StageReport,
}

/// One stage's (or the whole way's) figures over the timed requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageReport {
    /// Its name (`schedule`, `bench`, `queue`, `flush`, `wire`, `frame`, `wake`, `decode`,
    /// or `end_to_end`).
    pub stage: String,
    /// Exact mean, nanoseconds.
    pub mean_ns: f64,
    /// Median, nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile, nanoseconds.
    pub p99_ns: u64,
    /// Maximum, nanoseconds.
    pub max_ns: u64,
    /// Its histogram (HdrHistogram V2, compressed, base64; values of 0 recorded as 1 ns).
    pub histogram: String,
}

impl WaterfallReport {
    /// The report of `w`.
    pub(crate) fn of(w: &crate::engine::waterfall::Waterfall) -> Self {
        let stage = |name: &str, h: &crate::stats::LatencyHistogram, mean: f64| StageReport {
            stage: name.to_owned(),
            mean_ns: mean,
            p50_ns: h.value_at_percentile(50.0),
            p99_ns: h.value_at_percentile(99.0),
            max_ns: h.max(),
            histogram: h.to_base64(),
        };
        let means = w.means_ns();
        WaterfallReport {
            timed: w.timed,
            stages: crate::engine::waterfall::STAGES
                .iter()
                .zip(&w.stages)
                .zip(means)
                .map(|((name, h), mean)| stage(name, h, mean))
                .collect(),
            end_to_end: stage("end_to_end", &w.end_to_end, w.end_to_end_mean_ns()),
        }
    }
}

impl WaterfallReport {
    /// In a merge: none. Per machine: not merged (each report keeps its own).
    pub(crate) fn pooled() -> Option<Self> {
        None
    }

    /// WATERFALL's rows before the end to end: each stage's mean over the timed requests.
    pub(crate) fn stage_rows<'a>() -> Vec<Row<'a, Option<Self>>> {
        crate::engine::waterfall::STAGES
            .iter()
            .enumerate()
            .map(|(k, name)| {
                Row::new(format!("  {name}"), "", 3, move |w: &Option<Self>| {
                    w.as_ref()
                        .and_then(|w| w.stages.get(k))
                        .map_or(Value::Missing, |s| Value::Num(s.mean_ns / 1e3))
                })
                .change()
            })
            .collect()
    }

    /// WATERFALL's end-to-end row over a backend's entry `E`, whose waterfall and latency
    /// figures `waterfall` and `latency` pick: the timed requests' mean latency (which the
    /// stages add up to), or the entry's mean latency where none was timed (a backend
    /// without stage hooks, scylla).
    pub(crate) fn end_to_end_row<'a, E: 'a>(
        waterfall: fn(&E) -> &Option<Self>,
        latency: fn(&E) -> &LatencyFigures,
    ) -> Row<'a, E> {
        Row::new("end to end", "", 3, move |b: &E| {
            let mean_ns = waterfall(b)
                .as_ref()
                .map_or(latency(b).latency_ns.mean, |w| w.end_to_end.mean_ns);
            Value::Num(mean_ns / 1e3)
        })
        .change()
    }

    /// WATERFALL's rows after the end to end: the timed requests' count.
    pub(crate) fn count_rows<'a>() -> Vec<Row<'a, Option<Self>>> {
        vec![Row::new("timed requests", "", 0, |w: &Option<Self>| {
            w.as_ref().map_or(Value::Missing, |w| Value::Count(w.timed))
        })]
    }

    /// Under WATERFALL, as `(prefix, text)` to wrap: what the stages are, and which of the
    /// `columns` (label, waterfall) have none.
    pub(crate) fn notes(columns: &[(&str, Option<&Self>)]) -> Vec<(&'static str, String)> {
        let mut notes = vec![(
            "  ",
            "stages of the timed requests (one in --waterfall N): schedule (due to send), bench \
             (its own work in the service time), queue (driver call to the write buffer), flush \
             (to the runtime), wire (to the read with the answer), frame (to its slot), wake (to \
             the caller's task), decode (to the call's return); their means add up to end to end"
                .to_owned(),
        )];
        let without: Vec<&str> = columns
            .iter()
            .filter(|(_, w)| w.is_none())
            .map(|(l, _)| *l)
            .collect();
        if !without.is_empty() {
            notes.push((
                "  ",
                format!(
                    "{}: no stage hooks in this driver: end to end (all requests' mean latency) only",
                    without.join(", ")
                ),
            ));
        }
        notes
    }
}
