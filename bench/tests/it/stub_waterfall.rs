//! `--waterfall N` against the stub with a fixed 5 ms delay on every EXECUTE: on both of
//! doppio's runtimes, one request in N is timed stage by stage; the `wire` stage (from the
//! batch's hand-over to the read that brings the answer) absorbs the delay (at least 5 ms,
//! the largest stage by far, the driver's own under a millisecond); every stage's
//! mean adds up to the timed requests' mean latency (by construction, to within rounding),
//! which is within 10 % of all requests' mean latency (the timed ones are a fair sample);
//! scylla-rust-driver's column says it has no stage hooks. A rate-limited run fills the
//! `schedule` stage where an unlimited one leaves it at 0.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{doppio, json, scratch_dir};

/// Every EXECUTE answered 5 ms late.
const DELAY: &str =
    "[[rule]]\nname = \"delay\"\nwhen = { opcode = \"EXECUTE\" }\nthen = { delay = { fixed = \"5ms\" } }\n";

const STAGES: [&str; 8] = [
    "schedule", "bench", "queue", "flush", "wire", "frame", "wake", "decode",
];

fn stage<'a>(w: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    w["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == name)
        .unwrap_or_else(|| panic!("{name}: {w}"))
}

/// Runs the bench against a stub delaying every EXECUTE by 5 ms with `extra` options;
/// returns the text report and the JSON report.
fn run(name: &str, extra: &[&str]) -> (String, serde_json::Value) {
    let stub = support::stub_with_rules(DELAY);
    let dir = scratch_dir(name);
    let report = dir.join("r.json");
    let addr = stub.addr().to_string();
    let mut args = vec!["run", "-w", "empty", &addr, "-t", "1", "-q"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", report.to_str().unwrap()]);
    let out = doppio(&args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    (text, json(&report))
}

/// The stages' means add up to the timed requests' mean latency; returns that mean.
fn stages_add_up(driver: &str, w: &serde_json::Value) -> f64 {
    let sum: f64 = STAGES
        .iter()
        .map(|s| stage(w, s)["mean_ns"].as_f64().unwrap())
        .sum();
    let end_to_end = w["end_to_end"]["mean_ns"].as_f64().unwrap();
    assert!(
        (sum - end_to_end).abs() <= 1e-6 * end_to_end,
        "{driver}: stages {sum} vs end to end {end_to_end}"
    );
    end_to_end
}

#[test]
fn the_wire_stage_absorbs_the_nodes_delay_and_the_stages_add_up() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (text, j) = run(
        "waterfall",
        &[
            "-d",
            "2s",
            "--warmup",
            "200ms",
            "-p",
            "8",
            "--waterfall",
            "10",
            "--driver",
            "doppio,doppio-uring,scylla",
        ],
    );
    assert_eq!(j["config"]["waterfall_every"], 10);
    for driver in ["doppio", "doppio-uring"] {
        let b = &j["backends"][driver];
        let w = &b["waterfall"];
        let timed = w["timed"].as_u64().unwrap();
        let requests = b["requests"].as_u64().unwrap();
        // About one in ten.
        assert!(
            timed * 10 >= requests * 8 / 10 && timed * 10 <= requests * 12 / 10 + 10,
            "{driver}: {timed} timed of {requests}"
        );
        let end_to_end = stages_add_up(driver, w);
        let mean = |name: &str| stage(w, name)["mean_ns"].as_f64().unwrap();
        // The node's 5 ms are on the wire, the largest stage by far; the driver's own
        // stages stay well under a millisecond (`wake`, the executor's queue, grows with a
        // loaded machine: it is only compared with the wire).
        assert!(mean("wire") >= 5e6, "{driver}: wire {}", mean("wire"));
        for s in STAGES.iter().filter(|s| **s != "wire") {
            assert!(mean(s) < 0.5 * mean("wire"), "{driver}: {s} {}", mean(s));
        }
        for s in ["queue", "frame", "decode"] {
            assert!(mean(s) < 1e6, "{driver}: {s} {}", mean(s));
        }
        assert_eq!(
            mean("schedule"),
            0.0,
            "{driver}: no rate, no schedule stage"
        );
        // The timed requests are like the others.
        let all = b["latency_ns"]["mean"].as_f64().unwrap();
        assert!(
            (end_to_end - all).abs() <= 0.1 * all,
            "{driver}: timed {end_to_end} vs all {all}"
        );
    }
    assert!(j["backends"]["scylla"]["waterfall"].is_null());
    let table = text
        .split("WATERFALL [us, mean]")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    for row in ["  wire", "  decode", "end to end", "timed requests"] {
        assert!(table.contains(row), "{row}: {table}");
    }
    assert!(
        table.contains("scylla: no stage hooks in this driver"),
        "{table}"
    );
}

#[test]
fn a_rate_fills_the_schedule_stage_and_every_request_can_be_timed() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // 4 requests at a time can carry 800 req/s at 5 ms each: asked for 1,000 req/s, they
    // fall behind and wait for their turn.
    let (_, j) = run(
        "waterfall-rate",
        &[
            "-d",
            "1s",
            "--warmup",
            "0s",
            "-p",
            "4",
            "-r",
            "1000",
            "--waterfall",
            "1",
            "--driver",
            "doppio-uring",
        ],
    );
    let b = &j["backends"]["doppio-uring"];
    let w = &b["waterfall"];
    assert!(
        w["timed"].as_u64().unwrap() * 10 >= b["requests"].as_u64().unwrap() * 9,
        "{w}"
    );
    let schedule = stage(w, "schedule")["mean_ns"].as_f64().unwrap();
    assert!(
        schedule > 1e6,
        "late sends wait in the schedule stage: {schedule}"
    );
    stages_add_up("doppio-uring", w);
}
