//! A pool's counters: [`PoolStats`].

/// Counters of one pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Connections opened (first ones and replacements).
    pub opened: u64,
    /// Connect attempts that failed.
    pub failed_attempts: u64,
    /// Connections that closed after opening.
    pub closed: u64,
    /// Connections aimed at the shard-aware port that landed elsewhere (the port did not
    /// answer: the connect fell back to the plain port).
    pub shard_aware_fallbacks: u64,
}
