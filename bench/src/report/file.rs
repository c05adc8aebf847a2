//! A run's report read from and written to its JSON file, and why that failed
//! ([`ReportError`], also for findmax reports).

use std::path::{Path, PathBuf};

use super::schema::{Report, SCHEMA_VERSION};

/// Why a report could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON, or not JSON of a run's report.
    #[error("{}: not a doppio report: {source}", path.display())]
    NotReport {
        /// The file.
        path: PathBuf,
        /// What did not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The report of another command (its `kind`), where a run's was wanted.
    #[error(
        "{}: a {kind} report, not the report of a run ({})",
        path.display(),
        match kind.as_str() {
            super::curve::KIND => "the curve `doppio curve` draws; its loads' reports, \
                                   load-*.json beside it, are run reports",
            _ => "`doppio show` prints it and `doppio plot` draws it",
        }
    )]
    OtherKind {
        /// The file.
        path: PathBuf,
        /// Its `kind`.
        kind: String,
    },
    /// A run's report of another schema version.
    #[error("{}: schema version {found} (this doppio reads {SCHEMA_VERSION})", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// A file whose `kind` says findmax but whose fields are not a findmax report's.
    #[error("{}: not a findmax report: {source}", path.display())]
    NotFindmax {
        /// The file.
        path: PathBuf,
        /// What did not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The report could not be made into JSON.
    #[error("{0}")]
    Encode(#[source] serde_json::Error),
    /// The file could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The JSON of the file at `path`.
pub(crate) fn read_json(path: &Path) -> Result<serde_json::Value, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ReportError::NotReport {
        path: path.to_owned(),
        source,
    })
}

/// Writes `text` to `path`.
pub(crate) fn write_text(path: &Path, text: String) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|source| ReportError::Write {
        path: path.to_owned(),
        source,
    })
}

impl Report {
    /// Reads a report written by `doppio run`.
    pub fn read(path: &Path) -> Result<Self, ReportError> {
        let value = read_json(path)?;
        // Reports of other commands say what they are (`"kind"`); a run's report has none.
        if let Some(kind) = value.get("kind").and_then(|k| k.as_str()) {
            return Err(ReportError::OtherKind {
                path: path.to_owned(),
                kind: kind.to_owned(),
            });
        }
        let report: Report =
            serde_json::from_value(value).map_err(|source| ReportError::NotReport {
                path: path.to_owned(),
                source,
            })?;
        if report.schema_version != SCHEMA_VERSION {
            return Err(ReportError::Version {
                path: path.to_owned(),
                found: report.schema_version,
            });
        }
        Ok(report)
    }

    /// Writes the report as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<(), ReportError> {
        let text = serde_json::to_string_pretty(self).map_err(ReportError::Encode)?;
        write_text(path, text + "\n")
    }
}
