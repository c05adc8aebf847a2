//! Why the import-graph command could not run (a check that fails is not an error).

use std::path::PathBuf;

/// What stopped the command.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A source file is not Rust syn can parse.
    #[error("{}:{line}:{column}: cannot parse: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where (1-based).
        line: usize,
        /// Where (1-based).
        column: usize,
        /// syn's message.
        message: String,
    },
    /// The workspace's Cargo.toml is not TOML.
    #[error("cannot read the workspace manifest {}: {source}", path.display())]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// Why.
        source: toml::de::Error,
    },
    /// The workspace's Cargo.toml has no `[workspace] members` list of strings.
    #[error("{} has no [workspace] members list", path.display())]
    NoMembers {
        /// The manifest.
        path: PathBuf,
    },
    /// The output could not be written.
    #[error("cannot write the report: {0}")]
    Write(#[from] std::io::Error),
}
