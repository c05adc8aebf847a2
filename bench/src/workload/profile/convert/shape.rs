//! The vars of one operation of a converted profile: its partition, its rows' shape, its
//! row, and each column's identity and value.

use super::generator::{sample, value_of};
use super::names::ident;
use crate::workload::dist::DistShape;
use crate::workload::profile::cql::{Column, ColumnKind, Table};
use crate::workload::profile::error::ProfileError;
use crate::workload::profile::model::{ColumnSpec, Profile};

/// The vars of one operation: its partition, its rows' shape, its row, and each column's
/// identity, named with the operation's prefix.
pub(super) struct OperationVars<'a> {
    pub(super) prefix: String,
    pub(super) table: &'a Table,
    pub(super) specs: Vec<ColumnSpec>,
    pub(super) vars: Vec<(String, String)>,
}

impl<'a> OperationVars<'a> {
    pub(super) fn new(prefix: &str, table: &'a Table, profile: &Profile) -> Self {
        let specs = table
            .columns
            .iter()
            .map(|c| {
                profile
                    .columns
                    .iter()
                    .find(|s| s.name == c.name)
                    .cloned()
                    .unwrap_or_else(|| ColumnSpec::defaults(&c.name))
            })
            .collect();
        Self {
            prefix: ident(prefix),
            table,
            specs,
            vars: Vec::new(),
        }
    }

    pub(super) fn var(&mut self, name: &str, expr: String) -> String {
        let full = format!("{}_{name}", self.prefix);
        self.vars.push((full.clone(), expr));
        full
    }

    pub(super) fn clustering(&self) -> Vec<(usize, &Column)> {
        self.table
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind == ColumnKind::Clustering)
            .collect()
    }

    /// Declares the partition `p` (from `key`) and the per-level counts and row count;
    /// returns the names of the counts and of the row count.
    pub(super) fn partition(&mut self, key: String) -> (String, Vec<String>, Option<String>) {
        let p = self.var("p", format!("dist(population, {key})"));
        let mut counts = Vec::new();
        for (d, (n, _)) in self.clustering().into_iter().enumerate() {
            let count = sample(&self.specs[n].cluster, &format!("hash({p}, {})", d + 1));
            counts.push((d, count));
        }
        let counts: Vec<String> = counts
            .into_iter()
            .map(|(d, count)| self.var(&format!("n{}", d + 1), count))
            .collect();
        let rows = (!counts.is_empty()).then(|| self.var("rows", counts.join(" * ")));
        (p, counts, rows)
    }

    /// Declares the clustering digits of row `r`; returns their names.
    pub(super) fn digits(&mut self, r: &str, counts: &[String], tag: &str) -> Vec<String> {
        let mut out = Vec::new();
        for d in 0..counts.len() {
            let below = &counts[d + 1..];
            let expr = if below.is_empty() {
                format!("{r} % {}", counts[d])
            } else {
                format!("{r} / ({}) % {}", below.join(" * "), counts[d])
            };
            out.push(self.var(&format!("c{}{tag}", d + 1), expr));
        }
        out
    }

    /// The value of column `n` for partition `p`, clustering digits `digits` and row `r`.
    pub(super) fn value(
        &mut self,
        n: usize,
        p: &str,
        digits: &[String],
        r: Option<&str>,
        tag: &str,
        origin: &str,
    ) -> Result<String, ProfileError> {
        let column = &self.table.columns[n];
        let spec = &self.specs[n];
        let salt = 1_000 + n as u64;
        let base = format!("hash({p}, {salt})");
        // A SEQ population counts: its n-th value, n the partition, the row's digit or the
        // row, so that consecutive rows get consecutive values (a time series' clock).
        let seq = spec.population.shape == DistShape::Seq;
        let digit = || {
            let d = self.table.columns[..n]
                .iter()
                .filter(|c| c.kind == ColumnKind::Clustering)
                .count();
            digits[d].clone()
        };
        let key = match (column.kind, r) {
            (ColumnKind::PartitionKey | ColumnKind::Static, _) if seq => p.to_owned(),
            (ColumnKind::PartitionKey | ColumnKind::Static, _) => base,
            (ColumnKind::Clustering, _) if seq => digit(),
            (ColumnKind::Clustering, _) => format!("hash({}, {base})", digit()),
            (ColumnKind::Regular, Some(r)) if seq => r.to_owned(),
            (ColumnKind::Regular, Some(r)) => format!("hash({r}, {base})"),
            (ColumnKind::Regular, None) if seq => p.to_owned(),
            (ColumnKind::Regular, None) => base,
        };
        let identity = sample(&spec.population, &key);
        let size = sample(&spec.size, &format!("hash(ID, {salt})"));
        let (ty, cname) = (column.cql_type.clone(), column.name.clone());
        let id = self.var(&format!("{}{tag}", ident(&cname)), identity);
        let size = size.replace("ID", &id);
        value_of(&ty, &id, &size, salt).map_err(|message| ProfileError::Column {
            origin: origin.to_owned(),
            column: cname,
            cql_type: ty,
            message,
        })
    }
}
