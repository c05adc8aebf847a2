//! The command line: `doppio schema|load|run|curve|findmax|show|hdr|list|sweep|merge|plot`.
//!
//! - `command`: [`Cli`], its subcommands ([`Command`], [`ProfileCommand`]), and
//!   `cost-child` ([`CostChildArgs`]).
//! - `connect`: where and how to connect, and which workload ([`Connect`]), and the checks
//!   of those options ([`ConnectError`]).
//! - `load`, `run`, `curve`, `findmax`, `stress`, `cost`: each subcommand's options
//!   ([`LoadArgs`], [`RunArgs`] with the [`RoundArgs`] `curve` shares, [`CurveArgs`],
//!   [`FindmaxArgs`], [`StressArgs`], [`CostArgs`]).
//! - `results`, `cycles`: option groups several subcommands share ([`ResultArgs`],
//!   [`CyclesArgs`]).
//! - `duration`: the parser of a duration with its unit ([`parse_duration`]).
//! - [`limits`]: the ranges options are held to, and the errors that say so.

mod command;
mod connect;
mod cost;
mod curve;
mod cycles;
mod duration;
mod findmax;
pub mod limits;
mod load;
mod results;
mod run;
mod stress;
#[cfg(test)]
mod tests;

pub use command::{Cli, Command, CostChildArgs, ProfileCommand, COST_CHILD};
pub use connect::{
    online_cores, parse_sqpoll_cpu, parse_sqpoll_idle, Connect, ConnectError, InlineWorkload,
    SqPollCpu, DEFAULT_SQPOLL_IDLE,
};
pub use cost::CostArgs;
pub use curve::CurveArgs;
pub use cycles::CyclesArgs;
pub use duration::parse_duration;
pub use findmax::FindmaxArgs;
pub use load::LoadArgs;
pub use results::ResultArgs;
pub use run::{RoundArgs, RunArgs};
pub use stress::StressArgs;
