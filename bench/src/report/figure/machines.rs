//! The machines figure of a merged report: each loader machine's own figures (its
//! overheads are kept per machine, not averaged); none in a report of one run, made by the
//! merge from each machine's entry (its text is a section of its own, MACHINES, in
//! `render/text/machines.rs`).

use serde::{Deserialize, Serialize};

use super::client_cpu::ClientCpuFigures;
use super::context_switches::ContextSwitchFigures;
use super::memory::MemoryFigures;
use super::socket_batching::SocketBatchingFigures;
use super::syscalls::SyscallFigures;
use super::throughput::ThroughputFigures;
use super::uring::IoUringFigures;

/// A backend's machines (`BackendReport`'s field, flattened: the name is the JSON's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineList {
    /// In a merged report, each machine's own figures (its overhead is kept per machine,
    /// not averaged); `null` in a report of one run.
    #[serde(default)]
    pub machines: Option<Vec<MachineFigures>>,
}

/// One machine's own figures for one backend of a merged report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineFigures {
    /// The machine's report file.
    pub file: String,
    /// Requests completed.
    pub requests: u64,
    /// Errors.
    pub errors: u64,
    /// Its throughput, requests per second.
    pub throughput_rps: f64,
    /// Its measured seconds.
    pub elapsed_s: f64,
    /// Client CPU per request, microseconds.
    pub cpu_us_per_req: f64,
    /// User CPU per request, microseconds.
    pub cpu_user_us_per_req: f64,
    /// System CPU per request, microseconds.
    pub cpu_sys_us_per_req: f64,
    /// System calls per request, or `null` when not counted.
    pub syscalls_per_req: Option<f64>,
    /// Why syscalls were not counted.
    pub syscalls_unavailable: Option<String>,
    /// io_uring operations submitted per request, or `null`.
    pub io_uring_submitted_per_req: Option<f64>,
    /// Context switches per request.
    pub ctx_switches_per_req: f64,
    /// Heap allocations per request, or `null` (no `alloc-count` build).
    pub allocations_per_req: Option<f64>,
    /// Peak RSS, bytes.
    pub peak_rss_bytes: u64,
    /// Requests per socket write (doppio), or `null`.
    pub requests_per_flush: Option<f64>,
    /// Requests per socket read (doppio), or `null`.
    pub requests_per_read: Option<f64>,
}

/// The figures of one machine's entry that its line is made of.
pub(crate) struct MachineParts<'a> {
    /// Requests, errors, throughput and time.
    pub throughput: &'a ThroughputFigures,
    /// Client CPU.
    pub client_cpu: &'a ClientCpuFigures,
    /// System calls.
    pub syscalls: &'a SyscallFigures,
    /// io_uring operations.
    pub io_uring: &'a IoUringFigures,
    /// Context switches.
    pub context_switches: &'a ContextSwitchFigures,
    /// Allocations and RSS.
    pub memory: &'a MemoryFigures,
    /// Requests per socket write and read.
    pub socket_batching: &'a SocketBatchingFigures,
}

impl MachineFigures {
    /// The own figures `p` of the machine whose report is `file`.
    pub(crate) fn of(file: &str, p: &MachineParts<'_>) -> Self {
        Self {
            file: file.to_owned(),
            requests: p.throughput.requests,
            errors: p.throughput.errors,
            throughput_rps: p.throughput.throughput_rps,
            elapsed_s: p.throughput.elapsed_s,
            cpu_us_per_req: p.client_cpu.cpu_us_per_req,
            cpu_user_us_per_req: p.client_cpu.cpu_user_us_per_req,
            cpu_sys_us_per_req: p.client_cpu.cpu_sys_us_per_req,
            syscalls_per_req: p.syscalls.syscalls_per_req,
            syscalls_unavailable: p.syscalls.syscalls_unavailable.clone(),
            io_uring_submitted_per_req: p.io_uring.io_uring_submitted_per_req,
            ctx_switches_per_req: p.context_switches.ctx_switches_per_req,
            allocations_per_req: p.memory.allocations_per_req,
            peak_rss_bytes: p.memory.peak_rss_bytes,
            requests_per_flush: p.socket_batching.requests_per_flush,
            requests_per_read: p.socket_batching.requests_per_read,
        }
    }
}

impl MachineList {
    /// A report of one run: none.
    pub(crate) fn of() -> Self {
        Self::default()
    }

    /// In a merge: each machine's own figures, from its report `file` and its `parts`.
    pub(crate) fn pooled(parts: &[(&str, MachineParts<'_>)]) -> Self {
        MachineList {
            machines: Some(
                parts
                    .iter()
                    .map(|(file, p)| MachineFigures::of(file, p))
                    .collect(),
            ),
        }
    }
}
