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
    /// ScyllaDB: connections that landed on another shard than their slot's (through the
    /// plain port, where the node picks the shard, or before the node's shards were known)
    /// and were kept serving while the slot tried again in the background for one on its
    /// own shard.
    pub wrong_shard: u64,
    /// The background tries for those: each a connection opened towards the slot's shard
    /// (kept only if it landed there) or a connect that failed; a bounded number per
    /// wrong-shard connection.
    pub wrong_shard_attempts: u64,
    /// Wrong-shard connections replaced by one on their slot's shard (then closed once
    /// their requests in flight were answered).
    pub wrong_shard_replaced: u64,
    /// Wrong-shard connections kept for good: every background try landed elsewhere or
    /// failed (the connection still serves; it is replaced only if it closes).
    pub wrong_shard_kept: u64,
}
