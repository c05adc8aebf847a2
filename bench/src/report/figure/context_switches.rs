//! The context-switch figure: a backend's context switches per request and, of them, its
//! sleeps (voluntary switches: a thread waited and was woken); computed from the measured
//! segments' counts, pooled in a merge, and its OVERHEAD rows.

use serde::{Deserialize, Serialize};

use crate::report::cell::{Row, Value};
use crate::report::pool::{per_req, pooled, pooled_opt, Part};

/// A backend's context switches (`BackendReport`'s fields, flattened: the names are the
/// JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextSwitchFigures {
    /// Context switches (voluntary + involuntary) per request.
    pub ctx_switches_per_req: f64,
    /// Voluntary context switches per request: how often a thread of the client went to
    /// sleep (waiting for the network, a timer or another thread) and was woken, counted
    /// alike for every backend whatever its runtime. `null` in reports written before it
    /// was counted.
    #[serde(default)]
    pub sleeps_per_req: Option<f64>,
}

impl ContextSwitchFigures {
    /// The figure of the measured segments' context switches and sleeps over `requests`.
    pub(crate) fn of(ctx_switches: u64, sleeps: u64, requests: u64) -> Self {
        ContextSwitchFigures {
            ctx_switches_per_req: per_req(ctx_switches as f64, requests),
            sleeps_per_req: Some(per_req(sleeps as f64, requests)),
        }
    }

    /// The machines' figures pooled by their requests (sleeps `null` when a machine lacks
    /// them).
    pub(crate) fn pooled(parts: &[Part<'_, Self>]) -> Self {
        ContextSwitchFigures {
            ctx_switches_per_req: pooled(parts, |b| b.ctx_switches_per_req),
            sleeps_per_req: pooled_opt(parts, |b| b.sleeps_per_req),
        }
    }

    /// Its OVERHEAD rows: the context switches per request, and the sleeps among them.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        vec![
            Row::new("context switches", "", 3, |b: &Self| {
                Value::Num(b.ctx_switches_per_req)
            })
            .change(),
            Row::new("  sleeps (wake-ups)", "", 3, |b: &Self| {
                Value::or_missing(b.sleeps_per_req)
            })
            .change()
            .shown_if(|b| b.sleeps_per_req.is_some()),
        ]
    }
}
