//! The built-in workloads, and finding a workload: a built-in by name, a TOML file by path,
//! or a cassandra-stress profile.

use super::error::WorkloadError;
use super::model::Workload;
use super::profile;

/// The built-in workloads, by name: the TOML files in `bench/workloads/`.
pub(crate) const BUILT_INS: &[(&str, &str)] = &[
    ("read", include_str!("../../workloads/read.toml")),
    ("write", include_str!("../../workloads/write.toml")),
    ("mixed", include_str!("../../workloads/mixed.toml")),
    ("empty", include_str!("../../workloads/empty.toml")),
    (
        "timeseries",
        include_str!("../../workloads/timeseries.toml"),
    ),
    ("widerow", include_str!("../../workloads/widerow.toml")),
];

impl Workload {
    /// A built-in by name, or a TOML file by path, compiled with `overrides`.
    pub fn resolve(
        name_or_path: &str,
        overrides: &[(String, String)],
    ) -> Result<Self, WorkloadError> {
        if let Some((_, text)) = BUILT_INS.iter().find(|(n, _)| *n == name_or_path) {
            return Self::from_toml(name_or_path, text, overrides);
        }
        let text = std::fs::read_to_string(name_or_path).map_err(|source| WorkloadError::Io {
            path: name_or_path.to_owned(),
            source,
        })?;
        Self::from_toml(name_or_path, &text, overrides)
    }

    /// A cassandra-stress user profile (YAML) at `path`, converted to TOML in memory
    /// (`profile::to_toml`) and compiled with `overrides`.
    pub fn from_profile(path: &str, overrides: &[(String, String)]) -> Result<Self, WorkloadError> {
        let profiles = profile::Profile::read_all(path)?;
        let (toml, _) = profile::to_toml_all(&profiles)?;
        Self::from_toml(path, &toml, overrides)
    }
}
