//! doppio-rt's integration tests, one test binary (`cargo test -p doppio-rt --test it`): a
//! module per file and `support`, the helpers they share.
//!
//! Every test first takes its file's turn (`doppio_test_support::file_turn`): it runs beside
//! tests of its own file only, as when each file was its own binary (the wake-up counts of
//! `uring_idle_wait` were written for that). The counting allocator below counts per thread:
//! `uring_alloc` reads its executor thread's count alone.

#[global_allocator]
static GLOBAL: doppio_alloc_count::CountingAlloc = doppio_alloc_count::CountingAlloc::new();

mod support;
mod uring_alloc;
mod uring_idle_wait;
mod uring_lazy_send;
mod uring_runtime;
