//! `doppio sweep REPORT.json...`: a series of runs at different concurrencies (one report
//! each, every backend in it) as a markdown table and a plot of throughput and client CPU
//! per request against concurrency, one line per backend (drawn by
//! `crate::render::svg::sweep`).
//!
//! The table's figures are the reports' own (`bench/REPORT.md`); ratios are doppio over
//! scylla of the same report (the same sitting, A B A B), never across reports.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::failure::SweepError;
use crate::render::svg::sweep::{plot, Point};
use crate::report::{BackendReport, Report};

fn load(paths: &[PathBuf]) -> Result<Vec<Point>, SweepError> {
    let mut points = Vec::new();
    for p in paths {
        let r = Report::read(p).map_err(|source| SweepError::Read {
            path: p.clone(),
            source,
        })?;
        points.push(Point {
            concurrency: r.config.concurrency,
            backends: r.backends,
        });
    }
    points.sort_by_key(|p| p.concurrency);
    Ok(points)
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("n/a".into(), |v| format!("{v:.digits$}"))
}

/// The markdown tables of a sweep.
fn markdown(points: &[Point]) -> String {
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
                opt(b.syscalls.syscalls_per_req, 3),
                b.context_switches.ctx_switches_per_req,
                opt(b.memory.allocations_per_req, 2),
                opt(b.socket_batching.requests_per_flush, 1),
                opt(b.socket_batching.requests_per_read, 1),
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

/// `doppio sweep`: prints the markdown table; writes it and the plot where asked.
pub fn sweep(
    reports: &[PathBuf],
    markdown_out: Option<&Path>,
    svg_out: Option<&Path>,
    title: &str,
) -> Result<(), SweepError> {
    let points = load(reports)?;
    if points.is_empty() {
        return Err(SweepError::NoReport);
    }
    let table = markdown(&points);
    print!("{table}");
    if let Some(p) = markdown_out {
        std::fs::write(p, &table).map_err(|source| SweepError::Write {
            path: p.to_owned(),
            source,
        })?;
    }
    if let Some(p) = svg_out {
        plot(&points, p, title)?;
        eprintln!("plot written to {}", p.display());
    }
    Ok(())
}
