//! The memory figure: a backend's heap allocations per request (`alloc-count` builds) and
//! the process's peak resident set; computed from the measured segments' counts, pooled in
//! a merge, and its OVERHEAD rows.

use serde::{Deserialize, Serialize};

use crate::report::cell::{Row, Value};
use crate::report::pool::{per_req, pooled_opt, Part};

/// A backend's memory use (`BackendReport`'s fields, flattened: the names are the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryFigures {
    /// Heap allocations per request (the whole process), `null` unless the bench was built
    /// with the `alloc-count` feature.
    #[serde(default)]
    pub allocations_per_req: Option<f64>,
    /// Peak resident set size of the process, bytes (the process's high-water mark: with
    /// two backends in one run, the larger of the two).
    pub peak_rss_bytes: u64,
}

impl MemoryFigures {
    /// The figure of the measured segments' `allocations` (if counted) over `requests`, and
    /// the process's `peak_rss`.
    pub(crate) fn of(allocations: Option<u64>, peak_rss: u64, requests: u64) -> Self {
        MemoryFigures {
            allocations_per_req: allocations.map(|n| per_req(n as f64, requests)),
            peak_rss_bytes: peak_rss,
        }
    }

    /// The machines' allocations pooled by their requests (`null` when a machine did not
    /// count them), and the largest of their peaks.
    pub(crate) fn pooled(parts: &[Part<'_, Self>]) -> Self {
        MemoryFigures {
            allocations_per_req: pooled_opt(parts, |b| b.allocations_per_req),
            peak_rss_bytes: parts
                .iter()
                .map(|(_, _, b)| b.peak_rss_bytes)
                .max()
                .unwrap_or(0),
        }
    }

    /// Its OVERHEAD row of the heap allocations per request.
    pub(crate) fn allocation_rows<'a>() -> Vec<Row<'a, Self>> {
        vec![Row::new("heap allocations", "", 2, |b: &Self| {
            Value::or_missing(b.allocations_per_req)
        })
        .change()]
    }

    /// Its OVERHEAD row of the peak RSS (the table's last of the process's figures).
    pub(crate) fn rss_rows<'a>() -> Vec<Row<'a, Self>> {
        vec![Row::new("peak RSS", "MiB", 1, |b: &Self| {
            Value::Num(b.peak_rss_bytes as f64 / (1 << 20) as f64)
        })]
    }
}
