//! Topology changes mid-run on a real Cassandra: a three-node cluster of this test's own
//! (127.0.0.51-.53, state in `.cassandra-topology/`, RF 3, started and wiped here through
//! `doppio_test_support::cluster`, the library behind `scripts/cassandra.sh`) serves a QUORUM read workload from doppio on both runtimes,
//! alternating in 5 s segments, while
//!
//! 1. a fourth node (127.0.0.54) bootstraps into the ring (`Cluster::add`, `scripts/cassandra.sh add`), and
//! 2. later node 2 (127.0.0.52) is decommissioned (`Cluster::decommission`),
//!
//! then the run is stopped with SIGINT (its report keeps everything, `fatal_error:
//! "interrupted"`, exit 130). From the report's per-sample `requests_by_node`:
//!
//! - no request failed, on either runtime (before the fix in `pool::retire`, the pool of the
//!   departed node was closed with requests in flight: 3 failed; and a node that had just
//!   joined answered UNPREPARED again after its re-prepare once, now retried on another
//!   node);
//! - the new node gets requests in every sample from 5 s after its CQL port opened until
//!   the decommission starts, and none before it joined;
//! - the departed node gets requests up to the decommission and none in any sample that
//!   starts after it left;
//! - the report's totals count both (the departed node keeps what it was sent).
//!
//! About 3 minutes: three nodes start, one bootstraps, one streams its data away.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::support;
use doppio_test_support::cluster::{Add, Cluster, Start};
use support::{doppio, json, own_cluster, repo_root, scratch_dir, succeeded};

const SEED: &str = "127.0.0.51:9042";
const JOINER: &str = "127.0.0.54:9042";
const LEAVER: &str = "127.0.0.52:9042";
const WORKLOAD: [&str; 10] = [
    "-w",
    "read",
    "-P",
    "rows=2000",
    "-P",
    "replication=3",
    "-P",
    "keyspace=doppio_topology",
    "--consistency",
    "QUORUM",
];

/// This test's cluster.
fn cluster() -> Cluster {
    own_cluster(".cassandra-topology", 51)
}

/// Stops the cluster and deletes its state however the test ends (its topology is this
/// test's doing; the next run starts from three fresh nodes). A failed test first copies the
/// nodes' logs to its scratch folder, so that the state's deletion does not take the cause
/// with it.
struct WipeOnDrop(PathBuf);

impl Drop for WipeOnDrop {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for n in 1..=4 {
                let log = repo_root().join(format!(".cassandra-topology/node{n}/logs/system.log"));
                let kept = self.0.join(format!("node{n}-system.log"));
                if std::fs::copy(&log, &kept).is_ok() {
                    eprintln!("node {n}'s log kept in {}", kept.display());
                }
            }
        }
        succeeded("wipe", cluster().wipe());
    }
}

/// Kills the run if the test fails before it ends it.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

fn sigint(child: &Child) {
    // SAFETY: signalling a child process of this test by its pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
}

/// One sample of either backend: (backend, start, requests by node).
struct Seen {
    driver: String,
    start: f64,
    errors: u64,
    nodes: serde_json::Map<String, serde_json::Value>,
}

impl Seen {
    fn to(&self, node: &str) -> u64 {
        self.nodes.get(node).and_then(|v| v.as_u64()).unwrap_or(0)
    }
}

#[test]
fn routing_follows_a_node_joining_and_one_leaving_mid_run_with_no_request_lost() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // A machine where the shared node does not answer runs no Cassandra tests: skipped
    // there (outside CI) with a message.
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let dir = scratch_dir("topology");
    let _wipe = WipeOnDrop(dir.clone());
    assert!(
        succeeded("wipe", cluster().wipe()),
        "the previous state is wiped"
    );
    let start = Start {
        nodes: 3,
        timeout: Duration::from_secs(240),
        ..Start::default()
    };
    assert!(
        succeeded("start", cluster().start(&start)),
        "the three-node cluster did not start"
    );
    let mut schema = vec!["schema", SEED];
    schema.extend(WORKLOAD);
    assert!(doppio(&schema).status.success(), "schema");
    // The load failed three times, right after the cluster started, before the run under
    // test began, each time for a cause since mended:
    // - a node that did not yet see another up answered a QUORUM write UNAVAILABLE (not
    //   applied: `--retries` sends it to the next node);
    // - the third node answered "table kv does not exist": the schema agreement counted
    //   only the peers the session had a connection open to, and right after it started
    //   it had none to the third node yet (now every peer counts unless known down);
    // - a QUORUM write timeout (one of 2000): the built-in workloads' load statements are
    //   now idempotent, so `--retries` sends them again.
    let mut load = vec!["load", SEED, "-q", "--retries", "2"];
    load.extend(WORKLOAD);
    assert!(doppio(&load).status.success(), "load");

    let report = dir.join("topology.json");
    let mut run = vec![
        "run",
        SEED,
        "--driver",
        "doppio,doppio-uring",
        // Far longer than the test lets it run: it ends with SIGINT once the cluster has
        // changed twice. 5 s segments alternate the runtimes, so both see both changes.
        "-d",
        "600s",
        "--segments",
        "120",
        "--warmup",
        "0s",
        "-s",
        "1s",
        "-r",
        "300",
        "-p",
        "16",
        "--retries",
        "2",
        "--timeout",
        "10s",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ];
    run.extend(WORKLOAD);
    eprintln!("$ doppio {}", run.join(" "));
    let mut bench = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_doppio"))
            .args(&run)
            .stdout(File::create(dir.join("run.out")).unwrap())
            .stderr(File::create(dir.join("run.err")).unwrap())
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_secs(12));

    let add_from = unix_now();
    let add = Add {
        timeout: Duration::from_secs(300),
        ..Add::default()
    };
    assert!(succeeded("add", cluster().add(&add)), "node 4 joins");
    let joined = unix_now();
    eprintln!("node 4 joined in {:.1} s", joined - add_from);
    std::thread::sleep(Duration::from_secs(25));

    let leave_from = unix_now();
    assert!(
        succeeded("decommission", cluster().decommission(2)),
        "node 2 leaves"
    );
    let left = unix_now();
    eprintln!("node 2 left in {:.1} s", left - leave_from);
    std::thread::sleep(Duration::from_secs(15));

    sigint(&bench.0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(status) = bench.0.try_wait().unwrap() {
            break status.code();
        }
        assert!(
            Instant::now() < deadline,
            "the run did not end after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!(
        "run stderr:\n{}",
        std::fs::read_to_string(dir.join("run.err")).unwrap_or_default()
    );
    assert_eq!(code, Some(130), "interrupted");

    let j = json(&report);
    assert_eq!(j["fatal_error"], "interrupted");
    let mut samples: Vec<Seen> = Vec::new();
    for driver in ["doppio", "doppio-uring"] {
        let b = &j["backends"][driver];
        let kinds = b["errors_by_kind"].as_object().unwrap();
        eprintln!(
            "{driver}: {} requests, {} failed {kinds:?}, retries {}, re-prepares {}, by node {}",
            b["requests"], b["errors"], b["retries"], b["reprepares"], b["requests_by_node"]
        );
        assert_eq!(b["errors"], 0, "{driver}: no request lost: {kinds:?}");
        let by_node = b["requests_by_node"].as_object().unwrap();
        for node in [SEED, JOINER, LEAVER] {
            assert!(
                by_node.get(node).and_then(|v| v.as_u64()).unwrap_or(0) > 0,
                "{driver}: the totals count {node}: {by_node:?}"
            );
        }
        for s in b["samples"].as_array().unwrap() {
            samples.push(Seen {
                driver: driver.to_owned(),
                start: s["start_unix_s"].as_f64().unwrap(),
                errors: s["errors"].as_u64().unwrap(),
                nodes: s["requests_by_node"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            });
        }
    }
    samples.sort_by(|a, b| a.start.total_cmp(&b.start));
    for s in &samples {
        eprintln!(
            "  {:>12} t {:+7.1} s  {}",
            s.driver,
            s.start - add_from,
            serde_json::Value::Object(s.nodes.clone())
        );
    }
    assert!(samples.iter().all(|s| s.errors == 0));

    // The new node: nothing before it started joining; requests in every sample from 5 s
    // after it opened its CQL port until the decommission started.
    for s in samples.iter().filter(|s| s.start + 1.0 <= add_from) {
        assert_eq!(
            s.to(JOINER),
            0,
            "{} at {}: before node 4 existed",
            s.driver,
            s.start
        );
    }
    let with_joiner: Vec<&Seen> = samples
        .iter()
        .filter(|s| s.start >= joined + 5.0 && s.start + 1.0 <= leave_from)
        .collect();
    assert!(with_joiner.len() >= 10, "samples between the two changes");
    for s in &with_joiner {
        assert!(
            s.to(JOINER) > 0,
            "{} at +{:.1} s after node 4 joined: {:?}",
            s.driver,
            s.start - joined,
            s.nodes
        );
    }
    let first = samples
        .iter()
        .find(|s| s.to(JOINER) > 0)
        .map(|s| s.start - joined)
        .unwrap();
    eprintln!("first sample with requests to node 4 starts {first:+.1} s after it joined");

    // The departed node: served until the decommission began, nothing once it had left.
    assert!(samples
        .iter()
        .filter(|s| s.start + 1.0 <= leave_from)
        .all(|s| s.to(LEAVER) > 0));
    let after: Vec<&Seen> = samples.iter().filter(|s| s.start >= left).collect();
    assert!(after.len() >= 10, "samples after node 2 left");
    for s in after {
        assert_eq!(
            s.to(LEAVER),
            0,
            "{} at +{:.1} s after node 2 left: {:?}",
            s.driver,
            s.start - left,
            s.nodes
        );
    }
}
