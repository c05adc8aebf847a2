//! What can be wrong with a workload, from reading its file to binding its statements.

use super::expr::ExprError;
use super::profile;

/// Why a workload could not be read or compiled.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The file could not be read.
    #[error("cannot read workload {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown fields.
    #[error("workload {name}: {message}")]
    Format {
        /// Workload name or path.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A parameter is unknown, or its value is unusable.
    #[error("workload {name}: parameter {param}: {message}")]
    Param {
        /// Workload.
        name: String,
        /// The parameter.
        param: String,
        /// What is wrong.
        message: String,
    },
    /// An argument expression does not compile.
    #[error("workload {name}, line {line}, statement {statement}: {error}")]
    Expr {
        /// Workload.
        name: String,
        /// The line of the workload's text that holds the expression (1-based).
        line: usize,
        /// The statement's name.
        statement: String,
        /// The error, with its position.
        error: ExprError,
    },
    /// A cassandra-stress profile could not be read or converted.
    #[error(transparent)]
    Profile(#[from] profile::ProfileError),
    /// Arguments do not fit the statement's bind markers.
    #[error("workload {name}, statement {statement}: {message}")]
    Bind {
        /// Workload.
        name: String,
        /// The statement's name.
        statement: String,
        /// What does not fit.
        message: String,
    },
}
