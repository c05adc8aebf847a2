//! The command line: `doppio schema|load|run|curve|findmax|show|hdr|list|sweep|merge|plot|nemesis`.
//!
//! - `command`: [`Cli`], its subcommands ([`Command`], `ProfileCommand`), and
//!   `cost-child` ([`CostChildArgs`]).
//! - `connect`: where and how to connect, and which workload (`Connect`), and the checks
//!   of those options (`ConnectError`).
//! - `load`, `run`, `curve`, `findmax`, `stress`, `cost`, `nemesis`: each subcommand's
//!   options (`LoadArgs`, `RunArgs` with the `RoundArgs` `curve` shares, `CurveArgs`,
//!   `FindmaxArgs`, `StressArgs`, `CostArgs`, `NemesisArgs`).
//! - `results`, `cycles`: option groups several subcommands share (`ResultArgs`,
//!   `CyclesArgs`).
//! - `duration`: the parser of a duration with its unit (`parse_duration`).
//! - `limits`: the ranges options are held to, and the errors that say so.

mod command;
mod connect;
mod cost;
mod curve;
mod cycles;
mod duration;
mod findmax;
pub(crate) mod limits;
mod load;
mod nemesis;
mod results;
mod run;
mod stress;
#[cfg(test)]
mod tests;

pub(crate) use command::ProfileCommand;
pub use command::{Cli, Command, CostChildArgs, COST_CHILD};
#[cfg(test)]
pub(crate) use connect::DEFAULT_SQPOLL_IDLE;
pub(crate) use connect::{Connect, ConnectError, InlineWorkload};
pub(crate) use cost::CostArgs;
pub(crate) use curve::CurveArgs;
pub(crate) use cycles::CyclesArgs;
pub(crate) use findmax::FindmaxArgs;
pub(crate) use load::LoadArgs;
pub(crate) use nemesis::NemesisArgs;
pub(crate) use results::ResultArgs;
pub(crate) use run::{RoundArgs, RunArgs};
pub(crate) use stress::StressArgs;
