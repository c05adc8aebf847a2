//! A phase's statements prepared on scylla-rust-driver ([`ScyllaPrepared`]) and its batches
//! built ([`ScyllaBatch`]): the phase's plan.

use scylla::client::session::Session;
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;

use super::error::err;
use super::types::kind_of;
use crate::engine::assemble::{assemble_plan, plan_statement};
use crate::engine::phase::{BackendError, Phase};
use crate::engine::validate::PreparedShape;
use crate::engine::PhasePlan;
use crate::workload::encode::CqlType;
use crate::workload::{BatchKind, Statement, Workload};

/// A prepared statement (marked idempotent as the workload says) and whether its answers'
/// `[applied]` is read.
pub(crate) struct ScyllaPrepared {
    pub(super) statement: PreparedStatement,
    pub(super) conditional: bool,
}

/// A batch entry of a plan: scylla's `Batch` of its prepared statements (`repeat` copies),
/// built once per phase; only the values come per iteration.
pub(crate) struct ScyllaBatch {
    pub(super) batch: Batch,
    pub(super) conditional: bool,
}

/// scylla-rust-driver's batch type for the bench's.
fn batch_type(kind: BatchKind) -> BatchType {
    match kind {
        BatchKind::Logged => BatchType::Logged,
        BatchKind::Unlogged => BatchType::Unlogged,
        BatchKind::Counter => BatchType::Counter,
    }
}

pub(super) async fn prepare_plan(
    session: &Session,
    workload: &Workload,
    phase: Phase,
    stmts: &[Statement],
    page_size: i32,
) -> Result<PhasePlan<ScyllaPrepared, ScyllaBatch>, BackendError> {
    let mut plan = Vec::with_capacity(stmts.len());
    for s in stmts {
        let mut prepared = session
            .prepare(s.cql.as_str())
            .await
            .map_err(|e| err(format!("prepare `{}`: {e}", s.cql)))?;
        prepared.set_page_size(page_size);
        prepared.set_is_idempotent(s.idempotent);
        let kinds: Vec<CqlType> = prepared
            .get_variable_col_specs()
            .iter()
            .map(|c| kind_of(c.typ()))
            .collect();
        // A validated read: its writer's markers too (one more PREPARE per phase).
        let shape = match (&s.validate, workload.writer_of(s)) {
            (Some(_), Some(writer)) => {
                let writer_prepared = session
                    .prepare(writer.cql.as_str())
                    .await
                    .map_err(|e| err(format!("prepare `{}`: {e}", writer.cql)))?;
                Some(PreparedShape {
                    writer_markers: writer_prepared
                        .get_variable_col_specs()
                        .iter()
                        .map(|c| (c.name().to_owned(), kind_of(c.typ())))
                        .collect(),
                    result_columns: prepared
                        .get_current_result_set_col_specs()
                        .get()
                        .iter()
                        .map(|c| c.name().to_owned())
                        .collect(),
                })
            }
            _ => None,
        };
        let prepared = ScyllaPrepared {
            statement: prepared,
            conditional: s.conditional,
        };
        plan.push(plan_statement(
            workload,
            s,
            prepared,
            &kinds,
            shape.as_ref(),
            "scylla",
        )?);
    }
    assemble_plan(workload, phase, plan, |group, kind, members| {
        let mut batch = Batch::new(batch_type(kind));
        for _ in 0..group.repeat {
            for m in members {
                batch.append_statement(m.prepared.statement.clone());
            }
        }
        let of_group = &stmts[group.statements.clone()];
        // Idempotent when every statement of it is.
        batch.set_is_idempotent(!of_group.is_empty() && of_group.iter().all(|s| s.idempotent));
        Ok(ScyllaBatch {
            batch,
            conditional: members.iter().any(|m| m.prepared.conditional),
        })
    })
}
