//! MACHINES: each loader machine's own figures in a merged report.

use std::fmt::Write as _;

use super::layout::Column;

/// A merged report's per-machine figures (`doppio merge` keeps overheads per machine): one
/// line per machine and backend.
pub(super) fn machines_section(out: &mut String, columns: &[Column<'_>]) {
    if columns.iter().all(|(_, b)| b.machines.machines.is_none()) {
        return;
    }
    let _ = writeln!(
        out,
        "MACHINES                    requests  throughput [req/s]  CPU/req [us]  syscalls/req  allocs/req"
    );
    let opt =
        |x: Option<f64>, digits: usize| x.map_or("n/a".to_owned(), |v| format!("{v:.digits$}"));
    for (label, b) in columns {
        for m in b.machines.machines.iter().flatten() {
            // The file's name, not its folder: the folders are usually the same.
            let file = std::path::Path::new(&m.file)
                .file_name()
                .map_or(m.file.clone(), |f| f.to_string_lossy().into_owned());
            let name = format!("{label} {file}");
            let name = if name.chars().count() > 26 {
                format!("{}~", name.chars().take(25).collect::<String>())
            } else {
                name
            };
            let _ = writeln!(
                out,
                "  {name:<26}{:>10}{:>20.0}{:>14.2}{:>14}{:>12}",
                m.requests,
                m.throughput_rps,
                m.cpu_us_per_req,
                opt(m.syscalls_per_req, 3),
                opt(m.allocations_per_req, 2),
            );
        }
    }
    out.push('\n');
}
