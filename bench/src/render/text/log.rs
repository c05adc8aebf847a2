//! LOG: a backend's per-sample lines.

use std::fmt::Write as _;

use crate::report::SampleReport;

pub(super) fn log_section(out: &mut String, label: &str, samples: &[SampleReport]) {
    let _ = writeln!(out, "LOG ({label})");
    // The target column only for rate-limited runs: the schedule's mean over the interval.
    let targets = samples.iter().any(|s| s.target_rps.is_some());
    let _ = writeln!(
        out,
        "  {:>3} {:>8}{} {:>14} {:>8} {:>12} {:>12} {:>12}",
        "seg",
        "time[s]",
        if targets {
            format!(" {:>14}", "target[req/s]")
        } else {
            String::new()
        },
        "req/s",
        "errors",
        "mean[ms]",
        "p50[ms]",
        "p99[ms]"
    );
    for s in samples {
        let target = match (targets, s.target_rps) {
            (false, _) => String::new(),
            (true, Some(t)) => format!(" {t:>14.0}"),
            (true, None) => format!(" {:>14}", "-"),
        };
        let _ = writeln!(
            out,
            "  {:>3} {:>8.1}{target} {:>14.0} {:>8} {:>12.3} {:>12.3} {:>12.3}",
            s.segment + 1,
            s.start_s + s.duration_s,
            s.throughput_rps,
            s.errors,
            s.latency_mean_ns / 1e6,
            s.latency_p50_ns as f64 / 1e6,
            s.latency_p99_ns as f64 / 1e6
        );
    }
    out.push('\n');
}
