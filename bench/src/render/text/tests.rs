//! The text report's tests: golden tables, p-values, notes.

use super::compare::compare_sections;
use super::layout::{change_from_written, measured_columns};
use super::notes::verdict_section;
use crate::probe::process_cost::SyscallKind;
use crate::probe::process_cost::{ByKind, Cost, IoUringOps};
use crate::report::{BackendReport, LatencySummary, Report, SampleReport, StatementReport};
use crate::report::{BackendRun, SampleStatement};

/// A backend's report with every figure the comparison tables show set to a value
/// derived from `k` (so two columns differ), and per-sample figures for the p-values.
fn fixture(driver: &str, k: f64, counted: bool) -> BackendReport {
    let mut b = BackendRun::default().report(driver);
    b.throughput.throughput_rps = 15_000.0 * k;
    b.throughput.throughput_margin_rps = 310.6 * k;
    b.throughput.requests = (45_237.0 * k) as u64;
    b.throughput.errors = if counted { 3 } else { 0 };
    if counted {
        b.throughput.errors_by_kind.insert("timeout".into(), 2);
        b.throughput.errors_by_kind.insert("overloaded".into(), 1);
        b.throughput
            .first_errors
            .insert("timeout".into(), "request timed out after 5 s".into());
    }
    b.throughput.elapsed_s = 3.01 * k;
    b.client_cpu.cpu_us_per_req = 5.55 * k;
    b.client_cpu.cpu_user_us_per_req = 1.78 * k;
    b.client_cpu.cpu_sys_us_per_req = 3.77 * k;
    b.context_switches.ctx_switches_per_req = 0.0123 * k;
    b.context_switches.sleeps_per_req = Some(0.0101 * k);
    b.memory.peak_rss_bytes = (15.9 * k * (1 << 20) as f64) as u64;
    let ms = |x: f64| (x * 1e6 * k) as u64;
    b.latency.latency_ns = LatencySummary {
        mean: 1.234e6 * k,
        mean_margin: 0.056e6 * k,
        min: ms(0.1),
        p25: ms(0.5),
        p50: ms(1.0),
        p75: ms(1.5),
        p90: ms(2.0),
        p95: ms(2.5),
        p99: ms(4.0),
        p999: ms(8.0),
        p9999: ms(16.0),
        max: ms(32.0),
    };
    b.latency.service_time_ns = LatencySummary {
        p50: ms(0.9),
        p99: ms(3.5),
        ..LatencySummary::default()
    };
    if counted {
        b.syscalls.syscalls_per_req = Some(0.985 * k);
        b.syscalls.syscalls_by_kind_per_req =
            Some(ByKind::from_fn(|s| (s as usize + 1) as f64 * k / 10.0));
        b.io_uring.io_uring_submitted_per_req = Some(0.25 * k);
        b.io_uring.io_uring_completed_per_req = Some(0.5 * k);
        b.memory.allocations_per_req = Some(0.48 * k);
        b.socket_batching.requests_per_flush = Some(256.0 * k);
        b.socket_batching.requests_per_read = Some(12.5 * k);
        b.driver_counts.requests_by_node = Some(
            [
                ("127.0.0.1:9042", 600),
                ("127.0.0.2:9042", 300),
                ("127.0.0.3:9042", 100),
            ]
            .into_iter()
            .map(|(n, c)| (n.to_owned(), c))
            .collect(),
        );
    } else {
        b.syscalls.syscalls_unavailable = Some("perf_event_paranoid is 3".into());
        b.syscalls.syscall_kinds_unavailable = Some("perf_event_paranoid is 3".into());
        b.io_uring.io_uring_unavailable = Some("no io_uring tracepoints".into());
    }
    b.samples.samples = (0..6)
        .map(|i| SampleReport {
            segment: 0,
            start_s: f64::from(i),
            duration_s: 1.0,
            requests: 15_000,
            errors: 0,
            throughput_rps: b.throughput.throughput_rps + f64::from(i % 3) * 100.0,
            latency_mean_ns: b.latency.latency_ns.mean + f64::from(i % 2) * 1e4,
            latency_p50_ns: 0,
            latency_p99_ns: 0,
            histogram: String::new(),
            target_rps: None,
            start_unix_s: None,
            statements: Vec::new(),
            requests_by_node: Default::default(),
            tablet_misroutes: None,
        })
        .collect();
    b
}

/// `fixture` with 12 samples whose histograms hold latencies spread around `scale` ms
/// (a different spread per sample, so that per-sample percentiles vary).
fn with_histograms(driver: &str, scale: f64) -> BackendReport {
    let mut b = fixture(driver, 1.0, true);
    b.samples.samples = (0..12)
        .map(|i| {
            let mut h = crate::stats::LatencyHistogram::new();
            for v in 1..=1000u64 {
                let jitter = 1.0 + f64::from(i % 4) * 0.01;
                h.record((v as f64 * 2_000.0 * scale * jitter) as u64);
            }
            SampleReport {
                segment: 0,
                start_s: f64::from(i),
                duration_s: 1.0,
                requests: 1000,
                errors: 0,
                throughput_rps: 1000.0,
                latency_mean_ns: h.mean(),
                latency_p50_ns: h.value_at_percentile(50.0),
                latency_p99_ns: h.value_at_percentile(99.0),
                histogram: h.to_base64(),
                target_rps: None,
                start_unix_s: None,
                statements: Vec::new(),
                requests_by_node: Default::default(),
                tablet_misroutes: None,
            }
        })
        .collect();
    b
}

/// The p-value column of the LATENCY row `label`, if it has one.
fn p_of(out: &str, label: &str) -> Option<f64> {
    let section = out.split("LATENCY [ms]").nth(1)?;
    let line = section
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{label} ")))?;
    let cells: Vec<&str> = line.split_whitespace().collect();
    // label, value, value, change, p-value
    (cells.len() == 5).then(|| cells[4].parse().ok())?
}

#[test]
fn every_tested_latency_percentile_gets_a_p_value_from_the_samples_histograms() {
    let a = with_histograms("doppio", 1.0);
    let slower = with_histograms("scylla", 1.25);
    let same = with_histograms("scylla", 1.0);
    for (b, differ) in [(&slower, true), (&same, false)] {
        let mut out = String::new();
        compare_sections(&mut out, &[("doppio".into(), &a), ("scylla".into(), b)]);
        for label in ["25", "50", "75", "90", "95", "99", "99.9", "99.99"] {
            let p = p_of(&out, label).unwrap_or_else(|| panic!("row {label}: {out}"));
            if differ {
                assert!(p < 0.001, "{label}: p {p} for latencies 25 % higher");
            } else {
                assert!(p > 0.5, "{label}: p {p} for the same latencies");
            }
        }
        // min and max are single values: no test.
        assert_eq!(p_of(&out, "min"), None, "{out}");
        assert_eq!(p_of(&out, "max"), None, "{out}");
    }
}

#[test]
fn a_backend_that_measured_nothing_is_not_run_never_a_column_of_zeros() {
    let ran = fixture("doppio", 1.0, true);
    let mut stopped = fixture("scylla", 1.0, false);
    stopped.throughput.requests = 0;
    let backends = std::collections::BTreeMap::from([
        ("doppio".to_owned(), ran),
        ("scylla".to_owned(), stopped),
    ]);
    let drivers = ["doppio", "doppio-uring", "scylla"].map(String::from);
    let (columns, not_run) = measured_columns(&drivers, &backends);
    let names: Vec<&str> = columns.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(names, ["doppio"]);
    assert_eq!(not_run, ["doppio-uring", "scylla"]);
}

#[test]
fn comparison_of_two_backends_is_pinned() {
    let (a, b) = (fixture("doppio", 1.0, true), fixture("scylla", 1.25, false));
    let mut out = String::new();
    compare_sections(&mut out, &[("doppio".into(), &a), ("scylla".into(), &b)]);
    assert_golden(&out, GOLDEN_TWO);
}

#[test]
fn comparison_of_one_and_of_three_backends_is_pinned() {
    let a = fixture("doppio", 1.0, true);
    let b = fixture("doppio-uring", 0.5, true);
    let c = fixture("scylla", 2.0, false);
    let mut one = String::new();
    compare_sections(&mut one, &[("doppio".into(), &a)]);
    assert_golden(&one, GOLDEN_ONE);
    let mut three = String::new();
    compare_sections(
        &mut three,
        &[
            ("doppio".into(), &a),
            ("doppio-uring".into(), &b),
            ("scylla".into(), &c),
        ],
    );
    assert_golden(&three, GOLDEN_THREE);
}

/// A VERDICT of three comparisons (client CPU, syscalls and throughput, the last two
/// ties): the CPU ratio's raw p of 0.0065 is 0.019 once adjusted, no difference shown,
/// and a line says for how many comparisons the p-values are adjusted.
#[test]
fn the_verdict_gives_holm_adjusted_p_values_and_says_so() {
    use crate::report::{RunConfig, SegmentFigures};
    let mut r = Report {
        config: RunConfig {
            drivers: vec!["scylla".into(), "doppio-uring".into()],
            order: Some("rotate".into()),
            ..RunConfig::default()
        },
        ..Report::default()
    };
    let cpu = [[3.0; 6], [3.3, 3.1, 3.25, 3.25, 3.1, 3.3]];
    for (k, name) in ["scylla", "doppio-uring"].into_iter().enumerate() {
        let mut b = BackendRun::default().report(name);
        b.throughput.requests = 6000;
        b.segments.segments = (0..6)
            .map(|round| SegmentFigures {
                round,
                position: (round + k) % 2,
                requests: 1000,
                elapsed_s: 1.0,
                throughput_rps: 1e5,
                cpu_us_per_req: Some(cpu[k][round]),
                syscalls_per_req: Some(0.5),
                ..SegmentFigures::default()
            })
            .collect();
        r.backends.insert(name.into(), b);
    }
    let mut out = String::new();
    verdict_section(&mut out, &r);
    assert_golden(
        &out,
        &[
            "VERDICT  (6 rounds paired, order rotated; each ratio is the geometric mean of the rounds' ratios,",
            "         adjusted for a drift within rounds, with its 99 % interval and the p-value of a paired",
            "         t-test)",
            "  client CPU per request: no difference shown between doppio-uring and scylla (1.1x, 99 % interval",
            "  1.0-1.1, p = 0.019)",
            "  syscalls per request: no difference shown between doppio-uring and scylla (1.0x, 99 % interval",
            "  1.0-1.0, p = 1.000)",
            "  throughput: no difference shown between doppio-uring and scylla (1.0x, 99 % interval 1.0-1.0, p =",
            "  1.000)",
            "  p-values adjusted (Holm) for the 3 comparisons above (the intervals are not: each is its",
            "  comparison's own)",
            "",
        ],
    );
}

/// Compares rendered text with golden lines (every line, its trailing spaces included,
/// and the final newline).
fn assert_golden(out: &str, golden: &[&str]) {
    assert_eq!(out, golden.join("\n") + "\n", "got:\n{out}");
}

const GOLDEN_TWO: &[&str] = &[
    "SUMMARY                                 doppio                  scylla    change  p-value",
    "  throughput [req/s]               15000 ± 311             18750 ± 388    +25.0%    0.000",
    "  requests                               45237                   56546    +25.0%",
    "  errors                                     3                       0          ",
    "  measured time [s]                       3.01                    3.76          ",
    "",
    "LATENCY [ms]                            doppio                  scylla    change  p-value",
    "  mean                           1.234 ± 0.056           1.542 ± 0.070    +25.0%    0.000",
    "  min                                    0.100                   0.125    +25.0%",
    "  25                                     0.500                   0.625    +25.0%",
    "  50                                     1.000                   1.250    +25.0%",
    "  75                                     1.500                   1.875    +25.0%",
    "  90                                     2.000                   2.500    +25.0%",
    "  95                                     2.500                   3.125    +25.0%",
    "  99                                     4.000                   5.000    +25.0%",
    "  99.9                                   8.000                  10.000    +25.0%",
    "  99.99                                 16.000                  20.000    +25.0%",
    "  max                                   32.000                  40.000    +25.0%",
    "  service time p50                       0.900                   1.125    +25.0%",
    "  service time p99                       3.500                   4.375    +25.0%",
    "",
    "OVERHEAD (per request)                  doppio                  scylla    change  p-value",
    "  client CPU [us]                         5.55                    6.94    +25.0%",
    "    user / sys [us]                1.78 / 3.77             2.23 / 4.71          ",
    "  syscalls                               0.985                     n/a          ",
    "    io_uring_enter                       0.100                     n/a          ",
    "    send                                 0.200                     n/a          ",
    "    recv                                 0.300                     n/a          ",
    "    epoll                                0.400                     n/a          ",
    "    futex                                0.500                     n/a          ",
    "    membarrier                           0.600                     n/a          ",
    "    other                                0.700                     n/a          ",
    "  io_uring submitted                     0.250                     n/a          ",
    "  io_uring completed                     0.500                     n/a          ",
    "  context switches                       0.012                   0.015    +25.0%",
    "    sleeps (wake-ups)                    0.010                   0.013    +25.0%",
    "  heap allocations                        0.48                     n/a          ",
    "  requests per write                     256.0                     n/a          ",
    "  requests per read                       12.5                     n/a          ",
    "  peak RSS [MiB]                          15.9                    19.9          ",
    "    sent to 127.0.0.1:9042                  60.0 %                     n/a          ",
    "    sent to 127.0.0.2:9042                  30.0 %                     n/a          ",
    "    sent to 127.0.0.3:9042                  10.0 %                     n/a          ",
    "  scylla: syscalls not counted: perf_event_paranoid is 3",
    "  scylla: io_uring operations not counted: no io_uring tracepoints",
    "",
    "ERRORS",
    "  doppio: overloaded x1: ",
    "  doppio: timeout x2: request timed out after 5 s",
    "",
];

const GOLDEN_ONE: &[&str] = &[
    "SUMMARY                                 doppio",
    "  throughput [req/s]               15000 ± 311",
    "  requests                               45237",
    "  errors                                     3",
    "  measured time [s]                       3.01",
    "",
    "LATENCY [ms]                            doppio",
    "  mean                           1.234 ± 0.056",
    "  min                                    0.100",
    "  25                                     0.500",
    "  50                                     1.000",
    "  75                                     1.500",
    "  90                                     2.000",
    "  95                                     2.500",
    "  99                                     4.000",
    "  99.9                                   8.000",
    "  99.99                                 16.000",
    "  max                                   32.000",
    "  service time p50                       0.900",
    "  service time p99                       3.500",
    "",
    "OVERHEAD (per request)                  doppio",
    "  client CPU [us]                         5.55",
    "    user / sys [us]                1.78 / 3.77",
    "  syscalls                               0.985",
    "    io_uring_enter                       0.100",
    "    send                                 0.200",
    "    recv                                 0.300",
    "    epoll                                0.400",
    "    futex                                0.500",
    "    membarrier                           0.600",
    "    other                                0.700",
    "  io_uring submitted                     0.250",
    "  io_uring completed                     0.500",
    "  context switches                       0.012",
    "    sleeps (wake-ups)                    0.010",
    "  heap allocations                        0.48",
    "  requests per write                     256.0",
    "  requests per read                       12.5",
    "  peak RSS [MiB]                          15.9",
    "    sent to 127.0.0.1:9042                  60.0 %",
    "    sent to 127.0.0.2:9042                  30.0 %",
    "    sent to 127.0.0.3:9042                  10.0 %",
    "",
    "ERRORS",
    "  doppio: overloaded x1: ",
    "  doppio: timeout x2: request timed out after 5 s",
    "",
];

const GOLDEN_THREE: &[&str] = &[
    "SUMMARY                                 doppio            doppio-uring                  scylla",
    "  throughput [req/s]               15000 ± 311              7500 ± 155             30000 ± 621",
    "  requests                               45237                   22618                   90474",
    "  errors                                     3                       3                       0",
    "  measured time [s]                       3.01                    1.50                    6.02",
    "",
    "LATENCY [ms]                            doppio            doppio-uring                  scylla",
    "  mean                           1.234 ± 0.056           0.617 ± 0.028           2.468 ± 0.112",
    "  min                                    0.100                   0.050                   0.200",
    "  25                                     0.500                   0.250                   1.000",
    "  50                                     1.000                   0.500                   2.000",
    "  75                                     1.500                   0.750                   3.000",
    "  90                                     2.000                   1.000                   4.000",
    "  95                                     2.500                   1.250                   5.000",
    "  99                                     4.000                   2.000                   8.000",
    "  99.9                                   8.000                   4.000                  16.000",
    "  99.99                                 16.000                   8.000                  32.000",
    "  max                                   32.000                  16.000                  64.000",
    "  service time p50                       0.900                   0.450                   1.800",
    "  service time p99                       3.500                   1.750                   7.000",
    "",
    "OVERHEAD (per request)                  doppio            doppio-uring                  scylla",
    "  client CPU [us]                         5.55                    2.77                   11.10",
    "    user / sys [us]                1.78 / 3.77             0.89 / 1.89             3.56 / 7.54",
    "  syscalls                               0.985                   0.492                     n/a",
    "    io_uring_enter                       0.100                   0.050                     n/a",
    "    send                                 0.200                   0.100                     n/a",
    "    recv                                 0.300                   0.150                     n/a",
    "    epoll                                0.400                   0.200                     n/a",
    "    futex                                0.500                   0.250                     n/a",
    "    membarrier                           0.600                   0.300                     n/a",
    "    other                                0.700                   0.350                     n/a",
    "  io_uring submitted                     0.250                   0.125                     n/a",
    "  io_uring completed                     0.500                   0.250                     n/a",
    "  context switches                       0.012                   0.006                   0.025",
    "    sleeps (wake-ups)                    0.010                   0.005                   0.020",
    "  heap allocations                        0.48                    0.24                     n/a",
    "  requests per write                     256.0                   128.0                     n/a",
    "  requests per read                       12.5                     6.2                     n/a",
    "  peak RSS [MiB]                          15.9                     7.9                    31.8",
    "    sent to 127.0.0.1:9042                  60.0 %                  60.0 %                     n/a",
    "    sent to 127.0.0.2:9042                  30.0 %                  30.0 %                     n/a",
    "    sent to 127.0.0.3:9042                  10.0 %                  10.0 %                     n/a",
    "  scylla: syscalls not counted: perf_event_paranoid is 3",
    "  scylla: io_uring operations not counted: no io_uring tracepoints",
    "",
    "ERRORS",
    "  doppio: overloaded x1: ",
    "  doppio: timeout x2: request timed out after 5 s",
    "  doppio-uring: overloaded x1: ",
    "  doppio-uring: timeout x2: request timed out after 5 s",
    "",
];

/// A backend's report of 1000 requests of two statements: `read` (weight 3) and `write`
/// (weight 1; every one of its requests failed when `failing`), figures scaled by `k`.
fn with_statements(driver: &str, k: f64, failing: bool) -> BackendReport {
    let mut b = BackendRun::default().report(driver);
    let statement = |name: &str, weight: f64, requests: u64, errors: u64| StatementReport {
        kind: None,
        not_applied: None,
        name: name.into(),
        cql: format!("{name} CQL"),
        weight,
        weight_share: weight / 4.0,
        requests,
        request_share: requests as f64 / 1000.0,
        throughput_rps: requests as f64 * k,
        throughput_margin_rps: 12.0,
        errors,
        errors_by_kind: if errors > 0 {
            [("overloaded".to_owned(), errors)].into()
        } else {
            Default::default()
        },
        rows: Some(requests - errors),
        latency_ns: LatencySummary {
            mean: 1.5e6 * k,
            mean_margin: 1e4,
            p50: (1e6 * k) as u64,
            p99: (4e6 * k) as u64,
            p999: (8e6 * k) as u64,
            max: (9e6 * k) as u64,
            ..LatencySummary::default()
        },
        histogram: String::new(),
    };
    b.throughput.requests = 1000;
    b.throughput.errors = if failing { 250 } else { 0 };
    b.throughput.errors_by_kind = [("overloaded".to_owned(), b.throughput.errors)].into();
    b.result_rows.rows = Some(b.throughput.requests - b.throughput.errors);
    b.statements.statements = vec![
        statement("read", 3.0, 750, 0),
        statement("write", 1.0, 250, if failing { 250 } else { 0 }),
    ];
    b
}

/// `got` is `want`, line by line, trailing spaces aside.
fn assert_lines(got: &[&str], want: &[&str]) {
    let got: Vec<&str> = got.iter().map(|l| l.trim_end()).collect();
    assert_eq!(got, want, "got:\n{}", got.join("\n"));
}

#[test]
fn statements_get_a_line_each_for_one_backend_and_side_by_side_tables_for_two() {
    let a = with_statements("doppio", 1.0, true);
    let mut out = String::new();
    compare_sections(&mut out, &[("doppio".into(), &a)]);
    let section: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("STATEMENTS"))
        .take(5)
        .collect();
    assert_lines(
        &section,
        &[
            "STATEMENTS (doppio)",
            "                   weight  requests  share        throughput errors     mean     p50     p99",
            "                      [%]              [%]           [req/s]            [ms]    [ms]    [ms]",
            "  read               75.0       750   75.0          750 ± 12      0    1.500   1.000   4.000",
            "  write              25.0       250   25.0          250 ± 12    250      n/a     n/a     n/a",
        ],
    );
    assert!(
        out.contains("  doppio statement write: overloaded x250"),
        "{out}"
    );
    assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");

    let b = with_statements("scylla", 2.0, false);
    let mut out = String::new();
    compare_sections(&mut out, &[("doppio".into(), &a), ("scylla".into(), &b)]);
    let write: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("STATEMENT write"))
        .take(12)
        .collect();
    assert_lines(
        &write,
        &[
            "STATEMENT write                         doppio                  scylla    change  p-value",
            "  throughput [req/s]                  250 ± 12                500 ± 12   +100.0%",
            "  requests                                 250                     250     +0.0%",
            "    share                               25.0 %                  25.0 %",
            "    weight                              25.0 %                  25.0 %",
            "  errors                                   250                       0",
            "  rows                                       0                     250",
            "  mean [ms]                                n/a           3.000 ± 0.010",
            "  p50 [ms]                                 n/a                   2.000",
            "  p99 [ms]                                 n/a                   8.000",
            "  p99.9 [ms]                               n/a                  16.000",
            "  max [ms]                                 n/a                  18.000",
        ],
    );
    assert!(out.contains("STATEMENT read "), "{out}");
    // With per-sample figures of the statements, their throughput and mean latency get
    // a p-value: read's throughput doubled in every sample (p < 0.001), its per-sample
    // mean latency did not change at all (p = 1); none beside an n/a (write's mean).
    let with_samples = |b: &BackendReport, k: f64| {
        let mut b = b.clone();
        b.samples.samples = (0..16)
            .map(|i| SampleReport {
                segment: 0,
                start_s: f64::from(i),
                duration_s: 1.0,
                requests: 1000,
                errors: 0,
                throughput_rps: 1000.0,
                latency_mean_ns: 1e6,
                latency_p50_ns: 0,
                latency_p99_ns: 0,
                histogram: String::new(),
                target_rps: None,
                start_unix_s: None,
                statements: vec![
                    SampleStatement {
                        requests: 750,
                        errors: 0,
                        throughput_rps: 750.0 * k + f64::from(i % 4),
                        latency_mean_ns: 1e6,
                    },
                    SampleStatement {
                        requests: 250,
                        errors: 0,
                        throughput_rps: 250.0,
                        latency_mean_ns: 2e6,
                    },
                ],
                requests_by_node: Default::default(),
                tablet_misroutes: None,
            })
            .collect();
        b
    };
    let (a2, b2) = (with_samples(&a, 1.0), with_samples(&b, 2.0));
    let mut out = String::new();
    compare_sections(&mut out, &[("doppio".into(), &a2), ("scylla".into(), &b2)]);
    let row = |table: &str, label: &str| {
        out.lines()
            .skip_while(|l| !l.starts_with(table))
            .find(|l| l.starts_with(label))
            .unwrap()
            .to_owned()
    };
    let p = |line: String| {
        line.split_whitespace()
            .last()
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    assert!(p(row("STATEMENT read", "  throughput")) < 0.001, "{out}");
    assert_eq!(p(row("STATEMENT read", "  mean")), 1.0, "{out}");
    assert!(
        row("STATEMENT write", "  mean")
            .trim_end()
            .ends_with("± 0.010"),
        "{out}"
    );
    // One statement: nothing beyond the totals.
    let mut single = with_statements("doppio", 1.0, false);
    single.statements.statements.truncate(1);
    let mut out = String::new();
    compare_sections(&mut out, &[("doppio".into(), &single)]);
    assert!(!out.contains("STATEMENT"), "{out}");
}

#[test]
fn overhead_shows_syscalls_by_kind_and_io_uring_ops_or_says_why_not() {
    let mut counted = BackendRun::default();
    counted.add_cost(&Cost {
        syscalls: Some(28),
        syscalls_by_kind: Some(ByKind::from_fn(|k| k as u64 + 1)),
        io_uring: Some(IoUringOps {
            submitted: 5,
            completed: 4,
        }),
        ..Cost::default()
    });
    let counted = counted.report("doppio");
    // Syscalls counted, not by kind; no io_uring tracepoints.
    let mut partial = BackendRun::default();
    partial.add_cost(&Cost {
        syscalls: Some(28),
        syscall_kinds_unavailable: Some("filter refused".into()),
        io_uring_unavailable: Some("no io_uring tracepoints".into()),
        ..Cost::default()
    });
    let partial = partial.report("scylla");
    let mut out = String::new();
    compare_sections(
        &mut out,
        &[("doppio".into(), &counted), ("scylla".into(), &partial)],
    );
    for kind in SyscallKind::ALL {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("    {} ", kind.name())))
            .unwrap_or_else(|| panic!("no row for {kind:?} in\n{out}"));
        assert!(line.contains("n/a"), "{line}");
    }
    for label in ["  io_uring submitted", "  io_uring completed"] {
        let line = out.lines().find(|l| l.starts_with(label)).unwrap();
        assert!(line.contains("n/a"), "{line}");
    }
    assert!(out.contains("scylla: syscalls by kind not counted: filter refused"));
    assert!(out.contains("scylla: io_uring operations not counted: no io_uring tracepoints"));

    // Nothing counted at all: one reason, not three, and no rows for kinds or io_uring.
    let mut none = BackendRun::default();
    let why = Some("no tracefs".to_owned());
    none.add_cost(&Cost {
        syscalls_unavailable: why.clone(),
        syscall_kinds_unavailable: why.clone(),
        io_uring_unavailable: why,
        ..Cost::default()
    });
    let none = none.report("doppio");
    let mut out = String::new();
    compare_sections(&mut out, &[("doppio".into(), &none)]);
    assert_eq!(out.matches("no tracefs").count(), 1, "{out}");
    assert!(!out.contains("io_uring_enter"), "{out}");
    assert!(!out.contains("io_uring submitted"), "{out}");
}

#[test]
fn no_change_is_shown_from_a_figure_written_as_zero() {
    // 0.113 vs 0.000 syscalls written with 3 decimals: the change from 0.113 is shown,
    // the one from 0.0000014 (written 0.000) is not.
    assert_eq!(change_from_written(0.0000014, 0.134, 3), None);
    assert_eq!(change_from_written(0.0, 0.134, 3), None);
    let c = change_from_written(0.113, 0.0000014, 3).unwrap();
    assert!((c + 1.0).abs() < 1e-4, "{c}");
    assert!(
        change_from_written(0.0005, 0.001, 3).is_some(),
        "0.0005 is written 0.001"
    );
    assert!(change_from_written(70801.0, 62251.0, 0).is_some());
    assert_eq!(change_from_written(0.4, 1.0, 0), None, "written as 0");
}

#[test]
fn rows_and_cpu_per_row_are_shown_when_counted_and_n_a_where_missing() {
    let mut a = fixture("doppio", 1.0, true);
    a.result_rows.rows = Some(452_370);
    a.result_rows.rows_per_s = Some(150_000.0);
    a.result_rows.cpu_us_per_row = Some(0.555);
    // An older report of the other backend: no rows.
    let b = fixture("scylla", 1.25, false);
    let mut out = String::new();
    compare_sections(&mut out, &[("doppio".into(), &a), ("scylla".into(), &b)]);
    let line = |label: &str| {
        out.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no `{label}` in\n{out}"))
            .to_owned()
    };
    let rows = line("  rows  ");
    assert!(rows.contains("452370") && rows.contains("n/a"), "{rows}");
    let per_s = line("  rows [rows/s]");
    assert!(per_s.contains("150000") && per_s.contains("n/a"), "{per_s}");
    let cpu = line("  client CPU per row [us]");
    assert!(cpu.contains("0.555") && cpu.contains("n/a"), "{cpu}");
    // Neither backend counted rows: no row for them at all.
    let mut out = String::new();
    compare_sections(&mut out, &[("scylla".into(), &b)]);
    assert!(!out.contains("rows"), "{out}");
}
