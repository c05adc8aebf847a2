//! `doppio findmax` against the stub server (in this process) that delays every EXECUTE by
//! 10 ms: at 8 requests in flight no backend can exceed 800 req/s (Little's law), so the
//! highest rate held lies below that bound, and the step after it fails; `--refine`
//! bisects between the two. Shape, not tight
//! timings: a loaded two-core machine runs these. `doppio plot` draws the report's curves. Also: a broken `--slo` stops at the first
//! step, and bad objectives and factors are usage errors (exit code 2).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{assert_input_error, doppio, json, scratch_dir, svg_lines_and_texts};

/// Concurrency and delay of the tests: at most `P / DELAY` = 800 req/s.
const P: &str = "8";
const BOUND_RPS: f64 = 800.0;

fn delaying_stub() -> doppio_stub::StubHandle {
    support::stub_with_rules(
        "[[rule]]\nwhen = { opcode = \"EXECUTE\" }\nthen = { delay = { fixed = \"10ms\" } }\n",
    )
}

#[test]
fn each_backend_holds_up_to_littles_bound_and_not_the_step_after() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = delaying_stub();
    let addr = stub.addr().to_string();
    let dir = scratch_dir("findmax");
    let report = dir.join("fm.json");
    let out = doppio(&[
        "findmax",
        "-w",
        "empty",
        &addr,
        "--driver",
        "doppio,scylla",
        "-p",
        P,
        "--start",
        "200",
        "--factor",
        "1.5",
        "--step-duration",
        "1500ms",
        "--warmup",
        "500ms",
        "--refine",
        "2",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("HIGHEST RATE HELD"), "{text}");
    assert!(text.contains("target[req/s]"), "{text}");

    let j = json(&report);
    assert_eq!(j["kind"], "findmax");
    assert_eq!(
        j["config"]["drivers"],
        serde_json::json!(["doppio", "scylla"])
    );
    assert_eq!(j["config"]["hold_fraction"], 0.95);
    // Each backend's connections, counted as in a run: one node, no ScyllaDB shards, one
    // pool connection and the control connection.
    for driver in ["doppio", "scylla"] {
        let node = &j["config"]["connection_shapes"][driver]["nodes"]["127.0.0.1"];
        assert_eq!(node["connections"], 2, "{driver}: {node}");
        assert_eq!(
            node["scylla_shards"],
            serde_json::Value::Null,
            "{driver}: {node}"
        );
    }
    for driver in ["doppio", "scylla"] {
        let b = &j["backends"][driver];
        let max = b["max_rate_rps"].as_f64().unwrap();
        assert!(
            (0.4 * BOUND_RPS..=1.1 * BOUND_RPS).contains(&max),
            "{driver}: max {max} req/s, the bound is {BOUND_RPS}"
        );
        let all = b["steps"].as_array().unwrap();
        let (search, refined): (Vec<_>, Vec<_>) =
            all.iter().partition(|s| s["refinement"] == false);
        // Every step of the search by factor held but the last, which did not.
        let (last, held) = search.split_last().unwrap();
        assert!(held.iter().all(|s| s["held"] == true), "{driver}: {all:?}");
        assert_eq!(last["held"], false, "{driver}: {all:?}");
        let failed = last["target_rps"].as_f64().unwrap();
        assert!(last["achieved_rps"].as_f64().unwrap() < 0.95 * failed);
        let searched = held.last().unwrap()["target_rps"].as_f64().unwrap();
        // Then two bisection steps between the two, the first halfway; the maximum is the
        // highest target held, and every target above it failed.
        assert_eq!(refined.len(), 2, "{driver}: {all:?}");
        let first = refined[0]["target_rps"].as_f64().unwrap();
        assert_eq!(first, ((searched + failed) / 2.0).round(), "{driver}");
        let highest_held = all
            .iter()
            .filter(|s| s["held"] == true)
            .map(|s| s["target_rps"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(max, highest_held, "{driver}");
        assert!(max >= searched && max < failed, "{driver}: {max}");
        for s in all {
            if s["target_rps"].as_f64().unwrap() > max {
                assert_eq!(s["held"], false, "{driver}: {s}");
            }
        }
        let steps = all;
        // Latency from the intended start: at least the stub's delay.
        for s in steps {
            assert!(s["latency_p50_ms"].as_f64().unwrap() >= 9.5, "{s}");
            assert!(s["requests"].as_u64().unwrap() > 0, "{s}");
        }
    }
    // The backends alternated at the same targets: the same series of targets by factor, up
    // to where each stopped (a backend that stopped earlier bisects lower).
    let targets = |d: &str| -> Vec<f64> {
        j["backends"][d]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["refinement"] == false)
            .map(|s| s["target_rps"].as_f64().unwrap())
            .collect()
    };
    let (a, b) = (targets("doppio"), targets("scylla"));
    let n = a.len().min(b.len());
    assert_eq!(a[..n], b[..n]);
    assert_eq!(a[..3], [200.0, 300.0, 450.0]);
    assert!(text.contains("(bisect) "), "{text}");

    // `doppio plot` draws the curves against the target rate: achieved rate and p99, one
    // line per backend in each panel, named in the legends, with the target rate (dashed,
    // grey) above and the p99 objective below.
    let svg = dir.join("fm.svg");
    let out = doppio(&[
        "plot",
        report.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let (lines, texts) = svg_lines_and_texts(&std::fs::read_to_string(&svg).unwrap());
    // Solid: each backend's achieved rate and p99; the target rate and objective dashed.
    assert!(lines >= 2 + 2, "{lines}: {texts:?}");
    for (t, n) in [
        ("target rate [req/s]", 2),
        ("achieved rate [req/s]", 1),
        ("p99 latency [ms]", 1),
        ("target rate", 1),
        ("doppio", 1),
        ("scylla", 1),
        ("doppio p99", 1),
        ("scylla p99", 1),
        ("achieved rate and p99 against target rate", 1),
    ] {
        assert_eq!(
            texts.iter().filter(|x| *x == t).count(),
            n,
            "{t}: {texts:?}"
        );
    }
    for slo in j["config"]["slo"].as_array().unwrap() {
        let slo = slo.as_str().unwrap();
        if slo.starts_with("p99<") {
            let t = format!("objective {slo}");
            assert!(texts.contains(&t), "{t}: {texts:?}");
        }
    }
}

#[test]
fn a_broken_objective_stops_at_the_first_step_with_no_maximum() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = delaying_stub();
    let addr = stub.addr().to_string();
    let report = scratch_dir("findmax-slo").join("fm.json");
    let out = doppio(&[
        "findmax",
        "-w",
        "empty",
        &addr,
        "-p",
        P,
        "--start",
        "100",
        "--step-duration",
        "1s",
        "--warmup",
        "0s",
        "--slo",
        "p99<5ms",
        "--page-size",
        "7",
        "--discard-results",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let j = json(&report);
    assert_eq!(j["config"]["page_size"], 7);
    assert_eq!(j["config"]["discard_results"], true);
    let b = &j["backends"]["doppio"];
    assert!(b["max_rate_rps"].is_null(), "{b}");
    let steps = b["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(steps[0]["slo"][0]["objective"], "p99<5ms");
    assert_eq!(steps[0]["slo"][0]["met"], false);
    assert!(
        steps[0]["failed_because"]
            .as_str()
            .unwrap()
            .contains("p99<5ms broken"),
        "{steps:?}"
    );
    assert_eq!(j["config"]["slo"], serde_json::json!(["p99<5ms"]));

    // `doppio show` prints a findmax report's table; the commands that read a run's report
    // say what the file is instead of failing on its fields.
    let path = report.to_str().unwrap();
    let out = doppio(&["show", path]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("FINDMAX  workload empty"), "{text}");
    assert!(
        text.contains("results: pages of 7 rows, rows counted, not decoded"),
        "{text}"
    );
    assert_input_error(&doppio(&["show", path, path]), &["findmax report", "plot"]);
    let hlog = report.with_extension("hlog");
    assert_input_error(
        &doppio(&["hdr", path, "-o", hlog.to_str().unwrap()]),
        &["a findmax report, not the report of a run"],
    );
}

#[test]
fn bad_objectives_and_factors_are_usage_errors() {
    let _turn = doppio_test_support::file_turn(module_path!());
    for (slo, says) in [
        ("p99=10ms", "is not a latency objective such as p99<10ms"),
        ("q99<10ms", "`q99` is not a percentile"),
        ("p101<10ms", "`p101` is not a percentile"),
        ("p99<10", "`10` is not a duration"),
        ("p99<0ms", "the bound must be above zero"),
    ] {
        let out = doppio(&["findmax", "-w", "empty", "127.0.0.1:1", "--slo", slo]);
        assert_input_error(&out, &[says]);
    }
    let out = doppio(&["findmax", "-w", "empty", "127.0.0.1:1", "--factor", "0.9"]);
    assert_input_error(&out, &["`0.9` is not a factor above 1"]);
    let out = doppio(&[
        "findmax",
        "-w",
        "empty",
        "127.0.0.1:1",
        "--start",
        "5k",
        "--max-rate",
        "1k",
        "-q",
    ]);
    assert_input_error(&out, &["--start 5000 is above --max-rate 1000"]);
}
