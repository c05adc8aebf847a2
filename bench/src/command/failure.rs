//! [`Failure`]: what ends a subcommand, and the exit code each failure maps to. The bottom of
//! the command layer: every command returns it, it imports no command.

use crate::backend::SettingError;
use crate::engine::cycles::CyclesError;
use crate::engine::phase::{BackendError, PhaseError};
use crate::report::merge::MergeError;
use crate::workload::WorkloadError;

/// A failure that ends a subcommand. [`Failure::exit_code`] maps it to the exit codes the
/// README states: 2 when the command could not start (bad arguments or workload, a node that
/// cannot be reached, a refused login, an unreadable input file), 1 when a started run
/// failed (the node went away, a phase failed, the report could not be written).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Arguments or options that do not make sense (a bad `-P`, an unknown driver, a node
    /// name that does not resolve).
    #[error("{0}")]
    Usage(String),
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
    /// An input file (a report, a folder) could not be read or written.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A histogram in a report could not be decoded or written.
    #[error(transparent)]
    Histogram(#[from] crate::stats::StatsError),
    /// The run (or load) started and then failed; what was measured is kept.
    #[error("{0}")]
    Run(String),
    /// `--cycles` or `--loader` cannot be used as given.
    #[error(transparent)]
    Cycles(#[from] CyclesError),
    /// Reports that cannot be merged.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// A driver setting is malformed, or one of the chosen backends cannot honour it.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// Ctrl-C or SIGTERM stopped the command; what was measured is kept.
    #[error("interrupted")]
    Interrupted,
}

impl Failure {
    /// Exit code of a command that could not start.
    pub const INPUT: u8 = 2;
    /// Exit code of a run that started and failed.
    pub const RUN: u8 = 1;

    /// The process's exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Run(_) => Self::RUN,
            Failure::Interrupted => crate::interrupt::EXIT_CODE,
            Failure::Usage(_)
            | Failure::Workload(_)
            | Failure::Start(_)
            | Failure::Schema(_)
            | Failure::Input(_)
            | Failure::Io(_)
            | Failure::Histogram(_)
            | Failure::Cycles(_)
            | Failure::Merge(_)
            | Failure::Setting(_) => Self::INPUT,
        }
    }

    /// A failure of a started run.
    pub fn run(message: impl std::fmt::Display) -> Self {
        Failure::Run(message.to_string())
    }

    /// A phase's failure: one whose statements could not be prepared before anything of
    /// this command ran could not start; any other is a failure of the started run.
    pub(crate) fn of_phase(e: PhaseError, started: bool) -> Self {
        match e {
            PhaseError::Prepare(e) if !started => Failure::Start(e),
            PhaseError::Prepare(e) | PhaseError::Run(e) => Failure::run(e),
        }
    }
}
