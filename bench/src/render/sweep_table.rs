//! The markdown of `doppio sweep`: a row per report (concurrency) and backend with its
//! figures, then each doppio runtime against scylla-rust-driver at each concurrency.
//!
//! The table's figures are the reports' own (`bench/REPORT.md`); ratios are doppio over
//! scylla of the same report (the same sitting, A B A B), never across reports.

use std::fmt::Write as _;

use crate::render::svg::sweep::Point;
use crate::report::cell::Value;
use crate::report::BackendReport;

/// The markdown tables of a sweep: a row per report and backend, then each doppio runtime's
/// figures over scylla's at each concurrency.
pub(crate) fn markdown(points: &[Point]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| backend | C | req/s | client CPU us/req (user / sys) | syscalls/req | ctx switches/req | allocations/req | req/write | req/read | peak RSS MiB | p50 ms | p99 ms |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|---|");
    for p in points {
        for (name, b) in &p.backends {
            let _ = writeln!(
                out,
                "| {name} | {} | {:.0} | {:.2} ({:.2} / {:.2}) | {} | {:.3} | {} | {} | {} | {:.1} | {:.3} | {:.3} |",
                p.concurrency,
                b.throughput.throughput_rps,
                b.client_cpu.cpu_us_per_req,
                b.client_cpu.cpu_user_us_per_req,
                b.client_cpu.cpu_sys_us_per_req,
                Value::or_missing(b.syscalls.syscalls_per_req).text(3),
                b.context_switches.ctx_switches_per_req,
                Value::or_missing(b.memory.allocations_per_req).text(2),
                Value::or_missing(b.socket_batching.requests_per_flush).text(1),
                Value::or_missing(b.socket_batching.requests_per_read).text(1),
                b.memory.peak_rss_bytes as f64 / (1 << 20) as f64,
                b.latency.latency_ns.p50 as f64 / 1e6,
                b.latency.latency_ns.p99 as f64 / 1e6,
            );
        }
    }
    // Each doppio runtime against scylla-rust-driver, where both ran.
    fn pair<'a>(p: &'a Point, doppio: &str) -> Option<(&'a BackendReport, &'a BackendReport)> {
        Some((p.backends.get(doppio)?, p.backends.get("scylla")?))
    }
    for doppio in ["doppio", "doppio-uring"] {
        if !points.iter().any(|p| pair(p, doppio).is_some()) {
            continue;
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "| C | CPU/req {doppio}/scylla | syscalls/req {doppio}/scylla | throughput {doppio}/scylla |"
        );
        let _ = writeln!(out, "|---|---|---|---|");
        for p in points {
            if let Some((d, s)) = pair(p, doppio) {
                let sys = match (d.syscalls.syscalls_per_req, s.syscalls.syscalls_per_req) {
                    (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                    _ => "n/a".into(),
                };
                let _ = writeln!(
                    out,
                    "| {} | {:.2} | {sys} | {:.2} |",
                    p.concurrency,
                    d.client_cpu.cpu_us_per_req / s.client_cpu.cpu_us_per_req,
                    d.throughput.throughput_rps / s.throughput.throughput_rps
                );
            }
        }
    }
    out
}
