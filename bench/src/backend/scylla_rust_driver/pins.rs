//! The cores the scylla backend's request threads are pinned to ([`Pins`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::error::err;
use crate::engine::phase::BackendError;

/// The cores request threads are pinned to, and whether pinning one failed (a tokio
/// worker's start hook cannot return an error: it is checked after the fact).
#[derive(Debug)]
pub(super) struct Pins {
    pub(super) cores: Vec<usize>,
    next: AtomicUsize,
    failed: AtomicBool,
}

impl Pins {
    /// `cores` (empty: no pinning), checked against the cores this machine has.
    pub(super) fn new(cores: Vec<usize>) -> Result<Self, BackendError> {
        if !cores.is_empty() {
            let available: Vec<usize> = core_affinity::get_core_ids()
                .unwrap_or_default()
                .into_iter()
                .map(|c| c.id)
                .collect();
            if let Some(missing) = cores.iter().find(|c| !available.contains(c)) {
                return Err(err(format!(
                    "cannot pin a thread to core {missing}: the cores this process may use are \
                     {available:?} (fewer threads, or --no-pin)"
                )));
            }
        }
        Ok(Self {
            cores,
            next: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
        })
    }

    /// Pins the calling thread to the `k`th core (round-robin), if pinning.
    pub(super) fn pin(&self, k: usize) {
        if let Some(&id) = self.cores.get(k % self.cores.len().max(1)) {
            if !core_affinity::set_for_current(core_affinity::CoreId { id }) {
                self.failed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Pins the calling thread to the next core, round-robin (tokio's thread start hook).
    pub(super) fn pin_next(&self) {
        self.pin(self.next.fetch_add(1, Ordering::Relaxed));
    }

    /// An error if a thread could not be pinned.
    pub(super) fn check(&self) -> Result<(), BackendError> {
        if self.failed.load(Ordering::Relaxed) {
            return Err(err(format!(
                "a thread could not be pinned to its core (cores {:?}; --no-pin runs unpinned)",
                self.cores
            )));
        }
        Ok(())
    }
}
