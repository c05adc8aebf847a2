//! A phase's statements prepared on doppio ([`DoppioPrepared`]) and its batches built
//! ([`DoppioBatch`]): the phase's plan.

use doppio_driver::proto::request::BatchType;
use doppio_driver::session::Batch;
use doppio_driver::{PreparedStatement, Session};

use super::error::err_of;
use super::types::kind_of;
use crate::backend::driver::Driver;
use crate::engine::assemble::{assemble_plan, plan_statement};
use crate::engine::phase::{BackendError, Phase};
use crate::engine::validate::PreparedShape;
use crate::engine::PhasePlan;
use crate::workload::encode::CqlType;
use crate::workload::{BatchKind, Statement, Workload};

/// A prepared statement with how it is sent: idempotent or not (its settings say), and
/// whether its answers' `[applied]` is read.
pub(crate) struct DoppioPrepared {
    /// The session's defaults, `idempotent` as the workload says.
    pub(super) statement: PreparedStatement,
    /// A conditional update.
    pub(super) conditional: bool,
}

/// A batch of a plan: doppio's `Batch` of its statements (`repeat` copies of them, in the
/// order of [`BatchArgs::element`]) with its settings; the values come per iteration, in
/// [`BatchArgs`].
///
/// [`BatchArgs`]: crate::engine::session::BatchArgs
/// [`BatchArgs::element`]: crate::engine::session::BatchArgs::element
pub(crate) struct DoppioBatch {
    pub(super) batch: Batch,
    pub(super) conditional: bool,
}

/// doppio's batch type for the bench's.
fn batch_type(kind: BatchKind) -> BatchType {
    match kind {
        BatchKind::Logged => BatchType::Logged,
        BatchKind::Unlogged => BatchType::Unlogged,
        BatchKind::Counter => BatchType::Counter,
    }
}

pub(super) async fn prepare_plan(
    driver: Driver,
    session: &Session,
    workload: &Workload,
    phase: Phase,
    stmts: &[Statement],
) -> Result<PhasePlan<DoppioPrepared, DoppioBatch>, BackendError> {
    let err = err_of(driver);
    let mut plan = Vec::with_capacity(stmts.len());
    for s in stmts {
        let prepared = session
            .prepare(&s.cql)
            .await
            .map_err(|e| err(format!("prepare `{}`: {e}", s.cql)))?;
        let kinds: Vec<CqlType> = prepared
            .metadata()
            .columns
            .iter()
            .map(|c| kind_of(&c.typ))
            .collect();
        // A validated read: its writer's markers too (one more PREPARE per phase).
        let shape = match (&s.validate, workload.writer_of(s)) {
            (Some(_), Some(writer)) => {
                let writer_prepared = session
                    .prepare(&writer.cql)
                    .await
                    .map_err(|e| err(format!("prepare `{}`: {e}", writer.cql)))?;
                Some(PreparedShape {
                    writer_markers: writer_prepared
                        .metadata()
                        .columns
                        .iter()
                        .map(|c| (c.name.clone(), kind_of(&c.typ)))
                        .collect(),
                    result_columns: prepared
                        .result_columns()
                        .iter()
                        .map(|c| c.name.clone())
                        .collect(),
                })
            }
            _ => None,
        };
        let prepared = DoppioPrepared {
            statement: prepared.with_config(|c| c.idempotent = s.idempotent),
            conditional: s.conditional,
        };
        plan.push(plan_statement(
            workload,
            s,
            prepared,
            &kinds,
            shape.as_ref(),
            driver.name(),
        )?);
    }
    assemble_plan(workload, phase, plan, |group, kind, members| {
        let of_group = &stmts[group.statements.clone()];
        // Idempotent when every statement of it is.
        let idempotent = !of_group.is_empty() && of_group.iter().all(|s| s.idempotent);
        let mut batch = Batch::new(batch_type(kind)).with_config(|c| c.idempotent = idempotent);
        for _ in 0..group.repeat {
            for m in members {
                batch.append_prepared(&m.prepared.statement);
            }
        }
        Ok(DoppioBatch {
            batch,
            conditional: members.iter().any(|m| m.prepared.conditional),
        })
    })
}
