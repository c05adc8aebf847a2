//! Heap allocations per request: with the `alloc-count` feature the bench installs a global
//! allocator that counts every allocation of the process (one relaxed atomic add each: a
//! cost both backends pay alike), and the OVERHEAD section reports allocations per request.
//! Without the feature nothing is installed and the figure is `null`.
//!
//! `cargo build --release -p doppio-bench --features alloc-count`

#[cfg(feature = "alloc-count")]
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicU64, Ordering};

    pub static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

    /// The system allocator, counting allocations.
    pub struct Counting;

    // SAFETY: every call is forwarded unchanged to the system allocator; only a counter is
    // added.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the caller upholds `alloc`'s contract, which we pass on.
            unsafe { System.alloc(layout) }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: as for `alloc`.
            unsafe { System.alloc_zeroed(layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // A growing buffer is an allocation too (it may move).
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: as for `alloc`.
            unsafe { System.realloc(ptr, layout, new_size) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: as for `alloc`.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;
}

/// Allocations (and reallocations) made by the process so far, if counting is built in.
pub fn allocations() -> Option<u64> {
    #[cfg(feature = "alloc-count")]
    {
        Some(counting::ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed))
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
