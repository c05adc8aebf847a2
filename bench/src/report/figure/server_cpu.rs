//! The server-CPU figure: the node's CPU per request, its utilisation and the segments it
//! was saturated in, when the node ran on this machine; computed from the measured
//! segments' loads, left out of a merge, and its SUMMARY rows.

use serde::{Deserialize, Serialize};

use crate::probe::server_cpu::ServerLoad;
use crate::report::cell::{Row, Value};

/// The node's load over a backend's measured segments (`BackendReport`'s fields,
/// flattened).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCpuFigures {
    /// The node's CPU per request over the measured segments, microseconds (`null`: not
    /// measured).
    #[serde(default)]
    pub server_cpu_us_per_req: Option<f64>,
    /// The node's share of its cores over the measured segments.
    #[serde(default)]
    pub server_utilisation: Option<f64>,
    /// How many of the measured segments the node was saturated in (`null`: not measured).
    #[serde(default)]
    pub server_saturated_segments: Option<usize>,
}

impl ServerCpuFigures {
    /// The node's CPU per request, its utilisation (weighted by each segment's time) and the
    /// `saturated` segments (each segment's own figures judged them), over the measured
    /// segments whose loads and lengths `segments` gives; `null` unless every segment
    /// measured it.
    pub(crate) fn of(
        segments: impl ExactSizeIterator<Item = (Option<ServerLoad>, f64)>,
        saturated: usize,
        requests: u64,
        elapsed: f64,
    ) -> Self {
        let totals = (|| {
            if segments.len() == 0 || requests == 0 || elapsed <= 0.0 {
                return None;
            }
            let mut cpu_s = 0.0;
            let mut busy = 0.0;
            for (l, seg_s) in segments {
                let l = l?;
                cpu_s += l.cpu_s;
                busy += l.utilisation * seg_s;
            }
            Some((cpu_s * 1e6 / requests as f64, busy / elapsed, saturated))
        })();
        ServerCpuFigures {
            server_cpu_us_per_req: totals.map(|s| s.0),
            server_utilisation: totals.map(|s| s.1),
            server_saturated_segments: totals.map(|s| s.2),
        }
    }

    /// In a merge: none. Each machine measured the node's CPU (if local) over its own
    /// segments: not summed.
    pub(crate) fn pooled() -> Self {
        ServerCpuFigures::default()
    }

    /// Its SUMMARY rows: the node's CPU per request and its utilisation.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        vec![
            Row::new("server CPU", "us/req", 2, |b: &Self| {
                Value::or_missing(b.server_cpu_us_per_req)
            })
            .change()
            .shown_if(|b| b.server_cpu_us_per_req.is_some()),
            Row::new("server utilisation", "", 0, |b: &Self| {
                b.server_utilisation
                    .map_or(Value::Missing, |u| Value::Percent(u * 100.0))
            })
            .shown_if(|b| b.server_utilisation.is_some()),
        ]
    }
}
