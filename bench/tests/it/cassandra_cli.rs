//! The `doppio` binary against the real Cassandra (`scripts/cassandra.sh start`): every
//! subcommand, both backends, a workload file with parameters, JSON written and read back by
//! `show`, `hdr` and `list`, and `--driver doppio,doppio-uring,scylla` side by side. A test
//! whose node does not answer is skipped outside CI and fails in CI (`doppio-test-support`);
//! the unreachable-node test needs none. The TLS test runs against the TLS-only node
//! (`scripts/cassandra-tls.sh start`, `DOPPIO_CASSANDRA_TLS`).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::PathBuf;

use crate::support;
use doppio_test_support::{cassandra_tls_ca, CASSANDRA, CASSANDRA_AUTH, CASSANDRA_TLS};
use support::{assert_input_error, doppio, json};

fn node() -> String {
    CASSANDRA.addr().to_string()
}

fn ok(args: &[&str]) -> String {
    let out = doppio(args);
    assert!(out.status.success(), "doppio {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A scratch folder and a keyspace of this test's own.
fn scratch(test: &str) -> (PathBuf, String) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let dir = std::env::temp_dir().join(format!(
        "doppio-bench-{test}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    (dir, format!("doppio_bench_{test}_{nanos}"))
}

fn drop_keyspace(ks: &str) {
    support::drop_keyspace(&node(), &std::env::temp_dir(), ks);
}

#[test]
fn schema_load_run_show_hdr_and_list_with_doppio() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if CASSANDRA.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let (dir, ks) = scratch("single");
    let ksp = format!("keyspace={ks}");
    let n = node();
    ok(&["schema", "-w", "read", "-P", &ksp, &n, "-q"]);
    let loaded = ok(&[
        "load",
        "-w",
        "read",
        "-P",
        &ksp,
        "-P",
        "rows=2000",
        &n,
        "-p",
        "64",
        "-q",
    ]);
    assert!(loaded.contains("loaded 2000 rows"), "{loaded}");
    let report = dir.join("single.json");
    let text = ok(&[
        "run",
        "-w",
        "read",
        "-P",
        &ksp,
        "-P",
        "rows=2000",
        &n,
        "-d",
        "2s",
        "--warmup",
        "200ms",
        "-p",
        "16",
        "-o",
        report.to_str().unwrap(),
        "--tag",
        "single",
        "--log",
        "-q",
    ]);
    for section in [
        "CONFIG",
        "LOG (doppio)",
        "SUMMARY",
        "LATENCY [ms]",
        "OVERHEAD",
        "ERRORS",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
    assert!(
        text.lines().all(|l| l.chars().count() <= 100),
        "fits 100 columns:\n{text}"
    );
    let j = json(&report);
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["tag"], "single");
    let b = &j["backends"]["doppio"];
    assert!(b["requests"].as_u64().unwrap() > 100, "{b}");
    assert_eq!(b["errors"], 0);
    for field in [
        "throughput_rps",
        "cpu_us_per_req",
        "cpu_user_us_per_req",
        "cpu_sys_us_per_req",
        "ctx_switches_per_req",
        "peak_rss_bytes",
        "requests_per_flush",
    ] {
        assert!(b[field].as_f64().unwrap() > 0.0, "{field} in {b}");
    }
    // Syscalls are counted here (root, tracefs): a number, not null.
    assert!(b["syscalls_per_req"].as_f64().unwrap() > 0.0);
    for p in [
        "min", "p25", "p50", "p75", "p90", "p95", "p99", "p999", "p9999", "max",
    ] {
        assert!(b["latency_ns"][p].as_u64().unwrap() > 0, "{p}");
    }
    assert!(b["latency_ns"]["p50"].as_u64() <= b["latency_ns"]["p99"].as_u64());
    assert!(!b["samples"].as_array().unwrap().is_empty());
    assert!(
        !j.to_string().contains("password"),
        "no password in reports"
    );

    let shown = ok(&["show", report.to_str().unwrap()]);
    assert!(
        shown.contains("SUMMARY") && shown.contains("doppio"),
        "{shown}"
    );
    let hlog = dir.join("single.hlog");
    ok(&[
        "hdr",
        report.to_str().unwrap(),
        "-o",
        hlog.to_str().unwrap(),
    ]);
    let hlog_text = std::fs::read_to_string(&hlog).unwrap();
    assert!(hlog_text.contains("#[StartTime:"), "{hlog_text}");
    assert!(
        hlog_text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with('"'))
            .count()
            >= 2
    );
    let listed = ok(&["list", dir.to_str().unwrap()]);
    assert!(
        listed.contains("single.json") && listed.contains("doppio"),
        "{listed}"
    );
    drop_keyspace(&ks);
}

#[test]
fn every_backend_side_by_side_and_scylla_alone() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if CASSANDRA.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let (dir, ks) = scratch("pair");
    let ksp = format!("keyspace={ks}");
    let n = node();
    ok(&[
        "schema", "-w", "read", "-P", &ksp, &n, "--driver", "scylla", "-q",
    ]);
    ok(&[
        "load",
        "-w",
        "read",
        "-P",
        &ksp,
        "-P",
        "rows=1000",
        &n,
        "--driver",
        "scylla",
        "-q",
    ]);
    let report = dir.join("pair.json");
    let text = ok(&[
        "run",
        "-w",
        "read",
        "-P",
        &ksp,
        "-P",
        "rows=1000",
        &n,
        "-d",
        "4s",
        "--warmup",
        "200ms",
        "-p",
        "8",
        "--driver",
        "doppio,doppio-uring,scylla",
        "-o",
        report.to_str().unwrap(),
        "-q",
    ]);
    // Three backends: three columns, and every pair with its change and p-values.
    assert!(text.contains("PAIRS") && text.contains("p-value"), "{text}");
    for pair in [
        "doppio-uring vs doppio",
        "scylla vs doppio",
        "scylla vs doppio-uring",
    ] {
        assert!(text.contains(pair), "no row {pair:?} in {text}");
    }
    assert!(
        text.contains("segments 2 per driver, order rotate"),
        "{text}"
    );
    assert!(
        text.contains("rounds        1: doppio doppio-uring scylla; 2: doppio-uring scylla doppio"),
        "{text}"
    );
    // The VERDICT pairs the two rounds and says that two are too few.
    assert!(
        text.contains("VERDICT  (2 rounds paired, order rotated"),
        "{text}"
    );
    assert!(text.contains("these rest on 2 rounds"), "{text}");
    let j = json(&report);
    for d in ["doppio", "doppio-uring", "scylla"] {
        let b = &j["backends"][d];
        assert!(b["requests"].as_u64().unwrap() > 50, "{d}: {b}");
        assert_eq!(b["errors"], 0, "{d}");
        let segments: std::collections::BTreeSet<u64> = b["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["segment"].as_u64().unwrap())
            .collect();
        assert_eq!(segments.len(), 2, "{d} ran in two segments");
    }
    assert!(
        j["backends"]["scylla"]["requests_per_flush"].is_null(),
        "scylla has no such counter"
    );

    let alone = dir.join("scylla.json");
    ok(&[
        "run",
        "-w",
        "read",
        "-P",
        &ksp,
        "-P",
        "rows=1000",
        &n,
        "-d",
        "1s",
        "--warmup",
        "0s",
        "-p",
        "4",
        "--driver",
        "scylla",
        "-o",
        alone.to_str().unwrap(),
        "-q",
    ]);
    let compared = ok(&["show", alone.to_str().unwrap(), report.to_str().unwrap()]);
    assert!(compared.contains("change"), "{compared}");
    drop_keyspace(&ks);
}

#[test]
fn a_workload_file_with_parameters_and_a_rate() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if CASSANDRA.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let (dir, ks) = scratch("file");
    let file = dir.join("counter.toml");
    std::fs::write(
        &file,
        r#"
name = "counters"
description = "counter increments over a few keys, and reads of them"

[params]
keyspace = "unset"
keys = 10
step = 1

[schema]
statements = [
    "CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "CREATE TABLE IF NOT EXISTS ${keyspace}.c (k int PRIMARY KEY, n counter)",
]

[[run]]
name = "bump"
weight = 3
statement = "UPDATE ${keyspace}.c SET n = n + ? WHERE k = ?"
args = ["step", "i % keys"]

[[run]]
name = "read"
statement = "SELECT n FROM ${keyspace}.c WHERE k = ?"
args = ["uniform(0, keys)"]
"#,
    )
    .unwrap();
    let w = file.to_str().unwrap();
    let ksp = format!("keyspace={ks}");
    let n = node();
    ok(&["schema", "-w", w, "-P", &ksp, &n, "-q"]);
    let report = dir.join("rate.json");
    ok(&[
        "run",
        "-w",
        w,
        "-P",
        &ksp,
        "-P",
        "keys=5",
        "-P",
        "step=2",
        &n,
        "-d",
        "3s",
        "--warmup",
        "0s",
        "-p",
        "8",
        "-r",
        "400",
        "-o",
        report.to_str().unwrap(),
        "-q",
    ]);
    let j = json(&report);
    assert_eq!(j["workload"]["params"]["keys"], "5");
    assert_eq!(j["workload"]["params"]["step"], "2");
    assert_eq!(j["config"]["rate"], 400.0);
    let b = &j["backends"]["doppio"];
    assert_eq!(b["errors"], 0, "{b}");
    // The rate limiter: 3 s at 400 req/s schedules 1200 requests (a functional check with a
    // wide margin, not a timing assertion on the machine's speed).
    let requests = b["requests"].as_u64().unwrap();
    assert!((1100..=1300).contains(&requests), "{requests}");

    // An unknown parameter is refused before anything runs.
    let bad = doppio(&["run", "-w", w, "-P", "kyes=5", &n, "-d", "1s", "-q"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("kyes"));
    drop_keyspace(&ks);
}

#[test]
fn an_unreachable_node_fails_clearly_and_still_writes_a_report() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (dir, _) = scratch("dead");
    let report = dir.join("dead.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        "127.0.0.1:1",
        "-d",
        "1s",
        "--warmup",
        "0s",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a node that cannot be reached: exit code 2"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.1:1"), "{err}");
    let error_lines: Vec<_> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(error_lines.len(), 1, "one sentence: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    let j = json(&report);
    assert!(j["fatal_error"].as_str().unwrap().contains("127.0.0.1:1"));
}

#[test]
fn bad_input_is_one_sentence_and_exit_code_2() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if CASSANDRA.answering().is_none() || CASSANDRA_AUTH.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let (dir, _) = scratch("input");
    // A workload file whose expression is broken names its line and the problem.
    let bad_expr = dir.join("bad-expr.toml");
    std::fs::write(
        &bad_expr,
        "name = \"bad\"\n[[run]]\nstatement = \"SELECT ?\"\nargs = [\"uniform(0,\"]\n",
    )
    .unwrap();
    let out = doppio(&["run", "-w", bad_expr.to_str().unwrap(), &node(), "-q"]);
    assert_input_error(&out, &["line 4", "uniform(0,", "expected a value"]);
    // A misspelt field: the TOML error names the line and the field.
    let bad_field = dir.join("bad-field.toml");
    std::fs::write(&bad_field, "name = \"bad\"\n[[run]]\nstatment = \"x\"\n").unwrap();
    let out = doppio(&["run", "-w", bad_field.to_str().unwrap(), &node(), "-q"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("line 3") && err.contains("unknown field `statment`"),
        "{err}"
    );
    // Arguments that do not fit the prepared statement: found after connecting, still named
    // by line.
    let bad_bind = dir.join("bad-bind.toml");
    std::fs::write(
        &bad_bind,
        "name = \"bad\"\n\n[[run]]\nstatement = \"SELECT key FROM system.local WHERE key = ?\"\n",
    )
    .unwrap();
    let out = doppio(&[
        "run",
        "-w",
        bad_bind.to_str().unwrap(),
        &node(),
        "-d",
        "1s",
        "-q",
        "-o",
        dir.join("bind.json").to_str().unwrap(),
    ]);
    assert_input_error(&out, &["line 4", "1 bind markers but 0 args"]);
    // A wrong port (nothing listens there), with each runtime of doppio.
    let report = dir.join("r.json");
    let r = report.to_str().unwrap();
    for driver in ["doppio", "doppio-uring"] {
        let out = doppio(&[
            "run",
            "-w",
            "empty",
            "127.0.0.1:9",
            "--driver",
            driver,
            "-d",
            "1s",
            "-q",
            "-o",
            r,
        ]);
        assert_input_error(&out, &["127.0.0.1:9", "refused"]);
    }
    // A host that does not resolve.
    let out = doppio(&["run", "-w", "empty", "no-such-host.invalid", "-q", "-o", r]);
    assert_input_error(&out, &["no-such-host.invalid"]);
    // A refused login, with every backend.
    let auth = CASSANDRA_AUTH.addr().to_string();
    for driver in ["doppio", "doppio-uring", "scylla"] {
        let out = doppio(&[
            "run",
            "-w",
            "empty",
            &auth,
            "--driver",
            driver,
            "--user",
            "cassandra",
            "--password",
            "wrong",
            "-d",
            "1s",
            "-q",
            "-o",
            r,
        ]);
        assert_input_error(&out, &["password are incorrect"]);
    }
}

#[test]
fn doppio_alone_speaks_v5_with_cassandra_and_v4_beside_scylla_or_when_asked() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if CASSANDRA.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let (dir, _) = scratch("protocol");
    let n = node();
    // (drivers, --protocol, what doppio speaks): alone, doppio negotiates v5; compared with
    // scylla-rust-driver (v4 only) every backend speaks v4 unless asked otherwise.
    for (label, drivers, asked, doppio_spoke) in [
        ("alone", "doppio,doppio-uring", None, 5),
        ("with-scylla", "doppio,doppio-uring,scylla", None, 4),
        ("asked-4", "doppio,doppio-uring", Some("4"), 4),
    ] {
        let report = dir.join(format!("protocol-{label}.json"));
        let mut args = vec![
            "run",
            "-w",
            "empty",
            &n,
            "--driver",
            drivers,
            "-d",
            "100",
            "--warmup",
            "0",
            "-q",
            "-o",
            report.to_str().unwrap(),
        ];
        if let Some(v) = asked {
            args.extend_from_slice(&["--protocol", v]);
        }
        let text = ok(&args);
        let j = json(&report);
        let versions = &j["config"]["protocol_versions"];
        assert_eq!(
            versions["doppio"].as_u64(),
            Some(doppio_spoke),
            "{label}: {j}"
        );
        assert_eq!(
            versions["doppio-uring"].as_u64(),
            Some(doppio_spoke),
            "{label}: {j}"
        );
        assert!(
            text.contains(&format!("doppio v{doppio_spoke}")),
            "{label}: CONFIG names it: {text}"
        );
        for d in drivers.split(',') {
            assert_eq!(j["backends"][d]["errors"].as_u64(), Some(0), "{d}: {j}");
        }
        if drivers.contains("scylla") {
            assert_eq!(versions["scylla"].as_u64(), Some(4), "{j}");
            assert_eq!(
                j["config"]["protocol"].as_u64(),
                Some(4),
                "pinned for fairness: {j}"
            );
        }
    }
}

#[test]
fn every_backend_speaks_tls_to_the_tls_node_and_a_plaintext_run_fails_clearly() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if CASSANDRA_TLS.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let (dir, _) = scratch("tls");
    let n = CASSANDRA_TLS.addr().to_string();
    let ca = cassandra_tls_ca();
    let ca = ca.to_str().unwrap();
    let report = dir.join("tls.json");
    let text = ok(&[
        "run",
        "-w",
        "empty",
        &n,
        "--driver",
        "doppio,doppio-uring,scylla",
        "-d",
        "100",
        "--warmup",
        "0",
        "-q",
        "--tls",
        "--ca",
        ca,
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(
        text.contains("tls           on (ca="),
        "CONFIG says so: {text}"
    );
    let j = json(&report);
    assert!(
        j["config"]["tls"].as_str().unwrap().starts_with("ca="),
        "{j}"
    );
    for d in ["doppio", "doppio-uring", "scylla"] {
        assert_eq!(j["backends"][d]["errors"].as_u64(), Some(0), "{d}: {j}");
        assert_eq!(j["backends"][d]["requests"].as_u64(), Some(100), "{d}: {j}");
    }
    // Plaintext against the TLS-only port: one sentence naming TLS, exit code 2.
    let plain = dir.join("plain.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &n,
        "-d",
        "10",
        "--warmup",
        "0",
        "-q",
        "-o",
        plain.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("TLS") && err.contains(&n), "{err}");
    // scylla-rust-driver checks the IP address only: a server name is refused up front.
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &n,
        "--driver",
        "scylla",
        "--tls",
        "--ca",
        ca,
        "--tls-server-name",
        "db.example.invalid",
        "-o",
        dir.join("refused.json").to_str().unwrap(),
    ]);
    assert_input_error(&out, &["--tls-server-name"]);
}
