//! The stacks a run sampled (`--flamegraph`, `--anatomy`): whether it samples them and how
//! densely ([`sampled_as`]), folded once the backends stopped ([`fold_stacks`]), each
//! backend's CPU per request by layer ([`anatomy_of`]) and the flamegraphs drawn
//! ([`flamegraphs_of`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cli::RunArgs;
use crate::probe::anatomy::Anatomy;
use crate::probe::flame::{Flames, Sampling};
use crate::report::{AnatomyReport, Report};

/// Whether the run samples its stacks, named as its failures are (`flamegraph`,
/// `anatomy`), and how densely.
pub(crate) fn sampled_as(a: &RunArgs) -> Option<(&'static str, Sampling)> {
    match (&a.flamegraph, a.anatomy) {
        (Some(_), _) => Some(("flamegraph", Sampling::FLAMEGRAPH)),
        (None, true) => Some(("anatomy", Sampling::ANATOMY)),
        (None, false) => None,
    }
}

/// `--flamegraph` or `--anatomy`: the recorded stacks folded (with a warning that the
/// figures include the sampling's perturbation), or why they could not be (a warning too);
/// `None` when the run sampled none.
pub(crate) fn fold_stacks(
    a: &RunArgs,
    report: &mut Report,
    flames: &Flames,
) -> Option<Result<BTreeMap<String, Vec<u8>>, String>> {
    let (what, sampling) = sampled_as(a)?;
    report.warnings.push(format!(
        "sampled run ({}): CPU and syscall figures include its perturbation",
        sampling.describe()
    ));
    if !a.connect.quiet {
        eprintln!("reading back the sampled stacks (perf script): this takes a while");
    }
    Some(flames.fold().map_err(|e| {
        let why = format!("no {what}: {e}");
        report.warnings.push(why.clone());
        why
    }))
}

/// Each backend's CPU per request split by layer, from its folded stacks.
pub(crate) fn anatomy_of(
    report: &mut Report,
    folded: &BTreeMap<String, Vec<u8>>,
    sampling: &Sampling,
    recorder_cpu: &BTreeMap<String, std::time::Duration>,
) {
    for (driver, stacks) in folded {
        if let Some(b) = report.backends.get_mut(driver) {
            let anatomy = Anatomy::from_folded(&String::from_utf8_lossy(stacks));
            b.anatomy = Some(AnatomyReport::new(
                &anatomy,
                sampling,
                b.client_cpu.cpu_us_per_req,
                b.throughput.requests,
                recorder_cpu.get(driver).copied(),
            ));
        }
    }
}

/// `--flamegraph`: the flamegraphs drawn, and where each backend's folded stacks are (for
/// `show --flamediff`); a failure to draw them is a warning.
pub(crate) fn flamegraphs_of(
    report: &mut Report,
    prefix: &std::path::Path,
    folded: &BTreeMap<String, Vec<u8>>,
) {
    match draw_flamegraphs(prefix, folded, report) {
        Ok(files) => {
            for f in files {
                eprintln!("flamegraph written to {}", f.display());
            }
            for (driver, b) in report.backends.iter_mut() {
                if let Some(a) = b.anatomy.as_mut().filter(|_| folded.contains_key(driver)) {
                    let path = crate::probe::flame::folded_path(prefix, driver);
                    // Absolute, so that `show` finds it from any folder.
                    let path = std::fs::canonicalize(&path).unwrap_or(path);
                    a.folded = Some(path.display().to_string());
                }
            }
        }
        Err(e) => report.warnings.push(format!("no flamegraph: {e}")),
    }
}

/// `--flamegraph`: each backend's flamegraph, and a differential one of CPU per request for
/// each pair of backends that measured requests (the later in `--driver` against the
/// earlier).
fn draw_flamegraphs(
    prefix: &std::path::Path,
    folded: &BTreeMap<String, Vec<u8>>,
    report: &Report,
) -> Result<Vec<PathBuf>, crate::probe::flame::FlameError> {
    let mut files = crate::probe::flame::draw(prefix, folded)?;
    let measured: Vec<(&str, &[u8], u64)> = report
        .config
        .drivers
        .iter()
        .filter_map(|d| {
            let requests = report.backends.get(d)?.throughput.requests;
            let stacks = folded.get(d)?;
            (requests > 0).then_some((d.as_str(), stacks.as_slice(), requests))
        })
        .collect();
    for (i, a) in measured.iter().enumerate() {
        for b in &measured[i + 1..] {
            files.push(crate::probe::flame::draw_differential(prefix, *a, *b)?);
        }
    }
    Ok(files)
}
