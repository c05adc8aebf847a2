//! What ends a subcommand ([`Failure`], with the exit code each maps to), and the typed
//! errors of the commands that have their own ([`RunFailure`], [`PlotError`],
//! [`SweepError`], [`CurveError`]) or that several share ([`UsageError`]: arguments that do
//! not make sense). Beneath the commands and the experiment: every command returns a
//! [`Failure`], and so does every experiment; this module imports neither.

use std::net::SocketAddr;
use std::path::PathBuf;

use plotters::drawing::DrawingAreaErrorKind;

use crate::backend::{SettingError, UnknownDriver};
use crate::cli::ConnectError;
use crate::engine::cycles::CyclesError;
use crate::engine::phase::{BackendError, PhaseError};
use crate::report::file::ReportError;
use crate::report::merge::MergeError;
use crate::stats::StatsError;
use crate::workload::WorkloadError;

/// A failure that ends a subcommand. [`Failure::exit_code`] maps it to the exit codes the
/// manual (bench/MANUAL.md) states: 2 when the command could not start (bad arguments or workload, a node that
/// cannot be reached, a refused login, an unreadable input file), 1 when a started run
/// failed (the node went away, a phase failed, the report could not be written).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Arguments or options that do not make sense together, or files they name that cannot
    /// be used.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// Connection options that cannot be used as given (a bad `-P`, a node name that does
    /// not resolve, an SQPOLL option without its driver).
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// A `--driver` that names no driver.
    #[error(transparent)]
    Driver(#[from] UnknownDriver),
    /// The workload could not be read or compiled.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A backend could not connect, log in, or prepare the workload's statements; nothing
    /// was measured.
    #[error(transparent)]
    Start(BackendError),
    /// A statement of the schema was refused.
    #[error(transparent)]
    Schema(BackendError),
    /// A report could not be read (or, by `doppio merge`, written).
    #[error(transparent)]
    Report(#[from] ReportError),
    /// `doppio plot` could not draw its reports.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// `doppio sweep` could not read its reports or write its table or plot.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// `doppio curve` could not use its folder or its `--from` reports, or (with `--from`)
    /// write its curve.
    #[error(transparent)]
    Curve(#[from] CurveError),
    /// `doppio cost` could not start its tools or one of its runs failed.
    #[error(transparent)]
    Cost(#[from] CostError),
    /// A file could not be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A histogram in a report could not be decoded or written.
    #[error(transparent)]
    Histogram(#[from] StatsError),
    /// The run (or load) started and then failed; what was measured is kept.
    #[error(transparent)]
    Run(#[from] RunFailure),
    /// `--cycles` or `--loader` cannot be used as given.
    #[error(transparent)]
    Cycles(#[from] CyclesError),
    /// Reports that cannot be merged.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// A driver setting is malformed, or one of the chosen backends cannot honour it.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// A cassandra-stress command line `doppio stress` cannot run as given.
    #[error(transparent)]
    Stress(#[from] crate::stress_cli::StressError),
    /// `doppio nemesis` could not start, could not carry its run out, or its check failed.
    #[error(transparent)]
    Nemesis(#[from] NemesisError),
    /// Ctrl-C or SIGTERM stopped the command; what was measured is kept.
    #[error("interrupted")]
    Interrupted,
}

impl Failure {
    /// Exit code of a command that could not start.
    pub(crate) const INPUT: u8 = 2;
    /// Exit code of a run that started and failed.
    pub(crate) const RUN: u8 = 1;

    /// The process's exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Run(_) => Self::RUN,
            Failure::Cost(
                CostError::Run { .. } | CostError::Output { .. } | CostError::Regressed { .. },
            ) => Self::RUN,
            Failure::Interrupted => crate::interrupt::EXIT_CODE,
            Failure::Nemesis(e) if e.before_start() => Self::INPUT,
            Failure::Nemesis(_) => Self::RUN,
            Failure::Usage(_)
            | Failure::Connect(_)
            | Failure::Driver(_)
            | Failure::Workload(_)
            | Failure::Start(_)
            | Failure::Schema(_)
            | Failure::Report(_)
            | Failure::Plot(_)
            | Failure::Sweep(_)
            | Failure::Curve(_)
            | Failure::Cost(_)
            | Failure::Io(_)
            | Failure::Histogram(_)
            | Failure::Cycles(_)
            | Failure::Merge(_)
            | Failure::Setting(_)
            | Failure::Stress(_) => Self::INPUT,
        }
    }

    /// A phase's failure: one whose statements could not be prepared before anything of
    /// this command ran could not start; any other is a failure of the started run.
    pub(crate) fn of_phase(e: PhaseError, started: bool) -> Self {
        match e {
            PhaseError::Prepare(e) if !started => Failure::Start(e),
            PhaseError::Prepare(e) | PhaseError::Run(e) => Failure::Run(RunFailure::Phase(e)),
        }
    }
}

/// Why `doppio nemesis` failed: options refused before anything starts
/// ([`NemesisError::before_start`]), or a run that could not be carried out, or whose check
/// found a lost write.
#[derive(Debug, thiserror::Error)]
pub enum NemesisError {
    /// `--driver` names a backend the nemesis does not run on yet.
    #[error(
        "nemesis: --driver {driver}: the nemesis runs on doppio and doppio-uring only (for now)"
    )]
    Driver {
        /// The driver given.
        driver: String,
    },
    /// `--keyspace` is not a plain CQL name.
    #[error(
        "nemesis: --keyspace {keyspace:?}: give a plain CQL name (a lowercase letter, then up \
         to 47 lowercase letters, digits or underscores)"
    )]
    Keyspace {
        /// The keyspace given.
        keyspace: String,
    },
    /// `--faults` names an unknown kind, or none.
    #[error("nemesis: --faults {faults:?}: give kill, pause or stop, comma-separated")]
    FaultKinds {
        /// The list given.
        faults: String,
    },
    /// The schedule cannot be drawn from the options (replication factor, durations).
    #[error("nemesis: the fault schedule: {0}")]
    Schedule(#[from] crate::nemesis::schedule::ScheduleError),
    /// The schedule drawn has no fault (the faults do not fit in the run).
    #[error(
        "nemesis: seed {seed} draws no fault within {duration:?} (lengthen -d, or shorten \
         --fault-max, --mean-gap or --settle)"
    )]
    NoFault {
        /// The seed.
        seed: u64,
        /// The run's length.
        duration: std::time::Duration,
    },
    /// The schedule takes more than one node down at once, which this first runner does not
    /// do yet.
    #[error(
        "nemesis: replication factor {replication_factor} lets seed {seed} take {down} nodes \
         down at once; the runner takes one at a time for now (--replication-factor 3 or 4)"
    )]
    TooManyDown {
        /// The replication factor.
        replication_factor: usize,
        /// The seed.
        seed: u64,
        /// The most nodes down at once.
        down: usize,
    },
    /// `--out` is not an existing folder.
    #[error("nemesis: --out {}: not an existing folder", path.display())]
    Out {
        /// The folder given.
        path: PathBuf,
    },
    /// `--cluster-script` is not a file.
    #[error("nemesis: --cluster-script {}: no such file", path.display())]
    Script {
        /// The script given.
        path: PathBuf,
    },
    /// `--node` does not resolve.
    #[error("nemesis: --node {node}: {why}")]
    Node {
        /// The node given.
        node: String,
        /// Why it does not resolve.
        why: String,
    },
    /// The backend failed: the table could not be created, the writers or the read-back
    /// could not run.
    #[error("nemesis: {step}: {source}")]
    Backend {
        /// What it was doing.
        step: &'static str,
        /// Why.
        #[source]
        source: BackendError,
    },
    /// The cluster script could not apply or heal a fault, or the cluster could not be made
    /// whole again.
    #[error("nemesis: {0}")]
    Cluster(String),
    /// The history file does not read back as it was recorded.
    #[error("nemesis: {} does not read back as it was recorded", path.display())]
    HistoryMismatch {
        /// The file.
        path: PathBuf,
    },
    /// The history could not be written or checked.
    #[error("nemesis: {0}")]
    History(#[from] crate::nemesis::history::HistoryFileError),
    /// The history breaks check (a)'s rule of a distinct value per write.
    #[error("nemesis: {0}")]
    Check(#[from] crate::nemesis::acked_writes::AckedWritesError),
    /// The report could not be written.
    #[error("nemesis: write {}: {source}", path.display())]
    Report {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The run was carried out and its check failed (or a fault failed): see the report.
    #[error("nemesis: FAILED ({why}); the report: {}", report.display())]
    Failed {
        /// What failed.
        why: String,
        /// The report.
        report: PathBuf,
    },
}

impl NemesisError {
    /// Whether the options were refused before anything started (exit 2; the others: 1).
    pub(crate) fn before_start(&self) -> bool {
        matches!(
            self,
            NemesisError::Driver { .. }
                | NemesisError::Keyspace { .. }
                | NemesisError::FaultKinds { .. }
                | NemesisError::Schedule(_)
                | NemesisError::NoFault { .. }
                | NemesisError::TooManyDown { .. }
                | NemesisError::Out { .. }
                | NemesisError::Script { .. }
                | NemesisError::Node { .. }
        )
    }
}

/// Arguments that do not make sense together, or a file they name that cannot be used:
/// found before anything starts.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// `--server-pid` names no process.
    #[error(transparent)]
    ServerPid(#[from] crate::probe::server_cpu::ServerCpuError),
    /// `--driver` named none.
    #[error(
        "no driver given (--driver doppio, doppio-uring, doppio-uring-sqpoll, scylla or null)"
    )]
    NoDriver,
    /// `findmax --start` above `--max-rate`.
    #[error(
        "--start {start:.0} is above --max-rate {max_rate:.0} (lower --start or raise --max-rate)"
    )]
    StartAboveMaxRate {
        /// `--start`.
        start: f64,
        /// `--max-rate`.
        max_rate: f64,
    },
    /// `doppio plot` given findmax reports and run reports at once.
    #[error("plot: findmax reports and run reports cannot be drawn together (plot each kind on its own)")]
    MixedPlot,
    /// `--validate` with the null backend, which returns no rows.
    #[error(
        "--validate: the null backend returns no rows to compare (it measures the bench \
         engine alone)"
    )]
    ValidateNull,
    /// `--validate` with a workload whose run statements read no loaded row.
    #[error(
        "--validate: no run statement of workload {workload} says which loaded row it reads \
         (`validate = \"...\"`, see bench/workloads/README.md)"
    )]
    NothingToValidate {
        /// The workload's name.
        workload: String,
    },
    /// `doppio load` with a workload that has no `[load]` section.
    #[error("workload {workload} has no [load] section")]
    NoLoadSection {
        /// The workload's name.
        workload: String,
    },
    /// `--page-size` above what the protocol carries.
    #[error("--page-size {page_size} is too large (at most {max})", max = i32::MAX)]
    PageSizeTooLarge {
        /// The size given.
        page_size: u32,
    },
    /// `--hdr-log`'s file could not be created.
    #[error("--hdr-log {}: {source}", path.display())]
    HdrLog {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `--prometheus`'s address could not be listened on.
    #[error("--prometheus {addr}: {source}")]
    Prometheus {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `doppio show` given a findmax report and a baseline.
    #[error(
        "{} is a findmax report: `doppio show` prints one alone; `doppio plot {} {}` draws both",
        report.display(),
        report.display(),
        baseline.display()
    )]
    FindmaxWithBaseline {
        /// The findmax report.
        report: PathBuf,
        /// The baseline given.
        baseline: PathBuf,
    },
    /// `doppio show --flamediff` without a baseline to compare with.
    #[error("--flamediff draws a report against a baseline: `doppio show NEW.json BASE.json --flamediff OUT.svg`")]
    FlamediffWithoutBaseline,
    /// `doppio show --flamediff` on a report whose first backend has no folded stacks.
    #[error(
        "{}: its first backend has no flamegraph stacks to compare (run it with --flamegraph \
         PREFIX; --anatomy alone keeps none)",
        report.display()
    )]
    NoFoldedStacks {
        /// The report.
        report: PathBuf,
    },
    /// `doppio show --flamediff`: a report's folded stacks could not be read.
    #[error("cannot read the folded stacks {} that {} names: {source}", path.display(), report.display())]
    FoldedUnreadable {
        /// The stacks' file.
        path: PathBuf,
        /// The report that names it.
        report: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `doppio show --flamediff`: the differential flamegraph could not be drawn.
    #[error("--flamediff: {0}")]
    Flamediff(#[source] crate::probe::flame::FlameError),
    /// `doppio hdr` asked for a driver the report has no results for.
    #[error("{} has no results for driver `{driver}`", report.display())]
    NoDriverResults {
        /// The report.
        report: PathBuf,
        /// The driver asked for.
        driver: String,
    },
    /// `doppio hdr` asked for a statement the report has no histogram for.
    #[error(
        "{} has no statement `{statement}` for driver `{driver}` (it has: {})",
        report.display(),
        if names.is_empty() { "none: an older report".to_owned() } else { names.join(", ") }
    )]
    NoStatement {
        /// The report.
        report: PathBuf,
        /// The statement asked for.
        statement: String,
        /// The driver.
        driver: String,
        /// The statements the report has for it.
        names: Vec<String>,
    },
    /// An output file (`option`'s) in a folder that does not exist.
    #[error("{option} {}: the folder {} does not exist", path.display(), folder.display())]
    NoFolder {
        /// The option naming the file.
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
    },
    /// `doppio list`'s folder is not one.
    #[error("{}: not a folder (doppio list FOLDER lists the reports in FOLDER)", path.display())]
    NotAFolder {
        /// The path given.
        path: PathBuf,
    },
    /// An output file (`option`'s) that is a folder.
    #[error("{option} {}: a folder, not a file", path.display())]
    IsFolder {
        /// The option naming the file.
        option: &'static str,
        /// The path.
        path: PathBuf,
    },
    /// An output file (`option`'s) that cannot be written.
    #[error("{option} {}: cannot write a file in {}: {source}", path.display(), folder.display())]
    NotWritable {
        /// The option naming the file.
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Every default report name of this run is taken already.
    #[error(
        "{} and {tried} numbered names after it exist already: name the report with -o",
        base.display()
    )]
    NoFreeReportName {
        /// The first default name.
        base: PathBuf,
        /// How many names were tried.
        tried: u32,
    },
}

/// How a started run (or load, or search) failed; what was measured is kept.
#[derive(Debug, thiserror::Error)]
pub enum RunFailure {
    /// A phase failed as a whole (its statements, its workers).
    #[error(transparent)]
    Phase(BackendError),
    /// `--equal-load` or `curve`: a backend completed nothing at full speed, so there is no
    /// rate to run them all at.
    #[error(
        "no capacity to share (--equal-load, curve): a backend completed nothing at full speed \
         ({})",
        .0.iter().map(|(d, c)| format!("{d} {c:.0}/s")).collect::<Vec<_>>().join(", ")
    )]
    NoCapacity(std::collections::BTreeMap<String, f64>),
    /// A warmup stopped before its limit (the node went away).
    #[error("{driver} (during {warmup}): {why}")]
    WarmupAborted {
        /// The backend.
        driver: &'static str,
        /// Which warmup (`the warmup`, `a warmup`).
        warmup: &'static str,
        /// Why it stopped.
        why: String,
    },
    /// A measured stretch stopped before its limit (the node went away).
    #[error("{driver}: {why}")]
    Aborted {
        /// The backend.
        driver: &'static str,
        /// Why it stopped.
        why: String,
    },
    /// The load stopped before its count (the node went away).
    #[error("{0}")]
    LoadAborted(String),
    /// Requests of the load failed.
    #[error("{0} load requests failed")]
    LoadErrors(u64),
    /// `--validate` saw values that differ or rows that are missing (one entry per backend).
    #[error("validation failed: {}", .0.join("; "))]
    Validation(Vec<String>),
    /// The report of what was measured could not be written.
    #[error("the report could not be written: {0}")]
    Report(#[source] ReportError),
    /// `--flamegraph` was asked for and not made (the report is written; it says why too).
    #[error("no flamegraph: {0}")]
    NoFlamegraph(String),
    /// `--anatomy` was asked for and its stacks not sampled or read back (the report is
    /// written; it says why too).
    #[error("no anatomy: {0}")]
    NoAnatomy(String),
    /// `doppio curve` measured its points but could not write their curve.
    #[error("the curve could not be written: {0}")]
    Curve(#[source] CurveError),
}

/// Why `doppio plot` could not draw.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// A `--percentiles` entry that is not a percentile.
    #[error("--percentiles: `{0}` is not a percentile (0 to 100)")]
    Percentile(String),
    /// `--percentiles` names none.
    #[error("--percentiles: none given")]
    NoPercentile,
    /// A sample's histogram could not be decoded.
    #[error("a sample's histogram: {0}")]
    Histogram(#[source] StatsError),
    /// No backend of the run reports has a sample.
    #[error("the reports have no backend with samples")]
    NoSamples,
    /// No backend of the findmax reports has a step.
    #[error("the findmax reports have no backend with steps")]
    NoSteps,
    /// The SVG file could not be drawn or written.
    #[error("{}: {source}", path.display())]
    Draw {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: DrawingAreaErrorKind<std::io::Error>,
    },
}

/// Why `doppio sweep` could not make its table or plot.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A report could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The report.
        path: PathBuf,
        /// Why.
        #[source]
        source: ReportError,
    },
    /// No report was given.
    #[error("no report given")]
    NoReport,
    /// The markdown table could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The SVG plot could not be drawn or written.
    #[error("{}: {source}", path.display())]
    Draw {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: DrawingAreaErrorKind<std::io::Error>,
    },
}

/// Why `doppio cost` could not measure.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    /// Valgrind (or its `callgrind_annotate`) is not installed.
    #[error(
        "`{tool}` was not found: `doppio cost` counts instructions and allocations under \
         Valgrind (apt-get install valgrind)"
    )]
    NoValgrind {
        /// The program looked for.
        tool: &'static str,
    },
    /// An option out of range.
    #[error("{0}")]
    Option(String),
    /// The stub for the scylla runs could not start.
    #[error("the stub for scylla-rust-driver's runs: {0}")]
    Stub(String),
    /// A run under Valgrind failed; its log is kept.
    #[error("{what} failed ({status}); its output: {}", log.display())]
    Run {
        /// The run.
        what: String,
        /// How it ended.
        status: String,
        /// Its Valgrind and program output.
        log: PathBuf,
    },
    /// Doppio's figures rose past the baseline's tolerance.
    #[error(
        "{count} of doppio's cost figures regressed against {} (the CHECK lines above)",
        baseline.display()
    )]
    Regressed {
        /// Scenarios that regressed.
        count: usize,
        /// The baseline.
        baseline: PathBuf,
    },
    /// A profile could not be read.
    #[error("{}: {why}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        why: String,
    },
}

/// Why `doppio curve` could not use its `--out` folder or its `--from` reports, or write
/// its curve.
#[derive(Debug, thiserror::Error)]
pub enum CurveError {
    /// `--out` names something that is not a folder.
    #[error("--out {}: not a folder (give a folder for the curve's files; it is created if missing)", path.display())]
    OutNotFolder {
        /// The path given.
        path: PathBuf,
    },
    /// `--out` holds files already.
    #[error(
        "--out {}: the folder is not empty ({count} entries, such as {first}); give a new or \
         empty folder, or --force to write into it",
        path.display()
    )]
    OutNotEmpty {
        /// The folder.
        path: PathBuf,
        /// How many entries it holds.
        count: usize,
        /// The first of them, by name.
        first: String,
    },
    /// `--out` could not be created, read or written in.
    #[error("--out {}: {source}", path.display())]
    Out {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `--from` report could not be read.
    #[error("--from {source}")]
    Read {
        /// Why (it names the file).
        #[source]
        source: ReportError,
    },
    /// A `--from` report that is no point of a load curve.
    #[error(
        "--from {}: not a point of a load curve: its config has no equal_load (`doppio curve` \
         writes its points so, and so does `doppio run --equal-load`)",
        path.display()
    )]
    NotAPoint {
        /// The report.
        path: PathBuf,
    },
    /// Two `--from` reports at the same load.
    #[error("--from {} and {}: both at load {percent} % (give one report per load)", first.display(), second.display())]
    SameLoad {
        /// The first report at that load.
        first: PathBuf,
        /// The second.
        second: PathBuf,
        /// The load, in percent.
        percent: String,
    },
    /// No point is left to draw: every report was left out.
    #[error("no point to draw a curve of: {}", .0.join("; "))]
    NoPoint(Vec<String>),
    /// A file of the curve could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The SVG plot could not be drawn or written.
    #[error("{}: {source}", path.display())]
    Draw {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: DrawingAreaErrorKind<std::io::Error>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_statement_names_the_ones_the_report_has() {
        let missing = |names: &[&str]| {
            UsageError::NoStatement {
                report: "r.json".into(),
                statement: "read".into(),
                driver: "doppio".into(),
                names: names.iter().map(|&n| n.to_owned()).collect(),
            }
            .to_string()
        };
        assert_eq!(
            missing(&["insert", "select"]),
            "r.json has no statement `read` for driver `doppio` (it has: insert, select)"
        );
        assert_eq!(
            missing(&[]),
            "r.json has no statement `read` for driver `doppio` (it has: none: an older report)"
        );
        assert_eq!(
            Failure::from(UsageError::NoDriver).exit_code(),
            Failure::INPUT
        );
    }
}
