//! A phase's plan as the workers run it ([`PhasePlan`]): its prepared statements
//! ([`PlanStatement`], each with its checked generators and validation) and the `[[run]]`
//! entries that pick them ([`PlanGroup`]). [`super::assemble`] builds one.

use super::validate::Validation;
use crate::workload::{BoundArgs, RunGroup, RunMode};

/// A phase's plan: its prepared statements, and the `[[run]]` entries that run them (the
/// load phase: one entry of its one statement).
#[derive(Debug)]
pub struct PhasePlan<P, B> {
    /// The statements, as [`crate::workload::Workload::run`] orders them.
    pub(crate) statements: Vec<PlanStatement<P>>,
    /// The entries, picked by weight per iteration.
    pub(crate) groups: Vec<PlanGroup<B>>,
}

/// A `[[run]]` entry of a plan.
#[derive(Debug)]
pub(crate) struct PlanGroup<B> {
    /// Which statements, how, and its per-statement record entries.
    pub(crate) group: RunGroup,
    /// Its batch (a batch entry only), built once per phase.
    pub(crate) batch: Option<B>,
}

impl<P, B> PhasePlan<P, B> {
    /// The plan of a phase of single statements, one entry each (tests).
    pub fn singles(statements: Vec<PlanStatement<P>>) -> Self {
        let groups = (0..statements.len())
            .map(|k| PlanGroup {
                group: RunGroup {
                    statements: k..k + 1,
                    entry: k,
                    ..RunGroup::single("")
                },
                batch: None,
            })
            .collect();
        Self { statements, groups }
    }

    /// Per entry of the per-statement records: whether it is a sequence's (its
    /// iterations, not requests).
    pub(crate) fn sequence_entries(&self) -> Vec<bool> {
        let mut out = Vec::new();
        for g in &self.groups {
            let n = g.group.entries();
            if out.len() < g.group.entry + n {
                out.resize(g.group.entry + n, false);
            }
            if g.group.mode == RunMode::Sequence {
                out[g.group.entry + n - 1] = true;
            }
        }
        out
    }
}

/// A prepared run statement: the backend's handle plus its checked generators.
#[derive(Debug)]
pub struct PlanStatement<P> {
    /// The backend's prepared statement.
    pub prepared: P,
    /// Its arguments.
    pub args: BoundArgs,
    /// How its rows are validated (`--validate` and a `validate` in the workload).
    pub validation: Option<Validation>,
}
