//! The samples figure: every sample interval of a backend's run and the whole run's latency
//! and service-time histograms; made from the measured segments' samples and histograms,
//! and pooled in a merge by aligning the machines' samples on one wall-clock grid (no text
//! rows: LOG, the p-values and the plots read the samples).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::spill::StoredSample;
use crate::engine::statements::StatementCounts;
use crate::report::pool::{decode, per_second, Part, PoolError};
use crate::stats::LatencyHistogram;

/// A backend's samples and histograms (`BackendReport`'s fields, flattened: the names are
/// the JSON's).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SampleFigures {
    /// Every sample.
    pub samples: Vec<SampleReport>,
    /// The whole run's latency histogram (HdrHistogram V2, compressed, base64).
    pub histogram: String,
    /// The whole run's service-time histogram.
    pub service_histogram: String,
}

/// One sample interval of a backend's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SampleReport {
    /// Segment (A B A B alternation) the sample belongs to.
    pub segment: usize,
    /// Offset of its start within the segment, seconds.
    pub start_s: f64,
    /// Length, seconds.
    pub duration_s: f64,
    /// Requests completed.
    pub requests: u64,
    /// Errors.
    pub errors: u64,
    /// Requests per second.
    pub throughput_rps: f64,
    /// Mean latency, ns.
    pub latency_mean_ns: f64,
    /// Median latency, ns.
    pub latency_p50_ns: u64,
    /// 99th percentile latency, ns.
    pub latency_p99_ns: u64,
    /// The interval's latency histogram (HdrHistogram V2, compressed, base64).
    pub histogram: String,
    /// Wall-clock start of the interval, seconds since the Unix epoch (what `doppio merge`
    /// aligns machines' samples by); `null` in reports written before this field existed.
    #[serde(default)]
    pub start_unix_s: Option<f64>,
    /// Per run statement, in the workload's order: its figures in this interval (empty in
    /// reports written before this field existed).
    #[serde(default)]
    pub statements: Vec<SampleStatement>,
    /// Requests the driver sent to each node (address) in this interval, retries included:
    /// how routing followed the cluster over the run (doppio's backends; absent for
    /// scylla-rust-driver, which does not count them, and in older reports).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests_by_node: BTreeMap<String, u64>,
    /// Requests in this interval that reached a ScyllaDB node or shard holding no replica
    /// of their tablet (doppio's backends: the warm-up curve of its tablet routing; absent
    /// for scylla-rust-driver, which does not count them, and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tablet_misroutes: Option<u64>,
    /// The rate schedule's mean over the interval, all workers, requests per second:
    /// what `throughput_rps` was asked to be (`null` without a rate limit, and in reports
    /// written before this field existed).
    #[serde(default)]
    pub target_rps: Option<f64>,
}

/// One run statement's figures in one sample interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleStatement {
    /// Requests completed.
    pub requests: u64,
    /// Errors.
    pub errors: u64,
    /// Requests per second.
    pub throughput_rps: f64,
    /// Mean latency of its successes, ns (0 without any).
    pub latency_mean_ns: f64,
}

impl SampleStatement {
    /// A statement's figures `c` in an interval of `duration_s` seconds.
    pub(crate) fn of(c: &StatementCounts, duration_s: f64) -> Self {
        SampleStatement {
            requests: c.requests,
            errors: c.errors,
            throughput_rps: per_second(c.requests, duration_s),
            latency_mean_ns: c.mean_latency_ns(),
        }
    }
}

impl SampleReport {
    /// The report of the stored sample `s` of `segment`, which started at `segment_start`
    /// (Unix seconds, when known), with the figures of the workload's `statements` run
    /// statements (0 for those the sample lacks).
    pub(crate) fn of(
        s: &StoredSample,
        segment: usize,
        segment_start: Option<f64>,
        statements: usize,
    ) -> Self {
        SampleReport {
            segment,
            start_s: s.start.as_secs_f64(),
            duration_s: s.duration.as_secs_f64(),
            requests: s.requests,
            errors: s.error_count(),
            throughput_rps: s.throughput(),
            latency_mean_ns: s.latency.mean,
            latency_p50_ns: s.latency.p50,
            latency_p99_ns: s.latency.p99,
            histogram: s.latency.base64.clone(),
            start_unix_s: segment_start.map(|t| t + s.start.as_secs_f64()),
            statements: (0..statements)
                .map(|k| {
                    let c = s.statements.get(k).copied().unwrap_or_default();
                    SampleStatement::of(&c, s.duration.as_secs_f64())
                })
                .collect(),
            requests_by_node: s.requests_by_node.clone(),
            tablet_misroutes: s.tablet_misroutes,
            target_rps: s.target_rps,
        }
    }
}

/// One aligned interval of the merged samples, while it is being summed.
#[derive(Default)]
struct Bin {
    requests: u64,
    errors: u64,
    throughput_rps: f64,
    duration_s: f64,
    latency: LatencyHistogram,
    statements: Vec<StatementBin>,
    requests_by_node: BTreeMap<String, u64>,
    /// The machines' tablet misroutes summed (`None` when none counted them).
    tablet_misroutes: Option<u64>,
    /// The machines' target rates summed (`None` when none had one).
    target_rps: Option<f64>,
}

/// One statement's figures in an aligned interval, while they are being summed.
#[derive(Default, Clone, Copy)]
struct StatementBin {
    requests: u64,
    errors: u64,
    throughput_rps: f64,
    /// Sum over the machines of their mean latency times their successes, ns.
    latency_sum_ns: f64,
}

impl Bin {
    /// Adds a machine's sample `s`, whose histogram is `latency`.
    fn add(&mut self, s: &SampleReport, latency: &LatencyHistogram) {
        self.requests += s.requests;
        self.errors += s.errors;
        self.throughput_rps += s.throughput_rps;
        if let Some(t) = s.target_rps {
            *self.target_rps.get_or_insert(0.0) += t;
        }
        self.duration_s = self.duration_s.max(s.duration_s);
        self.latency.merge(latency);
        for (node, n) in &s.requests_by_node {
            *self.requests_by_node.entry(node.clone()).or_default() += n;
        }
        if let Some(n) = s.tablet_misroutes {
            *self.tablet_misroutes.get_or_insert(0) += n;
        }
        if self.statements.len() < s.statements.len() {
            self.statements
                .resize(s.statements.len(), StatementBin::default());
        }
        for (b, st) in self.statements.iter_mut().zip(&s.statements) {
            b.requests += st.requests;
            b.errors += st.errors;
            b.throughput_rps += st.throughput_rps;
            b.latency_sum_ns += st.latency_mean_ns * st.requests.saturating_sub(st.errors) as f64;
        }
    }

    /// The merged sample of `segment` starting `start_s` into it (at `start_unix_s`).
    fn sample(self, segment: usize, start_s: f64, start_unix_s: Option<f64>) -> SampleReport {
        SampleReport {
            segment,
            start_s,
            duration_s: self.duration_s,
            requests: self.requests,
            errors: self.errors,
            throughput_rps: self.throughput_rps,
            latency_mean_ns: self.latency.mean(),
            latency_p50_ns: self.latency.value_at_percentile(50.0),
            latency_p99_ns: self.latency.value_at_percentile(99.0),
            histogram: self.latency.to_base64(),
            start_unix_s,
            statements: self
                .statements
                .iter()
                .map(|b| {
                    let successes = b.requests.saturating_sub(b.errors);
                    SampleStatement {
                        requests: b.requests,
                        errors: b.errors,
                        throughput_rps: b.throughput_rps,
                        latency_mean_ns: if successes > 0 {
                            b.latency_sum_ns / successes as f64
                        } else {
                            0.0
                        },
                    }
                })
                .collect(),
            requests_by_node: self.requests_by_node,
            tablet_misroutes: self.tablet_misroutes,
            target_rps: self.target_rps,
        }
    }
}

impl SampleFigures {
    /// The figure of the measured segments' `samples` and their histograms of `latency`
    /// and `service` time.
    pub(crate) fn of(
        samples: Vec<SampleReport>,
        latency: &LatencyHistogram,
        service: &LatencyHistogram,
    ) -> Self {
        SampleFigures {
            samples,
            histogram: latency.to_base64(),
            service_histogram: service.to_base64(),
        }
    }

    /// The machines' figures pooled, with the whole run's latency and service-time
    /// histograms added exactly (returned decoded too, for the latency figure). The
    /// samples are aligned on one wall-clock grid per segment, of `interval_s` steps from
    /// the earliest sample of the segment: each sample joins the grid interval nearest its
    /// start, where requests, errors and throughputs are summed and histograms added.
    pub(crate) fn pooled(
        parts: &[Part<'_, Self>],
        interval_s: f64,
    ) -> Result<(Self, LatencyHistogram, LatencyHistogram), PoolError> {
        let mut latency = LatencyHistogram::new();
        let mut service = LatencyHistogram::new();
        for (file, _, b) in parts {
            latency.merge(&decode(file, &b.histogram)?);
            service.merge(&decode(file, &b.service_histogram)?);
        }
        let figures = SampleFigures {
            samples: align(parts, interval_s)?,
            histogram: latency.to_base64(),
            service_histogram: service.to_base64(),
        };
        Ok((figures, latency, service))
    }

    /// The samples' target rate, their mean weighted by their lengths (`None` when no
    /// sample has one: no rate limit).
    pub(crate) fn mean_target_rps(&self) -> Option<f64> {
        let (mut requests, mut seconds) = (0.0, 0.0);
        for s in &self.samples {
            if let Some(t) = s.target_rps {
                requests += t * s.duration_s;
                seconds += s.duration_s;
            }
        }
        (seconds > 0.0).then(|| requests / seconds)
    }

    /// The throughputs and the mean latencies (of those with a success) of the samples of
    /// at least half an interval of `interval_s`: what a merged entry's margins come from.
    pub(crate) fn full_series(&self, interval_s: f64) -> (Vec<f64>, Vec<f64>) {
        let full: Vec<&SampleReport> = self
            .samples
            .iter()
            .filter(|s| s.duration_s >= 0.5 * interval_s)
            .collect();
        let throughputs = full.iter().map(|s| s.throughput_rps).collect();
        let means = full
            .iter()
            .filter(|s| s.requests > s.errors)
            .map(|s| s.latency_mean_ns)
            .collect();
        (throughputs, means)
    }
}

/// The machines' samples on one wall-clock grid per segment (see [`SampleFigures::pooled`]).
fn align(
    parts: &[Part<'_, SampleFigures>],
    interval_s: f64,
) -> Result<Vec<SampleReport>, PoolError> {
    let mut origin: BTreeMap<usize, f64> = BTreeMap::new();
    for (file, _, b) in parts {
        for s in &b.samples {
            let t = s.start_unix_s.ok_or_else(|| PoolError::NoWallClock {
                file: (*file).to_owned(),
            })?;
            let o = origin.entry(s.segment).or_insert(t);
            *o = o.min(t);
        }
    }
    let step = if interval_s > 0.0 { interval_s } else { 1.0 };
    let mut bins: BTreeMap<(usize, u64), Bin> = BTreeMap::new();
    for (file, _, b) in parts {
        for s in &b.samples {
            let (Some(t), Some(o)) = (s.start_unix_s, origin.get(&s.segment)) else {
                continue;
            };
            let index = ((t - o) / step).round().max(0.0) as u64;
            let latency = decode(file, &s.histogram)?;
            bins.entry((s.segment, index)).or_default().add(s, &latency);
        }
    }
    Ok(bins
        .into_iter()
        .map(|((segment, index), bin)| {
            let start_s = index as f64 * step;
            let start_unix_s = origin.get(&segment).map(|o| o + start_s);
            bin.sample(segment, start_s, start_unix_s)
        })
        .collect())
}
