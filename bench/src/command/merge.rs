//! `doppio merge`: the reports of one test run made on several loader machines combined.

use std::path::{Path, PathBuf};

use crate::failure::Failure;
use crate::report::Report;

/// `doppio merge`: the machines' `reports` of one test run combined into `output`
/// (`sequential`: runs made one after the other, not at once).
pub fn merge(
    reports: &[PathBuf],
    output: &Path,
    sequential: bool,
    argv: Vec<String>,
) -> Result<(), Failure> {
    let mut inputs = Vec::with_capacity(reports.len());
    for path in reports {
        let r = Report::read(path)?;
        inputs.push((path.display().to_string(), r));
    }
    let merged = crate::report::merge::merge(&inputs, argv, sequential)?;
    merged.write(output)?;
    let requests: Vec<String> = merged
        .config
        .drivers
        .iter()
        .filter_map(|d| {
            merged
                .backends
                .get(d)
                .map(|b| format!("{d} {} requests", b.throughput.requests))
        })
        .collect();
    eprintln!(
        "{} reports merged into {} ({})",
        inputs.len(),
        output.display(),
        requests.join(", ")
    );
    Ok(())
}
