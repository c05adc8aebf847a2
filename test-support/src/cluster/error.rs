//! Why a cluster command failed: a plain enum (the crate has no dependencies), each variant a
//! sentence for the user, with the I/O error under it as its source where there is one.

use std::fmt;

/// A cluster command's failure.
#[derive(Debug)]
pub enum Error {
    /// A setting or argument that cannot be used (`--nodes 0`, a token that is no integer, a
    /// node that does not exist); nothing was started or changed.
    Invalid(String),
    /// A file or folder could not be read or written, or a program could not be run.
    Io {
        /// What was being done ("write /path/cassandra.yaml").
        what: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A step ran and failed: a program's exit status, a node that died or did not answer in
    /// time, a download that did not succeed.
    Failed(String),
}

impl Error {
    /// An [`Error::Io`] for `what`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let what = what.into();
        move |source| Error::Io { what, source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(why) | Error::Failed(why) => f.write_str(why),
            Error::Io { what, source } => write!(f, "cannot {what}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Invalid(_) | Error::Failed(_) => None,
        }
    }
}

/// A cluster command's result.
pub type Result<T> = std::result::Result<T, Error>;
