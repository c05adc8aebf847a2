//! `doppio stress -- ...`: cassandra-stress command lines (`write n=1M -rate threads=64
//! -node 10.0.0.1`, `user profile=p.yaml ops(insert=1,q1=3)`) run as cassandra-stress
//! would, on the backend `--driver` names (bench/STRESS.md).
//!
//! Children, in the order a line goes through them: [`lex`] splits the words into the
//! command and its `-groups`; [`parse`] (the command and its options) and [`options`] (the
//! groups) read them into the typed [`model`], checking every value with [`values`] and
//! refusing by name what doppio does not run yet ([`error`]); [`map`] turns the model into
//! the options of `doppio run`, with the workload [`legacy`] writes for `write`, `read`
//! and `mixed`. Nothing here connects: every error is found first.

pub(crate) mod error;
pub(crate) mod legacy;
pub(crate) mod lex;
pub(crate) mod map;
pub(crate) mod model;
pub(crate) mod options;
pub(crate) mod parse;
pub(crate) mod values;

pub(crate) use error::StressError;
pub(crate) use map::StressPlan;
pub(crate) use model::StressLine;

/// Reads the words after `doppio stress --` into the model.
pub(crate) fn read(words: &[String]) -> Result<StressLine, StressError> {
    parse::line(&lex::line(words)?)
}

/// Reads the words and maps them onto `doppio run`.
pub(crate) fn plan(words: &[String]) -> Result<StressPlan, StressError> {
    Ok(map::plan(&read(words)?))
}

#[cfg(test)]
mod tests;
