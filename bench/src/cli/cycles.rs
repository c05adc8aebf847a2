//! Which iteration numbers (and so keys) a loader draws ([`CyclesArgs`]), options `load`
//! and `run` share.

// clap shows these doc comments as `--help`: `[load]` is the workload file's section and
// `[OPTIONS]` the usage's, not links.
#![allow(rustdoc::broken_intra_doc_links)]

use clap::Args as ClapArgs;

use crate::engine::cycles::{CycleRange, LoaderSlice};

/// `--cycles START..END` or `--loader K/N`: the iteration numbers (and so the keys) of this
/// loader, so that loaders on several machines send different requests. Without either,
/// every phase draws 0, 1, 2, ...
#[derive(Debug, Clone, Default, ClapArgs)]
pub(crate) struct CyclesArgs {
    /// Draw the iteration numbers START..END (END exclusive; counts such as 500k, 1M).
    /// `load` runs each once (instead of its [load] count); a `run` phase bounded by time
    /// that exhausts the range wraps around within it, a count larger than it is refused.
    #[arg(long, value_name = "START..END", value_parser = CycleRange::parse, conflicts_with = "loader")]
    pub(crate) cycles: Option<CycleRange>,
    /// Be loader K of N (counted from 1): draw the K-th of N equal slices of the workload's
    /// key space (its [load] count, else its `rows` parameter). `index/N`: K from a
    /// Kubernetes Indexed Job's JOB_COMPLETION_INDEX (from 0) plus one.
    #[arg(long, value_name = "K/N|index/N", value_parser = LoaderSlice::parse)]
    pub(crate) loader: Option<LoaderSlice>,
}
