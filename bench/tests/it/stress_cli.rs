//! The `doppio stress` binary without a node: a cassandra-stress line it cannot run is one
//! `error:` line naming the option, exit code 2, before anything connects (the node named is
//! one that never answers); `--dry-run` prints the `doppio run` options and the workload.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{assert_input_error, doppio};

#[test]
fn a_line_it_cannot_run_is_refused_by_name_before_connecting() {
    let _turn = doppio_test_support::file_turn(module_path!());
    for (line, expect) in [
        (&["write", "n=0"][..], &["`n`"][..]),
        (&["write", "duration=10"], &["`duration`", "no unit"]),
        (
            &["wirte", "n=1"],
            &["unknown cassandra-stress command `wirte`"],
        ),
        (
            &["counter_write", "n=1"],
            &["`counter_write`", "not supported yet"],
        ),
        (
            &["write", "n=1", "-graph", "file=g.html"],
            &["`-graph file=g.html`", "not supported yet"],
        ),
        (
            &["write", "n=1", "-errors", "ignore"],
            &["`-errors ignore`", "not supported yet"],
        ),
        (
            &["write", "n=1", "-rate", "threads=-3"],
            &["`-rate threads`"],
        ),
        (
            &["user", "profile=/no/such.yaml", "n=1"],
            &["`profile`", "/no/such.yaml"],
        ),
        (&["write"], &["n=", "not supported yet"]),
    ] {
        let mut args = vec!["stress", "-q", "--"];
        args.extend(line);
        args.extend(["-node", "127.0.0.1", "-port", "native=1"]);
        let out = doppio(&args);
        assert_input_error(&out, expect);
    }
    // A user profile's operation that the profile does not have: the workload's error.
    let profile = format!("{}/profiles/classic.yaml", env!("CARGO_MANIFEST_DIR"));
    let p = format!("profile={profile}");
    let out = doppio(&[
        "stress",
        "-q",
        "--",
        "user",
        &p,
        "ops(nope=1)",
        "n=1",
        "-node",
        "127.0.0.1",
        "-port",
        "native=1",
    ]);
    assert_input_error(&out, &["ops_nope"]);
}

#[test]
fn dry_run_prints_the_run_and_the_workload() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let out = doppio(&[
        "stress",
        "--dry-run",
        "--driver",
        "scylla",
        "--",
        "mixed",
        "ratio(write=1,read=3)",
        "n=10k",
        "-rate",
        "threads=16",
        "fixed=5k/s",
        "-mode",
        "native",
        "cql3",
        "user=u",
        "password=hunter2",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "# doppio run --driver scylla -t 1 -d 10000 --segments 1 --warmup 0 -p 16 -r 5000"
        ),
        "{text}"
    );
    assert!(
        text.contains("--password <redacted>") && !text.contains("hunter2"),
        "{text}"
    );
    assert!(
        text.contains("CREATE TABLE IF NOT EXISTS keyspace1.standard1"),
        "{text}"
    );
    assert!(text.contains("dist('GAUSSIAN(1..10000)', i)"), "{text}");
}

#[test]
fn a_line_without_the_separator_runs_as_with_it() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let line = ["write", "n=1k", "-rate", "threads=8", "-node", "127.0.0.1"];
    let with: Vec<&str> = ["stress", "--dry-run", "--"]
        .into_iter()
        .chain(line)
        .collect();
    let without: Vec<&str> = ["stress", "--dry-run"].into_iter().chain(line).collect();
    let (with, without) = (doppio(&with), doppio(&without));
    assert!(with.status.success(), "{with:?}");
    assert!(without.status.success(), "{without:?}");
    assert_eq!(
        String::from_utf8_lossy(&with.stdout),
        String::from_utf8_lossy(&without.stdout)
    );
    assert!(String::from_utf8_lossy(&without.stdout)
        .starts_with("# doppio run --driver doppio -t 1 127.0.0.1 -d 1000 -"));
}

#[test]
fn a_report_folder_that_does_not_exist_is_refused_before_the_schema_connects() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // Port 1: were anything to connect first, the error would be a refused connection.
    let out = doppio(&[
        "stress",
        "-o",
        "/nonexistent-doppio-folder/r.json",
        "write",
        "n=10",
        "-node",
        "127.0.0.1",
        "-port",
        "native=1",
    ]);
    assert_input_error(
        &out,
        &["-o", "/nonexistent-doppio-folder", "does not exist"],
    );
}
