//! The options of `findmax`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args as ClapArgs;

use crate::engine::grid;

use super::connect::Connect;
use super::duration::parse_duration;
use super::limits;
use super::results::ResultArgs;

/// Options of `findmax`.
#[derive(Debug, Clone, ClapArgs)]
pub struct FindmaxArgs {
    /// Connection and workload; `--driver a,b` searches each backend's maximum, the
    /// backends alternating step by step.
    #[command(flatten)]
    pub(crate) connect: Connect,
    /// How results are fetched and consumed.
    #[command(flatten)]
    pub(crate) results: ResultArgs,
    /// Concurrent requests in total, 1 to 1,000,000 (the maximum found is that of this
    /// concurrency).
    #[arg(short = 'p', long, default_value_t = 128, value_parser = limits::concurrency)]
    pub(crate) concurrency: usize,
    /// The first step's rate, requests per second (1000, 10k).
    #[arg(long, default_value = "1k", value_name = "RATE", value_parser = crate::slo::parse_rate)]
    pub(crate) start: f64,
    /// Each step's rate is the previous one's times this (above 1).
    #[arg(long, default_value = "1.5", value_parser = crate::slo::parse_factor)]
    pub(crate) factor: f64,
    /// Each step's requests are each is released (sent) at the first point of this grid, counted
    /// from the phase's start, at or after its due time; the same grid for every backend, so
    /// that all batch their sends alike whatever their runtime's timer resolution. Latency
    /// still counts from the due time: the grid shows as lateness. 0: each request at its
    /// own due time. 0 to 1s; the default is the finest that tokio's timer keeps (bench/MANUAL.md).
    #[arg(long, value_name = "STEP", default_value = grid::DEFAULT_STEP_TEXT, value_parser = limits::release_grid)]
    pub(crate) release_grid: Duration,
    /// The highest rate tried (the last step, if every step before held).
    #[arg(long, default_value = "10M", value_name = "RATE", value_parser = crate::slo::parse_rate)]
    pub(crate) max_rate: f64,
    /// How long each step is measured, per backend (at least 100ms).
    #[arg(long, default_value = "5s", value_parser = limits::step_duration)]
    pub(crate) step_duration: Duration,
    /// Warmup at the step's rate before each measured step (not recorded).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub(crate) warmup: Duration,
    /// Bisection rounds (at most 30) after the search by factor: each runs a step halfway
    /// between a backend's highest rate held and the lowest that did not, narrowing that
    /// bracket.
    #[arg(long, default_value_t = 0, value_name = "ROUNDS", value_parser = limits::refine)]
    pub(crate) refine: u32,
    /// A latency objective that a step must meet to hold, PERCENTILE<DURATION (latency from
    /// each request's intended start), e.g. p99<10ms; repeatable.
    #[arg(long, value_name = "pN<DURATION", value_parser = crate::slo::Slo::parse)]
    pub(crate) slo: Vec<crate::slo::Slo>,
    /// Sample interval within a step (progress lines; at least 1ms).
    #[arg(short = 's', long = "sampling", default_value = "1s", value_parser = limits::sample_interval)]
    pub(crate) interval: Duration,
    /// The report's file (default: doppio-findmax-WORKLOAD-DATE.json in the current folder).
    #[arg(short = 'o', long)]
    pub(crate) output: Option<PathBuf>,
    /// A label stored in the report.
    #[arg(long)]
    pub(crate) tag: Option<String>,
}
