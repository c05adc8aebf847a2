//! The options of `cost`.

use std::path::PathBuf;

use clap::Args as ClapArgs;

/// Options of `cost`.
#[derive(Debug, Clone, ClapArgs)]
pub struct CostArgs {
    /// Requests measured per scenario (after the warm-up): the figure is the difference of
    /// a run with them and one without, divided by them.
    #[arg(long, default_value_t = 1000)]
    pub(crate) requests: u64,
    /// Requests made before the measured ones, in both runs.
    #[arg(long, default_value_t = 100)]
    pub(crate) warmup: u64,
    /// Only this scenario (repeat for several; default: all).
    #[arg(long)]
    pub(crate) scenario: Vec<String>,
    /// Only this driver, doppio or scylla (default: both).
    #[arg(long)]
    pub(crate) driver: Option<String>,
    /// Folder for the profiles, logs, cost.md and cost.json (created if missing).
    #[arg(long, default_value = "cost")]
    pub(crate) out: PathBuf,
    /// Compare doppio's figures with this baseline (an earlier cost.json, made with the
    /// same build profile, warm-up and requests) and fail when a scenario's instructions
    /// per request rose by more than 2 % or its allocations per request rose at all. To
    /// accept a change deliberately, copy the new cost.json over the baseline in the same
    /// commit.
    #[arg(long, value_name = "COST_JSON")]
    pub(crate) check: Option<PathBuf>,
}
