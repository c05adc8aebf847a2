//! The load curve (`"kind": "curve"`, `curve.json`, fields in bench/REPORT.md): each
//! backend's cost per request at each of several equal loads, as `doppio curve` writes it
//! from the run reports of its points ([`Curve::of`]), one point per report, each report's
//! `config.equal_load` giving its load.
//!
//! A point's figures are its report's own (`bench/REPORT.md`); the CPU ratio of a doppio
//! backend over scylla-rust-driver at a load is that report's VERDICT finding (paired by
//! round, with its interval) where the VERDICT compared them, else the plain ratio of the
//! two means, marked so. Its p-value is the VERDICT's Holm-adjusted one: each load's
//! VERDICT is one family of comparisons, its p-values adjusted for their number at that
//! load (not over the loads of the curve).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::schema::{BackendReport, EqualLoad, Report};
use super::verdict::{verdict, Figure, Finding};

/// The value of a curve's `kind`.
pub(crate) const KIND: &str = "curve";

/// The version of the curve's layout.
pub(crate) const CURVE_SCHEMA_VERSION: u32 = 1;

/// The backend every doppio backend's CPU is compared with.
pub(crate) const BASELINE: &str = "scylla";

/// The load curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Curve {
    /// Always `curve`: tells it from a run's report.
    pub kind: String,
    /// Layout version ([`CURVE_SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The bench's name and version.
    pub tool: String,
    /// The workload of the points (the first point's).
    pub workload: String,
    /// The backends measured, in `--driver`'s order (the first point's first): each one's
    /// colour in `curve.svg`, as `doppio plot` gives it.
    pub drivers: Vec<String>,
    /// Each load, ascending.
    pub loads: Vec<LoadPoint>,
    /// Each backend's figures at each load it measured, ascending, by driver name.
    pub backends: BTreeMap<String, Vec<CurvePoint>>,
    /// Each doppio backend's client CPU per request over scylla's, by load then backend
    /// (empty when scylla did not run).
    pub cpu_ratios: Vec<CpuRatio>,
    /// The reports left out of the curve, each with why (a point that did not finish).
    pub left_out: Vec<String>,
}

/// One load of the curve: the run report it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LoadPoint {
    /// The share of the slowest backend's capacity (0 to 1).
    pub share: f64,
    /// The rate every segment ran at, iterations per second.
    pub rate: f64,
    /// Each backend's capacity, iterations per second (the probes before the first load).
    pub capacities: BTreeMap<String, f64>,
    /// The release grid's step, seconds (`null`: each request at its own due time).
    pub release_grid_s: Option<f64>,
    /// Concurrent requests in total.
    pub concurrency: usize,
    /// Rounds (segments per backend).
    pub segments: usize,
    /// The report's file.
    pub report: String,
}

/// One backend's figures at one load (its report's, per request unless said otherwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CurvePoint {
    /// The load: a share of the slowest backend's capacity.
    pub share: f64,
    /// The rate asked for, iterations per second.
    pub rate: f64,
    /// Requests per second achieved.
    pub throughput_rps: f64,
    /// Client CPU (user + system), microseconds.
    pub cpu_us_per_req: f64,
    /// Client user CPU, microseconds.
    pub cpu_user_us_per_req: f64,
    /// Client system CPU, microseconds.
    pub cpu_sys_us_per_req: f64,
    /// The node's CPU, microseconds (`null`: not measured).
    pub server_cpu_us_per_req: Option<f64>,
    /// Client and node CPU together, microseconds (`null`: the node's not measured).
    pub client_plus_server_cpu_us_per_req: Option<f64>,
    /// System calls (`null`: not counted).
    pub syscalls_per_req: Option<f64>,
    /// Context switches (voluntary and involuntary).
    pub ctx_switches_per_req: f64,
    /// Sleeps: voluntary context switches, a wake-up each, counted alike for every backend
    /// (`null` when its report predates them).
    #[serde(default)]
    pub sleeps_per_req: Option<f64>,
    /// doppio's own runtime: its shards' waiting `io_uring_enter` calls, by why they woke
    /// (`null` for the other backends).
    pub waits_per_req: Option<WaitsPerReq>,
    /// Median latency from the due time, nanoseconds.
    pub latency_p50_ns: u64,
    /// 99th percentile latency from the due time, nanoseconds.
    pub latency_p99_ns: u64,
    /// Median lateness of a send after its due time, nanoseconds (`null`: not paced).
    pub send_lateness_p50_ns: Option<u64>,
    /// Whether the backend kept the release grid (`null`: not paced); one that did not
    /// sent in coarser batches than asked, so its cost is not that of this load.
    pub kept_schedule: Option<bool>,
}

/// Waiting `io_uring_enter` calls per request, by why each woke.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct WaitsPerReq {
    /// Every waiting enter.
    pub waiting: f64,
    /// Woke for an I/O completion.
    pub woke_by_completion: f64,
    /// Woke for a timer.
    pub woke_by_timer: f64,
    /// Woke for another thread.
    pub woke_by_remote: f64,
    /// Woke to nothing.
    pub woke_empty: f64,
}

/// A doppio backend's client CPU per request over scylla's at one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CpuRatio {
    /// The load.
    pub share: f64,
    /// The doppio backend.
    pub backend: String,
    /// The backend it is compared with ([`BASELINE`]).
    pub over: String,
    /// `backend`'s CPU per request over `over`'s.
    pub ratio: f64,
    /// The 99 % interval's low end (`null`: no interval, see `paired`).
    pub low: Option<f64>,
    /// The 99 % interval's high end.
    pub high: Option<f64>,
    /// The paired t-test's p-value, Holm-adjusted over the comparisons of this load's
    /// VERDICT (one family per load), as the VERDICT gives it (`null`: not paired, or one
    /// round).
    pub p_value: Option<f64>,
    /// Rounds paired (0: not paired).
    pub rounds: usize,
    /// Whether it is the VERDICT's ratio paired by round; false: the plain ratio of the two
    /// means (the VERDICT did not compare them: a backend behind the release grid, or a
    /// report without rounds).
    pub paired: bool,
}

impl Curve {
    /// The curve of `points`, each a report and its file's name: those with a fatal error,
    /// or without `config.equal_load`, are left out (listed with why); the rest sorted by
    /// load.
    pub(crate) fn of(points: &[(String, Report)], tool: String) -> Curve {
        let mut kept: Vec<(&String, &Report, &EqualLoad)> = Vec::new();
        let mut left_out = Vec::new();
        for (file, r) in points {
            match (&r.config.equal_load, &r.fatal_error) {
                (_, Some(e)) => left_out.push(format!("{file}: did not finish ({e})")),
                (None, None) => left_out.push(format!("{file}: no config.equal_load")),
                (Some(e), None) => kept.push((file, r, e)),
            }
        }
        kept.sort_by(|a, b| a.2.share.total_cmp(&b.2.share));
        let mut backends: BTreeMap<String, Vec<CurvePoint>> = BTreeMap::new();
        let mut cpu_ratios = Vec::new();
        let mut loads = Vec::new();
        for (file, r, e) in &kept {
            let load = load_of(file, r, e);
            for (name, b) in r.backends.iter().filter(|(_, b)| b.throughput.requests > 0) {
                let point = point_of(&load, b);
                backends.entry(name.clone()).or_default().push(point);
            }
            cpu_ratios.extend(cpu_ratios_of(r, load.share));
            loads.push(load);
        }
        let mut drivers: Vec<String> = Vec::new();
        for d in kept.iter().flat_map(|(_, r, _)| &r.config.drivers) {
            if backends.contains_key(d) && !drivers.contains(d) {
                drivers.push(d.clone());
            }
        }
        Curve {
            kind: KIND.to_owned(),
            schema_version: CURVE_SCHEMA_VERSION,
            tool,
            drivers,
            workload: kept
                .first()
                .map_or_else(String::new, |(_, r, _)| r.workload.name.clone()),
            loads,
            backends,
            cpu_ratios,
            left_out,
        }
    }
}

/// The load `e` of report `r`, written as `file`.
fn load_of(file: &str, r: &Report, e: &EqualLoad) -> LoadPoint {
    LoadPoint {
        share: e.share,
        rate: e.rate,
        capacities: e.capacities.clone(),
        release_grid_s: r.config.release_grid_s,
        concurrency: r.config.concurrency,
        segments: r.config.segments,
        report: file.to_owned(),
    }
}

/// Backend `b`'s point at `load`.
pub(crate) fn point_of(load: &LoadPoint, b: &BackendReport) -> CurvePoint {
    let step = load
        .release_grid_s
        .filter(|g| g.is_finite() && *g >= 0.0)
        .map_or(Duration::ZERO, Duration::from_secs_f64);
    CurvePoint {
        share: load.share,
        rate: load.rate,
        throughput_rps: b.throughput.throughput_rps,
        cpu_us_per_req: b.client_cpu.cpu_us_per_req,
        cpu_user_us_per_req: b.client_cpu.cpu_user_us_per_req,
        cpu_sys_us_per_req: b.client_cpu.cpu_sys_us_per_req,
        server_cpu_us_per_req: b.server_cpu.server_cpu_us_per_req,
        client_plus_server_cpu_us_per_req: b
            .server_cpu
            .server_cpu_us_per_req
            .map(|s| s + b.client_cpu.cpu_us_per_req),
        syscalls_per_req: b.syscalls.syscalls_per_req,
        ctx_switches_per_req: b.context_switches.ctx_switches_per_req,
        sleeps_per_req: b.context_switches.sleeps_per_req,
        waits_per_req: b.enters.uring_enters_per_req.map(|e| WaitsPerReq {
            waiting: e.waiting,
            woke_by_completion: e.woke_by_completion,
            woke_by_timer: e.woke_by_timer,
            woke_by_remote: e.woke_by_remote,
            woke_empty: e.woke_empty,
        }),
        latency_p50_ns: b.latency.latency_ns.p50,
        latency_p99_ns: b.latency.latency_ns.p99,
        send_lateness_p50_ns: b.latency.send_lateness.as_ref().map(|l| l.from_due_ns.p50),
        kept_schedule: b
            .latency
            .send_lateness
            .as_ref()
            .map(|l| l.kept_schedule(step)),
    }
}

/// Each doppio backend's CPU per request over scylla's in report `r` at load `share`: the
/// VERDICT's paired ratio where it has one, else the ratio of the means.
fn cpu_ratios_of(r: &Report, share: f64) -> Vec<CpuRatio> {
    let measured = |name: &str| r.backends.get(name).filter(|b| b.throughput.requests > 0);
    let Some(base) = measured(BASELINE) else {
        return Vec::new();
    };
    let findings = verdict(r).map(|v| v.findings).unwrap_or_default();
    r.backends
        .iter()
        .filter(|(name, b)| name.starts_with("doppio") && b.throughput.requests > 0)
        .filter_map(|(name, b)| {
            let ratio = paired(&findings, name, share).unwrap_or_else(|| CpuRatio {
                ratio: b.client_cpu.cpu_us_per_req / base.client_cpu.cpu_us_per_req,
                ..unpaired(name, share)
            });
            // A mean of no CPU (not measured) makes no ratio.
            ratio.ratio.is_finite().then_some(ratio)
        })
        .collect()
}

/// `name`'s ratio over [`BASELINE`] at `share`, not paired, its ratio still to be given.
fn unpaired(name: &str, share: f64) -> CpuRatio {
    CpuRatio {
        share,
        backend: name.to_owned(),
        over: BASELINE.to_owned(),
        ratio: f64::NAN,
        low: None,
        high: None,
        p_value: None,
        rounds: 0,
        paired: false,
    }
}

/// The VERDICT's client CPU finding between `name` and [`BASELINE`] at `share`, as
/// `name`'s over the baseline's (turned round, its interval too, when the baseline came
/// later in `--driver`: the VERDICT gives the later one's over the earlier one's).
fn paired(findings: &[Finding], name: &str, share: f64) -> Option<CpuRatio> {
    let (f, turned) = findings.iter().find_map(|f| {
        let over_baseline = f.a == BASELINE && f.b == name;
        let turned = f.a == name && f.b == BASELINE;
        (f.figure == Figure::Cpu && (over_baseline || turned)).then_some((f, turned))
    })?;
    let r = &f.ratio;
    let (ratio, low, high) = if turned {
        (1.0 / r.ratio, 1.0 / r.high, 1.0 / r.low)
    } else {
        (r.ratio, r.low, r.high)
    };
    let finite = |x: f64| x.is_finite().then_some(x);
    Some(CpuRatio {
        ratio,
        low: finite(low),
        high: finite(high),
        // With one round there is no test (its p-value is 1 by convention).
        p_value: (r.pairs >= 2).then_some(f.p_adjusted),
        rounds: r.pairs,
        paired: true,
        ..unpaired(name, share)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::UringEnters;
    use crate::report::{BackendRun, RunConfig, SegmentFigures, UringEntersPerReq};

    /// A backend's entry at one load: `cpu` microseconds per request in each of four
    /// rounds, run at place `position` of each round (rotated between two backends).
    fn backend(name: &str, cpu: f64, k: usize) -> BackendReport {
        let mut b = BackendRun::default().report(name);
        b.throughput.requests = 4000;
        b.throughput.throughput_rps = 1000.0;
        b.client_cpu.cpu_us_per_req = cpu;
        b.client_cpu.cpu_user_us_per_req = 0.75 * cpu;
        b.client_cpu.cpu_sys_us_per_req = 0.25 * cpu;
        b.syscalls.syscalls_per_req = Some(cpu / 10.0);
        b.context_switches.ctx_switches_per_req = 0.5;
        b.latency.latency_ns.p50 = 200_000;
        b.latency.latency_ns.p99 = 2_000_000;
        b.segments.segments = (0..4)
            .map(|round| SegmentFigures {
                round,
                position: (round + k) % 2,
                requests: 1000,
                elapsed_s: 1.0,
                throughput_rps: 1000.0,
                cpu_us_per_req: Some(cpu),
                syscalls_per_req: Some(cpu / 10.0),
                ..SegmentFigures::default()
            })
            .collect();
        b
    }

    /// A point's report at `share` of capacities 5000 and 4000, its backends (in
    /// `--driver`'s order) with these CPU figures.
    fn report(share: f64, backends: &[(&str, f64)]) -> Report {
        let mut r = Report {
            config: RunConfig {
                drivers: backends.iter().map(|(n, _)| (*n).to_owned()).collect(),
                order: Some("rotate".into()),
                concurrency: 16,
                segments: 4,
                rate: Some(share * 4000.0),
                release_grid_s: Some(0.002),
                equal_load: Some(EqualLoad {
                    share,
                    capacities: [("doppio-uring".into(), 5000.0), ("scylla".into(), 4000.0)]
                        .into_iter()
                        .collect(),
                    rate: share * 4000.0,
                }),
                ..RunConfig::default()
            },
            ..Report::default()
        };
        r.workload.name = "empty".into();
        for (k, (name, cpu)) in backends.iter().enumerate() {
            r.backends
                .insert((*name).to_owned(), backend(name, *cpu, k));
        }
        r
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn the_curve_has_every_backend_at_every_load_sorted_with_its_reports_figures() {
        let mut high = report(0.7, &[("scylla", 8.0), ("doppio-uring", 4.0)]);
        let mut low = report(0.3, &[("scylla", 10.0), ("doppio-uring", 20.0)]);
        // The node measured at the high load; doppio-uring's waits at the low one.
        for (name, b) in high.backends.iter_mut() {
            b.server_cpu.server_cpu_us_per_req = Some(if name == "scylla" { 30.0 } else { 31.0 });
        }
        let uring = low.backends.get_mut("doppio-uring").unwrap();
        uring.enters.uring_enters_per_req = Some(UringEntersPerReq::of(
            &UringEnters {
                total: 3000,
                waiting: 2000,
                woke_by_completion: 1200,
                woke_by_timer: 600,
                woke_by_remote: 120,
                woke_empty: 80,
                ..UringEnters::default()
            },
            4000,
        ));
        // Given high first: the curve is by load.
        let c = Curve::of(
            &[("load-70.json".into(), high), ("load-30.json".into(), low)],
            "doppio-bench test".into(),
        );
        assert_eq!(c.kind, "curve");
        assert_eq!(c.workload, "empty");
        assert!(c.left_out.is_empty());
        let shares: Vec<f64> = c.loads.iter().map(|l| l.share).collect();
        assert_eq!(shares, [0.3, 0.7]);
        assert_eq!(c.loads[0].report, "load-30.json");
        assert!(close(c.loads[1].rate, 2800.0));
        assert_eq!(c.loads[1].capacities["scylla"], 4000.0);
        assert_eq!(c.backends.len(), 2);
        assert_eq!(c.drivers, ["scylla", "doppio-uring"]);
        let uring = &c.backends["doppio-uring"];
        let scylla = &c.backends["scylla"];
        assert_eq!(uring.len(), 2);
        assert_eq!(scylla.len(), 2);
        assert_eq!((uring[0].share, uring[1].share), (0.3, 0.7));
        assert_eq!(uring[0].cpu_us_per_req, 20.0);
        assert_eq!(uring[0].cpu_user_us_per_req, 15.0);
        assert_eq!(uring[0].cpu_sys_us_per_req, 5.0);
        assert_eq!(uring[0].syscalls_per_req, Some(2.0));
        assert_eq!(uring[0].ctx_switches_per_req, 0.5);
        assert_eq!(uring[0].latency_p50_ns, 200_000);
        assert_eq!(uring[0].latency_p99_ns, 2_000_000);
        assert!(close(uring[0].rate, 1200.0));
        // The node's CPU where it was measured, and client + node beside it.
        assert_eq!(uring[0].server_cpu_us_per_req, None);
        assert_eq!(uring[0].client_plus_server_cpu_us_per_req, None);
        assert_eq!(uring[1].server_cpu_us_per_req, Some(31.0));
        assert_eq!(uring[1].client_plus_server_cpu_us_per_req, Some(35.0));
        assert_eq!(scylla[1].client_plus_server_cpu_us_per_req, Some(38.0));
        // Waits by cause per request for doppio's own runtime only.
        let w = uring[0].waits_per_req.unwrap();
        assert_eq!(
            (w.waiting, w.woke_by_completion, w.woke_by_timer),
            (0.5, 0.3, 0.15)
        );
        assert_eq!((w.woke_by_remote, w.woke_empty), (0.03, 0.02));
        assert_eq!(scylla[0].waits_per_req, None);
        // Not paced in these hand-made reports: no lateness, no judgement of the grid.
        assert_eq!(uring[0].send_lateness_p50_ns, None);
        assert_eq!(uring[0].kept_schedule, None);
        // The VERDICT's paired ratio, a row per load.
        assert_eq!(c.cpu_ratios.len(), 2);
        let r30 = &c.cpu_ratios[0];
        assert_eq!(
            (r30.share, r30.backend.as_str(), r30.over.as_str()),
            (0.3, "doppio-uring", "scylla")
        );
        assert!(r30.paired && r30.rounds == 4, "{r30:?}");
        assert!(close(r30.ratio, 2.0), "{r30:?}");
        assert!(close(c.cpu_ratios[1].ratio, 0.5), "{:?}", c.cpu_ratios[1]);
    }

    #[test]
    fn a_ratio_is_turned_round_when_scylla_ran_later_and_is_the_means_without_rounds() {
        let paired = report(
            0.5,
            &[("doppio", 12.0), ("scylla", 4.0), ("doppio-uring", 2.0)],
        );
        let mut unpaired = report(0.9, &[("doppio", 9.0), ("scylla", 6.0)]);
        for b in unpaired.backends.values_mut() {
            b.segments.segments.clear();
        }
        let c = Curve::of(
            &[("a.json".into(), paired), ("b.json".into(), unpaired)],
            String::new(),
        );
        let find = |share: f64, name: &str| {
            c.cpu_ratios
                .iter()
                .find(|r| r.share == share && r.backend == name)
                .unwrap()
                .clone()
        };
        // The VERDICT compares scylla against doppio (doppio first in --driver): its
        // ratio, scylla's over doppio's, is turned round, and so is its interval.
        let d = find(0.5, "doppio");
        assert!(d.paired && close(d.ratio, 3.0), "{d:?}");
        if let (Some(low), Some(high)) = (d.low, d.high) {
            assert!(low <= d.ratio && d.ratio <= high, "{d:?}");
        }
        let u = find(0.5, "doppio-uring");
        assert!(u.paired && close(u.ratio, 0.5), "{u:?}");
        let m = find(0.9, "doppio");
        assert!(!m.paired && m.rounds == 0 && m.p_value.is_none(), "{m:?}");
        assert!(close(m.ratio, 1.5), "{m:?}");
        assert_eq!(c.cpu_ratios.len(), 3);
    }

    /// The curve's p-value is its load's VERDICT's, Holm-adjusted over that VERDICT's
    /// comparisons (CPU and syscalls here), not the raw one.
    #[test]
    fn a_paired_ratio_has_the_verdicts_adjusted_p_value() {
        let mut r = report(0.5, &[("scylla", 8.0), ("doppio-uring", 4.0)]);
        if let Some(b) = r.backends.get_mut("doppio-uring") {
            for (s, (cpu, syscalls)) in b.segments.segments.iter_mut().zip([
                (4.0, 0.4),
                (4.4, 0.38),
                (3.9, 0.43),
                (4.3, 0.41),
            ]) {
                s.cpu_us_per_req = Some(cpu);
                s.syscalls_per_req = Some(syscalls);
            }
        }
        let v = verdict(&r).unwrap();
        assert_eq!(v.comparisons, 2);
        let cpu = v.findings.iter().find(|f| f.figure == Figure::Cpu).unwrap();
        assert!(cpu.p_adjusted > cpu.ratio.p_value, "{cpu:?}");
        let c = Curve::of(&[("load-50.json".into(), r)], String::new());
        assert_eq!(c.cpu_ratios[0].p_value, Some(cpu.p_adjusted));
    }

    #[test]
    fn unfinished_points_are_left_out_and_the_curve_reads_back_as_written() {
        let mut interrupted = report(0.5, &[("scylla", 8.0), ("doppio-uring", 4.0)]);
        interrupted.fatal_error = Some("interrupted".into());
        let mut plain = report(0.3, &[("scylla", 8.0), ("doppio-uring", 4.0)]);
        plain.config.equal_load = None;
        let kept = report(0.7, &[("scylla", 8.0)]);
        let c = Curve::of(
            &[
                ("load-50.json".into(), interrupted),
                ("run.json".into(), plain),
                ("load-70.json".into(), kept),
            ],
            "t".into(),
        );
        assert_eq!(
            c.left_out,
            [
                "load-50.json: did not finish (interrupted)",
                "run.json: no config.equal_load"
            ]
        );
        assert_eq!(c.loads.len(), 1);
        assert_eq!(c.backends["scylla"].len(), 1);
        assert!(!c.backends.contains_key("doppio-uring"));
        // No doppio backend beside scylla: no ratio.
        assert!(c.cpu_ratios.is_empty());
        let json = serde_json::to_string_pretty(&c).unwrap();
        let back: Curve = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let p = &v["backends"]["scylla"][0];
        assert!(p["server_cpu_us_per_req"].is_null(), "{p}");
        assert!(p["client_plus_server_cpu_us_per_req"].is_null(), "{p}");
        assert!(p["waits_per_req"].is_null(), "{p}");
        assert_eq!(p["share"], 0.7);
    }
}
