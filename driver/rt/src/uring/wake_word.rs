//! The 64-bit word that names a task across threads: the executor id (16 bits), the task
//! slot's generation (24 bits) and the slot index (24 bits).
//!
//! A task waker carries it in place of a pointer ([`super::task_waker`]), the remote queue
//! of an executor stores it ([`super::remote_wake`]), and the task queue bounds its slots and
//! wraps its generations by the same widths ([`super::task_queue`]). Plain arithmetic: it
//! imports nothing.

/// Largest task slot index a waker can carry (exclusive).
pub(crate) const MAX_TASKS: u32 = 1 << 24;
/// Generations wrap at this mask.
pub(crate) const GEN_MASK: u32 = (1 << 24) - 1;
/// Largest executor id (exclusive).
pub(crate) const MAX_EXECUTORS: u32 = 1 << 16;

/// Packs (executor id, slot index, generation).
#[inline]
pub(crate) fn pack(exec: u32, index: u32, gen: u32) -> u64 {
    debug_assert!(exec < MAX_EXECUTORS && index < MAX_TASKS);
    (exec as u64) << 48 | ((gen & GEN_MASK) as u64) << 24 | index as u64
}

/// Splits a packed word into (executor id, slot index, generation).
#[inline]
pub(crate) fn unpack(word: u64) -> (u32, u32, u32) {
    (
        (word >> 48) as u32,
        (word as u32) & (MAX_TASKS - 1),
        ((word >> 24) as u32) & GEN_MASK,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips() {
        let w = pack(65_535, MAX_TASKS - 1, 0xFF_FFFF);
        assert_eq!(unpack(w), (65_535, MAX_TASKS - 1, 0xFF_FFFF));
        assert_eq!(unpack(pack(3, 7, 9)), (3, 7, 9));
    }
}
