//! Overload without collapse, against the stub (in this process) playing three nodes, each
//! of which sheds a rising share of requests with OVERLOADED (20 %, then 50 %, 80 % and
//! 95 %, three seconds each), under `doppio run` at C = 256 with `--retries 2`, for doppio on
//! both runtimes and for scylla-rust-driver (which runs doppio's retry decisions:
//! `backend/scylla_rust_driver/retry.rs`). A shed request goes to another node, never back to the one
//! that shed it. Per one-second sample, matched to the share the stub applied then:
//!
//! - the requests that fail are the ones whose three attempts (one per node) were all shed:
//!   the failed share is the shed share cubed (within a tolerance for the sample's count),
//!   so every request made at most `--retries` retries and none was dropped or retried
//!   without end;
//! - the requests that succeed go on at every share (no sample without a success);
//! - retries in the report are at most two per request (their rate is printed; doppio
//!   only, scylla-rust-driver counts none);
//! - the slowest requests (p99 of the sample) stay below the request timeout: nothing queues
//!   up behind the retries.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support;
use support::{doppio, json, scratch_dir};

/// The shed share in each window since the stub started: (from, until, share), seconds.
const WINDOWS: [(f64, f64, f64); 4] = [
    (0.0, 4.0, 0.2),
    (4.0, 7.0, 0.5),
    (7.0, 10.0, 0.8),
    (10.0, 1e9, 0.95),
];
const RETRIES: u32 = 2;
const TIMEOUT: Duration = Duration::from_secs(2);

fn rules() -> String {
    let mut rules = String::from("seed = 3\n");
    for (from, until, share) in WINDOWS {
        let until = if until > 1e8 {
            String::new()
        } else {
            format!(", until = \"{until}s\"")
        };
        rules.push_str(&format!(
            "[[rule]]\nwhen = {{ opcode = \"EXECUTE\", probability = {share}, after = \"{from}s\"{until} }}\n\
             then = {{ error = {{ code = \"overloaded\", message = \"shedding load\" }} }}\n"
        ));
    }
    rules
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn overload_on(driver: &str) {
    let started = unix_now();
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig {
        rules: doppio_stub::Rules::parse(&rules()).unwrap(),
        log_rules: false,
        cluster: Some(doppio_stub::Cluster::new(
            std::num::NonZeroU8::new(3).unwrap(),
        )),
        ..doppio_stub::StubConfig::default()
    })
    .unwrap();
    let addr = stub.addr().to_string();
    let report = scratch_dir("overload").join(format!("{driver}.json"));
    let retries = RETRIES.to_string();
    let timeout = format!("{}s", TIMEOUT.as_secs());
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "--driver",
        driver,
        "-d",
        "13s",
        "--warmup",
        "0s",
        "-p",
        "256",
        "--retries",
        &retries,
        "--timeout",
        &timeout,
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "the run completes: {out:?}");
    let j = json(&report);
    let b = &j["backends"][driver];
    let requests = b["requests"].as_u64().unwrap();
    let kinds = b["errors_by_kind"].as_object().unwrap();
    assert!(
        kinds.keys().all(|k| k == "overloaded"),
        "only the stub's OVERLOADED answers fail requests: {kinds:?}"
    );
    eprintln!("{driver}: {requests} requests, {} failed", b["errors"]);
    if driver != "scylla" {
        let retries = b["retries"].as_u64().expect("doppio counts its retries");
        eprintln!(
            "{driver}: {retries} retries ({:.0}/s, {:.2} per request)",
            b["retries_per_s"].as_f64().unwrap(),
            retries as f64 / requests as f64
        );
        assert!(
            retries <= u64::from(RETRIES) * requests,
            "at most {RETRIES} retries per request"
        );
    }
    let mut shares_seen = Vec::new();
    for s in b["samples"].as_array().unwrap() {
        let from = s["start_unix_s"].as_f64().unwrap() - started;
        let to = from + s["duration_s"].as_f64().unwrap();
        // A sample that straddles a change of share (or the stub's start) is not judged.
        let Some(&(_, _, share)) = WINDOWS
            .iter()
            .find(|(a, z, _)| from >= a + 0.05 && to <= z - 0.05)
        else {
            continue;
        };
        let n = s["requests"].as_u64().unwrap();
        let failed = s["errors"].as_u64().unwrap();
        let p99 = Duration::from_nanos(s["latency_p99_ns"].as_u64().unwrap());
        let expected = share * share * share;
        let observed = failed as f64 / n as f64;
        // Five standard errors of a binomial share over the sample's requests, at least 1 %.
        let tolerance = (5.0 * (expected * (1.0 - expected) / n as f64).sqrt()).max(0.01);
        eprintln!(
            "  {from:5.2}-{to:5.2} s: share {share}: {n} requests, {failed} failed ({:.3}, expected \
             {expected:.3} ± {tolerance:.3}), {} succeeded, p99 {p99:?}",
            observed,
            n - failed
        );
        assert!(
            (observed - expected).abs() <= tolerance,
            "share {share}: {observed:.3} of requests failed, expected {expected:.3}"
        );
        assert!(n > failed, "share {share}: requests still succeed");
        assert!(
            p99 < TIMEOUT,
            "share {share}: p99 {p99:?} below the timeout"
        );
        shares_seen.push(share);
    }
    for (_, _, share) in WINDOWS {
        assert!(
            shares_seen.contains(&share),
            "a whole sample at share {share} (samples judged: {shares_seen:?})"
        );
    }
    drop(stub);
}

#[test]
fn doppio_sheds_a_rising_share_of_overloaded_answers_without_a_retry_storm() {
    let _turn = doppio_test_support::file_turn(module_path!());
    overload_on("doppio");
}

#[test]
fn doppio_uring_sheds_a_rising_share_of_overloaded_answers_without_a_retry_storm() {
    let _turn = doppio_test_support::file_turn(module_path!());
    overload_on("doppio-uring");
}

#[test]
fn scylla_sheds_a_rising_share_of_overloaded_answers_without_a_retry_storm() {
    let _turn = doppio_test_support::file_turn(module_path!());
    overload_on("scylla");
}
