//! `doppio cost`'s table as markdown (doppio and scylla-rust-driver side by side, scenario by
//! scenario) and its `--check` verdict as text.

use std::path::Path;

use crate::report::cost::{Check, CostTable, ScenarioCost};

/// The table as markdown: one row per scenario, doppio and scylla-rust-driver side by side.
pub(crate) fn markdown(table: &CostTable) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Per request ({} build; warm-up {} requests; `empty`: the whole run)\n\n",
        if table.release { "release" } else { "debug" },
        table.warmup
    ));
    out.push_str(
        "| scenario | doppio instr | sim runtime instr | scylla instr | (doppio + sim) / scylla | doppio allocs (bytes) | scylla allocs (bytes) |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut scenarios: Vec<&str> = Vec::new();
    for f in &table.figures {
        if !scenarios.contains(&f.scenario.as_str()) {
            scenarios.push(&f.scenario);
        }
    }
    for s in scenarios {
        let of = |driver: &str| {
            table
                .figures
                .iter()
                .find(|f| f.scenario == s && f.driver == driver)
        };
        let (d, y) = (of("doppio"), of("scylla"));
        let instr = |f: Option<&ScenarioCost>| {
            f.map_or("-".into(), |f| format!("{:.0}", f.client.instructions))
        };
        let heap = |f: Option<&ScenarioCost>| {
            f.map_or("-".into(), |f| {
                format!("{:.2} ({:.0})", f.client.allocations, f.client.bytes)
            })
        };
        // scylla's figure holds tokio's scheduling: doppio's is compared with its
        // executor's share added back (for `empty` that share is in its figure already).
        let ratio = match (d, y) {
            (Some(d), Some(y)) if y.client.instructions > 0.0 => {
                let runtime = if d.requests > 0 {
                    d.runtime.instructions
                } else {
                    0.0
                };
                format!(
                    "{:.2}x",
                    (d.client.instructions + runtime) / y.client.instructions
                )
            }
            _ => "-".into(),
        };
        let runtime = d.map_or("-".into(), |f| format!("{:.0}", f.runtime.instructions));
        out.push_str(&format!(
            "| {s} | {} | {runtime} | {} | {ratio} | {} | {} |\n",
            instr(d),
            instr(y),
            heap(d),
            heap(y)
        ));
    }
    out
}

/// The `--check` verdict: each doppio scenario's line, then whether any regressed.
pub(crate) fn check_text(check: &Check, baseline: &Path) -> String {
    let mut out = format!("\nCHECK against {}\n", baseline.display());
    if let Some(why) = &check.incomparable {
        out.push_str(&format!("  not compared: {why}\n"));
    }
    for l in &check.lines {
        out.push_str(&format!("  {l}\n"));
    }
    out.push_str(&match check.regressions.len() {
        0 => "  no regression\n".to_string(),
        n => format!(
            "  {n} regression(s); if deliberate, copy the new cost.json over the baseline\n"
        ),
    });
    out
}
