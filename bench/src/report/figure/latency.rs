//! The latency figure: a backend's latency from the due time (coordinated-omission
//! corrected), its service time from the actual send, and how late sends left (paced runs);
//! computed from the run's histograms, pooled in a merge, and its LATENCY rows.

use serde::{Deserialize, Serialize};

use crate::engine::lateness::SendLateness;
use crate::report::cell::{Row, SampleFigure, Value, TESTED_PERCENTILES};
use crate::report::lateness::LatenessReport;
use crate::report::pool::{pooled, Part};
use crate::report::summary::LatencySummary;
use crate::stats::LatencyHistogram;

/// A backend's latency (`BackendReport`'s fields, flattened: the names are the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyFigures {
    /// Latency from the due time (coordinated-omission corrected).
    pub latency_ns: LatencySummary,
    /// Service time from the actual send.
    pub service_time_ns: LatencySummary,
    /// Mean lateness of sends after their due time, ns (rate-limited runs).
    pub mean_send_lateness_ns: f64,
    /// How late each iteration was sent (rate-limited runs): from its due time, and from
    /// its release on the grid (`config.release_grid_s`); `null` without a rate.
    #[serde(default)]
    pub send_lateness: Option<LatenessReport>,
}

/// Nanoseconds in milliseconds, as the LATENCY table writes them.
fn ms(ns: f64) -> f64 {
    ns / 1e6
}

impl LatencyFigures {
    /// The figure of the run's `latency` and `service` histograms (the means' margins from
    /// the full samples' `means` and `service_means`), the sends' mean lateness
    /// (`lateness_ns` over `sends`) and their lateness histograms, if paced.
    pub(crate) fn of(
        latency: &LatencyHistogram,
        means: &[f64],
        service: &LatencyHistogram,
        service_means: &[f64],
        (lateness_ns, sends): (f64, u64),
        send_lateness: Option<&SendLateness>,
    ) -> Self {
        LatencyFigures {
            latency_ns: LatencySummary::of(latency, means),
            service_time_ns: LatencySummary::of(service, service_means),
            mean_send_lateness_ns: if sends > 0 {
                lateness_ns / sends as f64
            } else {
                0.0
            },
            send_lateness: send_lateness.and_then(LatenessReport::of),
        }
    }

    /// The machines' figures combined: the summaries of their summed `latency` and `service`
    /// histograms (the mean's margin from the aligned samples' `means`; the service time's
    /// has none), the mean lateness pooled by requests, and the summed lateness histograms
    /// (`None` unless every machine had them).
    pub(crate) fn pooled(
        parts: &[Part<'_, Self>],
        latency: &LatencyHistogram,
        means: &[f64],
        service: &LatencyHistogram,
        lateness: Option<&SendLateness>,
    ) -> Self {
        LatencyFigures {
            latency_ns: LatencySummary::of(latency, means),
            service_time_ns: LatencySummary::of(service, &[]),
            mean_send_lateness_ns: pooled(parts, |b| b.mean_send_lateness_ns),
            send_lateness: lateness.and_then(LatenessReport::of),
        }
    }

    /// Its LATENCY rows, milliseconds: the mean and the percentiles (those of
    /// [`TESTED_PERCENTILES`] tested on the samples'), the service time's median and 99th
    /// percentile, and, with a rate, the sends' lateness.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        type Pct = fn(&LatencySummary) -> u64;
        let percentiles: [(&str, Pct); 10] = [
            ("min", |l| l.min),
            ("25", |l| l.p25),
            ("50", |l| l.p50),
            ("75", |l| l.p75),
            ("90", |l| l.p90),
            ("95", |l| l.p95),
            ("99", |l| l.p99),
            ("99.9", |l| l.p999),
            ("99.99", |l| l.p9999),
            ("max", |l| l.max),
        ];
        let mut rows = vec![Row::new("mean", "", 3, |b: &Self| {
            Value::Margin(ms(b.latency_ns.mean), ms(b.latency_ns.mean_margin))
        })
        .tested(SampleFigure::MeanLatency)];
        for (name, get) in percentiles {
            let row = Row::new(name, "", 3, move |b: &Self| {
                Value::Num(ms(get(&b.latency_ns) as f64))
            })
            .change();
            let tested = name
                .parse::<f64>()
                .ok()
                .and_then(|p| TESTED_PERCENTILES.iter().position(|&t| t == p));
            rows.push(match tested {
                Some(k) => row.tested(SampleFigure::Percentile(k)),
                None => row,
            });
        }
        rows.push(
            Row::new("service time p50", "", 3, |b: &Self| {
                Value::Num(ms(b.service_time_ns.p50 as f64))
            })
            .change(),
        );
        rows.push(
            Row::new("service time p99", "", 3, |b: &Self| {
                Value::Num(ms(b.service_time_ns.p99 as f64))
            })
            .change(),
        );
        // With a rate: how late sends left after their due time (the release grid and the
        // backend's own lateness beyond it, already inside the latency above), and after
        // their release alone.
        type Pick = fn(&LatenessReport) -> u64;
        let lateness: [(&str, Pick); 3] = [
            ("send lateness p50", |l| l.from_due_ns.p50),
            ("send lateness p99", |l| l.from_due_ns.p99),
            ("  after release p50", |l| l.from_release_ns.p50),
        ];
        for (label, pick) in lateness {
            rows.push(
                Row::new(label, "", 3, move |b: &Self| {
                    Value::or_missing(b.send_lateness.as_ref().map(|l| ms(pick(l) as f64)))
                })
                .shown_if(|b| b.send_lateness.is_some()),
            );
        }
        rows
    }
}
