//! The options of `stress`: doppio's own, then the cassandra-stress command line.

// clap shows these doc comments as `--help`: `[load]` is the workload file's section and
// `[OPTIONS]` the usage's, not links.
#![allow(rustdoc::broken_intra_doc_links)]

use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::limits;

/// Options of `stress`: doppio's own, then the cassandra-stress command line after `--`.
#[derive(Debug, Clone, ClapArgs)]
pub struct StressArgs {
    /// Driver(s), as `run --driver`: doppio, doppio-uring, doppio-uring-sqpoll, scylla, or
    /// a list such as doppio,scylla to compare them.
    #[arg(long, default_value = "doppio")]
    pub(crate) driver: String,
    /// doppio's threads (shards) or tokio worker threads, 1 to 1024 (cassandra-stress's
    /// `-rate threads=` is the operations in flight, `run -p`).
    #[arg(short = 't', long, default_value_t = 1, value_parser = limits::threads)]
    pub(crate) threads: usize,
    /// Do not pin the threads that do request work to cores (as `run --no-pin`).
    #[arg(long)]
    pub(crate) no_pin: bool,
    /// The report's file (default in the current folder: doppio-stress-write-DATE.json and
    /// the like; for `user`, named for the profile).
    #[arg(short = 'o', long)]
    pub(crate) output: Option<PathBuf>,
    /// No progress output on stderr.
    #[arg(short = 'q', long)]
    pub(crate) quiet: bool,
    /// Print what would run (the `doppio run` options and the workload) and exit; nothing
    /// connects.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// The cassandra-stress command line: COMMAND [OPTIONS] [-GROUP OPTIONS]..., after `--`
    /// or as it is (everything from the command on is cassandra-stress's, `-rate` and all).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CASSANDRA-STRESS ARGS"
    )]
    pub(crate) words: Vec<String>,
}
