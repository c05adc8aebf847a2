//! Overload without collapse on a real Cassandra: a node of this test's own (127.0.0.32,
//! state in `.cassandra-overload/`, started and stopped here through `doppio_test_support::cluster`)
//! that admits only [`NODE_RATE`] requests per second
//! (`native_transport_rate_limiting_enabled`, `native_transport_max_requests_per_second`).
//! doppio on both runtimes runs C = 64 against it in protocol v5, with `--retries 2`:
//!
//! - the successes per second settle at the node's rate (within a third of it: Cassandra's
//!   limiter is a token bucket with bursts), in every sample after the first;
//! - nothing is lost: the node holds back what it cannot admit (it stops reading) or answers
//!   OVERLOADED; either way no request times out and the retries, when there are any, stay
//!   at most two per request;
//! - latency stays bounded by what the queue explains: p99 below the request timeout.
//!
//! Cassandra 5.0 applies this limit to v5 connections only (measured: a v4 client on the same
//! node ran at 4,500 requests/s, and its requests put the limiter so far in debt that a v5
//! client's STARTUP then waited beyond 5 s). scylla-rust-driver speaks v4 only, so it is not
//! run here: on this node it would measure nothing of the limit and starve the next client.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use doppio_test_support::cluster::{Cluster, Start};
use std::time::Duration;
use support::{doppio, json, own_cluster, scratch_dir, succeeded};

const NODE: &str = "127.0.0.32:9042";
/// The node's admission limit, requests per second.
const NODE_RATE: f64 = 200.0;
const TIMEOUT_S: f64 = 10.0;

/// This test's node, its yaml with the rate limit.
fn node() -> Cluster {
    let limit = format!(
        "native_transport_rate_limiting_enabled: true\n\
         native_transport_max_requests_per_second: {NODE_RATE}"
    );
    own_cluster(".cassandra-overload", 32).with_extra_yaml(limit)
}

/// Stops the node however the test ends.
struct StopOnDrop;

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        succeeded("stop", node().stop(None));
    }
}

#[test]
fn a_rate_limited_node_serves_its_rate_to_doppio_on_both_runtimes_without_a_retry_storm() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // A machine where the shared node does not answer runs no Cassandra tests: skipped
    // there (outside CI) with a message.
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let _stop = StopOnDrop;
    assert!(
        succeeded(
            "start",
            node().start(&Start {
                heap: Some("512M".to_owned()),
                timeout: Duration::from_secs(240),
                ..Start::default()
            })
        ),
        "the rate-limited node did not start"
    );
    let dir = scratch_dir("overload-cassandra");
    let timeout = format!("{TIMEOUT_S}s");
    for driver in ["doppio", "doppio-uring"] {
        let report = dir.join(format!("{driver}.json"));
        let out = doppio(&[
            "run",
            "-w",
            "empty",
            NODE,
            "--driver",
            driver,
            "-d",
            "8s",
            "--warmup",
            "2s",
            "-p",
            "64",
            "--retries",
            "2",
            "--protocol",
            "5",
            "--timeout",
            &timeout,
            "-q",
            "-o",
            report.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{driver}: the run completes");
        let j = json(&report);
        let b = &j["backends"][driver];
        let requests = b["requests"].as_u64().unwrap();
        let errors = b["errors"].as_u64().unwrap();
        let kinds = b["errors_by_kind"].as_object().unwrap();
        eprintln!(
            "{driver}: {requests} requests ({:.0}/s), {errors} failed {kinds:?}, retries {}, p99 {:.1} ms",
            b["throughput_rps"].as_f64().unwrap(),
            b["retries"],
            b["latency_ns"]["p99"].as_f64().unwrap_or(f64::NAN) / 1e6,
        );
        assert!(
            kinds.keys().all(|k| k == "overloaded"),
            "{driver}: the node sheds with OVERLOADED or holds back, nothing else: {kinds:?}"
        );
        if let Some(retries) = b["retries"].as_u64() {
            assert!(
                retries <= 2 * requests,
                "{driver}: at most 2 retries per request"
            );
        }
        let samples = b["samples"].as_array().unwrap();
        for (k, s) in samples.iter().enumerate().skip(1) {
            let n = s["requests"].as_u64().unwrap();
            let failed = s["errors"].as_u64().unwrap();
            let secs = s["duration_s"].as_f64().unwrap();
            if secs < 0.9 {
                continue; // the last, partial sample
            }
            let ok_rate = (n - failed) as f64 / secs;
            let p99_s = s["latency_p99_ns"].as_u64().unwrap() as f64 / 1e9;
            eprintln!("  sample {k}: {ok_rate:.0} successes/s, {failed} failed, p99 {p99_s:.3} s");
            assert!(
                (ok_rate - NODE_RATE).abs() <= NODE_RATE / 3.0,
                "{driver}, sample {k}: {ok_rate:.0} successes/s, the node admits {NODE_RATE}/s"
            );
            assert!(p99_s < TIMEOUT_S, "{driver}, sample {k}: p99 {p99_s} s");
        }
    }
}
