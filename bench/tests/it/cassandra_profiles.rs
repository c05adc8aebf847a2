//! cassandra-stress user profiles run end to end against Cassandra by every backend (doppio
//! on both runtimes and scylla-rust-driver), each converted in memory (`--profile`): `schema`
//! creates the profile's keyspace, table and extra definitions, then a counted `run` mixes
//! the insert with every query; every backend runs every operation exactly as often as the
//! bench's pick chose it, with no error, and the queries read back rows the inserts wrote
//! (the operations visit 20 partitions, so that they meet). Then the profile's `validate`
//! operation reads back, on every backend, each row the inserts of each backend wrote, and
//! compares it with what was written (`--validate`). Two profiles of one keyspace also run
//! together, as cassandra-stress runs `profile=a.yaml,b.yaml`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use doppio_bench::workload::profile::convert::weight_param;
use doppio_bench::workload::Workload;

use crate::support;
use support::{doppio, drop_keyspace, json, scratch_dir, CountedRun, ALL_DRIVERS};

const NODE: &str = "127.0.0.1:9042";
const DRIVERS: [&str; 3] = ["doppio", "doppio-uring", "scylla"];
const ITERATIONS: u64 = 900;

fn run_profile(files: &[&str], keyspace: &str, ops: &[(&str, &str)], reads: &[&str]) {
    let paths: Vec<String> = files
        .iter()
        .map(|f| format!("{}/profiles/{f}", env!("CARGO_MANIFEST_DIR")))
        .collect();
    let path = paths.join(",");
    let dir = scratch_dir(files[0]);
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
    for (g, n) in w.groups.iter().zip(&picked) {
        let asked = ops.iter().any(|(k, _)| *k == weight_param(&g.name));
        assert_eq!(*n > 0, asked, "{} picked {n} times", g.name);
    }
    for driver in DRIVERS {
        let b = &j["backends"][driver];
        assert_eq!(b["errors"], 0, "{path} {driver}: {}", b["errors_by_kind"]);
        let statements = b["statements"].as_array().unwrap();
        for (g, n) in w.groups.iter().zip(&picked) {
            let s = statements
                .iter()
                .find(|s| s["name"] == g.name.as_str())
                .unwrap();
            assert_eq!(s["requests"], *n, "{path} {driver} {}", g.name);
            if reads.contains(&g.name.as_str()) {
                assert!(
                    s["rows"].as_u64().unwrap() > 0,
                    "{path} {driver} {} read no row",
                    g.name
                );
            }
        }
    }
    read_back_the_inserts(&path, &dir, keyspace, &p[..2], &w);
}

/// Insert operations each writer runs before every backend reads their rows back.
const INSERTS: u64 = 30;

/// Each profile's `validate` operation with `--validate`: each backend alone fills the
/// tables, running each profile's insert on its own for `INSERTS` operations, then every
/// backend reads back each row they wrote (one read per row: `repeat` rows per operation)
/// and compares it with what the insert wrote, with no value that differs and no row
/// missing. Then a read of partitions the insert never visited shows that the comparison is
/// on: every row is missing, and the run fails.
fn read_back_the_inserts(
    path: &str,
    dir: &std::path::Path,
    keyspace: &str,
    population: &[&str],
    w: &Workload,
) {
    let inserts: Vec<_> = w
        .groups
        .iter()
        .filter(|g| g.name == "insert" || g.name.ends_with(".insert"))
        .collect();
    let mut none = population
        .iter()
        .map(|a| (*a).to_owned())
        .collect::<Vec<_>>();
    for g in &inserts {
        none.extend(["-P".to_owned(), format!("{}=0", weight_param(&g.name))]);
    }
    let validate_of = |insert: &str| format!("{}validate", insert.strip_suffix("insert").unwrap());
    for writer in DRIVERS {
        drop_keyspace(NODE, dir, keyspace);
        let out = doppio(&[&["schema", NODE, "--profile", path][..], population].concat());
        assert!(out.status.success(), "schema");
        for g in &inserts {
            let only = format!("{}=1", weight_param(&g.name));
            let report = dir.join(format!("insert-{writer}.json"));
            let out = CountedRun::new(NODE, writer, INSERTS, 8, &report)
                .args(&["--profile", path])
                .args(&none)
                .args(&["-P", &only])
                .run();
            assert!(out.status.success(), "{writer} runs {}", g.name);
        }
        for g in &inserts {
            let rows = INSERTS * u64::from(g.repeat);
            let validate = validate_of(&g.name);
            let only = format!("{}=1", weight_param(&validate));
            let report = dir.join(format!("validate-{writer}.json"));
            let out = CountedRun::new(NODE, ALL_DRIVERS, rows, 8, &report)
                .args(&["--profile", path, "--validate"])
                .args(&none)
                .args(&["-P", &only])
                .run();
            assert!(
                out.status.success(),
                "rows {writer} wrote read back by {validate}"
            );
            let j = json(&report);
            assert!(j["config"]["validated"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!(validate)));
            for driver in DRIVERS {
                let b = &j["backends"][driver];
                let of = format!("{path} {validate} {writer}/{driver}");
                assert_eq!(b["errors"], 0, "{of}: {}", b["errors_by_kind"]);
                let s = &b["statements"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["name"] == validate.as_str())
                    .unwrap();
                assert_eq!(s["requests"], rows, "{of}");
                assert_eq!(s["rows"], rows, "{of}: one row per read");
            }
        }
    }
    let report = dir.join("validate-elsewhere.json");
    let only = format!("{}=1", weight_param(&validate_of(&inserts[0].name)));
    let out = CountedRun::new(NODE, "doppio-uring", 20, 4, &report)
        .args(&["--profile", path, "--validate"])
        .args(&none)
        .args(&["-P", &only, "-P", "population=UNIFORM(1000..2000)"])
        .run();
    assert_eq!(out.status.code(), Some(1), "rows never written are missing");
    let b = &json(&report)["backends"]["doppio-uring"];
    assert_eq!(
        b["errors_by_kind"]["missing_row"], 20,
        "{}",
        b["errors_by_kind"]
    );
}

#[test]
fn the_classic_profile_runs_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    run_profile(
        &["classic.yaml"],
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
        &["timeseries.yaml"],
        "doppio_profile_ts",
        &[
            ("ops_insert", "2"),
            ("ops_latest", "1"),
            ("ops_window", "1"),
        ],
        &["latest"],
    );
}

/// Two profiles of one keyspace run together (`--profile users.yaml,orders.yaml`), as
/// cassandra-stress's `profile=a,b`: set, map, list and frozen list columns, one table
/// unbatched and one wide.
#[test]
fn two_profiles_run_together_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    run_profile(
        &["users.yaml", "orders.yaml"],
        "doppio_profile_shop",
        &[
            ("ops_users_insert", "2"),
            ("ops_users_by_id", "1"),
            ("ops_orders_insert", "2"),
            ("ops_orders_recent", "1"),
            ("ops_orders_since", "1"),
        ],
        &["users.by_id", "orders.recent"],
    );
}
