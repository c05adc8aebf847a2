//! `doppio merge`'s tests: aligned samples, summed targets, statements, refused merges.

use super::*;
use crate::report::{BackendRun, SampleReport, WorkloadInfo};
use crate::stats::LatencyHistogram;

fn histogram(values: &[u64]) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for v in values {
        h.record(*v);
    }
    h
}

/// A one-backend report whose samples start at `starts` (wall clock), `n` requests each.
fn report(starts: &[f64], n: u64, cpu: f64, workload: &str) -> Report {
    let mut b = BackendRun::default().report("doppio");
    let h = histogram(&vec![1000; n as usize]);
    let mut whole = LatencyHistogram::new();
    b.samples.samples = starts
        .iter()
        .enumerate()
        .map(|(k, t)| {
            whole.merge(&h);
            SampleReport {
                segment: 0,
                start_s: k as f64,
                duration_s: 1.0,
                requests: n,
                errors: 0,
                throughput_rps: n as f64,
                latency_mean_ns: 1000.0,
                latency_p50_ns: 1000,
                latency_p99_ns: 1000,
                histogram: h.to_base64(),
                start_unix_s: Some(*t),
                statements: Vec::new(),
                requests_by_node: Default::default(),
                target_rps: None,
                tablet_misroutes: None,
            }
        })
        .collect();
    b.throughput.requests = n * starts.len() as u64;
    b.throughput.throughput_rps = n as f64;
    b.client_cpu.cpu_us_per_req = cpu;
    b.samples.histogram = whole.to_base64();
    Report {
        schema_version: crate::report::SCHEMA_VERSION,
        tool: "t".into(),
        tag: None,
        started_at: "2026-11-24T00:00:00Z".into(),
        command: Vec::new(),
        workload: WorkloadInfo {
            name: workload.into(),
            description: String::new(),
            params: BTreeMap::new(),
            statements: vec!["SELECT".into()],
        },
        config: RunConfig {
            nodes: vec!["127.0.0.1:9042".into()],
            drivers: vec!["doppio".into()],
            duration: "3s".into(),
            warmup: "0s".into(),
            concurrency: 4,
            threads: 1,
            connections: 1,
            rate: None,
            rate_schedule: None,
            release_grid_s: None,
            sample_interval_s: 1.0,
            consistency: "LOCAL_ONE".into(),
            request_timeout_s: 5.0,
            retries: 0,
            compression: "none".into(),
            segments: 1,
            username: None,
            spin_before_park_us: None,
            cycles: None,
            page_size: Some(5000),
            discard_results: false,
            validated: Vec::new(),
            serial_consistency: Some("LOCAL_SERIAL".into()),
            idempotent: Vec::new(),
            datacenter: None,
            rack: None,
            retry_backoff: None,
            thread_cores: BTreeMap::new(),
            protocol: None,
            protocol_versions: BTreeMap::new(),
            tls: None,
            sqpoll: None,
            uring_setup: BTreeMap::new(),
            connection_shapes: BTreeMap::new(),
            ..RunConfig::default()
        },
        fatal_error: None,
        warnings: Vec::new(),
        backends: BTreeMap::from([("doppio".to_owned(), b)]),
        merged_from: None,
        environment: None,
    }
}

#[test]
fn samples_are_aligned_by_wall_clock_and_summed() {
    // Machine b started 1.2 s after machine a: its samples join a's second and third.
    let a = report(&[100.0, 101.0, 102.0], 10, 2.0, "read");
    let b = report(&[101.2, 102.2, 103.2], 30, 4.0, "read");
    let m = merge(&[("a".into(), a), ("b".into(), b)], Vec::new(), false).unwrap();
    let d = &m.backends["doppio"];
    let got: Vec<(f64, u64, f64)> = d
        .samples
        .samples
        .iter()
        .map(|s| (s.start_s, s.requests, s.throughput_rps))
        .collect();
    assert_eq!(
        got,
        vec![
            (0.0, 10, 10.0),
            (1.0, 40, 40.0),
            (2.0, 40, 40.0),
            (3.0, 30, 30.0)
        ]
    );
    assert_eq!(d.throughput.requests, 120);
    assert_eq!(
        LatencyHistogram::from_base64(&d.samples.histogram)
            .unwrap()
            .count(),
        120
    );
    assert_eq!(d.throughput.throughput_rps, 40.0);
    // CPU per request: each machine's kept; the entry's pooled over all requests.
    let machines = d.machines.machines.as_ref().unwrap();
    assert_eq!(
        machines
            .iter()
            .map(|x| x.cpu_us_per_req)
            .collect::<Vec<_>>(),
        vec![2.0, 4.0]
    );
    assert!((d.client_cpu.cpu_us_per_req - (2.0 * 30.0 + 4.0 * 90.0) / 120.0).abs() < 1e-9);
    assert_eq!(m.config.concurrency, 8);
    assert_eq!(m.merged_from.as_ref().unwrap().len(), 2);
    assert_eq!(m.warnings.len(), 1, "both drew from 0: {:?}", m.warnings);
}

#[test]
fn targets_are_summed_and_the_schedules_named() {
    let mut a = report(&[100.0, 101.0], 10, 2.0, "read");
    let mut b = report(&[100.0, 101.0], 10, 2.0, "read");
    let mut c = report(&[100.0, 101.0], 10, 2.0, "read");
    for (r, schedule) in [(&mut a, "ramp:1k..2k/2s"), (&mut b, "1500")] {
        r.config.rate_schedule = Some(schedule.into());
        for (k, s) in r
            .backends
            .get_mut("doppio")
            .unwrap()
            .samples
            .samples
            .iter_mut()
            .enumerate()
        {
            s.target_rps = Some(1000.0 * (k + 1) as f64);
        }
    }
    let m = merge(
        &[("a".into(), a.clone()), ("b".into(), b)],
        Vec::new(),
        false,
    )
    .unwrap();
    let targets: Vec<Option<f64>> = m.backends["doppio"]
        .samples
        .samples
        .iter()
        .map(|s| s.target_rps)
        .collect();
    assert_eq!(targets, vec![Some(2000.0), Some(4000.0)]);
    assert_eq!(
        m.config.rate_schedule.as_deref(),
        Some("ramp:1k..2k/2s + 1500")
    );
    // A machine without a limit adds nothing to the target, and is named as such.
    for s in &mut c.backends.get_mut("doppio").unwrap().samples.samples {
        s.target_rps = None;
    }
    let m = merge(&[("a".into(), a), ("c".into(), c)], Vec::new(), false).unwrap();
    assert_eq!(
        m.backends["doppio"].samples.samples[1].target_rps,
        Some(2000.0)
    );
    assert_eq!(
        m.config.rate_schedule.as_deref(),
        Some("ramp:1k..2k/2s + unlimited")
    );
}

/// A run of two statements (`read` weight 3, `write` weight 1) over three 1 s samples
/// starting at `start` (wall clock): per sample `reads` reads at 1 ms and `writes`
/// writes at 2 ms, of which `failed` time out.
fn two_statements(start: f64, reads: u64, writes: u64, failed: u64) -> BackendReport {
    use crate::engine::collect::Sample;
    use crate::engine::statements::{StatementCounts, StatementTotals};
    use crate::report::StatementInfo;
    use std::time::Duration;
    let mut totals = vec![StatementTotals::default(), StatementTotals::default()];
    let segment: Vec<Sample> = (0..3u32)
        .map(|i| {
            let mut latency = LatencyHistogram::new();
            latency.record_n(1_000_000, reads);
            latency.record_n(2_000_000, writes - failed);
            totals[0].requests += reads;
            totals[0].latency.record_n(1_000_000, reads);
            totals[1].requests += writes;
            totals[1].latency.record_n(2_000_000, writes - failed);
            for _ in 0..failed {
                totals[1].count_error("timeout");
            }
            Sample {
                index: u64::from(i),
                start: Duration::from_secs(u64::from(i)),
                duration: Duration::from_secs(1),
                requests: reads + writes,
                rows: 0,
                errors: if failed > 0 {
                    vec![("timeout", failed)]
                } else {
                    Vec::new()
                },
                latency,
                service: LatencyHistogram::new(),
                mean_lateness_ns: 0.0,
                target_rps: None,
                statements: vec![
                    StatementCounts {
                        requests: reads,
                        errors: 0,
                        rows: 0,
                        latency_sum_ns: reads * 1_000_000,
                    },
                    StatementCounts {
                        requests: writes,
                        errors: failed,
                        rows: 0,
                        latency_sum_ns: (writes - failed) * 2_000_000,
                    },
                ],
                nodes: Vec::new(),
                tablet_misroutes: None,
            }
        })
        .collect();
    let info = |name: &str, weight: f64| StatementInfo {
        kind: None,
        conditional: false,
        name: name.into(),
        cql: format!("{name} CQL"),
        weight,
        weight_share: weight / 4.0,
    };
    BackendRun {
        elapsed_s: vec![3.0],
        segment_starts_unix_s: vec![Some(start)],
        rows_counted: true,
        statement_info: vec![info("read", 3.0), info("write", 1.0)],
        statements: totals,
        ..BackendRun::default()
    }
    .with_samples(vec![segment])
    .report("doppio")
}

#[test]
fn statements_are_reported_and_merged_exactly() {
    let a_run = two_statements(100.0, 30, 10, 0);
    // One machine's own entry: counts add up to the totals, margins from its samples.
    assert_eq!(a_run.statements.statements.len(), 2);
    let (read, write) = (
        &a_run.statements.statements[0],
        &a_run.statements.statements[1],
    );
    assert_eq!((read.requests, write.requests), (90, 30));
    assert_eq!(read.requests + write.requests, a_run.throughput.requests);
    assert_eq!((read.weight, read.weight_share), (3.0, 0.75));
    assert!((read.request_share - 0.75).abs() < 1e-12);
    assert!((read.throughput_rps - 30.0).abs() < 1e-9);
    assert_eq!(
        read.throughput_margin_rps, 0.0,
        "constant per-sample throughput"
    );
    assert_eq!(read.rows, Some(0));
    assert!((read.latency_ns.mean - 1e6).abs() < 1e3);
    assert!((write.latency_ns.p50 as f64 - 2e6).abs() < 2e3);
    assert_eq!(a_run.samples.samples[1].statements[1].requests, 10);

    // Machine b: its writes time out one in five; it started 1 s after a.
    let b_run = two_statements(101.0, 60, 10, 2);
    let mut a = report(&[100.0], 1, 1.0, "mixed");
    let mut b = report(&[101.0], 1, 1.0, "mixed");
    a.backends.insert("doppio".into(), a_run.clone());
    b.backends.insert("doppio".into(), b_run.clone());
    let m = merge(
        &[("a".into(), a.clone()), ("b".into(), b.clone())],
        Vec::new(),
        false,
    )
    .unwrap();
    let d = &m.backends["doppio"];
    assert_eq!(d.statements.statements.len(), 2);
    let (read, write) = (&d.statements.statements[0], &d.statements.statements[1]);
    assert_eq!((read.requests, write.requests), (90 + 180, 30 + 30));
    assert_eq!(read.requests + write.requests, d.throughput.requests);
    assert_eq!((read.errors, write.errors), (0, 6));
    assert_eq!(write.errors_by_kind.get("timeout"), Some(&6));
    assert!(
        read.errors_by_kind.is_empty(),
        "errors stay with their statement"
    );
    assert!((read.throughput_rps - (30.0 + 60.0)).abs() < 1e-9);
    let h = LatencyHistogram::from_base64(&write.histogram).unwrap();
    assert_eq!(h.count(), 30 + 24, "histograms added: successes of both");
    assert_eq!(
        LatencyHistogram::from_base64(&read.histogram)
            .unwrap()
            .count(),
        270
    );
    // Aligned samples: b's first sample joins a's second one.
    let per_sample: Vec<u64> = d
        .samples
        .samples
        .iter()
        .map(|s| s.statements[0].requests)
        .collect();
    assert_eq!(per_sample, vec![30, 90, 90, 60]);
    let mean = d.samples.samples[1].statements[1].latency_mean_ns;
    assert!((mean - 2e6).abs() < 1.0, "weighted by successes: {mean}");

    // A machine without per-statement figures (an older report): none in the merge.
    let mut old = b;
    if let Some(x) = old.backends.get_mut("doppio") {
        x.statements.statements.clear();
    }
    let m = merge(&[("a".into(), a), ("old".into(), old)], Vec::new(), false).unwrap();
    assert!(m.backends["doppio"].statements.statements.is_empty());
}

#[test]
fn meaningless_merges_are_refused() {
    let a = report(&[100.0], 10, 1.0, "read");
    let b = report(&[100.0], 10, 1.0, "write");
    let e = merge(
        &[("a".into(), a.clone()), ("b".into(), b)],
        Vec::new(),
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("workloads differ"), "{e}");
    let mut c = a.clone();
    c.workload.statements = vec!["SELECT 2".into()];
    let e = merge(
        &[("a".into(), a.clone()), ("c".into(), c)],
        Vec::new(),
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("statements differ"), "{e}");
    let mut d = a.clone();
    d.config.drivers = vec!["scylla".into()];
    let e = merge(
        &[("a".into(), a.clone()), ("d".into(), d)],
        Vec::new(),
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("drivers differ"), "{e}");
    let e = merge(&[("a".into(), a.clone())], Vec::new(), false).unwrap_err();
    assert!(matches!(e, MergeError::TooFew(1)));
    let mut old = a.clone();
    if let Some(b) = old.backends.get_mut("doppio") {
        b.samples.samples[0].start_unix_s = None;
    }
    let e = merge(&[("a".into(), a), ("old".into(), old)], Vec::new(), false).unwrap_err();
    assert!(matches!(e, MergeError::NoWallClock { .. }), "{e}");
}

/// The same report twice is refused (a copy too); so are runs that did not overlap in
/// time, unless they are said to be sequential.
#[test]
fn the_same_report_twice_and_runs_apart_in_time_are_refused() {
    let a = report(&[100.0, 101.0], 10, 1.0, "read");
    let e = merge(
        &[("a".into(), a.clone()), ("a2".into(), a.clone())],
        Vec::new(),
        false,
    )
    .unwrap_err();
    assert!(matches!(e, MergeError::SameReport { .. }), "{e}");
    assert!(e.to_string().contains("a2 is the same report as a"), "{e}");
    // Ran from 100 to 102; the other from 200 to 202.
    let later = report(&[200.0, 201.0], 10, 1.0, "read");
    let e = merge(
        &[("a".into(), a.clone()), ("later".into(), later.clone())],
        Vec::new(),
        false,
    )
    .unwrap_err();
    assert!(matches!(e, MergeError::NotConcurrent { .. }), "{e}");
    assert!(e.to_string().contains("--sequential"), "{e}");
    let m = merge(
        &[("a".into(), a), ("later".into(), later)],
        Vec::new(),
        true,
    )
    .unwrap();
    assert_eq!(m.backends["doppio"].throughput.requests, 40);
}
