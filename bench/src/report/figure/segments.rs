//! The segments figure: each measured segment's own figures, the unit the VERDICT pairs by
//! round; made from the segments' marks (round, place, cost, the node's load), their
//! requests and times, and left out of a merge (no text rows: `report/verdict.rs` reads
//! them).

use serde::{Deserialize, Serialize};

use crate::probe::server_cpu::ServerLoad;

/// A backend's segments (`BackendReport`'s field, flattened: the name is the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SegmentList {
    /// Each measured segment's own figures, in the order run (empty in merged reports and
    /// in reports written before this field existed).
    #[serde(default)]
    pub segments: Vec<SegmentFigures>,
}

/// One measured segment of a backend: the unit the VERDICT pairs by round (each round runs
/// every backend once, so a drift between rounds cancels out of the within-round ratios).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SegmentFigures {
    /// The round (0-based): the segment's number, the same for every backend in a round.
    pub round: usize,
    /// Its place in the round's order (0: ran first).
    pub position: usize,
    /// Requests completed.
    pub requests: u64,
    /// Measured seconds.
    pub elapsed_s: f64,
    /// Requests per second.
    pub throughput_rps: f64,
    /// Client CPU per request over the segment, microseconds (`null`: not measured, or no
    /// request).
    pub cpu_us_per_req: Option<f64>,
    /// System calls per request, `null` when not counted.
    pub syscalls_per_req: Option<f64>,
    /// The node's CPU per request over the segment, microseconds (`null`: the node was not
    /// measured, see `config.server_pids`).
    #[serde(default)]
    pub server_cpu_us_per_req: Option<f64>,
    /// The node's share of its cores over the segment (1.0: all busy).
    #[serde(default)]
    pub server_utilisation: Option<f64>,
    /// The machine's idle share over the segment.
    #[serde(default)]
    pub machine_idle: Option<f64>,
    /// Whether the node set the pace (see bench/REPORT.md, "server-bound").
    #[serde(default)]
    pub server_saturated: Option<bool>,
}

/// Where a measured segment ran in its round and what it cost the client.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SegmentMark {
    /// The round (the segment's number).
    pub round: usize,
    /// Its place in the round's order.
    pub position: usize,
    /// Client CPU, seconds (user and system), when measured.
    pub cpu_s: Option<f64>,
    /// System calls, when counted.
    pub syscalls: Option<u64>,
    /// The node's load, when it was measured.
    pub server: Option<ServerLoad>,
}

impl SegmentFigures {
    /// The figures of the segment marked `m`, with `n` requests over `elapsed_s` seconds.
    fn of(m: &SegmentMark, n: u64, elapsed_s: f64) -> Self {
        let per_req = |x: f64| (n > 0).then(|| x / n as f64);
        SegmentFigures {
            round: m.round,
            position: m.position,
            requests: n,
            elapsed_s,
            throughput_rps: if elapsed_s > 0.0 {
                n as f64 / elapsed_s
            } else {
                0.0
            },
            cpu_us_per_req: m.cpu_s.and_then(|s| per_req(s * 1e6)),
            syscalls_per_req: m.syscalls.and_then(|c| per_req(c as f64)),
            server_cpu_us_per_req: m.server.and_then(|l| per_req(l.cpu_s * 1e6)),
            server_utilisation: m.server.map(|l| l.utilisation),
            machine_idle: m.server.and_then(|l| l.machine_idle),
            server_saturated: m
                .server
                .map(|l| l.saturated(m.cpu_s.unwrap_or(f64::INFINITY))),
        }
    }
}

impl SegmentList {
    /// Each marked segment's own figures (`marks`, in order), with its `requests` and its
    /// measured time `elapsed_s`; none when the segments were not marked (findmax's steps).
    pub(crate) fn of(marks: &[SegmentMark], requests: &[u64], elapsed_s: &[f64]) -> Self {
        SegmentList {
            segments: marks
                .iter()
                .zip(requests)
                .zip(elapsed_s)
                .map(|((m, &n), &elapsed_s)| SegmentFigures::of(m, n, elapsed_s))
                .collect(),
        }
    }

    /// In a merge: none. Machines' segments are each their own machine's (their CPU is not
    /// additive across rounds of different machines), so a merged report has no VERDICT.
    pub(crate) fn pooled() -> Self {
        Self::default()
    }

    /// The segments in which the node set the pace.
    pub(crate) fn saturated(&self) -> usize {
        self.segments
            .iter()
            .filter(|s| s.server_saturated == Some(true))
            .count()
    }
}
