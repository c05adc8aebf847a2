//! The load curve ([`crate::report::curve::Curve`]) as markdown (`curve.md`): the loads, a row per
//! backend and load with its figures, and a table of each doppio backend's CPU per request
//! over scylla-rust-driver's at each load.

use std::fmt::Write as _;

use crate::report::cell::Value;
use crate::report::curve::{CpuRatio, Curve, CurvePoint, BASELINE};

/// A share as a percentage (`30 %`, `12.5 %`).
fn percent(share: f64) -> String {
    let text = format!("{:.2}", share * 100.0);
    format!("{} %", text.trim_end_matches('0').trim_end_matches('.'))
}

/// The curve as markdown.
pub(crate) fn markdown(c: &Curve) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Load curve: workload {}\n", c.workload);
    loads(&mut out, c);
    points(&mut out, c);
    ratios(&mut out, c);
    if !c.left_out.is_empty() {
        let _ = writeln!(out, "\nLeft out:\n");
        for why in &c.left_out {
            let _ = writeln!(out, "- {why}");
        }
    }
    out
}

/// The loads: each one's rate, the capacities it is a share of, and its report.
fn loads(out: &mut String, c: &Curve) {
    let _ = writeln!(
        out,
        "| load | rate [req/s] | capacities [req/s] | -p | rounds | report |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for l in &c.loads {
        let capacities: Vec<String> = l
            .capacities
            .iter()
            .map(|(d, x)| format!("{d} {x:.0}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {:.0} | {} | {} | {} | {} |",
            percent(l.share),
            l.rate,
            capacities.join(", "),
            l.concurrency,
            l.segments,
            l.report
        );
    }
}

/// A row per backend and load.
fn points(out: &mut String, c: &Curve) {
    let _ = writeln!(
        out,
        "\n| backend | load | req/s | client CPU us/req (user / sys) | node CPU us/req | \
         client + node us/req | syscalls/req | ctx switches/req | sleeps/req | waits/req (completion / \
         timer / remote / empty) | p50 ms | p99 ms | send lateness p50 ms | kept grid |"
    );
    let _ = writeln!(
        out,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (name, series) in &c.backends {
        for p in series {
            let _ = writeln!(out, "| {name} | {} |", row(p));
        }
    }
}

/// A point's cells after its backend's name.
fn row(p: &CurvePoint) -> String {
    let waits = p.waits_per_req.map_or_else(
        || "n/a".to_owned(),
        |w| {
            format!(
                "{:.3} ({:.3} / {:.3} / {:.3} / {:.3})",
                w.waiting, w.woke_by_completion, w.woke_by_timer, w.woke_by_remote, w.woke_empty
            )
        },
    );
    let kept = match p.kept_schedule {
        Some(true) => "yes",
        Some(false) => "no: behind",
        None => "n/a",
    };
    format!(
        "{} | {:.0} | {:.2} ({:.2} / {:.2}) | {} | {} | {} | {:.3} | {} | {waits} | {:.3} | {:.3} | {} | {kept}",
        percent(p.share),
        p.throughput_rps,
        p.cpu_us_per_req,
        p.cpu_user_us_per_req,
        p.cpu_sys_us_per_req,
        Value::or_missing(p.server_cpu_us_per_req).text(2),
        Value::or_missing(p.client_plus_server_cpu_us_per_req).text(2),
        Value::or_missing(p.syscalls_per_req).text(3),
        p.ctx_switches_per_req,
        Value::or_missing(p.sleeps_per_req).text(3),
        p.latency_p50_ns as f64 / 1e6,
        p.latency_p99_ns as f64 / 1e6,
        Value::or_missing(p.send_lateness_p50_ns.map(|n| n as f64 / 1e6)).text(3),
    )
}

/// Each doppio backend's CPU per request over scylla's, a column each, a row per load.
fn ratios(out: &mut String, c: &Curve) {
    let mut names: Vec<&str> = c.cpu_ratios.iter().map(|r| r.backend.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nClient CPU per request over {BASELINE}'s (paired by round, 99 % interval and \
         p-value Holm-adjusted over the load's comparisons, as the VERDICT gives it; `means`: \
         the ratio of the means, not compared by the VERDICT):\n"
    );
    let header: Vec<String> = names.iter().map(|n| format!("{n}/{BASELINE}")).collect();
    let _ = writeln!(out, "| load | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(names.len()));
    for l in &c.loads {
        let cells: Vec<String> = names
            .iter()
            .map(|n| {
                c.cpu_ratios
                    .iter()
                    .find(|r| r.backend == *n && r.share == l.share)
                    .map_or_else(|| "n/a".to_owned(), ratio_cell)
            })
            .collect();
        let _ = writeln!(out, "| {} | {} |", percent(l.share), cells.join(" | "));
    }
}

/// A ratio with what backs it: `0.41x (0.35-0.48, p < 0.001)`, `1.6x (means)`; the p-value
/// is the VERDICT's, Holm-adjusted over the comparisons at its load.
fn ratio_cell(r: &CpuRatio) -> String {
    if !r.paired {
        return format!("{:.2}x (means)", r.ratio);
    }
    let interval = match (r.low, r.high) {
        (Some(low), Some(high)) => format!("{low:.2}-{high:.2}"),
        _ => format!("{} round, no interval", r.rounds),
    };
    let p = match r.p_value {
        Some(p) if p < 0.001 => ", p < 0.001".to_owned(),
        Some(p) => format!(", p = {p:.3}"),
        None => String::new(),
    };
    format!("{:.2}x ({interval}{p})", r.ratio)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::curve::{LoadPoint, WaitsPerReq, KIND};

    fn point(share: f64, cpu: f64) -> CurvePoint {
        CurvePoint {
            share,
            rate: share * 1000.0,
            throughput_rps: share * 990.0,
            cpu_us_per_req: cpu,
            cpu_user_us_per_req: cpu * 0.75,
            cpu_sys_us_per_req: cpu * 0.25,
            server_cpu_us_per_req: None,
            client_plus_server_cpu_us_per_req: None,
            syscalls_per_req: Some(1.5),
            ctx_switches_per_req: 0.25,
            sleeps_per_req: Some(0.125),
            waits_per_req: None,
            latency_p50_ns: 1_500_000,
            latency_p99_ns: 12_000_000,
            send_lateness_p50_ns: Some(1_000_000),
            kept_schedule: Some(true),
        }
    }

    #[test]
    fn a_row_per_backend_and_load_and_a_ratio_per_load_with_what_backs_it() {
        let load = |share: f64| LoadPoint {
            share,
            rate: share * 1000.0,
            capacities: [("scylla".to_owned(), 1000.0)].into_iter().collect(),
            release_grid_s: Some(0.002),
            concurrency: 64,
            segments: 5,
            report: format!("load-{}.json", share * 100.0),
        };
        let mut uring = point(0.125, 4.0);
        uring.waits_per_req = Some(WaitsPerReq {
            waiting: 0.5,
            woke_by_completion: 0.25,
            woke_by_timer: 0.125,
            woke_by_remote: 0.0625,
            woke_empty: 0.0625,
        });
        uring.kept_schedule = Some(false);
        let ratio = |share: f64, r: f64, paired: bool| CpuRatio {
            share,
            backend: "doppio-uring".into(),
            over: "scylla".into(),
            ratio: r,
            low: paired.then_some(0.4),
            high: paired.then_some(0.6),
            p_value: paired.then_some(0.0001),
            rounds: if paired { 5 } else { 0 },
            paired,
        };
        let c = Curve {
            kind: KIND.into(),
            schema_version: 1,
            tool: "t".into(),
            workload: "read".into(),
            drivers: vec!["doppio-uring".into(), "scylla".into()],
            loads: vec![load(0.125), load(0.5)],
            backends: [
                ("doppio-uring".to_owned(), vec![uring, point(0.5, 3.0)]),
                (
                    "scylla".to_owned(),
                    vec![point(0.125, 8.0), point(0.5, 6.0)],
                ),
            ]
            .into_iter()
            .collect(),
            cpu_ratios: vec![ratio(0.125, 0.5, true), ratio(0.5, 1.5, false)],
            left_out: vec!["load-90.json: did not finish (interrupted)".into()],
        };
        let md = markdown(&c);
        assert!(md.starts_with("# Load curve: workload read\n"), "{md}");
        assert!(
            md.contains("| 12.5 % | 125 | scylla 1000 | 64 | 5 | load-12.5.json |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| doppio-uring | 12.5 % | 124 | 4.00 (3.00 / 1.00) | n/a | n/a | 1.500 | 0.250 \
                 | 0.125 | 0.500 (0.250 / 0.125 / 0.062 / 0.062) | 1.500 | 12.000 | 1.000 | no: behind |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| scylla | 50 % | 495 | 6.00 (4.50 / 1.50) | n/a | n/a | 1.500 | 0.250 | 0.125 | n/a |"
            ),
            "{md}"
        );
        assert_eq!(md.matches("| doppio-uring | ").count(), 2, "{md}");
        assert!(md.contains("| load | doppio-uring/scylla |"), "{md}");
        assert!(
            md.contains("| 12.5 % | 0.50x (0.40-0.60, p < 0.001) |"),
            "{md}"
        );
        assert!(md.contains("| 50 % | 1.50x (means) |"), "{md}");
        assert!(
            md.contains("- load-90.json: did not finish (interrupted)"),
            "{md}"
        );
    }
}
