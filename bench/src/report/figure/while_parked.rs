//! The while-parked figure: what a backend's threads did while other backends' segments
//! were measured (left out of those backends' figures); counted over the segments it sat
//! through, summed in a merge, and its OVERHEAD rows (totals, not per request).

use serde::{Deserialize, Serialize};

use crate::probe::process_cost::{ApartCost, ByKind, SyscallKind};
use crate::report::cell::{Row, Value};
use crate::report::pool::Part;

/// What a backend's threads did while it sat parked through other backends' measured
/// segments (a connection's timers, a keepalive, a runtime's housekeeping): counted to it
/// here, and in none of the other backends' figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WhileParked {
    /// The other backends' measured segments it sat through.
    pub segments: u64,
    /// Its threads' CPU time over them, seconds.
    pub cpu_s: f64,
    /// Its threads' context switches, voluntary and involuntary.
    pub ctx_switches: u64,
    /// Its threads' system calls (`null` when they were not counted).
    pub syscalls: Option<u64>,
    /// The same by kind.
    pub syscalls_by_kind: Option<ByKind<u64>>,
    /// io_uring operations its threads submitted.
    pub io_uring_submitted: Option<u64>,
    /// io_uring completions posted to its threads.
    pub io_uring_completed: Option<u64>,
}

impl WhileParked {
    /// The entry of `segments` segments whose sum is `a`.
    pub(crate) fn of(segments: u64, a: &ApartCost) -> Self {
        WhileParked {
            segments,
            cpu_s: a.usage.cpu.as_secs_f64(),
            ctx_switches: a.usage.voluntary + a.usage.involuntary,
            syscalls: a.syscalls,
            syscalls_by_kind: a.syscalls_by_kind,
            io_uring_submitted: a.io_uring.map(|o| o.submitted),
            io_uring_completed: a.io_uring.map(|o| o.completed),
        }
    }

    /// Both added (a count missing from either is missing): one machine's and another's.
    pub(crate) fn plus(&self, o: &WhileParked) -> WhileParked {
        let add = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a + b);
        WhileParked {
            segments: self.segments + o.segments,
            cpu_s: self.cpu_s + o.cpu_s,
            ctx_switches: self.ctx_switches + o.ctx_switches,
            syscalls: add(self.syscalls, o.syscalls),
            syscalls_by_kind: self
                .syscalls_by_kind
                .zip(o.syscalls_by_kind)
                .map(|(a, b)| a.plus(&b)),
            io_uring_submitted: add(self.io_uring_submitted, o.io_uring_submitted),
            io_uring_completed: add(self.io_uring_completed, o.io_uring_completed),
        }
    }

    /// In a merge: each machine's parked threads over its own other segments, summed
    /// (`null` when no machine ran another backend).
    pub(crate) fn pooled(parts: &[Part<'_, Option<WhileParked>>]) -> Option<WhileParked> {
        parts
            .iter()
            .filter_map(|(_, _, b)| **b)
            .reduce(|a, b| a.plus(&b))
    }

    /// Its OVERHEAD rows, shown when some column has it: the segments, its threads'
    /// syscalls (and `io_uring_enter` among them), context switches and CPU, in all.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Option<WhileParked>>> {
        type Parked = fn(&WhileParked) -> Value;
        let parked: [(&str, usize, Parked); 5] = [
            ("while parked: segments", 0, |p| Value::Count(p.segments)),
            ("  syscalls, in all", 0, |p| {
                p.syscalls.map_or(Value::Missing, Value::Count)
            }),
            ("    io_uring_enter", 0, |p| {
                p.syscalls_by_kind.map_or(Value::Missing, |k| {
                    Value::Count(k.get(SyscallKind::IoUringEnter))
                })
            }),
            ("  context switches", 0, |p| Value::Count(p.ctx_switches)),
            ("  CPU, in all (ms)", 3, |p| Value::Num(p.cpu_s * 1e3)),
        ];
        parked
            .into_iter()
            .map(|(label, decimals, get)| {
                Row::new(label, "", decimals, move |b: &Option<WhileParked>| {
                    b.as_ref().map_or(Value::Missing, get)
                })
                .shown_if(|b| b.is_some())
            })
            .collect()
    }
}
