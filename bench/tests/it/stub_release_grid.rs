//! The release grid against the stub (in this process): doppio on its own runtime and
//! scylla-rust-driver on tokio, paced at 4,000 req/s with `--release-grid 5ms`, both send on
//! the bench's grid, not on their runtimes' timers. Each backend's report keeps its send
//! lateness from the due time (which includes the grid's share: due times spread over a
//! step wait half a step on the median) and from the release (its own); both kept the grid,
//! so the VERDICT compares their CPU. The text report shows the grid and the lateness.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{doppio, json, scratch_dir};

#[test]
fn every_backend_sends_on_the_benchs_release_grid() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = support::stub_with_rules("");
    let addr = stub.addr().to_string();
    let report = scratch_dir("release-grid").join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "--driver",
        "doppio-uring,scylla",
        "-d",
        "4s",
        "--segments",
        "2",
        "--warmup",
        "200ms",
        "-p",
        "32",
        "-r",
        "4000",
        "--release-grid",
        "5ms",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    eprintln!("{text}");
    let j = json(&report);
    assert_eq!(j["config"]["release_grid_s"].as_f64(), Some(0.005));
    assert!(
        text.contains("rate 4000 req/s, released on a 5ms grid"),
        "{text}"
    );
    for d in ["doppio-uring", "scylla"] {
        let l = &j["backends"][d]["send_lateness"];
        let ms = |field: &str, p: &str| l[field][p].as_f64().unwrap() / 1e6;
        // The grid's share alone puts half the sends 2.5 ms or more after their due time
        // (due times 0.25 ms apart, spread evenly over each 5 ms step): without the grid
        // doppio's would be tens of microseconds.
        assert!(
            ms("from_due_ns", "p50") >= 2.0,
            "{d} did not wait for the grid: {l}"
        );
        // Each backend's own lateness (after the grid point) is under a step: it sent each
        // point's requests before the next point.
        assert!(ms("from_release_ns", "p50") < 5.0, "{d}: {l}");
        assert!(
            ms("from_release_ns", "p50") <= ms("from_due_ns", "p50"),
            "{d}"
        );
        assert!(!l["from_due_histogram"].as_str().unwrap().is_empty());
        // Every backend's wake-ups are counted alike: between two grid points (20 requests
        // apart) its threads have nothing to do, so each point costs a sleep at least.
        let sleeps = j["backends"][d]["sleeps_per_req"].as_f64().unwrap();
        assert!(sleeps >= 0.04, "{d} slept {sleeps} times a request");
    }
    for row in [
        "send lateness p50",
        "send lateness p99",
        "after release p50",
        "sleeps (wake-ups)",
    ] {
        assert!(text.contains(row), "{row}: {text}");
    }
    let verdict = text.split("VERDICT").nth(1).unwrap();
    assert!(verdict.contains("client CPU per request:"), "{verdict}");
    assert!(!verdict.contains("not compared between"), "{verdict}");
}
