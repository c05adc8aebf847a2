//! The anatomy figure (`--anatomy`, `--flamegraph`): the client's CPU per request split by
//! the layer that owns each sampled stack; computed from the folded stacks by the run, left
//! out of a merge, and its ANATOMY rows and notes (the first, the client CPU it splits, over
//! the client CPU figure).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::client_cpu::ClientCpuFigures;
use crate::report::cell::{Row, Value};

/// The client's CPU per request split by the layer that owns each sampled stack
/// ([`crate::probe::anatomy`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnatomyReport {
    /// How the stacks were sampled (the `perf record` options).
    pub sampling: String,
    /// CPU time the samples stand for, microseconds per request (cpu-clock weight over the
    /// backend's requests): below `cpu_us_per_req` by what the sampling missed (threads
    /// started after it, samples lost).
    pub sampled_cpu_us_per_req: f64,
    /// `cpu_us_per_req` split in proportion to the samples of each layer, microseconds per
    /// request; the layers add up to `cpu_us_per_req`. Layers without samples are absent.
    pub us_per_req: BTreeMap<crate::probe::anatomy::Layer, f64>,
    /// Folded stack lines that could not be read (skipped).
    pub skipped_lines: u64,
    /// `perf record`'s own CPU per request, microseconds: not in the client's CPU, the
    /// sampling's cost besides the perturbation of the sampled threads.
    pub recorder_cpu_us_per_req: Option<f64>,
    /// The folded stacks `--flamegraph` wrote for this backend (`PREFIX-<driver>.folded`,
    /// its absolute path), which `doppio show NEW BASE --flamediff` reads; `null` with
    /// `--anatomy` alone.
    #[serde(default)]
    pub folded: Option<String>,
}

impl AnatomyReport {
    /// The report of `anatomy` for a backend that used `cpu_us_per_req` over `requests`,
    /// sampled so, with `recorder` the CPU time perf itself used.
    pub(crate) fn new(
        anatomy: &crate::probe::anatomy::Anatomy,
        sampling: &crate::probe::flame::Sampling,
        cpu_us_per_req: f64,
        requests: u64,
        recorder: Option<std::time::Duration>,
    ) -> Self {
        let per_req = |ns: f64| {
            if requests > 0 {
                ns / 1e3 / requests as f64
            } else {
                0.0
            }
        };
        AnatomyReport {
            sampling: sampling.describe(),
            sampled_cpu_us_per_req: per_req(anatomy.total as f64),
            us_per_req: anatomy.per_request(cpu_us_per_req).into_iter().collect(),
            skipped_lines: anatomy.skipped_lines,
            recorder_cpu_us_per_req: recorder.map(|d| per_req(d.as_nanos() as f64)),
            folded: None,
        }
    }
}

impl AnatomyReport {
    /// In a merge: none (each machine's stacks are its own).
    pub(crate) fn pooled() -> Option<Self> {
        None
    }

    /// ANATOMY's first row, over the client CPU figure: the CPU per request it splits.
    pub(crate) fn cpu_row<'a>() -> Row<'a, ClientCpuFigures> {
        Row::new("client CPU", "", 2, |c: &ClientCpuFigures| {
            Value::Num(c.cpu_us_per_req)
        })
        .change()
    }

    /// ANATOMY's rows after the client CPU: every layer's part (0 where a layer had no
    /// sample), what the samples stood for, and perf's own CPU.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Option<Self>>> {
        use crate::probe::anatomy::Layer;
        let mut rows = Vec::new();
        for layer in Layer::ALL {
            rows.push(
                Row::new(
                    format!("  {}", layer.name()),
                    "",
                    3,
                    move |a: &Option<Self>| {
                        a.as_ref().map_or(Value::Missing, |a| {
                            Value::Num(a.us_per_req.get(&layer).copied().unwrap_or(0.0))
                        })
                    },
                )
                .change(),
            );
        }
        rows.push(Row::new("sampled CPU", "", 2, |a: &Option<Self>| {
            Value::or_missing(a.as_ref().map(|a| a.sampled_cpu_us_per_req))
        }));
        rows.push(Row::new("perf's own CPU", "", 2, |a: &Option<Self>| {
            Value::or_missing(a.as_ref().and_then(|a| a.recorder_cpu_us_per_req))
        }));
        rows
    }

    /// Under ANATOMY, as `(prefix, text)` to wrap: how the stacks were sampled, and a
    /// warning where the samples stood for much less CPU than was measured (threads the
    /// sampling missed, samples lost); `columns` are (label, anatomy, client CPU per request).
    pub(crate) fn notes(columns: &[(&str, Option<&Self>, f64)]) -> Vec<(&'static str, String)> {
        let mut notes = Vec::new();
        let mut said: Vec<&str> = Vec::new();
        for &(label, a, cpu_us_per_req) in columns {
            let Some(a) = a else { continue };
            if !said.contains(&a.sampling.as_str()) {
                notes.push((
                    "  ",
                    format!(
                        "stacks sampled by {}; each layer owns the samples whose frame nearest the \
                         leaf names it (kernel net: TCP/IP and sockets; kernel syscall: entering \
                         and leaving the kernel), and the client CPU is split in their proportions; \
                         perf's own CPU is not in the client's",
                        a.sampling
                    ),
                ));
                said.push(&a.sampling);
            }
            if cpu_us_per_req > 0.0 && a.sampled_cpu_us_per_req < 0.8 * cpu_us_per_req {
                notes.push((
                    "  warning: ",
                    format!(
                        "{label}: the samples stand for {:.2} us per request of the {:.2} measured: \
                         the split is of what was sampled",
                        a.sampled_cpu_us_per_req, cpu_us_per_req
                    ),
                ));
            }
            if a.skipped_lines > 0 {
                notes.push((
                    "  ",
                    format!(
                        "{label}: {} folded stack lines unreadable, skipped",
                        a.skipped_lines
                    ),
                ));
            }
        }
        notes
    }
}
