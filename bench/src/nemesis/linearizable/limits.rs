//! How much memory and work the checker may spend: the search's cache of configurations is
//! bounded, so an unusually tangled history is reported undecided rather than exhausting the
//! machine.

/// The checker's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The memory of one key's search (and of each search for its shortest failing prefix).
    pub(crate) cache_bytes: usize,
    /// The memory of each search that asks whether one operation matters to a violation.
    pub(crate) core_cache_bytes: usize,
    /// How many operations (the last answered before the failure) are asked whether they
    /// matter; earlier ones stay in the violation's core unasked.
    pub(crate) core_ops: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            cache_bytes: 512 << 20,
            core_cache_bytes: 16 << 20,
            core_ops: 256,
        }
    }
}
