//! The io_uring figures: the operations a backend submitted and was posted per request
//! (every backend, from the kernel's tracepoints), and doppio's own runtime's
//! `io_uring_enter` calls by reason; computed from the measured segments, pooled in a
//! merge, and their OVERHEAD rows.

use serde::{Deserialize, Serialize};

use crate::backend::UringEnters;
use crate::probe::process_cost::IoUringOps;
use crate::report::cell::{Row, Value};
use crate::report::pool::{missing_reason, per_req, Part};

/// io_uring operations of a backend's threads (`BackendReport`'s fields, flattened).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoUringFigures {
    /// io_uring operations submitted over the measured segments, `null` when not counted.
    #[serde(default)]
    pub io_uring_submitted: Option<u64>,
    /// io_uring operations submitted per request.
    #[serde(default)]
    pub io_uring_submitted_per_req: Option<f64>,
    /// io_uring completions posted over the measured segments, `null` when not counted.
    #[serde(default)]
    pub io_uring_completed: Option<u64>,
    /// io_uring completions posted per request.
    #[serde(default)]
    pub io_uring_completed_per_req: Option<f64>,
    /// Why io_uring operations were not counted, when they were not.
    #[serde(default)]
    pub io_uring_unavailable: Option<String>,
}

impl IoUringFigures {
    /// The figure of the measured segments' operations `ops` over `requests`, with why
    /// they were not counted.
    pub(crate) fn of(ops: Option<IoUringOps>, unavailable: &Option<String>, requests: u64) -> Self {
        let per_req = |x: f64| per_req(x, requests);
        IoUringFigures {
            io_uring_submitted: ops.map(|x| x.submitted),
            io_uring_submitted_per_req: ops.map(|x| per_req(x.submitted as f64)),
            io_uring_completed: ops.map(|x| x.completed),
            io_uring_completed_per_req: ops.map(|x| per_req(x.completed as f64)),
            io_uring_unavailable: unavailable.clone(),
        }
    }

    /// The machines' operations summed, per request over their `requests` in all (`null`
    /// when a machine did not count them).
    pub(crate) fn pooled(parts: &[Part<'_, Self>], requests: u64) -> Self {
        let per_req = |n: f64| per_req(n, requests);
        let sum_opt = |f: &dyn Fn(&Self) -> Option<u64>| {
            parts.iter().map(|(_, _, b)| f(b)).sum::<Option<u64>>()
        };
        let io_uring_submitted = sum_opt(&|b| b.io_uring_submitted);
        let io_uring_completed = sum_opt(&|b| b.io_uring_completed);
        IoUringFigures {
            io_uring_submitted,
            io_uring_submitted_per_req: io_uring_submitted.map(|n| per_req(n as f64)),
            io_uring_completed,
            io_uring_completed_per_req: io_uring_completed.map(|n| per_req(n as f64)),
            io_uring_unavailable: missing_reason(
                parts,
                |b| b.io_uring_submitted.is_some(),
                |b| b.io_uring_unavailable.as_ref(),
            ),
        }
    }

    /// Its OVERHEAD rows: operations submitted and completed per request.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        vec![
            Row::new("io_uring submitted", "", 3, |b: &Self| {
                Value::or_missing(b.io_uring_submitted_per_req)
            })
            .change()
            .shown_if(|b| b.io_uring_submitted_per_req.is_some()),
            Row::new("io_uring completed", "", 3, |b: &Self| {
                Value::or_missing(b.io_uring_completed_per_req)
            })
            .change()
            .shown_if(|b| b.io_uring_submitted_per_req.is_some()),
        ]
    }

    /// What was not counted, and why (OVERHEAD's notes).
    pub(crate) fn missing(&self) -> [(&'static str, &Option<String>); 1] {
        [("io_uring operations", &self.io_uring_unavailable)]
    }
}

/// doppio's io_uring runtime's enters (`BackendReport`'s fields, flattened; apart from
/// [`IoUringFigures`] in the JSON, so a struct of their own).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UringEnterFigures {
    /// doppio on its own io_uring runtime: its shards' `io_uring_enter` calls over the
    /// measured segments by reason (`null` for the other event loops).
    #[serde(default)]
    pub uring_enters: Option<UringEnters>,
    /// The same per request.
    #[serde(default)]
    pub uring_enters_per_req: Option<UringEntersPerReq>,
}

impl UringEnterFigures {
    /// The figure of the measured segments' `enters` over `requests`.
    pub(crate) fn of(enters: Option<UringEnters>, requests: u64) -> Self {
        UringEnterFigures {
            uring_enters: enters,
            uring_enters_per_req: enters.map(|e| UringEntersPerReq::of(&e, requests)),
        }
    }

    /// The machines' enters by reason summed (null if a machine did not count them), per
    /// request over their `requests` in all.
    pub(crate) fn pooled(parts: &[Part<'_, Self>], requests: u64) -> Self {
        // Enters by reason: summed (null if a machine did not count them).
        let uring_enters = parts
            .iter()
            .map(|(_, _, b)| b.uring_enters)
            .try_fold(UringEnters::default(), |acc, e| e.map(|e| acc.plus(&e)));
        UringEnterFigures {
            uring_enters,
            uring_enters_per_req: uring_enters.map(|e| UringEntersPerReq::of(&e, requests)),
        }
    }

    /// Its OVERHEAD rows: the enters per request, by reason.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        type EnterReason = fn(&UringEntersPerReq) -> f64;
        let reasons: [(&str, EnterReason); 8] = [
            ("executor enters", |e| e.total),
            ("  waiting", |e| e.waiting),
            ("    for an answer", |e| e.woke_by_completion),
            ("    for a timer", |e| e.woke_by_timer),
            ("    for a thread", |e| e.woke_by_remote),
            ("    to nothing", |e| e.woke_empty),
            ("  waking SQ thread", |e| e.sq_wakeup),
            ("  CQ overflow", |e| e.cq_overflow),
        ];
        reasons
            .into_iter()
            .map(|(label, get)| {
                Row::new(label, "", 3, move |b: &Self| {
                    Value::or_missing(b.uring_enters_per_req.as_ref().map(get))
                })
                .change()
                .shown_if(|b| b.uring_enters_per_req.is_some())
            })
            .collect()
    }
}

/// [`crate::backend::UringEnters`] per request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UringEntersPerReq {
    /// Every enter.
    pub total: f64,
    /// Enters that waited.
    pub waiting: f64,
    /// Enters that woke the SQPOLL thread.
    pub sq_wakeup: f64,
    /// Enters that flushed a completion-queue overflow without waiting.
    pub cq_overflow: f64,
    /// Waiting enters that woke for an I/O completion.
    #[serde(default)]
    pub woke_by_completion: f64,
    /// Waiting enters that woke for another thread.
    #[serde(default)]
    pub woke_by_remote: f64,
    /// Waiting enters that woke for a timer.
    #[serde(default)]
    pub woke_by_timer: f64,
    /// Waiting enters that woke to nothing.
    #[serde(default)]
    pub woke_empty: f64,
}

impl UringEntersPerReq {
    /// `e` divided by `requests` (zeros without requests).
    pub(crate) fn of(e: &crate::backend::UringEnters, requests: u64) -> Self {
        let per = |n: u64| {
            if requests > 0 {
                n as f64 / requests as f64
            } else {
                0.0
            }
        };
        UringEntersPerReq {
            total: per(e.total),
            waiting: per(e.waiting),
            sq_wakeup: per(e.sq_wakeup),
            cq_overflow: per(e.cq_overflow),
            woke_by_completion: per(e.woke_by_completion),
            woke_by_remote: per(e.woke_by_remote),
            woke_by_timer: per(e.woke_by_timer),
            woke_empty: per(e.woke_empty),
        }
    }
}
