//! Workloads: what the bench sends. A workload is a TOML file (format in
//! `bench/workloads/README.md`, examples beside it) or one of the built-ins (`read`, `write`,
//! `mixed`, `empty`, `timeseries`, `widerow`), compiled once with its parameters into
//! statements whose arguments are generator expressions ([`expr`]).
//!
//! Children: [`expr`], the generator expressions (parsed once, evaluated per iteration
//! without allocation); [`encode`], their values as the CQL bytes of a column type;
//! [`dist`], cassandra-stress's distributions (`UNIFORM(1..10)`, `~EXP(1..1k)`, ...), read and
//! sampled as pure functions, which expressions call as `dist('SPEC', x)`; [`profile`],
//! cassandra-stress user profiles read and converted into a workload's TOML
//! ([`Workload::from_profile`] compiles one in memory).
//!
//! Invariants:
//! - Everything per iteration is a pure function of the iteration number: which statement
//!   runs (by weight) and every argument, so two runs of the same workload send the same
//!   requests.
//! - Parameters are checked when compiling: an unknown `-P` name or a `${name}` with no
//!   value is an error, never an empty string in a statement.
//!
//! Files (private; what they make public is re-exported here): `model`, the compiled
//! workload ([`Workload`], its [`Statement`]s, `RunGroup`s and record `Entry`s) and what
//! it answers per iteration; `spec`, the TOML file as read; `compile`, the file compiled
//! ([`Workload::from_toml`]), with `run`, one `[[run]]` entry (single, sequence or batch)
//! and the `written_by` names resolved; `vars`, the `[vars]` compiled in the order they name
//! each other; `params`, parameter values parsed (`parse_param_value`) and substituted
//! into statements; `builtin`, the built-ins (`BUILT_INS`) and finding a workload by name,
//! path or profile ([`Workload::resolve`]); `bind`, a statement's generators checked against
//! its bind markers ([`BoundArgs`]); `error`, what can be wrong (`WorkloadError`);
//! `hash`, the hash every random draw comes from (splitmix64, for [`dist`] and [`expr`]
//! alike); `tests`, the tests.

pub mod dist;
pub mod encode;
pub mod expr;
pub mod profile;

mod bind;
mod builtin;
mod compile;
mod error;
mod hash;
mod model;
mod params;
mod run;
mod spec;
mod vars;

#[cfg(test)]
mod tests;

pub use self::bind::BoundArgs;
pub(crate) use self::error::WorkloadError;
pub(crate) use self::model::{BatchKind, EntryKind, RunGroup, RunMode};
pub use self::model::{Statement, Workload};
