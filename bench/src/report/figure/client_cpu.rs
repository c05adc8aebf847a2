//! The client-CPU figure: a backend's CPU time per request (every thread of the process,
//! user and system, with the kernel's SQPOLL threads' and io-wq workers' parts); computed
//! from the measured segments' CPU times, pooled in a merge, and its OVERHEAD rows.

use serde::{Deserialize, Serialize};

use crate::report::cell::{Row, Value};
use crate::report::pool::{per_req, pooled, pooled_opt, Part};

/// A backend's client CPU (`BackendReport`'s fields, flattened: the names are the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCpuFigures {
    /// Client CPU time (user + system) per request, microseconds: every thread of the
    /// process, the kernel's SQPOLL threads included.
    pub cpu_us_per_req: f64,
    /// Of `cpu_us_per_req`, the part of the kernel's SQPOLL threads (`iou-sqp-*`, one per
    /// ring of `doppio-uring-sqpoll`), microseconds per request; `null` when the process had
    /// none during the backend's measured segments.
    #[serde(default)]
    pub sqpoll_thread_cpu_us_per_req: Option<f64>,
    /// Of `cpu_us_per_req`, the part of the kernel's io-wq workers (`iou-wrk-*`: io_uring
    /// operations that could not complete at once), microseconds per request; `null` when
    /// the process had none during the backend's segments.
    #[serde(default)]
    pub io_wq_cpu_us_per_req: Option<f64>,
    /// User CPU per request, microseconds.
    pub cpu_user_us_per_req: f64,
    /// System CPU per request, microseconds.
    pub cpu_sys_us_per_req: f64,
}

impl ClientCpuFigures {
    /// The figure of the measured segments' user and system CPU and the SQPOLL threads' and
    /// io-wq workers' parts of it (if the process had any), seconds, over `requests`.
    pub(crate) fn of(
        user_s: f64,
        sys_s: f64,
        sqpoll_s: Option<f64>,
        io_wq_s: Option<f64>,
        requests: u64,
    ) -> Self {
        let us_per_req = |s: f64| per_req(s * 1e6, requests);
        ClientCpuFigures {
            cpu_us_per_req: us_per_req(user_s + sys_s),
            sqpoll_thread_cpu_us_per_req: sqpoll_s.map(us_per_req),
            io_wq_cpu_us_per_req: io_wq_s.map(us_per_req),
            cpu_user_us_per_req: us_per_req(user_s),
            cpu_sys_us_per_req: us_per_req(sys_s),
        }
    }

    /// The machines' CPU per request pooled by their requests (a part `null` when a machine
    /// lacks it).
    pub(crate) fn pooled(parts: &[Part<'_, Self>]) -> Self {
        ClientCpuFigures {
            cpu_us_per_req: pooled(parts, |b| b.cpu_us_per_req),
            sqpoll_thread_cpu_us_per_req: pooled_opt(parts, |b| b.sqpoll_thread_cpu_us_per_req),
            io_wq_cpu_us_per_req: pooled_opt(parts, |b| b.io_wq_cpu_us_per_req),
            cpu_user_us_per_req: pooled(parts, |b| b.cpu_user_us_per_req),
            cpu_sys_us_per_req: pooled(parts, |b| b.cpu_sys_us_per_req),
        }
    }

    /// Its OVERHEAD rows: the CPU per request, its user and system parts, and the kernel
    /// threads' parts.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        vec![
            Row::new("client CPU", "us", 2, |b: &Self| {
                Value::Num(b.cpu_us_per_req)
            })
            .change(),
            Row::new("  user / sys", "us", 2, |b: &Self| {
                Value::Pair(b.cpu_user_us_per_req, b.cpu_sys_us_per_req)
            }),
            // No change column: SQ threads that started after the backends connected are in
            // every backend's segments (those the backends started then are their own).
            Row::new("  sqpoll thread CPU", "us", 2, |b: &Self| {
                Value::or_missing(b.sqpoll_thread_cpu_us_per_req)
            })
            .shown_if(|b| b.sqpoll_thread_cpu_us_per_req.is_some()),
            // The same for the kernel's io-wq workers.
            Row::new("  io-wq workers CPU", "us", 2, |b: &Self| {
                Value::or_missing(b.io_wq_cpu_us_per_req)
            })
            .shown_if(|b| b.io_wq_cpu_us_per_req.is_some()),
        ]
    }
}
