//! A statement's generators checked against its bind markers when it is prepared.

use super::encode::{compatible, CqlType};
use super::error::WorkloadError;
use super::expr::Expr;
use super::model::Statement;

/// A statement's generators checked against its bind markers' types.
#[derive(Debug, Clone)]
pub struct BoundArgs {
    /// Per argument: its generator and the column type it is written as.
    pub args: Vec<(Expr, CqlType)>,
}

impl BoundArgs {
    /// Checks that `statement` has one generator per bind marker and that each generator's
    /// values fit the marker's type (`kinds`, from the driver's PREPARE result).
    pub fn bind(
        workload: &str,
        statement: &Statement,
        kinds: &[CqlType],
    ) -> Result<Self, WorkloadError> {
        let err = |message: String| WorkloadError::Bind {
            name: workload.to_owned(),
            statement: statement.label(),
            message,
        };
        if kinds.len() != statement.args.len() {
            return Err(err(format!(
                "the statement has {} bind markers but {} args are given",
                kinds.len(),
                statement.args.len()
            )));
        }
        let mut args = Vec::with_capacity(kinds.len());
        for (k, (e, kind)) in statement.args.iter().zip(kinds).enumerate() {
            let sample = e
                .eval(0)
                .map_err(|x| err(format!("argument {} (`{e}`): {x}", k + 1)))?;
            if let Err(why) = compatible(&sample, kind) {
                return Err(err(format!(
                    "argument {} (`{e}`) cannot be bound to its {kind} column: {why}",
                    k + 1
                )));
            }
            args.push((e.clone(), kind.clone()));
        }
        Ok(Self { args })
    }
}
