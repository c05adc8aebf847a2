//! The options of `curve`.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::connect::Connect;
use super::limits;
use super::results::ResultArgs;
use super::run::RoundArgs;

/// Options of `curve`.
#[derive(Debug, Clone, ClapArgs)]
pub struct CurveArgs {
    /// Connection and workload; `--driver a,b,c` the backends compared at every load.
    #[command(flatten)]
    pub(crate) connect: Connect,
    /// The rounds at each load: their length, warmup, concurrency, order.
    #[command(flatten)]
    pub(crate) rounds: RoundArgs,
    /// How results are fetched and consumed.
    #[command(flatten)]
    pub(crate) results: ResultArgs,
    /// The loads, in the order run: shares of the slowest backend's capacity (70% or 0.7,
    /// above 0 and at most 100 %), separated by commas, at most 20, none twice.
    #[arg(long, value_name = "SHARE,...", default_value = "10%,30%,50%,70%,90%",
          value_parser = limits::loads, conflicts_with = "from")]
    pub(crate) loads: limits::Loads,
    /// The folder of the results (one report per load, `load-30.json` and its text
    /// `load-30.txt`, and the curve: `curve.json`, `curve.md`, `curve.svg`); created if
    /// missing, refused if it holds anything (unless --force).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Write into an --out folder that holds files already (files of the same names are
    /// replaced, others are left as they are).
    #[arg(long)]
    pub(crate) force: bool,
    /// Run nothing: draw the curve from these reports (each a point of an earlier `doppio
    /// curve`, or a `run --equal-load`: its `config.equal_load` gives the load).
    #[arg(long, value_name = "REPORT.json", num_args = 1..)]
    pub(crate) from: Vec<PathBuf>,
    /// A label stored in every report.
    #[arg(long)]
    pub(crate) tag: Option<String>,
}
