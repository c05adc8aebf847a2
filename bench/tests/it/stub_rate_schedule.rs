//! Rate schedules (`-r ramp:...`) against the stub server (in this process): each sample's
//! `target_rps` follows the schedule and the achieved rate follows it too (shape, not tight
//! timings: a loaded two-core machine runs these); CONFIG and `doppio show` name the
//! schedule, a report without the new fields still shows, and a bad schedule is a usage
//! error naming its bad part.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{assert_input_error, doppio, json, scratch_dir};

/// The ramp's mean rate from `a` to `b` seconds: 2k to 8k req/s over 4 s, 8k after.
fn ramp_mean(a: f64, b: f64) -> f64 {
    let count = |t: f64| {
        let r = t.min(4.0);
        2000.0 * r + 750.0 * r * r + 8000.0 * (t - 4.0).max(0.0)
    };
    (count(b) - count(a)) / (b - a)
}

#[test]
fn a_ramp_schedule_sets_each_samples_target_and_the_achieved_rate_follows_it() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let addr = stub.addr().to_string();
    let dir = scratch_dir("rate-schedule");
    let report = dir.join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "-r",
        "ramp:2k..8k/4s",
        "-s",
        "500ms",
        "-d",
        "4s",
        "--warmup",
        "0s",
        "-p",
        "64",
        "--log",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("   rate schedule, released on a 2ms grid\n"),
        "CONFIG: {text}"
    );
    assert!(
        text.contains("\n  schedule      ramp:2k..8k/4s (req/s)\n"),
        "CONFIG: {text}"
    );
    assert!(
        text.contains("target[req/s]"),
        "the LOG's target column: {text}"
    );

    let j = json(&report);
    assert_eq!(j["config"]["rate_schedule"], "ramp:2k..8k/4s");
    assert!(j["config"]["rate"].is_null(), "no single rate");
    let samples = j["backends"]["doppio"]["samples"].as_array().unwrap();
    assert!(samples.len() >= 7, "{} samples", samples.len());
    let mut achieved = Vec::new();
    for s in samples {
        let start = s["start_s"].as_f64().unwrap();
        let duration = s["duration_s"].as_f64().unwrap();
        let target = s["target_rps"].as_f64().unwrap();
        let want = ramp_mean(start, start + duration);
        assert!(
            (target - want).abs() < 1e-6 * want,
            "sample at {start} s: target {target}, the ramp's mean {want}"
        );
        achieved.push(s["throughput_rps"].as_f64().unwrap());
    }
    eprintln!("achieved per sample: {achieved:?}");
    // Shape: the last samples ran at more than twice the first ones' rate (the schedule
    // asks for 2.25k and 7.75k req/s in the first and last half-seconds).
    let first = (achieved[0] + achieved[1]) / 2.0;
    let n = achieved.len();
    let last = (achieved[n - 2] + achieved[n - 3]) / 2.0;
    assert!(last > 2.0 * first, "first {first:.0}, last {last:.0} req/s");
    // And in total about what the ramp schedules: 20,000 requests (generous: a loaded
    // machine may fall behind).
    let requests = j["backends"]["doppio"]["requests"].as_u64().unwrap();
    assert!(
        (14_000..=21_000).contains(&requests),
        "{requests} requests, the ramp schedules 20,000"
    );

    // `doppio show` names the schedule; so does a report without the new fields (written
    // before schedules), which still loads, with `rate` as before.
    let shown = doppio(&["show", report.to_str().unwrap(), "--log"]);
    assert!(shown.status.success());
    let shown_text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown_text.contains("schedule      ramp:2k..8k/4s (req/s)"),
        "{shown_text}"
    );
    let mut old = j.clone();
    old["config"]
        .as_object_mut()
        .unwrap()
        .remove("rate_schedule");
    old["config"]["rate"] = serde_json::json!(5000.0);
    for s in old["backends"]["doppio"]["samples"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("target_rps");
    }
    let old_report = dir.join("old.json");
    std::fs::write(&old_report, serde_json::to_vec(&old).unwrap()).unwrap();
    let shown = doppio(&["show", old_report.to_str().unwrap(), "--log"]);
    assert!(shown.status.success());
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("rate 5000 req/s"), "{shown}");
    assert!(!shown.contains("schedule"), "{shown}");
    assert!(!shown.contains("target[req/s]"), "{shown}");
}

#[test]
fn a_bad_schedule_is_a_usage_error_naming_its_bad_part() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let out = doppio(&["run", "-r", "ramp:1k..5k/10s,hold:5x", "-d", "1s"]);
    assert_input_error(&out, &["`hold:5x`", "not a duration"]);
    let out = doppio(&["run", "-r", "sine:10k,20k,60s"]);
    assert_input_error(&out, &["`sine:10k,20k,60s`", "amplitude"]);
}
