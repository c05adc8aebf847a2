//! The syscalls figure: a backend's system calls per request, in all and by kind, with why
//! they were not counted; computed from its measured segments' totals, pooled in a merge,
//! and its OVERHEAD rows.

use serde::{Deserialize, Serialize};

use crate::probe::process_cost::{ByKind, SyscallKind};
use crate::report::cell::{Row, Value};
use crate::report::pool::{missing_reason, per_req, pooled_opt, Part};

/// A backend's system calls (`BackendReport`'s fields, flattened: the names are the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyscallFigures {
    /// System calls per request, `null` when they could not be counted.
    pub syscalls_per_req: Option<f64>,
    /// Why syscalls were not counted, when they were not.
    pub syscalls_unavailable: Option<String>,
    /// System calls by kind over the measured segments (they add up to the total), `null`
    /// when they could not be counted by kind.
    #[serde(default)]
    pub syscalls_by_kind: Option<ByKind<u64>>,
    /// The same per request.
    #[serde(default)]
    pub syscalls_by_kind_per_req: Option<ByKind<f64>>,
    /// Why syscalls were not counted by kind, when they were not.
    #[serde(default)]
    pub syscall_kinds_unavailable: Option<String>,
}

impl SyscallFigures {
    /// The figure of the measured segments' `total` and `by_kind` over `requests`, with
    /// why each was not counted.
    pub(crate) fn of(
        total: Option<u64>,
        by_kind: Option<ByKind<u64>>,
        unavailable: &Option<String>,
        kinds_unavailable: &Option<String>,
        requests: u64,
    ) -> Self {
        let per_req = |x: f64| per_req(x, requests);
        SyscallFigures {
            syscalls_per_req: total.map(|n| per_req(n as f64)),
            syscalls_unavailable: unavailable.clone(),
            syscalls_by_kind: by_kind,
            syscalls_by_kind_per_req: by_kind.map(|k| k.map(|n| per_req(n as f64))),
            syscall_kinds_unavailable: kinds_unavailable.clone(),
        }
    }

    /// The machines' figures pooled over their `requests` in all: per request over the
    /// summed counts, by kind summed (`null` when a machine did not count them).
    pub(crate) fn pooled(parts: &[Part<'_, Self>], requests: u64) -> Self {
        let per_req = |n: f64| per_req(n, requests);
        let all_kinds = parts
            .iter()
            .map(|(_, _, b)| b.syscalls_by_kind)
            .collect::<Option<Vec<ByKind<u64>>>>();
        let syscalls_by_kind = all_kinds.and_then(|k| k.into_iter().reduce(|a, b| a.plus(&b)));
        SyscallFigures {
            syscalls_per_req: pooled_opt(parts, |b| b.syscalls_per_req),
            syscalls_unavailable: missing_reason(
                parts,
                |b| b.syscalls_per_req.is_some(),
                |b| b.syscalls_unavailable.as_ref(),
            ),
            syscalls_by_kind,
            syscalls_by_kind_per_req: syscalls_by_kind.map(|k| k.map(|n| per_req(n as f64))),
            syscall_kinds_unavailable: missing_reason(
                parts,
                |b| b.syscalls_by_kind.is_some(),
                |b| b.syscall_kinds_unavailable.as_ref(),
            ),
        }
    }

    /// Its OVERHEAD rows: the syscalls per request, then each kind's.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        let mut rows = vec![Row::new("syscalls", "", 3, |b: &Self| {
            Value::or_missing(b.syscalls_per_req)
        })
        .change()];
        for kind in SyscallKind::ALL {
            rows.push(
                Row::new(format!("  {}", kind.name()), "", 3, move |b: &Self| {
                    Value::or_missing(b.syscalls_by_kind_per_req.map(|x| x.get(kind)))
                })
                .change()
                .shown_if(|b| b.syscalls_by_kind_per_req.is_some()),
            );
        }
        rows
    }

    /// What was not counted, and why (OVERHEAD's notes).
    pub(crate) fn missing(&self) -> [(&'static str, &Option<String>); 2] {
        [
            ("syscalls", &self.syscalls_unavailable),
            ("syscalls by kind", &self.syscall_kinds_unavailable),
        ]
    }
}
