//! The command line's top: [`Cli`] and its subcommands ([`Command`], `profile`'s
//! [`ProfileCommand`]), and `cost-child`, the command read before it ([`CostChildArgs`]).

// clap shows these doc comments as `--help`: `[load]` is the workload file's section and
// `[OPTIONS]` the usage's, not links.
#![allow(rustdoc::broken_intra_doc_links)]

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::connect::Connect;
use super::cost::CostArgs;
use super::curve::CurveArgs;
use super::findmax::FindmaxArgs;
use super::load::LoadArgs;
use super::nemesis::NemesisArgs;
use super::run::RunArgs;
use super::stress::StressArgs;

/// `doppio cost-child`: one run of a `cost` scenario, in the process Valgrind watches (used
/// by `doppio cost`). A command of its own, read before [`Cli`] is built (`main`), so that
/// the figures counted in that process (`empty`'s above all: the process's whole start-up)
/// do not move whenever the rest of the command line grows: clap builds every subcommand's
/// parser when it parses.
#[derive(Debug, Parser)]
#[command(name = "doppio cost-child")]
pub struct CostChildArgs {
    /// doppio or scylla.
    #[arg(long)]
    pub driver: String,
    /// The scenario.
    #[arg(long)]
    pub scenario: String,
    /// Requests to make.
    #[arg(long)]
    pub requests: u64,
    /// The stub to talk to (scylla's runs).
    #[arg(long)]
    pub stub: Option<std::net::SocketAddr>,
}

/// The first argument that selects [`CostChildArgs`] over [`Cli`].
pub const COST_CHILD: &str = "cost-child";

/// A latte-class CQL benchmark with a one-flag backend swap (doppio on glommio, doppio on its
/// own io_uring runtime, or scylla-rust-driver).
///
/// An option given twice takes its last value (repeatable ones, such as `-P`, collect every
/// value), so wrappers such as `scripts/demo.sh` can set defaults that the user overrides.
#[derive(Debug, Parser)]
#[command(name = "doppio", version, about, long_about = None, args_override_self = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// One value per process, parsed once: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Creates the workload's schema (keyspaces, tables).
    Schema(Connect),
    /// Fills the workload's tables (its [load] section).
    Load(LoadArgs),
    /// Runs the workload and writes a report.
    Run(RunArgs),
    /// The load curve: probes each backend's capacity, then runs them all in rounds at each
    /// of several loads (shares of the slowest one's capacity), writing one report per load
    /// and the curve of client CPU, syscalls, waits and latency per request against load
    /// (curve.json, curve.md, curve.svg) into a folder. `--from` draws the curve from the
    /// reports of an earlier one.
    Curve(CurveArgs),
    /// Finds the highest constant rate each backend holds: the rate is raised step by step
    /// until the achieved rate falls below 95 % of the target, more than 1 % of requests
    /// fail, or a latency objective (--slo) is broken. Prints a table per backend and writes
    /// a JSON report (`doppio plot` draws it).
    Findmax(FindmaxArgs),
    /// Prints a report, or two side by side with change and p-value.
    Show {
        /// The report.
        report: PathBuf,
        /// A baseline to compare with.
        baseline: Option<PathBuf>,
        /// Also print the per-sample LOG.
        #[arg(long)]
        log: bool,
        /// With a baseline: also draw the differential flamegraph of CPU per request of the
        /// two reports' first backends into this SVG (both runs made with --flamegraph; red
        /// where the report spends more per request than the baseline).
        #[arg(long, value_name = "SVG")]
        flamediff: Option<PathBuf>,
    },
    /// Writes a report's latency samples as an HdrHistogram interval log.
    Hdr {
        /// The report.
        report: PathBuf,
        /// Output file (.hlog).
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// Which backend of the report (default: the first).
        #[arg(long)]
        driver: Option<String>,
        /// One run statement's histogram (by its name) instead of the samples: one interval
        /// spanning the measured time (per-statement histograms are kept per run, not per
        /// sample).
        #[arg(long)]
        statement: Option<String>,
    },
    /// Lists the reports in a folder: tag, date, workload, throughput.
    List {
        /// The folder (default: the current one).
        dir: Option<PathBuf>,
    },
    /// Summarises runs at several concurrencies: a markdown table (stdout, and --markdown)
    /// and a plot of throughput and CPU per request against concurrency (--svg).
    Sweep {
        /// The reports, one per concurrency.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Also write the table here.
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Write the plot here (SVG).
        #[arg(long)]
        svg: Option<PathBuf>,
        /// The plot's title.
        #[arg(long, default_value = "doppio vs scylla-rust-driver")]
        title: String,
    },
    /// cassandra-stress user profiles (YAML): `doppio profile convert p.yaml > p.toml` writes
    /// the doppio workload a profile runs as (bench/PROFILES.md); `schema`, `run`, `curve`
    /// and `findmax` also take `--profile p.yaml` in place of `-w`.
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Runs a cassandra-stress command line (after `--`) as cassandra-stress would, on the
    /// backend(s) of --driver: `doppio stress -- write n=1M -rate threads=64 -node 10.0.0.1`.
    /// Creates the schema, then runs as `doppio run` and writes its report
    /// (bench/STRESS.md: what is supported, and what each option becomes).
    Stress(StressArgs),
    /// User-space instructions and heap allocations per request of doppio and
    /// scylla-rust-driver, counted under Valgrind (Callgrind, DHAT): figures that do not move
    /// from run to run. Six scenarios (empty, insert, select_1, select_100, select_paged,
    /// batch_64) against the stub; doppio on its simulated runtime, scylla on a
    /// current-thread tokio. Prints a table and writes cost.md and cost.json into --out.
    Cost(CostArgs),
    /// Plots throughput and latency percentiles over time (SVG): one line per backend of
    /// each report (merged reports too), two panels stacked. Findmax reports are drawn
    /// against the target rate instead: achieved rate and p99 of each step.
    Plot {
        /// The reports.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// The plot's file (SVG).
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// Latency percentiles to draw, comma-separated.
        #[arg(long, default_value = "50,99")]
        percentiles: String,
        /// The plot's title (default: "throughput and latency over time", for findmax
        /// reports "achieved rate and p99 against target rate").
        #[arg(long)]
        title: Option<String>,
    },
    /// Combines the reports of one test run made on several loader machines into one:
    /// histograms added, requests and throughputs summed over wall-clock-aligned samples,
    /// overheads kept per machine, each machine's config kept.
    Merge {
        /// The machines' reports (at least two).
        #[arg(required = true, num_args = 2..)]
        reports: Vec<PathBuf>,
        /// The merged report's file.
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// The runs were made one after the other, not at once: merge them although their
        /// measured times do not overlap (refused otherwise: not one test run).
        #[arg(long)]
        sequential: bool,
    },
    /// The nemesis (bench/NEMESIS.md): on a local Cassandra cluster, distinct QUORUM writes
    /// while a seeded schedule kills, pauses or stops nodes through the cluster script;
    /// then every node healed, every key read back at ALL, and no acknowledged write may be
    /// missing. Writes the history (history.jsonl) and a report (nemesis.json) into --out;
    /// exits 1 when the check fails.
    Nemesis(NemesisArgs),
}

/// What `doppio profile` does.
#[derive(Debug, Clone, Subcommand)]
pub enum ProfileCommand {
    /// Prints the doppio TOML workload a cassandra-stress user profile converts to (what
    /// could not be carried over is listed on stderr and in the TOML's comments).
    Convert {
        /// The profile (YAML); several, comma-separated, convert into one workload that
        /// runs them together (`a.yaml,b.yaml`, operations named `SPECNAME.OP`).
        profile: String,
    },
}
