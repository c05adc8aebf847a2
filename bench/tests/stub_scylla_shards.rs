//! The bench against the stub emulating a ScyllaDB node of 4 shards (ignore-msb 12, a
//! shard-aware port): the report gives the requests each emulated shard received from
//! doppio (`requests_by_scylla_shard`, and a text row per shard), every shard is reached,
//! and the stub counts no request at a shard that does not own its token, from doppio on
//! both runtimes. (scylla-rust-driver is left out: it routes by token only for keyspaces
//! whose replication it knows, and the stub's schema lists none but its system keyspaces,
//! so against the stub it spreads requests over the shards' connections.)

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::num::NonZeroU16;

use doppio_stub::{ScyllaShards, Stub, StubConfig};

mod support;
use support::{doppio, json, scratch_dir};

#[test]
fn the_report_gives_requests_per_emulated_scylla_shard_and_none_lands_on_a_wrong_shard() {
    let stub = Stub::start(StubConfig {
        log_rules: false,
        scylla: Some(ScyllaShards::new(
            NonZeroU16::new(4).unwrap(),
            [127, 0, 0, 1].into(),
        )),
        ..StubConfig::default()
    })
    .unwrap();
    let dir = scratch_dir("scylla-shards");
    let workload = dir.join("by-key.toml");
    std::fs::write(
        &workload,
        "name = \"by-key\"\n[[run]]\nstatement = \"SELECT v FROM ks.t WHERE k = ?\"\nargs = [\"hash(i)\"]\n",
    )
    .unwrap();
    let report = dir.join("r.json");
    let node = stub.addr().to_string();
    let out = doppio(&[
        "run",
        "-w",
        workload.to_str().unwrap(),
        "--driver",
        "doppio,doppio-uring",
        "-d",
        "1s",
        "--warmup",
        "0s",
        "-p",
        "8",
        "-q",
        "-o",
        report.to_str().unwrap(),
        &node,
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for shard in 0..4 {
        assert!(
            text.contains(&format!("ScyllaDB shard {shard} of {node}")),
            "a text row per shard"
        );
    }
    let j = json(&report);
    for driver in ["doppio", "doppio-uring"] {
        let b = &j["backends"][driver];
        let counts: Vec<u64> = b["requests_by_scylla_shard"][&node]
            .as_array()
            .unwrap_or_else(|| panic!("{driver}: {}", b["requests_by_scylla_shard"]))
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert_eq!(counts.len(), 4, "{driver}: {counts:?}");
        assert!(
            counts.iter().all(|&n| n > 0),
            "{driver}: every shard reached: {counts:?}"
        );
        let requests = b["requests"].as_u64().unwrap();
        assert!(
            counts.iter().sum::<u64>() >= requests,
            "{driver}: the measured requests are among them: {counts:?} < {requests}"
        );
    }
    let counts = stub.shard_counts().unwrap();
    assert_eq!(counts.wrong_shard, 0, "{counts:?}");
    assert!(counts.requests.iter().all(|&n| n > 0), "{counts:?}");
    stub.stop();
}
