//! The hardware-counter figure: instructions, cycles, IPC and cache misses per request of
//! a backend's threads, or why the machine has none; computed from the measured segments'
//! counts, pooled in a merge, and its OVERHEAD rows.

use serde::{Deserialize, Serialize};

use crate::probe::hw_counters::HwCounts;
use crate::report::cell::{Row, Value};
use crate::report::pool::{missing_reason, pooled_opt, Part};

/// A backend's hardware counts (`BackendReport`'s fields, flattened).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HardwareFigures {
    /// Hardware counters per request (every thread of the client, user and kernel), `null`
    /// where the machine has none.
    #[serde(default)]
    pub hardware_per_req: Option<HardwarePerReq>,
    /// Why there are no hardware counters (`not available here: ...`).
    #[serde(default)]
    pub hardware_unavailable: Option<String>,
}

impl HardwareFigures {
    /// The figure of the measured segments' `counts` over `requests`, with why there were
    /// none.
    pub(crate) fn of(
        counts: Option<HwCounts>,
        unavailable: &Option<String>,
        requests: u64,
    ) -> Self {
        HardwareFigures {
            hardware_per_req: counts.map(|h| HardwarePerReq::of(&h, requests)),
            hardware_unavailable: unavailable.clone(),
        }
    }

    /// The machines' counts per request pooled by their requests.
    pub(crate) fn pooled(parts: &[Part<'_, Self>]) -> Self {
        HardwareFigures {
            hardware_per_req: pooled_hardware(parts),
            hardware_unavailable: missing_reason(
                parts,
                |b| b.hardware_per_req.is_some(),
                |b| b.hardware_unavailable.as_ref(),
            ),
        }
    }

    /// Its OVERHEAD rows: each count per request, and the IPC.
    pub(crate) fn rows<'a>() -> Vec<Row<'a, Self>> {
        type HardwareFigure = fn(&HardwarePerReq) -> f64;
        let hardware: [(&str, usize, HardwareFigure); 4] = [
            ("instructions", 0, |h| h.instructions),
            ("cycles", 0, |h| h.cycles),
            ("  IPC", 2, |h| h.ipc),
            ("cache misses", 2, |h| h.cache_misses),
        ];
        hardware
            .into_iter()
            .map(|(label, decimals, get)| {
                Row::new(label, "", decimals, move |b: &Self| {
                    Value::or_missing(b.hardware_per_req.as_ref().map(get))
                })
                .change()
                .shown_if(|b| b.hardware_per_req.is_some())
            })
            .collect()
    }

    /// What was not counted, and why (OVERHEAD's notes).
    pub(crate) fn missing(&self) -> [(&'static str, &Option<String>); 1] {
        [("hardware counters", &self.hardware_unavailable)]
    }
}

/// The machines' hardware counts per request pooled by their requests (the IPC of the
/// pooled instructions and cycles); `None` when a machine had none.
fn pooled_hardware(parts: &[Part<'_, HardwareFigures>]) -> Option<HardwarePerReq> {
    let instructions = pooled_opt(parts, |b| b.hardware_per_req.map(|h| h.instructions))?;
    let cycles = pooled_opt(parts, |b| b.hardware_per_req.map(|h| h.cycles))?;
    Some(HardwarePerReq {
        instructions,
        cycles,
        ipc: if cycles > 0.0 {
            instructions / cycles
        } else {
            0.0
        },
        cache_misses: pooled_opt(parts, |b| b.hardware_per_req.map(|h| h.cache_misses))?,
    })
}

/// Hardware counts per request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HardwarePerReq {
    /// Instructions retired per request.
    pub instructions: f64,
    /// CPU cycles per request.
    pub cycles: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// Cache misses per request.
    pub cache_misses: f64,
}

impl HardwarePerReq {
    /// `h` over `requests` (zeros without requests).
    pub(crate) fn of(h: &HwCounts, requests: u64) -> Self {
        let per = |x: f64| {
            if requests > 0 {
                x / requests as f64
            } else {
                0.0
            }
        };
        HardwarePerReq {
            instructions: per(h.instructions),
            cycles: per(h.cycles),
            ipc: if h.cycles > 0.0 {
                h.instructions / h.cycles
            } else {
                0.0
            },
            cache_misses: per(h.cache_misses),
        }
    }
}
