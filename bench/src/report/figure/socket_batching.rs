//! The socket-batching figure: how many requests doppio's backends carried per socket
//! write and per socket read (scylla has no such counters); computed from the driver's
//! counters, pooled in a merge, and its OVERHEAD rows.

use serde::{Deserialize, Serialize};

use crate::report::cell::{Row, Value};
use crate::report::pool::{pooled_ratio, Part};

/// A backend's requests per socket write and read (`BackendReport`'s fields, flattened:
/// the names are the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SocketBatchingFigures {
    /// Requests per socket write (doppio's counters; `null` for scylla, which has none).
    pub requests_per_flush: Option<f64>,
    /// Requests per socket read (doppio's counters; `null` for scylla).
    pub requests_per_read: Option<f64>,
}

impl SocketBatchingFigures {
    /// The figure of the driver's counted `requests`, `flushes` and `reads` (each ratio
    /// `null` without a write or a read).
    pub(crate) fn of(requests: u64, flushes: u64, reads: u64) -> Self {
        let ratio = |events: u64| (events > 0).then(|| requests as f64 / events as f64);
        SocketBatchingFigures {
            requests_per_flush: ratio(flushes),
            requests_per_read: ratio(reads),
        }
    }

    /// The machines' ratios of their pooled totals (`null` when a machine lacks one).
    pub(crate) fn pooled(parts: &[Part<'_, Self>]) -> Self {
        SocketBatchingFigures {
            requests_per_flush: pooled_ratio(parts, |b| b.requests_per_flush),
            requests_per_read: pooled_ratio(parts, |b| b.requests_per_read),
        }
    }

    /// Its OVERHEAD rows: requests per write, and per read.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        vec![
            Row::new("requests per write", "", 1, |b: &Self| {
                Value::or_missing(b.requests_per_flush)
            }),
            Row::new("requests per read", "", 1, |b: &Self| {
                Value::or_missing(b.requests_per_read)
            }),
        ]
    }
}
