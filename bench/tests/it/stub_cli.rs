//! The `doppio` binary on the stub server (perf/stub, started in this process): the exit
//! codes bench/MANUAL.md states (2 when the command could not start, 1 for a failure after the
//! run started) and the scylla backend with several worker threads. No Cassandra needed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{assert_input_error, doppio, json};

/// A stub server (perf/stub) in this process: these exit-code tests need no Cassandra.
fn stub(rules: &str) -> doppio_stub::StubHandle {
    support::stub_with_rules(rules)
}

#[test]
fn usage_errors_exit_with_2_before_any_connection() {
    let _turn = doppio_test_support::file_turn(module_path!());
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
    let _turn = doppio_test_support::file_turn(module_path!());
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

    // A report folder that does not exist is refused before anything starts (exit 2; see
    // option_ranges.rs). One that goes away while the run goes: the run completes, then its
    // report cannot be written, and since the run had started the exit code is 1 (it was 2,
    // as if it had not started).
    let seen = stub(
        r#"
[[rule]]
name = "seen"
when = { opcode = "EXECUTE" }
then = { delay = { fixed = "0ms" } }
"#,
    );
    let folder = dir.join("goes-away");
    std::fs::create_dir_all(&folder).unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(["run", "-w", "empty", &seen.addr().to_string()])
        .args(["-d", "3s", "--warmup", "0s", "-p", "4", "-q", "-o"])
        .arg(folder.join("r.json"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Measuring has begun (the stub answers requests) before the folder is removed.
    let waited = std::time::Instant::now();
    while seen.fired().iter().all(|(_, n)| *n == 0) {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(60),
            "no request came"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::remove_dir_all(&folder).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "report not written: {err}");
    assert!(err.contains("the report could not be written"), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("SUMMARY"),
        "the text report is still printed"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("SUMMARY"),
        "the text report is still printed"
    );
}

#[test]
fn scylla_with_two_worker_threads_runs_both_workers_on_the_stub() {
    let _turn = doppio_test_support::file_turn(module_path!());
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

/// A counted run of the `empty` workload on `addr` with `extra` options; its JSON report.
fn counted_run(addr: &str, name: &str, extra: &[&str]) -> serde_json::Value {
    counted_run_of("empty", addr, name, extra)
}

/// As [`counted_run`], of `workload`.
fn counted_run_of(workload: &str, addr: &str, name: &str, extra: &[&str]) -> serde_json::Value {
    let report = support::scratch_dir("settings").join(format!("{name}.json"));
    let mut args = vec![
        "run",
        "-w",
        workload,
        addr,
        "-d",
        "200",
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
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let j = json(&report);
    // The text report's CONFIG shows what the JSON stores.
    let serial = j["config"]["serial_consistency"].as_str().unwrap();
    assert!(text.contains(&format!("serial        {serial}")), "{text}");
    j
}

#[test]
fn the_serial_consistency_is_sent_on_the_wire_by_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // The stub fails every EXECUTE that carries SERIAL: a run that sends LOCAL_SERIAL (the
    // default) sees no error, one that sends SERIAL sees only errors.
    let stub = stub(
        r#"
[[rule]]
name = "serial seen"
when = { opcode = "EXECUTE", serial_consistency = "SERIAL" }
then = { error = { code = "invalid", message = "SERIAL seen by the stub" } }
"#,
    );
    let addr = stub.addr().to_string();
    for driver in ["doppio", "doppio-uring", "scylla"] {
        let local = counted_run(&addr, &format!("{driver}-local"), &["--driver", driver]);
        let b = &local["backends"][driver];
        assert_eq!(local["config"]["serial_consistency"], "LOCAL_SERIAL");
        assert_eq!(b["requests"].as_u64(), Some(200), "{driver}: {b}");
        assert_eq!(b["errors"].as_u64(), Some(0), "{driver}: {b}");
        let serial = counted_run(
            &addr,
            &format!("{driver}-serial"),
            &["--driver", driver, "--serial-consistency", "serial"],
        );
        let b = &serial["backends"][driver];
        assert_eq!(serial["config"]["serial_consistency"], "SERIAL");
        assert_eq!(
            b["errors_by_kind"]["invalid"].as_u64(),
            Some(200),
            "{driver}: every EXECUTE carried SERIAL: {b}"
        );
    }
}

#[test]
fn driver_settings_reach_the_json_config_and_the_text_report() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = stub("");
    let addr = stub.addr().to_string();
    // The stub's node is in datacenter1, rack rack1.
    let j = counted_run(
        &addr,
        "scylla-locality",
        &[
            "--driver",
            "scylla",
            "--datacenter",
            "datacenter1",
            "--rack",
            "rack1",
            "--compression",
            "lz4",
        ],
    );
    let c = &j["config"];
    assert_eq!(c["datacenter"], "datacenter1", "{c}");
    assert_eq!(c["rack"], "rack1", "{c}");
    assert_eq!(c["compression"], "lz4", "{c}");
    assert_eq!(c["retry_backoff"], serde_json::Value::Null, "{c}");
    // scylla's DefaultPolicy found the stub's node in datacenter1 (an unknown data center
    // would leave its plans empty: every request an error).
    assert_eq!(j["backends"]["scylla"]["errors"].as_u64(), Some(0));
    let j = counted_run(
        &addr,
        "doppio-datacenter",
        &[
            "--datacenter",
            "datacenter1",
            "--compression",
            "none",
            "--serial-consistency",
            "LOCAL_SERIAL",
        ],
    );
    let c = &j["config"];
    assert_eq!(c["datacenter"], "datacenter1", "{c}");
    assert_eq!(c["rack"], serde_json::Value::Null, "{c}");
    assert_eq!(c["compression"], "none", "{c}");
    assert_eq!(j["backends"]["doppio"]["errors"].as_u64(), Some(0));
    // doppio's policy keeps only the local data center's nodes: a data center the cluster
    // does not have leaves it no node to connect to, and the run cannot start.
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "--datacenter",
        "nowhere",
        "--timeout",
        "1s",
        "-d",
        "10",
        "-q",
        "-o",
        support::scratch_dir("settings")
            .join("nowhere.json")
            .to_str()
            .unwrap(),
    ]);
    assert_input_error(&out, &["lists no node this session may use"]);
}

#[test]
fn settings_a_backend_cannot_honour_are_refused_with_exit_code_2() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // Nothing listens on port 1: each is refused before any connection.
    for (args, expect) in [
        (
            &["--datacenter", "dc1", "--rack", "r1"][..],
            &["doppio: --rack is not supported", "not a rack"][..],
        ),
        (
            &[
                "--driver",
                "scylla,doppio-uring",
                "--datacenter",
                "dc1",
                "--rack",
                "r1",
            ][..],
            &["doppio-uring: --rack is not supported"][..],
        ),
        (
            &["--driver", "scylla", "--rack", "r1"][..],
            &["--rack r1 needs --datacenter"][..],
        ),
        (
            &["--driver", "scylla", "--retry-backoff", "10ms,1s"][..],
            &["scylla: --retry-backoff is not supported"][..],
        ),
        (
            &["--driver", "doppio,scylla", "--protocol", "5"][..],
            &["scylla: --protocol 5 is not supported", "v4 only"][..],
        ),
    ] {
        let mut all = vec!["run", "-w", "empty", "127.0.0.1:1", "-q"];
        all.extend_from_slice(args);
        assert_input_error(&doppio(&all), expect);
    }
    // Malformed values are refused by the option parser, also with exit code 2.
    for (args, expect) in [
        (
            &["--compression", "snappy"][..],
            "unknown compression `snappy`",
        ),
        (
            &["--serial-consistency", "QUORUM"][..],
            "unknown serial consistency",
        ),
        (
            &["--retry-backoff", "1s,10ms"][..],
            "the cap is below the base",
        ),
        (&["--protocol", "3"][..], "--protocol"),
    ] {
        let mut all = vec!["run", "-w", "empty", "127.0.0.1:1", "-q"];
        all.extend_from_slice(args);
        let out = doppio(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn every_backend_pins_its_request_threads_to_the_same_cores_unless_no_pin() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = stub("");
    let addr = stub.addr().to_string();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for threads in [1usize, 2] {
        if threads > cores {
            eprintln!("skipped: -t {threads} needs {threads} cores, this machine has {cores}");
            continue;
        }
        let t = threads.to_string();
        let expected: Vec<u64> = (0..threads as u64).collect();
        for (pin, name) in [(true, "pinned"), (false, "unpinned")] {
            let mut extra = vec!["--driver", "doppio,scylla", "-t", &t];
            if !pin {
                extra.push("--no-pin");
            }
            let j = counted_run(&addr, &format!("{name}-t{threads}"), &extra);
            for driver in ["doppio", "scylla"] {
                let got: Vec<u64> = j["config"]["thread_cores"][driver]
                    .as_array()
                    .unwrap_or_else(|| panic!("thread_cores of {driver}: {}", j["config"]))
                    .iter()
                    .map(|c| c.as_u64().unwrap())
                    .collect();
                let want = if pin { expected.clone() } else { Vec::new() };
                assert_eq!(got, want, "{driver}, -t {threads}, {name}");
            }
        }
    }
}

#[test]
fn doppio_waits_the_retry_backoff_before_each_retry() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // Every second EXECUTE the stub sees times out on its replicas (a read timeout): one
    // request after another (-p 1), every request but the first fails once and its retry
    // (the same node, as for every read timeout of an idempotent statement) succeeds. With
    // a backoff of up to 40 ms before each retry (full jitter: 20 ms on average) the mean
    // latency of the successes is about 20 ms, against well under 1 ms without it (0.08 ms
    // measured here). A lower bound only: a slow machine can only make it larger. (It was
    // an OVERLOADED answer, retried on the same node; a node that shed a request is no
    // longer asked again when there is no other.)
    let stub = stub(
        r#"
[[rule]]
name = "every second read timeout"
when = { opcode = "EXECUTE", every = 2 }
then = { error = { code = "read_timeout" } }
"#,
    );
    let addr = stub.addr().to_string();
    let workload = support::scratch_dir("settings").join("idempotent-empty.toml");
    std::fs::write(
        &workload,
        "name = \"idempotent-empty\"\n[[run]]\nstatement = \"SELECT key FROM system.local WHERE key = 'local'\"\nidempotent = true\n",
    )
    .unwrap();
    let j = counted_run_of(
        workload.to_str().unwrap(),
        &addr,
        "doppio-backoff",
        &["-p", "1", "--retries", "1", "--retry-backoff", "40ms,40ms"],
    );
    assert_eq!(j["config"]["retry_backoff"], "40ms,40ms");
    let b = &j["backends"]["doppio"];
    assert_eq!(b["requests"].as_u64(), Some(200), "{b}");
    assert_eq!(b["errors"].as_u64(), Some(0), "every retry succeeded: {b}");
    let mean_ms = b["latency_ns"]["mean"].as_f64().unwrap() / 1e6;
    assert!(mean_ms > 2.0, "retries waited: mean latency {mean_ms} ms");
}

#[test]
fn every_backend_reports_the_protocol_it_spoke_and_v5_is_refused_by_a_v4_node() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = stub("");
    let addr = stub.addr().to_string();
    // The stub offers v4 and v5. Compared with scylla-rust-driver (v4 only), every backend
    // speaks v4 by default, and the report says it was pinned.
    let j = counted_run(
        &addr,
        "protocol-all",
        &["--driver", "doppio,doppio-uring,scylla"],
    );
    assert_eq!(j["config"]["protocol"].as_u64(), Some(4), "{j}");
    for d in ["doppio", "doppio-uring", "scylla"] {
        assert_eq!(
            j["config"]["protocol_versions"][d].as_u64(),
            Some(4),
            "{d}: {j}"
        );
    }
    // doppio's two runtimes alone negotiate v5, each in segments, without errors.
    let j = counted_run(
        &addr,
        "protocol-doppio",
        &["--driver", "doppio,doppio-uring"],
    );
    assert_eq!(j["config"]["protocol"], serde_json::Value::Null, "{j}");
    for d in ["doppio", "doppio-uring"] {
        assert_eq!(
            j["config"]["protocol_versions"][d].as_u64(),
            Some(5),
            "{d}: {j}"
        );
        assert_eq!(j["backends"][d]["errors"].as_u64(), Some(0), "{d}: {j}");
        assert!(j["backends"][d]["requests"].as_u64() > Some(0), "{d}: {j}");
    }
    // Asking doppio for v5 from a node that does not offer it fails at connect, naming both.
    let v4_only = doppio_stub::Stub::start(doppio_stub::StubConfig {
        log_rules: false,
        newest_protocol: doppio_driver::proto::ProtocolVersion::V4,
        ..doppio_stub::StubConfig::default()
    })
    .unwrap();
    let v4_addr = v4_only.addr().to_string();
    let refused = support::scratch_dir("settings").join("protocol-refused.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &v4_addr,
        "-d",
        "50",
        "-q",
        "--protocol",
        "5",
        "-o",
        refused.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("protocol v5 was asked for"), "{err}");
    assert!(err.contains("4/v4"), "{err}");
    // Without --protocol, doppio speaks v4 to it.
    let j = counted_run(&v4_addr, "protocol-v4-node", &["--driver", "doppio-uring"]);
    assert_eq!(
        j["config"]["protocol_versions"]["doppio-uring"].as_u64(),
        Some(4),
        "{j}"
    );
}
