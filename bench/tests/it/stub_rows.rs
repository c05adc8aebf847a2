//! How both backends consume results, on the stub server (perf/stub, started in this
//! process, whose EXECUTE answers are paged by page size and paging state): every row of
//! every page counted the same on doppio and scylla, `--page-size` reaching the server,
//! `--discard-results` reported. No Cassandra needed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::{Path, PathBuf};

use crate::support;
use support::{doppio, json};

/// Rows of every SELECT the stub answers.
const ROWS: u64 = 10;
/// Iterations per backend.
const ITERATIONS: u64 = 120;

/// A stub serving `ROWS` rows of 16 bytes, with a rule that only counts the EXECUTEs of the
/// workload's statement (a delay of zero).
fn stub() -> doppio_stub::StubHandle {
    doppio_stub::Stub::start(doppio_stub::StubConfig {
        shape: doppio_stub::Shape {
            rows: ROWS as usize,
            row_bytes: 16,
            ..doppio_stub::Shape::default()
        },
        rules: doppio_stub::Rules::parse(
            r#"
[[rule]]
name = "pages"
when = { opcode = "EXECUTE", statement = "FROM ks.t" }
then = { delay = { fixed = "0ms" } }
"#,
        )
        .unwrap(),
        log_rules: false,
        ..doppio_stub::StubConfig::default()
    })
    .unwrap()
}

/// A workload whose one run statement reads every row the stub serves.
fn workload(dir: &Path) -> PathBuf {
    let file = dir.join("scan.toml");
    std::fs::write(
        &file,
        "name = \"scan\"\ndescription = \"every row the stub serves\"\n\
         [[run]]\nname = \"scan\"\nstatement = \"SELECT v FROM ks.t\"\n",
    )
    .unwrap();
    file
}

fn pages_fired(stub: &doppio_stub::StubHandle) -> u64 {
    stub.fired()
        .into_iter()
        .find(|(name, _)| name == "pages")
        .map_or(0, |(_, n)| n)
}

/// Runs the scan on doppio then scylla with `extra` options; returns the report and the
/// text output.
fn run(stub: &doppio_stub::StubHandle, test: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let dir = support::scratch_dir(test);
    let workload = workload(&dir);
    let report = dir.join("r.json");
    let iterations = ITERATIONS.to_string();
    let addr = stub.addr().to_string();
    let mut args = vec![
        "run",
        "-w",
        workload.to_str().unwrap(),
        &addr,
        "--driver",
        "doppio,scylla",
        "--segments",
        "1",
        "-d",
        &iterations,
        "--warmup",
        "0",
        "-p",
        "4",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = doppio(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        json(&report),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn both_backends_page_through_every_row_with_the_page_size_asked_for() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = stub();
    // 10 rows in pages of 3: 4 EXECUTEs per request, on both backends.
    let (j, text) = run(&stub, "rows-paged", &["--page-size", "3"]);
    assert_eq!(j["config"]["page_size"].as_u64(), Some(3));
    assert_eq!(j["config"]["discard_results"].as_bool(), Some(false));
    for driver in ["doppio", "scylla"] {
        let b = &j["backends"][driver];
        assert_eq!(b["requests"].as_u64(), Some(ITERATIONS), "{driver}: {b}");
        assert_eq!(b["errors"].as_u64(), Some(0), "{driver}");
        assert_eq!(
            b["rows"].as_u64(),
            Some(ITERATIONS * ROWS),
            "{driver}: every row of every page"
        );
        assert!(b["rows_per_s"].as_f64().unwrap() > 0.0, "{driver}");
        // A number (CPU time over so short a run may round to zero ticks), not null.
        assert!(b["cpu_us_per_row"].as_f64().unwrap() >= 0.0, "{driver}");
    }
    assert_eq!(
        pages_fired(&stub),
        2 * ITERATIONS * ROWS.div_ceil(3),
        "the server saw pages of 3 rows from both backends"
    );
    assert!(
        text.contains("results       pages of 3 rows, every row decoded"),
        "{text}"
    );
    let rows = (ITERATIONS * ROWS).to_string();
    assert!(
        text.lines()
            .any(|l| l.starts_with("  rows  ") && l.matches(rows.as_str()).count() == 2),
        "the rows of both backends in SUMMARY:\n{text}"
    );
    assert!(text.contains("client CPU per row"), "{text}");
}

#[test]
fn the_default_page_holds_the_whole_result_and_discarded_results_are_still_counted() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = stub();
    let (j, text) = run(&stub, "rows-discard", &["--discard-results"]);
    assert_eq!(j["config"]["page_size"].as_u64(), Some(5000));
    assert_eq!(j["config"]["discard_results"].as_bool(), Some(true));
    for driver in ["doppio", "scylla"] {
        let b = &j["backends"][driver];
        assert_eq!(b["requests"].as_u64(), Some(ITERATIONS), "{driver}: {b}");
        assert_eq!(
            b["rows"].as_u64(),
            Some(ITERATIONS * ROWS),
            "{driver}: counted from the page headers"
        );
    }
    assert_eq!(
        pages_fired(&stub),
        2 * ITERATIONS,
        "one page of 10 rows per request"
    );
    assert!(
        text.contains("discarded: rows counted, not decoded (--discard-results)"),
        "{text}"
    );
}

#[test]
fn a_page_size_of_zero_is_a_usage_error() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        "--page-size",
        "0",
        "127.0.0.1:1",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--page-size"), "{err}");
}
