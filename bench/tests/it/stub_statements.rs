//! Per-statement statistics of the `doppio` binary on the stub server (perf/stub, started in
//! this process): a workload of three `[[run]]` statements of weights 6, 3 and 1, the third
//! of which the stub always refuses. Every backend reports each statement on its own, the
//! statements add up to the totals, the fault shows on its statement only, and `doppio merge`
//! keeps the per-statement figures exactly. No Cassandra needed.
//!
//! Which statement an iteration runs is a pure function of its number, so the counts the
//! tests expect are computed exactly (with the bench's own `Workload::pick`), not guessed
//! within a tolerance: nothing here depends on timing.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use doppio_bench::stats::LatencyHistogram;
use doppio_bench::workload::Workload;
use serde_json::Value;
use support::{doppio, json, scratch_dir};

/// Three statements the stub answers with one row each, told apart by their text.
const WORKLOAD: &str = r#"
name = "three"
description = "three statements of weights 6, 3 and 1"

[[run]]
name = "light"
weight = 6
statement = "SELECT key FROM system.local WHERE key = 'LIGHT'"

[[run]]
name = "medium"
weight = 3
statement = "SELECT key FROM system.local WHERE key = 'MEDIUM'"

[[run]]
name = "failing"
weight = 1
statement = "SELECT key FROM system.local WHERE key = 'FAILING'"
"#;

/// The names in the workload's order.
const NAMES: [&str; 3] = ["light", "medium", "failing"];

/// A stub that refuses every EXECUTE of the `failing` statement as overloaded.
fn stub() -> doppio_stub::StubHandle {
    let rules = r#"
[[rule]]
name = "failing fails"
when = { opcode = "EXECUTE", statement = "FAILING" }
then = { error = { code = "overloaded", message = "the stub refuses FAILING" } }
"#;
    support::stub_with_rules(rules)
}

/// How many of the iterations `range` run each statement (the bench's own choice).
fn expected(range: std::ops::Range<u64>) -> [u64; 3] {
    let w = Workload::from_toml("three", WORKLOAD, &[]).unwrap();
    let mut n = [0u64; 3];
    for i in range {
        n[w.pick(i)] += 1;
    }
    n
}

/// Runs the workload (`extra` options) into `report`; its text report.
fn run(addr: &str, workload: &std::path::Path, report: &std::path::Path, extra: &[&str]) -> String {
    let mut args = vec![
        "run",
        "-w",
        workload.to_str().unwrap(),
        addr,
        "--warmup",
        "0",
        "-p",
        "8",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = doppio(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn statements(b: &Value) -> &Vec<Value> {
    b["statements"].as_array().unwrap()
}

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

fn histogram_count(st: &Value) -> u64 {
    LatencyHistogram::from_base64(st["histogram"].as_str().unwrap())
        .unwrap()
        .count()
}

/// What every per-statement entry of `b` must hold for a run of the iterations whose
/// statement counts are `want`.
fn check_statements(driver: &str, b: &Value, want: [u64; 3]) {
    let st = statements(b);
    assert_eq!(st.len(), 3, "{driver}: {b}");
    let total: u64 = want.iter().sum();
    assert_eq!(count(&b["requests"]), total, "{driver}");
    for (k, s) in st.iter().enumerate() {
        let name = NAMES[k];
        assert_eq!(s["name"], name, "{driver}");
        assert!(s["cql"].as_str().unwrap().contains(&name.to_uppercase()));
        assert_eq!(count(&s["requests"]), want[k], "{driver} {name}: {s}");
        // The shares follow the weights: exactly as the bench picks, and within 3 points of
        // the weights over a few thousand iterations (the pick is a fixed function of the
        // iteration: this cannot flake).
        let share = s["request_share"].as_f64().unwrap();
        assert!((share - want[k] as f64 / total as f64).abs() < 1e-9);
        let weight = s["weight_share"].as_f64().unwrap();
        assert!(
            (share - weight).abs() < 0.03,
            "{driver} {name}: {share} vs {weight}"
        );
        // Each sample's figures add up to the statement's.
        let per_sample: u64 = b["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| count(&x["statements"][k]["requests"]))
            .sum();
        assert_eq!(per_sample, want[k], "{driver} {name}: samples add up");
    }
    let summed: u64 = st.iter().map(|s| count(&s["requests"])).sum();
    assert_eq!(summed, count(&b["requests"]), "{driver}: statements add up");
    assert_eq!(
        [
            st[0]["weight"].as_f64(),
            st[1]["weight"].as_f64(),
            st[2]["weight"].as_f64()
        ],
        [Some(6.0), Some(3.0), Some(1.0)]
    );
    // The fault shows on its statement only.
    let (light, medium, failing) = (&st[0], &st[1], &st[2]);
    for ok in [light, medium] {
        assert_eq!(count(&ok["errors"]), 0, "{driver}: {ok}");
        assert!(ok["errors_by_kind"].as_object().unwrap().is_empty());
        assert_eq!(histogram_count(ok), count(&ok["requests"]), "{driver}");
        assert_eq!(ok["rows"].as_u64(), ok["requests"].as_u64(), "one row each");
        assert!(count(&ok["latency_ns"]["p50"]) > 0, "{driver}: {ok}");
    }
    assert_eq!(count(&failing["errors"]), want[2], "{driver}: {failing}");
    assert_eq!(count(&failing["errors_by_kind"]["overloaded"]), want[2]);
    assert_eq!(histogram_count(failing), 0, "{driver}: no success measured");
    assert_eq!(failing["rows"].as_u64(), Some(0));
    assert_eq!(count(&b["errors"]), want[2], "{driver}: the totals stay");
}

#[test]
fn every_backend_reports_each_statement_and_a_fault_of_one_shows_on_it_only() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let dir = scratch_dir("statements");
    let workload = dir.join("three.toml");
    std::fs::write(&workload, WORKLOAD).unwrap();
    let stub = stub();
    let addr = stub.addr().to_string();
    let want = expected(0..3000);
    for driver in ["doppio", "doppio-uring", "scylla"] {
        let report = dir.join(format!("{driver}.json"));
        let text = run(
            &addr,
            &workload,
            &report,
            &["-d", "3000", "--driver", driver],
        );
        let j = json(&report);
        check_statements(driver, &j["backends"][driver], want);
        // The text report's table: one line per statement, the failing one's latency n/a.
        assert!(text.contains(&format!("STATEMENTS ({driver})")), "{text}");
        let line = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("  {name} ")))
                .unwrap_or_else(|| panic!("no line for {name}: {text}"))
                .to_owned()
        };
        assert!(line("light").contains(&want[0].to_string()), "{text}");
        assert!(line("failing").ends_with("n/a"), "{text}");
        assert!(
            text.contains(&format!(
                "{driver} statement failing: overloaded x{}",
                want[2]
            )),
            "{text}"
        );
    }
    // One statement's histogram as an interval log: one interval, all its successes.
    let hlog = dir.join("light.hlog");
    let report = dir.join("doppio.json");
    let out = doppio(&[
        "hdr",
        report.to_str().unwrap(),
        "-o",
        hlog.to_str().unwrap(),
        "--statement",
        "light",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&hlog).unwrap();
    let intervals: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('"'))
        .collect();
    assert_eq!(intervals.len(), 1, "{text}");
    let encoded = intervals[0].rsplit(',').next().unwrap();
    let h = LatencyHistogram::from_base64(encoded).unwrap();
    assert_eq!(h.count(), want[0], "{text}");
    let out = doppio(&[
        "hdr",
        report.to_str().unwrap(),
        "-o",
        hlog.to_str().unwrap(),
        "--statement",
        "nope",
    ]);
    support::assert_input_error(&out, &["no statement `nope`", "light, medium, failing"]);
    // Two reports compared: each statement side by side.
    let out = doppio(&[
        "show",
        dir.join("doppio-uring.json").to_str().unwrap(),
        dir.join("doppio.json").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in NAMES {
        assert!(text.contains(&format!("STATEMENT {name} ")), "{text}");
    }
}

#[test]
fn merge_keeps_each_statement_exactly() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let dir = scratch_dir("statements-merge");
    let workload = dir.join("three.toml");
    std::fs::write(&workload, WORKLOAD).unwrap();
    let stub = stub();
    let addr = stub.addr().to_string();
    for driver in ["doppio", "doppio-uring"] {
        let (a, b, merged) = (
            dir.join(format!("{driver}-a.json")),
            dir.join(format!("{driver}-b.json")),
            dir.join(format!("{driver}-merged.json")),
        );
        // Two loaders, each its own slice of the iterations.
        let common = ["-d", "1500", "--driver", driver];
        run(
            &addr,
            &workload,
            &a,
            &[&common[..], &["--cycles", "0..1500"]].concat(),
        );
        run(
            &addr,
            &workload,
            &b,
            &[&common[..], &["--cycles", "1500..3000"]].concat(),
        );
        // Run one after the other here (at once on two machines).
        let out = doppio(&[
            "merge",
            "--sequential",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            merged.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (ja, jb, jm) = (json(&a), json(&b), json(&merged));
        let m = &jm["backends"][driver];
        check_statements(driver, m, expected(0..3000));
        for k in 0..3 {
            let part =
                |j: &Value, field: &str| count(&j["backends"][driver]["statements"][k][field]);
            let st = &statements(m)[k];
            assert_eq!(
                count(&st["requests"]),
                part(&ja, "requests") + part(&jb, "requests")
            );
            assert_eq!(
                count(&st["errors"]),
                part(&ja, "errors") + part(&jb, "errors")
            );
            let hist = |j: &Value| histogram_count(&j["backends"][driver]["statements"][k]);
            assert_eq!(
                histogram_count(st),
                hist(&ja) + hist(&jb),
                "histograms added"
            );
        }
    }
}
