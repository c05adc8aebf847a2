//! The `doppio` binary on the stub server (perf/stub, started in this process): the exit
//! codes the README states (2 when the command could not start, 1 for a failure after the
//! run started) and the scylla backend with several worker threads. No Cassandra needed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

mod support;
use support::{assert_input_error, doppio, json};

/// A stub server (perf/stub) in this process: these exit-code tests need no Cassandra.
fn stub(rules: &str) -> doppio_stub::StubHandle {
    doppio_stub::Stub::start(doppio_stub::StubConfig {
        rules: doppio_stub::Rules::parse(rules).unwrap(),
        log_rules: false,
        ..doppio_stub::StubConfig::default()
    })
    .unwrap()
}

#[test]
fn usage_errors_exit_with_2_before_any_connection() {
    // Rejected by the option parser: a count where a duration belongs.
    let out = doppio(&["run", "-w", "empty", "--timeout", "1k", "127.0.0.1:1"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad option value: exit code 2"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`1k` is not a duration"), "{err}");
    // Rejected by the bench itself, before connecting to the (absent) node.
    for args in [
        &[
            "run",
            "-w",
            "empty",
            "-P",
            "no-equals-sign",
            "127.0.0.1:1",
            "-q",
        ][..],
        &[
            "run",
            "-w",
            "empty",
            "--driver",
            "nope",
            "127.0.0.1:1",
            "-q",
        ][..],
        &["run", "-w", "no-such-workload.toml", "127.0.0.1:1", "-q"][..],
    ] {
        let out = doppio(args);
        assert_input_error(&out, &[]);
    }
}

#[test]
fn failures_after_the_run_started_exit_with_1_on_the_stub() {
    let dir = support::scratch_dir("exit-1");
    // The node goes away: every EXECUTE after 1 s loses its connection; the run stops after
    // --max-outage and the report keeps what was measured.
    let gone = stub(
        r#"
[[rule]]
name = "gone"
when = { opcode = "EXECUTE", after = "1s" }
then = "drop"
"#,
    );
    let report = dir.join("gone.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &gone.addr().to_string(),
        "-d",
        "20s",
        "--warmup",
        "0s",
        "-s",
        "250ms",
        "--max-outage",
        "500ms",
        "-p",
        "4",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the node went away: {err}");
    assert!(err.contains("the node went away"), "{err}");
    let j = json(&report);
    assert!(j["fatal_error"].as_str().unwrap().contains("went away"));
    assert!(j["backends"]["doppio"]["requests"].as_u64().unwrap() > 0);
    drop(gone);

    // The run completes, then its report cannot be written (its folder does not exist):
    // the run had started, so exit code 1 (it was 2, as if it had not started).
    let fine = stub("");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &fine.addr().to_string(),
        "-d",
        "500ms",
        "--warmup",
        "0s",
        "-p",
        "4",
        "-q",
        "-o",
        dir.join("no-such-folder").join("r.json").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "report not written: {err}");
    assert!(err.contains("the report could not be written"), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("SUMMARY"),
        "the text report is still printed"
    );
}

#[test]
fn scylla_with_two_worker_threads_runs_both_workers_on_the_stub() {
    // With -t 2 each worker's request loops run on a thread of their own (the worker future
    // is !Send): both run, every iteration once (a counted run ends at its count).
    let fine = stub("");
    let report = support::scratch_dir("scylla-t2").join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &fine.addr().to_string(),
        "--driver",
        "scylla",
        "-t",
        "2",
        "-p",
        "8",
        "-d",
        "20000",
        "--warmup",
        "0",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = json(&report);
    let scylla = &j["backends"]["scylla"];
    assert_eq!(scylla["requests"].as_u64(), Some(20_000), "{scylla}");
    assert_eq!(scylla["errors"].as_u64(), Some(0));
    assert_eq!(j["config"]["threads"].as_u64(), Some(2));
}
