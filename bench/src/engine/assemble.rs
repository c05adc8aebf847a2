//! A phase's plan assembled from the workload and a backend's prepared statements: which
//! statements the phase runs, each checked against its bind markers, with its validation,
//! and each batch entry's batch.

use super::phase::{BackendError, Phase};
use super::plan::{PhasePlan, PlanGroup, PlanStatement};
use super::validate::{PreparedShape, Validation};
use crate::workload::encode::CqlType;
use crate::workload::{BatchKind, BoundArgs, RunGroup, RunMode, Statement, Workload};

/// The statements a phase runs: the workload's run statements, or its load statement.
pub(crate) fn phase_statements(
    workload: &Workload,
    phase: Phase,
    driver: &'static str,
) -> Result<Vec<Statement>, BackendError> {
    match phase {
        Phase::Run => Ok(workload.run.clone()),
        Phase::Load => match &workload.load {
            Some(l) => Ok(vec![l.statement.clone()]),
            None => Err(BackendError {
                driver,
                message: format!("workload {} has no [load] section", workload.name),
            }),
        },
    }
}

/// A phase's plan from its prepared statements (as [`phase_statements`] lists them): the
/// workload's `[[run]]` entries (the load phase: its one statement), each batch entry's
/// batch made once by `make_batch` from its kind and its statements.
pub(crate) fn assemble_plan<P, B>(
    workload: &Workload,
    phase: Phase,
    statements: Vec<PlanStatement<P>>,
    mut make_batch: impl FnMut(&RunGroup, BatchKind, &[PlanStatement<P>]) -> Result<B, BackendError>,
) -> Result<PhasePlan<P, B>, BackendError> {
    let groups = match phase {
        Phase::Run => workload.groups.clone(),
        Phase::Load => vec![RunGroup::single("load")],
    };
    let mut plan = Vec::with_capacity(groups.len());
    for group in groups {
        let batch = match group.mode {
            RunMode::Batch(kind) => {
                let members = statements.get(group.statements.clone()).unwrap_or(&[]);
                Some(make_batch(&group, kind, members)?)
            }
            RunMode::Single | RunMode::Sequence => None,
        };
        plan.push(PlanGroup { group, batch });
    }
    Ok(PhasePlan {
        statements,
        groups: plan,
    })
}

/// A prepared statement with its generators checked against the markers' `kinds`, and its
/// validation compiled against `shape` (given for a statement with `validate`: see
/// [`super::validate`]).
pub(crate) fn plan_statement<P>(
    workload: &Workload,
    statement: &Statement,
    prepared: P,
    kinds: &[CqlType],
    shape: Option<&PreparedShape>,
    driver: &'static str,
) -> Result<PlanStatement<P>, BackendError> {
    let err = |message: String| BackendError { driver, message };
    let args = BoundArgs::bind(&workload.name, statement, kinds).map_err(|e| err(e.to_string()))?;
    let validation = match (shape, workload.writer_of(statement)) {
        (Some(shape), Some(writer)) => Validation::compile(statement, writer, shape)
            .map_err(|m| err(format!("statement {}: {m}", statement.label())))?,
        _ => None,
    };
    Ok(PlanStatement {
        prepared,
        args,
        validation,
    })
}
