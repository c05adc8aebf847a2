//! Heap allocations per request: with the `alloc-count` feature the bench installs the
//! workspace's counting global allocator (`doppio-alloc-count`, counting allocations only:
//! one relaxed atomic add and a thread-local count per allocation, a cost both backends pay
//! alike), and the OVERHEAD section reports allocations per request of the whole process.
//! Without the feature nothing is installed and the figure is `null`.
//!
//! `cargo build --release -p doppio-bench --features alloc-count`

#[cfg(feature = "alloc-count")]
#[global_allocator]
static GLOBAL: doppio_alloc_count::CountingAlloc = doppio_alloc_count::CountingAlloc::new();

/// Allocations (and reallocations) made by the process so far, if counting is built in.
pub(crate) fn allocations() -> Option<u64> {
    #[cfg(feature = "alloc-count")]
    {
        Some(doppio_alloc_count::allocations())
    }
    #[cfg(not(feature = "alloc-count"))]
    {
        None
    }
}

#[cfg(all(test, feature = "alloc-count"))]
mod tests {
    #[test]
    fn allocations_are_counted() {
        let before = super::allocations().unwrap_or(0);
        let v: Vec<Box<u64>> = (0..100).map(Box::new).collect();
        std::hint::black_box(&v);
        assert!(super::allocations().unwrap_or(0) - before >= 100);
    }
}
