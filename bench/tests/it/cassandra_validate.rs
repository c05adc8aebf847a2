//! `--validate` against Cassandra: the built-in `read` workload (200 rows in a keyspace of
//! this test's own) is loaded by doppio, then read back with `--validate` by every backend
//! (doppio on both runtimes and scylla-rust-driver), each running the same 2,000 iterations:
//!
//! - untouched, every row read matches what the load wrote: no error, exit 0, and the
//!   report says which statement was validated;
//! - after an independent writer (scylla-rust-driver, through `doppio schema` of a workload
//!   of its own) changes row 7's value and deletes row 11, each backend reports exactly the
//!   reads of those keys: as many `invalid_value` errors as iterations that read key 7 and as
//!   many `missing_row` as read key 11 (counted here from the same generator), by statement
//!   too; the first message names the column and the load iteration; the run exits 1 and
//!   the report's `fatal_error` says validation failed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use doppio_bench::workload::expr::{Expr, Value};

use crate::support;
use support::{apply_cql, doppio, drop_keyspace, json, scratch_dir, CountedRun, ALL_DRIVERS};

const NODE: &str = "127.0.0.1:9042";
const ROWS: u64 = 200;
const ITERATIONS: u64 = 2_000;
const CHANGED: u64 = 7;
const DELETED: u64 = 11;
const DRIVERS: [&str; 3] = ["doppio", "doppio-uring", "scylla"];

fn workload_args() -> Vec<String> {
    [
        "-w",
        "read",
        "-P",
        "rows=200",
        "-P",
        "keyspace=doppio_validate",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

fn run(report: &std::path::Path) -> std::process::Output {
    CountedRun::new(NODE, ALL_DRIVERS, ITERATIONS, 16, report)
        .args(&["--validate"])
        .args(&workload_args())
        .run()
}

/// How many of iterations 0..ITERATIONS read `key` (the read's argument, `hash(i) % rows`).
fn reads_of(key: u64) -> u64 {
    let e = Expr::compile(&format!("hash(i) % {ROWS}"), 0, &|_| None).unwrap();
    (0..ITERATIONS)
        .filter(|&i| e.eval(i).unwrap() == Value::Int(key as i64))
        .count() as u64
}

#[test]
fn validation_finds_exactly_the_rows_an_independent_writer_changed_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // A machine where the shared node does not answer runs no Cassandra tests: skipped
    // there (outside CI) with a message.
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let dir = scratch_dir("validate");
    let wl = workload_args();
    let wl: Vec<&str> = wl.iter().map(String::as_str).collect();
    // A fresh table: drop what an earlier run left.
    drop_keyspace(NODE, &dir, "doppio_validate");
    let mut schema = vec!["schema", NODE];
    schema.extend(&wl);
    assert!(doppio(&schema).status.success(), "schema");
    let mut load = vec!["load", NODE, "-q"];
    load.extend(&wl);
    assert!(doppio(&load).status.success(), "load");

    // Untouched: every row matches.
    let clean = dir.join("clean.json");
    let out = run(&clean);
    assert!(out.status.success(), "a clean validated run exits 0");
    let j = json(&clean);
    assert_eq!(j["config"]["validated"], serde_json::json!(["read"]));
    assert!(j["fatal_error"].is_null());
    for d in DRIVERS {
        let b = &j["backends"][d];
        assert_eq!(b["requests"], ITERATIONS, "{d}");
        assert_eq!(b["errors"], 0, "{d}: {}", b["errors_by_kind"]);
        assert_eq!(b["rows"], ITERATIONS, "{d}: one row per read");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("validation    rows of read compared"),
        "{text}"
    );

    // An independent writer changes one row and deletes another.
    let change = format!("UPDATE doppio_validate.kv SET value = 0xdeadbeef WHERE id = {CHANGED}");
    let delete = format!("DELETE FROM doppio_validate.kv WHERE id = {DELETED}");
    apply_cql(NODE, "scylla", &dir, "corrupt.toml", &[&change, &delete]);

    let bad = dir.join("corrupted.json");
    let out = run(&bad);
    assert_eq!(
        out.status.code(),
        Some(1),
        "validation failures fail the run"
    );
    let j = json(&bad);
    let fatal = j["fatal_error"].as_str().unwrap();
    assert!(fatal.starts_with("validation failed"), "{fatal}");
    let (changed, deleted) = (reads_of(CHANGED), reads_of(DELETED));
    eprintln!("iterations reading key {CHANGED}: {changed}, key {DELETED}: {deleted}");
    assert!(
        changed > 0 && deleted > 0,
        "2,000 reads of 200 keys reach both"
    );
    for d in DRIVERS {
        let b = &j["backends"][d];
        let kinds = &b["errors_by_kind"];
        eprintln!("{d}: {} errors {kinds}", b["errors"]);
        assert_eq!(kinds["invalid_value"], changed, "{d}");
        assert_eq!(kinds["missing_row"], deleted, "{d}");
        assert_eq!(b["errors"], changed + deleted, "{d}: nothing else");
        let st = &b["statements"][0];
        assert_eq!(
            st["errors_by_kind"]["invalid_value"], changed,
            "{d} by statement"
        );
        assert_eq!(
            st["errors_by_kind"]["missing_row"], deleted,
            "{d} by statement"
        );
        let first = b["first_errors"]["invalid_value"].as_str().unwrap();
        assert!(
            first.contains("column `value`")
                && first.contains(&format!("load iteration {CHANGED}"))
                && first.contains("got 4 bytes 0xdeadbeef"),
            "{d}: {first}"
        );
    }
    assert!(fatal.contains("scylla"), "{fatal}");
}
