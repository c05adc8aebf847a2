//! `doppio list`: one line per report of a folder.

use std::path::Path;

use super::failure::Failure;
use crate::report::Report;

/// `doppio list`: one line per report in `dir`.
pub fn list(dir: &Path) -> Result<(), Failure> {
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            if let Ok(r) = Report::read(&path) {
                rows.push((path, r));
            }
        }
    }
    rows.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at));
    println!(
        "{:<34} {:<12} {:<20} {:<10} throughput [req/s]",
        "file", "tag", "date", "workload"
    );
    for (path, r) in rows {
        let tp: Vec<String> = r
            .config
            .drivers
            .iter()
            .filter_map(|d| {
                r.backends
                    .get(d)
                    .map(|b| format!("{d} {:.0}", b.throughput_rps))
            })
            .collect();
        let name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        println!(
            "{:<34} {:<12} {:<20} {:<10} {}",
            name,
            r.tag.as_deref().unwrap_or("-"),
            r.started_at,
            r.workload.name,
            tp.join(", ")
        );
    }
    Ok(())
}
