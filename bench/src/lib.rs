//! The doppio benchmark as a library: workloads, the backend-neutral engine, the two
//! backends (doppio and scylla-rust-driver), statistics, driver-overhead measurement and
//! reports. The `doppio` binary (src/main.rs) is its command line.
//!
//! Seams: [`workload`] knows no driver; [`engine`] knows no driver either (backends plug in
//! through [`engine::BenchSession`]); [`backend`] holds everything driver-specific.

pub mod alloc_count;
pub mod backend;
pub mod cli;
pub mod engine;
pub mod flame;
pub mod overhead;
pub mod report;
pub mod run;
pub mod stats;
pub mod sweep;
pub mod units;
pub mod workload;
