//! cassandra-stress user profiles run end to end against Cassandra by every backend (doppio
//! on both runtimes and scylla-rust-driver), each converted in memory (`--profile`): `schema`
//! creates the profile's keyspace, table and extra definitions, then a counted `run` mixes
//! the insert with every query; every backend runs every operation exactly as often as the
//! bench's pick chose it, with no error, and the queries read back rows the inserts wrote
//! (the operations visit 20 partitions, so that they meet).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use doppio_bench::workload::Workload;

use crate::support;
use support::{doppio, drop_keyspace, json, scratch_dir, CountedRun, ALL_DRIVERS};

const NODE: &str = "127.0.0.1:9042";
const DRIVERS: [&str; 3] = ["doppio", "doppio-uring", "scylla"];
const ITERATIONS: u64 = 900;

fn run_profile(file: &str, keyspace: &str, ops: &[(&str, &str)], reads: &[&str]) {
    let path = format!("{}/profiles/{file}", env!("CARGO_MANIFEST_DIR"));
    let dir = scratch_dir(file);
    drop_keyspace(NODE, &dir, keyspace);
    let mut params = vec![("population", "UNIFORM(1..20)")];
    params.extend(ops);
    let mut p = Vec::new();
    for (k, v) in &params {
        p.push("-P".to_owned());
        p.push(format!("{k}={v}"));
    }
    let p: Vec<&str> = p.iter().map(String::as_str).collect();
    let out = doppio(&[&["schema", NODE, "--profile", &path][..], &p].concat());
    assert!(out.status.success(), "schema");
    let report = dir.join("run.json");
    let out = CountedRun::new(NODE, ALL_DRIVERS, ITERATIONS, 8, &report)
        .args(&["--profile", &path])
        .args(&p)
        .run();
    assert!(out.status.success(), "run");
    let j = json(&report);

    let overrides: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let w = Workload::from_profile(&path, &overrides).unwrap();
    let mut picked = vec![0u64; w.groups.len()];
    for i in 0..ITERATIONS {
        picked[w.pick(i)] += 1;
    }
    assert!(picked.iter().all(|&n| n > 0), "{picked:?}");
    for driver in DRIVERS {
        let b = &j["backends"][driver];
        assert_eq!(b["errors"], 0, "{file} {driver}: {}", b["errors_by_kind"]);
        let statements = b["statements"].as_array().unwrap();
        for (g, n) in w.groups.iter().zip(&picked) {
            let s = statements
                .iter()
                .find(|s| s["name"] == g.name.as_str())
                .unwrap();
            assert_eq!(s["requests"], *n, "{file} {driver} {}", g.name);
            if reads.contains(&g.name.as_str()) {
                assert!(
                    s["rows"].as_u64().unwrap() > 0,
                    "{file} {driver} {} read no row",
                    g.name
                );
            }
        }
    }
}

#[test]
fn the_classic_profile_runs_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    run_profile(
        "classic.yaml",
        "doppio_profile_classic",
        &[
            ("ops_insert", "2"),
            ("ops_by_owner", "1"),
            ("ops_since", "1"),
            ("ops_ring", "1"),
        ],
        &["by_owner", "since", "ring"],
    );
}

#[test]
fn the_timeseries_profile_runs_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    run_profile(
        "timeseries.yaml",
        "doppio_profile_ts",
        &[
            ("ops_insert", "2"),
            ("ops_latest", "1"),
            ("ops_window", "1"),
        ],
        &["latest"],
    );
}
