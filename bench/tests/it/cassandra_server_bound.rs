//! Server-bound detection against the local Cassandra (the node on this machine): the
//! `empty` workload (a prepared read of `system.local`) at C = 256 from doppio-uring and
//! scylla-rust-driver keeps the node busier than the client on this 2-core machine. The bench
//! finds the node's process by its listening socket, reads its CPU over each segment, finds
//! it saturated, and says so: SUMMARY calls throughput server-bound and the VERDICT warns
//! that the throughput ratio measures the node. (The stub's side, a node not saturated, is
//! in `stub_order.rs`.)

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{doppio, json, scratch_dir};

#[test]
fn a_saturated_local_node_makes_throughput_server_bound() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let node = doppio_test_support::CASSANDRA;
    let Some(addr) = node.answering() else {
        return;
    };
    if !addr.ip().is_loopback() {
        eprintln!("skipped: the node at {addr} is not on this machine");
        return;
    }
    let report = scratch_dir("server-bound").join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr.to_string(),
        "--driver",
        "doppio-uring,scylla",
        "-d",
        "6s",
        "--segments",
        "2",
        "--warmup",
        "1s",
        "-p",
        "256",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    eprintln!("{text}");
    let j = json(&report);
    let pids = j["config"]["server_pids"].as_array().unwrap();
    assert!(
        !pids.is_empty(),
        "the node's process is found by its socket"
    );
    for d in ["doppio-uring", "scylla"] {
        let b = &j["backends"][d];
        let server = b["server_cpu_us_per_req"].as_f64().unwrap();
        let client = b["cpu_us_per_req"].as_f64().unwrap();
        eprintln!(
            "{d}: node {server:.1} us/req at {:.0} % of its cores, client {client:.1} us/req, \
             machine idle {:?}",
            100.0 * b["server_utilisation"].as_f64().unwrap(),
            b["segments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["machine_idle"].as_f64().unwrap_or(f64::NAN))
                .collect::<Vec<_>>()
        );
        assert!(
            server > client,
            "{d}: the node works harder per request than the client"
        );
        assert!(
            b["server_saturated_segments"].as_u64().unwrap() >= 1,
            "{d}: saturated in at least one of 2 segments: {}",
            b["segments"]
        );
    }
    assert!(text.contains("server CPU [us/req]"), "{text}");
    assert!(text.contains("throughput is server-bound"), "{text}");
    let verdict = text.split("VERDICT").nth(1).unwrap();
    assert!(verdict.contains("throughput is server-bound"), "{verdict}");
}
