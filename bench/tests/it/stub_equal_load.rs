//! Equal load, against the stub (in this process): `--equal-load 50%` probes each backend at
//! full speed (twice, in rotated order, keeping the better probe), then runs every segment at
//! half the slowest one's capacity. Every backend then
//! does the same work (its throughput is the rate), the report keeps the capacities and the
//! rate, and the VERDICT compares CPU per request but not throughput. It counts syscalls in
//! total only (`--syscalls total`, for a study of CPU alone): the kinds and io_uring
//! operations are `null` with the reason.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{doppio, json, scratch_dir};

#[test]
fn equal_load_runs_every_backend_at_a_share_of_the_slowest_capacity() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // Every answer 2 ms late: at C = 16 about 8000 req/s at full speed.
    let stub = support::stub_with_rules(
        "[[rule]]\nwhen = { opcode = \"EXECUTE\" }\nthen = { delay = { fixed = \"2ms\" } }\n",
    );
    let addr = stub.addr().to_string();
    let report = scratch_dir("equal-load").join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "--driver",
        "doppio,doppio-uring",
        "-d",
        "4s",
        "--segments",
        "4",
        "--warmup",
        "200ms",
        "-p",
        "16",
        "--equal-load",
        "50%",
        "--syscalls",
        "total",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Two probes per backend, in rotated order: doppio, doppio-uring, then doppio-uring,
    // doppio.
    let probes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("] done after"))
        .filter_map(|l| l.strip_prefix("[capacity probe ("))
        .filter_map(|l| l.split(')').next())
        .collect();
    assert_eq!(
        probes,
        ["doppio", "doppio-uring", "doppio-uring", "doppio"],
        "{stderr}"
    );
    assert!(stderr.contains("equal load: "), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    eprintln!("{text}");
    let j = json(&report);
    let e = &j["config"]["equal_load"];
    assert_eq!(e["share"], 0.5);
    let capacities: Vec<f64> = ["doppio", "doppio-uring"]
        .iter()
        .map(|d| e["capacities"][d].as_f64().unwrap())
        .collect();
    for c in &capacities {
        // Little's law bounds it: 16 in flight, at least 2 ms each.
        assert!(*c > 2000.0 && *c < 8100.0, "capacity {c}");
    }
    let rate = e["rate"].as_f64().unwrap();
    let slowest = capacities.iter().copied().fold(f64::INFINITY, f64::min);
    assert!((rate - 0.5 * slowest).abs() < 1e-6, "{rate} vs {slowest}");
    assert_eq!(j["config"]["rate"].as_f64().unwrap(), rate);
    for d in ["doppio", "doppio-uring"] {
        let tp = j["backends"][d]["throughput_rps"].as_f64().unwrap();
        assert!(
            (tp / rate - 1.0).abs() < 0.05,
            "{d} ran at {tp:.0} req/s, the equal load is {rate:.0}"
        );
    }
    assert!(text.contains("  equal load    every segment at "), "{text}");
    assert_eq!(j["config"]["syscalls"], "total");
    for d in ["doppio", "doppio-uring"] {
        let b = &j["backends"][d];
        if b["syscalls_per_req"].is_null() {
            eprintln!("syscalls not counted here: {}", b["syscalls_unavailable"]);
            continue;
        }
        assert!(
            b["syscalls_by_kind"].is_null(),
            "{d}: {}",
            b["syscalls_by_kind"]
        );
        assert!(b["io_uring_submitted"].is_null(), "{d}");
        for why in ["syscall_kinds_unavailable", "io_uring_unavailable"] {
            assert!(
                b[why].as_str().unwrap().contains("--syscalls total"),
                "{d}: {why}: {}",
                b[why]
            );
        }
    }
    let verdict = text.split("VERDICT").nth(1).unwrap();
    assert!(verdict.contains("client CPU per request:"), "{verdict}");
    assert!(!verdict.contains("\n  throughput:"), "{verdict}");
    assert!(verdict.contains("--rate set it"), "{verdict}");
}
