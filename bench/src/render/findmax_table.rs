//! A findmax report's text table (`doppio findmax`, `doppio show`): per backend one row per
//! step, and the highest rate each held.

use std::fmt::Write as _;

use crate::report::findmax::FindmaxReport;

/// The text table of `r`: per backend one row per step, and its maximum.
pub(crate) fn table(r: &FindmaxReport) -> String {
    let c = &r.config;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "FINDMAX  workload {}, -p {}, {:.1}s per step after {:.1}s warmup, x{} from {:.0} \
         to {:.0} req/s",
        r.workload,
        c.concurrency,
        c.step_duration_s,
        c.warmup_s,
        c.factor,
        c.start_rps,
        c.max_rate_rps
    );
    let _ = writeln!(
        out,
        "  a step holds when achieved >= {:.0} % of target, errors <= {:.0} %{}",
        c.hold_fraction * 100.0,
        c.max_error_ratio * 100.0,
        if c.slo.is_empty() {
            String::new()
        } else {
            format!(", {}", c.slo.join(", "))
        }
    );
    if let Some(page_size) = c.page_size {
        let _ = writeln!(
            out,
            "  results: pages of {page_size} rows, {}",
            if c.discard_results {
                "rows counted, not decoded (--discard-results)"
            } else {
                "every row decoded"
            }
        );
    }
    for name in &c.drivers {
        let Some(b) = r.backends.get(name) else {
            continue;
        };
        let _ = writeln!(out, "\n{name}");
        let _ = writeln!(
            out,
            "  {:>13} {:>15} {:>9} {:>9} {:>8}  held",
            "target[req/s]", "achieved[req/s]", "p50[ms]", "p99[ms]", "errors"
        );
        for s in &b.steps {
            let _ = writeln!(
                out,
                "  {:>13} {:>15.0} {:>9.3} {:>9.3} {:>8}  {}",
                if s.refinement {
                    format!("(bisect) {:.0}", s.target_rps)
                } else {
                    format!("{:.0}", s.target_rps)
                },
                s.achieved_rps,
                s.latency_p50_ms,
                s.latency_p99_ms,
                s.errors,
                match &s.failed_because {
                    None => "yes".to_owned(),
                    Some(why) => format!("no: {why}"),
                }
            );
        }
    }
    let _ = writeln!(out, "\nHIGHEST RATE HELD");
    for name in &c.drivers {
        if let Some(b) = r.backends.get(name) {
            let _ = writeln!(
                out,
                "  {name:<14} {}  ({})",
                b.max_rate_rps
                    .map_or("none".to_owned(), |r| format!("{r:.0} req/s")),
                b.stopped_because
            );
        }
    }
    if let Some(e) = &r.fatal_error {
        let _ = writeln!(out, "\nFATAL ERROR: {e}");
    }
    out
}
