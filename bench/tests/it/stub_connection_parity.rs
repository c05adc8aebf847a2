//! Connection parity (the stub plays 3 nodes of 4 ScyllaDB shards, each with a shard-aware
//! port): every backend's connections are counted from the bench's socket table once they
//! settle, and doppio on both runtimes and scylla-rust-driver hold the same: `-c` per node,
//! per ScyllaDB shard and per thread, plus one control connection. A pool whose shape
//! changes (one connection per node, per thread or per shard lost) fails here before it
//! can skew a comparison unnoticed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::num::{NonZeroU16, NonZeroU8};

use doppio_stub::{Cluster, ScyllaShards, Stub, StubConfig, StubHandle};

use crate::support;
use support::{doppio, json, scratch_dir};

const NODES: u8 = 3;
const SHARDS: u16 = 4;

fn three_nodes_of_four_shards() -> StubHandle {
    Stub::start(StubConfig {
        log_rules: false,
        routed_keyspace: Some("ks".into()),
        scylla: Some(ScyllaShards::new(
            NonZeroU16::new(SHARDS).unwrap(),
            [127, 0, 0, 1].into(),
        )),
        cluster: Some(Cluster {
            nodes: NonZeroU8::new(NODES).unwrap(),
            replication_factor: NonZeroU8::new(3).unwrap(),
            vnodes: NonZeroU16::new(8).unwrap(),
        }),
        ..StubConfig::default()
    })
    .unwrap()
}

#[test]
fn every_backend_holds_c_times_t_connections_per_node_and_shard_and_the_report_says_so() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = three_nodes_of_four_shards();
    let dir = scratch_dir("parity");
    let workload = support::by_key_workload(&dir);
    let node = stub.addr().to_string();
    let (threads, per_thread) = (2_usize, 1_usize);
    let report = dir.join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        workload.to_str().unwrap(),
        "--driver",
        "doppio,doppio-uring,scylla",
        "-t",
        &threads.to_string(),
        "-c",
        &per_thread.to_string(),
        "-d",
        "600ms",
        "--segments",
        "1",
        "--warmup",
        "0s",
        "-p",
        "8",
        "-q",
        "-o",
        report.to_str().unwrap(),
        &node,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let j = json(&report);
    let shapes = &j["config"]["connection_shapes"];
    let per_node = threads * per_thread * usize::from(SHARDS);
    for driver in ["doppio", "doppio-uring", "scylla"] {
        let s = &shapes[driver];
        eprintln!("{driver}: {s}");
        assert_eq!(s["settled"], true, "{driver}: {s}");
        let nodes = s["nodes"].as_object().unwrap();
        assert_eq!(nodes.len(), usize::from(NODES), "{driver}: {s}");
        let mut total = 0;
        for (ip, n) in nodes {
            let count = n["connections"].as_u64().unwrap() as usize;
            total += count;
            // The pool, and on one node the control connection besides.
            assert!(
                count == per_node || count == per_node + 1,
                "{driver} {ip}: {n}"
            );
            assert_eq!(n["scylla_shards"], SHARDS, "{driver} {ip}: {n}");
            let by_shard: Vec<usize> = n["by_shard"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_u64().unwrap() as usize)
                .collect();
            let unknown = n["shard_unknown"].as_u64().unwrap() as usize;
            assert_eq!(
                by_shard.iter().sum::<usize>() + unknown,
                count,
                "{driver} {ip}: {n}"
            );
            // Through the shard-aware port, no shard holds more than its share; the few
            // through the plain port (the first of a pool, the control connection) land
            // where the node puts them.
            assert!(
                by_shard.iter().all(|&k| k <= threads * per_thread),
                "{driver} {ip}: {n}"
            );
            assert!(unknown <= threads + 1, "{driver} {ip}: {n}");
        }
        assert_eq!(total, usize::from(NODES) * per_node + 1, "{driver}: {s}");
    }
    let warnings = j["warnings"].to_string();
    assert!(!warnings.contains("same connections"), "{warnings}");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("connections"))
        .unwrap_or_else(|| panic!("CONFIG counts them: {text}"));
    assert!(line.contains("doppio 25: 127.0.0.1"), "{line}");
    stub.stop();
}
