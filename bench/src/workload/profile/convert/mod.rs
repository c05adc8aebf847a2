//! A profile turned into a doppio TOML workload that a user can read and edit: its schema
//! qualified with the keyspace, one `[[run]]` for the insert and one per query (weights
//! `ops_NAME`, cassandra-stress's `ops(...)`), and generators that give every column the
//! value sizes and distinct-value counts of its `columnspec`. How each key becomes TOML, and
//! where doppio's reading differs from cassandra-stress's, is in bench/PROFILES.md.
//!
//! The model: an operation visits partition `p = dist(population, x)`; partition `p` has
//! `n_d = dist(CLUSTER_d, hash(p, d))` values of clustering column `d` under each value of
//! the one before, so `rows = n_1 * ... * n_m` rows, row `r` being the mixed-radix digits of
//! `r`; a column's value identity is drawn from its `population` with a key made of `p` (and
//! the row's digit, or the row, for clustering and regular columns), and its value (text
//! length, collection size) from that identity: a function of the identity alone, the same
//! in the insert and in every query.
//!
//! Files (private; what they make public is re-exported here): `write`, the profiles as
//! one TOML workload (`to_toml_all`) and the file written; `operations`, one
//! profile's operations converted (its insert, queries, token range queries and read-back,
//! with the `Notes` of what could not be carried over); `shape`, the vars of one
//! operation (partition, rows, each column's identity); `generator`, a column's value as a
//! generator expression; `names`, the names a conversion gives (operations, their weight
//! parameters: [`weight_param`], `insert_op`, `VALIDATE`; vars; columns).

mod generator;
mod names;
mod operations;
mod shape;
mod write;

pub use self::names::weight_param;
pub(crate) use self::names::{insert_op, VALIDATE};
#[cfg(test)]
pub(crate) use self::write::to_toml;
pub(crate) use self::write::to_toml_all;
