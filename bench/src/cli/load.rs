//! The options of `load`.

use std::time::Duration;

use clap::Args as ClapArgs;

use crate::engine::grid;
use crate::engine::schedule::RateSchedule;

use super::connect::Connect;
use super::cycles::CyclesArgs;
use super::limits;

/// Options of `load`.
#[derive(Debug, Clone, ClapArgs)]
pub struct LoadArgs {
    /// Connection and workload.
    #[command(flatten)]
    pub(crate) connect: Connect,
    /// Concurrent requests in total (1 to 1,000,000).
    #[arg(short = 'p', long, default_value_t = 256, value_parser = limits::concurrency)]
    pub(crate) concurrency: usize,
    /// Rate limit, requests per second in total: a number or a schedule (as `run -r`).
    #[arg(short = 'r', long, value_name = "RATE|SCHEDULE", value_parser = limits::rate_limit)]
    pub(crate) rate: Option<RateSchedule>,
    /// With a rate: each request is released (sent) at the first point of this grid, counted
    /// from the phase's start, at or after its due time; the same grid for every backend, so
    /// that all batch their sends alike whatever their runtime's timer resolution. Latency
    /// still counts from the due time: the grid shows as lateness. 0: each request at its
    /// own due time. 0 to 1s; the default is the finest that tokio's timer keeps (bench/MANUAL.md).
    #[arg(long, value_name = "STEP", default_value = grid::DEFAULT_STEP_TEXT, value_parser = limits::release_grid)]
    pub(crate) release_grid: Duration,
    /// Which iteration numbers this loader draws its keys from (several loader machines).
    #[command(flatten)]
    pub(crate) cycles: CyclesArgs,
}
