//! How both backends consume results, against the real Cassandra (`scripts/cassandra.sh
//! start`): a workload that reads back the rows it wrote, partitions of 200 rows read in
//! pages of 64, counted the same by doppio and scylla, with every row decoded and with
//! `--discard-results`. Skipped outside CI when no node answers (`doppio-test-support`).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use doppio_test_support::CASSANDRA;
use support::{doppio, drop_keyspace, json};

/// Partitions written, and rows in each.
const PARTITIONS: u64 = 3;
const PER_PARTITION: u64 = 200;
/// Reads per backend (each reads one whole partition).
const READS: u64 = 30;

fn ok(args: &[&str]) -> String {
    let out = doppio(args);
    assert!(out.status.success(), "doppio {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn both_backends_read_back_every_row_written_across_several_pages() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if CASSANDRA.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let dir = support::scratch_dir(&format!("cassandra-rows-{nanos}"));
    let ks = format!("doppio_bench_rows_{nanos}");
    let workload = dir.join("wide.toml");
    std::fs::write(
        &workload,
        format!(
            r#"name = "wide"
description = "partitions of {PER_PARTITION} rows, read whole"
[params]
keyspace = "{ks}"
[schema]
statements = [
    "CREATE KEYSPACE IF NOT EXISTS ${{keyspace}} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
    "CREATE TABLE IF NOT EXISTS ${{keyspace}}.wide (p int, c int, name text, v blob, PRIMARY KEY (p, c))",
]
[load]
count = {total}
statement = "INSERT INTO ${{keyspace}}.wide (p, c, name, v) VALUES (?, ?, ?, ?)"
args = ["i % {PARTITIONS}", "i", "text(12)", "blob(32)"]
[[run]]
name = "partition"
statement = "SELECT p, c, name, v FROM ${{keyspace}}.wide WHERE p = ?"
args = ["i % {PARTITIONS}"]
"#,
            total = PARTITIONS * PER_PARTITION
        ),
    )
    .unwrap();
    let w = workload.to_str().unwrap();
    let n = CASSANDRA.addr().to_string();
    ok(&["schema", "-w", w, &n, "-q"]);
    ok(&["load", "-w", w, &n, "-p", "16", "-q"]);
    let reads = READS.to_string();
    for (test, extra) in [("decoded", None), ("discarded", Some("--discard-results"))] {
        let report = dir.join(format!("{test}.json"));
        let mut args = vec![
            "run",
            "-w",
            w,
            &n,
            "--driver",
            "doppio,scylla",
            "--segments",
            "1",
            "-d",
            &reads,
            "--warmup",
            "0",
            "-p",
            "4",
            "--page-size",
            "64",
            "-q",
            "-o",
            report.to_str().unwrap(),
        ];
        args.extend(extra);
        ok(&args);
        let j = json(&report);
        assert_eq!(j["config"]["page_size"].as_u64(), Some(64));
        assert_eq!(
            j["config"]["discard_results"].as_bool(),
            Some(extra.is_some())
        );
        for driver in ["doppio", "scylla"] {
            let b = &j["backends"][driver];
            assert_eq!(b["requests"].as_u64(), Some(READS), "{test} {driver}: {b}");
            assert_eq!(b["errors"].as_u64(), Some(0), "{test} {driver}");
            // 200 rows in pages of 64: four pages per read.
            assert_eq!(
                b["rows"].as_u64(),
                Some(READS * PER_PARTITION),
                "{test} {driver}: every row written, over several pages"
            );
        }
    }
    drop_keyspace(&n, &dir, &ks);
}
