//! A run's report read from and written to its JSON file, and why that failed
//! ([`ReportError`], also for findmax reports). A file gzipped (`*.json.gz`, as studies keep
//! their raw reports) is read as it is.

use std::io::Read;
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

/// The first two bytes of every gzip stream (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `path` names a report file by its name: `*.json`, or `*.json.gz`.
pub(crate) fn is_report_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
}

/// The JSON of the file at `path`, gunzipped first when it is gzip (told by its first
/// bytes, not its name).
pub(crate) fn read_json(path: &Path) -> Result<serde_json::Value, ReportError> {
    let read = |source| ReportError::Read {
        path: path.to_owned(),
        source,
    };
    let bytes = std::fs::read(path).map_err(read)?;
    let bytes = if bytes.starts_with(&GZIP_MAGIC) {
        let mut plain = Vec::with_capacity(bytes.len() * 8);
        flate2::read::GzDecoder::new(bytes.as_slice())
            .read_to_end(&mut plain)
            .map_err(read)?;
        plain
    } else {
        bytes
    };
    serde_json::from_slice(&bytes).map_err(|source| ReportError::NotReport {
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

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A file of `bytes` in a folder of this test's own, removed on drop.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, bytes: &[u8]) -> Self {
            let dir = std::env::temp_dir()
                .join(format!("doppio-report-file-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            Self(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    const JSON: &str = r#"{"schema_version": 1, "tag": "a", "backends": {}}"#;

    #[test]
    fn a_gzipped_report_reads_as_its_plain_twin() {
        let plain = TempFile::new("r.json", JSON.as_bytes());
        let zipped = TempFile::new("r.json.gz", &gzip(JSON.as_bytes()));
        assert_eq!(read_json(&zipped.0).unwrap(), read_json(&plain.0).unwrap());
        // Told by its bytes, not its name.
        let renamed = TempFile::new("r.json", &gzip(JSON.as_bytes()));
        assert_eq!(read_json(&renamed.0).unwrap(), read_json(&plain.0).unwrap());
    }

    #[test]
    fn a_cut_gzip_is_a_read_error_naming_the_file() {
        let whole = gzip(JSON.as_bytes());
        let cut = TempFile::new("cut.json.gz", &whole[..whole.len() / 2]);
        let err = read_json(&cut.0).unwrap_err();
        assert!(matches!(err, ReportError::Read { .. }), "{err:?}");
        assert!(err.to_string().contains("cut.json.gz"), "{err}");
    }

    #[test]
    fn gzipped_json_that_is_no_report_says_so() {
        let junk = TempFile::new("junk.json.gz", &gzip(b"not json"));
        let err = read_json(&junk.0).unwrap_err();
        assert!(matches!(err, ReportError::NotReport { .. }), "{err:?}");
    }

    #[test]
    fn report_names_are_json_or_gzipped_json() {
        for yes in ["a.json", "dir/b.json.gz", "c-r0.json"] {
            assert!(is_report_name(Path::new(yes)), "{yes}");
        }
        for no in ["a.gz", "a.json.bak", "a.md", "json", "a.jsonl"] {
            assert!(!is_report_name(Path::new(no)), "{no}");
        }
    }
}
