//! A findmax report (`"kind": "findmax"`, fields in bench/REPORT.md): the steps of each
//! backend's saturation search and the highest rate each held, as `doppio findmax` writes it
//! and `doppio show` and `doppio plot` read it; and its text table.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::file::{read_json, write_text, ReportError};

/// The value of a findmax report's `kind`.
pub(crate) const KIND: &str = "findmax";

/// One objective's figure in a step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SloCheck {
    /// The objective as given (`p99<10ms`).
    pub objective: String,
    /// The step's latency at its percentile, milliseconds.
    pub value_ms: f64,
    /// Whether it stayed below the bound.
    pub met: bool,
}

/// One step of one backend.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Step {
    /// The rate asked for, requests per second.
    pub target_rps: f64,
    /// The rate achieved over the measured stretch (requests, successful or not, over its
    /// time).
    pub achieved_rps: f64,
    /// Requests measured.
    pub requests: u64,
    /// Requests that failed.
    pub errors: u64,
    /// Median latency from each request's intended start, milliseconds.
    pub latency_p50_ms: f64,
    /// 99th percentile, milliseconds.
    pub latency_p99_ms: f64,
    /// Each `--slo` objective's figure.
    pub slo: Vec<SloCheck>,
    /// Whether the step held (rate, errors and objectives).
    pub held: bool,
    /// Why it did not hold.
    pub failed_because: Option<String>,
    /// A bisection step of `--refine` (after the search by factor).
    #[serde(default)]
    pub refinement: bool,
}

/// One backend's search.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct FindmaxBackend {
    /// The highest target that held (null: not even the first step held).
    pub max_rate_rps: Option<f64>,
    /// Why the search stopped: the failed step's reason, or that `--max-rate` held.
    pub stopped_because: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// The configuration of a search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FindmaxConfig {
    /// Node addresses.
    pub nodes: Vec<String>,
    /// Backends, in the order they ran within each step.
    pub drivers: Vec<String>,
    /// Concurrent requests in total.
    pub concurrency: usize,
    /// Threads per backend.
    pub threads: usize,
    /// Connections per node.
    pub connections: usize,
    /// Consistency level.
    pub consistency: String,
    /// The first step's target.
    pub start_rps: f64,
    /// Each step's target over the previous one's.
    pub factor: f64,
    /// The last target tried.
    pub max_rate_rps: f64,
    /// Measured time per step and backend, seconds.
    pub step_duration_s: f64,
    /// Warmup before each step, seconds.
    pub warmup_s: f64,
    /// Bisection rounds after the search by factor (`--refine`).
    #[serde(default)]
    pub refine: u32,
    /// The latency objectives (`p99<10ms`).
    pub slo: Vec<String>,
    /// A step holds only if achieved >= hold_fraction x target.
    pub hold_fraction: f64,
    /// A step holds only if errors <= max_error_ratio x requests.
    pub max_error_ratio: f64,
    /// Rows per result page (`--page-size`); absent in reports older than the option.
    #[serde(default)]
    pub page_size: Option<u32>,
    /// Result rows counted, not decoded (`--discard-results`).
    #[serde(default)]
    pub discard_results: bool,
    /// The TCP connections each backend held once its pools settled after connecting, by
    /// driver name (as a run's `config.connection_shapes`); absent in older reports.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub connection_shapes: BTreeMap<String, super::connection_shape::ConnectionShape>,
}

/// A findmax report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FindmaxReport {
    /// Always `findmax`: tells it from a run's report.
    pub kind: String,
    /// The bench's name and version.
    pub tool: String,
    /// `--tag`.
    pub tag: Option<String>,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// The command line (no password).
    pub command: Vec<String>,
    /// The workload's name.
    pub workload: String,
    /// How the search ran.
    pub config: FindmaxConfig,
    /// Per backend (by name).
    pub backends: BTreeMap<String, FindmaxBackend>,
    /// What ended the search early, if anything did.
    pub fatal_error: Option<String>,
}

impl FindmaxReport {
    /// Reads `path` as a findmax report; `Ok(None)` when it is JSON of another kind.
    pub(crate) fn read_if_findmax(path: &Path) -> Result<Option<Self>, ReportError> {
        let value = read_json(path)?;
        if value.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
            return Ok(None);
        }
        serde_json::from_value(value)
            .map(Some)
            .map_err(|source| ReportError::NotFindmax {
                path: path.to_owned(),
                source,
            })
    }

    /// Writes the report as pretty JSON.
    pub(crate) fn write(&self, path: &Path) -> Result<(), ReportError> {
        let json = serde_json::to_string_pretty(self).map_err(ReportError::Encode)?;
        write_text(path, json)
    }
}
