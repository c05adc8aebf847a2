//! A real Cassandra killed (SIGKILL) under `doppio run`: the bench stops within a bounded
//! time, exits with code 1 saying the node went away, and writes its report with what it
//! measured; after a restart a new run succeeds with no cleanup.
//!
//! The victim is a node of its own (127.0.0.31, state in `.cassandra-victim/`, started and
//! stopped by this test through `doppio_test_support::cluster`), so the other tests' nodes are never
//! touched.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;
use doppio_test_support::cluster::{Cluster, Start};
use support::{doppio, json, own_cluster, scratch_dir, succeeded};

const NODE: &str = "127.0.0.31:9042";
/// `--max-outage` of the run.
const MAX_OUTAGE: Duration = Duration::from_secs(3);
/// `--timeout` of the run.
const TIMEOUT: Duration = Duration::from_secs(2);

/// The victim's cluster (`scripts/cassandra.sh` on its state).
fn victim() -> Cluster {
    own_cluster(".cassandra-victim", 31)
}

fn start_victim() {
    let start = Start {
        heap: Some("512M".to_owned()),
        timeout: Duration::from_secs(240),
        ..Start::default()
    };
    assert!(
        succeeded("start", victim().start(&start)),
        "the victim node did not start"
    );
}

/// Stops the victim however the test ends.
struct StopOnDrop;

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        succeeded("stop", victim().stop(None));
    }
}

#[test]
fn a_node_killed_mid_run_stops_the_bench_with_exit_1_and_a_report_and_a_rerun_works() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // The victim is this test's own node, but a machine where the shared node does not
    // answer runs no Cassandra tests: skipped there (outside CI) with a message.
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let _stop = StopOnDrop;
    start_victim();
    let dir = scratch_dir("node-death");
    let report = dir.join("killed.json");
    let outage = format!("{}s", MAX_OUTAGE.as_secs());
    let timeout = format!("{}s", TIMEOUT.as_secs());
    // A long, throttled run (the machine has two cores and the node needs one).
    let child = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args([
            "run",
            "-w",
            "empty",
            NODE,
            "-d",
            "120s",
            "--warmup",
            "1s",
            "-r",
            "2000",
            "-p",
            "32",
            "--max-outage",
            &outage,
            "--timeout",
            &timeout,
            "-q",
            "-o",
            report.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(6));
    assert!(succeeded("kill", victim().kill(1)), "kill the node");
    let killed = Instant::now();
    let out = child.wait_with_output().unwrap();
    let stopped_after = killed.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!(
        "bench stopped {stopped_after:?} after the kill, {:?}\n{}{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    // Bounded: the outage limit, one request timeout for what was in flight, and slack for
    // a loaded machine.
    assert!(
        stopped_after <= MAX_OUTAGE + TIMEOUT + Duration::from_secs(5),
        "{stopped_after:?}"
    );
    assert_eq!(out.status.code(), Some(1), "exit code 1");
    assert!(stderr.contains("the node went away"), "{stderr}");
    let j = json(&report);
    assert!(j["fatal_error"]
        .as_str()
        .unwrap()
        .contains("the node went away"));
    let b = &j["backends"]["doppio"];
    let samples = b["samples"].as_array().unwrap();
    let before_kill: u64 = samples
        .iter()
        .map(|s| s["requests"].as_u64().unwrap() - s["errors"].as_u64().unwrap_or(0))
        .sum();
    eprintln!(
        "report: {} samples, {before_kill} answered requests, errors {}",
        samples.len(),
        b["errors_by_kind"]
    );
    assert!(samples.len() >= 3, "every sample up to the failure");
    // ~6 s at up to 2,000 req/s before the kill; a loaded CI machine answered 3,015.
    assert!(
        before_kill >= 1000,
        "the requests answered before the kill are kept"
    );

    // Restarted, a new run needs no cleanup.
    start_victim();
    let again = dir.join("again.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        NODE,
        "-d",
        "2s",
        "--warmup",
        "0s",
        "-q",
        "-o",
        again.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "a run after the restart");
    assert_eq!(json(&again)["backends"]["doppio"]["errors"], 0);
}
