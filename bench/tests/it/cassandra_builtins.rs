//! The built-in workloads that model real tables, run end to end against Cassandra by every
//! backend (doppio on both runtimes and scylla-rust-driver): `schema`, `load`, then a
//! counted `run`, each statement's requests counted exactly from the bench's own pick and
//! its rows from what the table must hold.
//!
//! - `timeseries`: 40 sensors of 60 points each. Both range reads (`latest`, and `history`
//!   with two bounds from one hash) return exactly `window` clustering rows per request on
//!   every backend, and appends return none; no errors. After the run the table holds every
//!   loaded point and `batch` more per append iteration (each append, an unlogged BATCH of
//!   one sensor's points, wrote all of them; the backends write the same points).
//! - `widerow`: 20 partitions of 150 rows with set, map, list and user-type columns, read
//!   with pages of 64 rows and `--validate`: a whole-partition read returns all 150 rows
//!   (three pages), a slice exactly `slice` rows, a single row one row whose columns match
//!   what the load wrote (while appends to other columns of the same rows run); no errors.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use doppio_bench::workload::Workload;

use crate::support;
use support::{doppio, drop_keyspace, json, scratch_dir, CountedRun, ALL_DRIVERS};

const NODE: &str = "127.0.0.1:9042";
const DRIVERS: [&str; 3] = ["doppio", "doppio-uring", "scylla"];
const ITERATIONS: u64 = 1_500;

/// `schema`, `load` and a counted `run` of built-in `name` with `params` on every backend;
/// returns the run's JSON report and the number of iterations that ran each statement.
fn run_built_in(
    name: &str,
    params: &[(&str, &str)],
    run_options: &[&str],
) -> (serde_json::Value, Vec<u64>) {
    let dir = scratch_dir(name);
    let keyspace = params
        .iter()
        .find(|(k, _)| *k == "keyspace")
        .map(|(_, v)| *v)
        .unwrap();
    drop_keyspace(NODE, &dir, keyspace);
    let mut wl = vec!["-w".to_owned(), name.to_owned()];
    for (k, v) in params {
        wl.push("-P".into());
        wl.push(format!("{k}={v}"));
    }
    let wl: Vec<&str> = wl.iter().map(String::as_str).collect();
    let phase = |head: &[&str]| {
        let mut args = head.to_vec();
        args.extend(&wl);
        doppio(&args)
    };
    assert!(phase(&["schema", NODE]).status.success(), "schema");
    assert!(phase(&["load", NODE, "-q"]).status.success(), "load");
    let report = dir.join("run.json");
    let out = CountedRun::new(NODE, ALL_DRIVERS, ITERATIONS, 8, &report)
        .args(&wl)
        .args(run_options)
        .run();
    assert!(out.status.success(), "run");

    let overrides: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let w = Workload::resolve(name, &overrides).unwrap();
    let mut picked = vec![0u64; w.run.len()];
    for i in 0..ITERATIONS {
        picked[w.pick(i)] += 1;
    }
    (json(&report), picked)
}

/// The rows `select` returns (one request of the scylla backend, paged through).
fn rows_of(select: &str) -> u64 {
    let dir = scratch_dir("builtins-count");
    let (w, report) = (dir.join("count.toml"), dir.join("count.json"));
    std::fs::write(&w, format!("[[run]]\nstatement = \"{select}\"\n")).unwrap();
    let out = doppio(&[
        "run",
        NODE,
        "--driver",
        "scylla",
        "-w",
        w.to_str().unwrap(),
        "-d",
        "1",
        "--warmup",
        "0",
        "-p",
        "1",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{select}");
    json(&report)["backends"]["scylla"]["rows"]
        .as_u64()
        .unwrap()
}

/// Backend `driver`'s statements in report `j`, checked: every iteration ran without error,
/// the statements are `names` in order, and each ran exactly as often as the bench's pick
/// chose it (`picked`, each above 0).
fn clean_statements<'j>(
    j: &'j serde_json::Value,
    driver: &str,
    picked: &[u64],
    names: &[&str],
) -> &'j Vec<serde_json::Value> {
    let b = &j["backends"][driver];
    assert_eq!(b["requests"], ITERATIONS, "{driver}");
    assert_eq!(b["errors"], 0, "{driver}: {}", b["errors_by_kind"]);
    let statements = b["statements"].as_array().unwrap();
    let got: Vec<&str> = statements
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(got, names, "{driver}");
    assert!(picked.iter().all(|&n| n > 0), "{picked:?}");
    for (s, &n) in statements.iter().zip(picked) {
        assert_eq!(s["requests"], n, "{driver} {}", s["name"]);
    }
    statements
}

#[test]
fn timeseries_range_reads_return_a_window_of_clustering_rows_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let window = 20u64;
    let (j, picked) = run_built_in(
        "timeseries",
        &[
            ("keyspace", "doppio_builtin_ts"),
            ("sensors", "40"),
            ("points", "2400"),
            ("window", "20"),
        ],
        &[],
    );
    for d in DRIVERS {
        let statements = clean_statements(&j, d, &picked, &["latest", "history", "append"]);
        // Every sensor holds 60 loaded points (and appended ones, newer): both reads return
        // exactly `window` rows.
        assert_eq!(statements[0]["rows"], picked[0] * window, "{d} latest");
        assert_eq!(statements[1]["rows"], picked[1] * window, "{d} history");
        assert_eq!(statements[2]["rows"], 0, "{d} append");
    }
    assert_eq!(
        rows_of("SELECT ts FROM doppio_builtin_ts.timeseries"),
        2400 + picked[2] * 10,
        "every point loaded and appended"
    );
}

#[test]
fn widerow_pages_whole_partitions_and_validates_single_rows_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let (per_partition, slice) = (150u64, 10u64);
    let (j, picked) = run_built_in(
        "widerow",
        &[
            ("keyspace", "doppio_builtin_wr"),
            ("partitions", "20"),
            ("rows_per_partition", "150"),
            ("slice", "10"),
        ],
        &["--page-size", "64", "--validate"],
    );
    assert_eq!(j["config"]["validated"], serde_json::json!(["row"]));
    for d in DRIVERS {
        let statements = clean_statements(&j, d, &picked, &["partition", "slice", "row", "append"]);
        assert_eq!(
            statements[0]["rows"],
            picked[0] * per_partition,
            "{d} partition"
        );
        assert_eq!(statements[1]["rows"], picked[1] * slice, "{d} slice");
        assert_eq!(statements[2]["rows"], picked[2], "{d} row");
        assert_eq!(statements[3]["rows"], 0, "{d} append");
    }
}
