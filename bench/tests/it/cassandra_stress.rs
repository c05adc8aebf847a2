//! `doppio stress`: cassandra-stress command lines run end to end against Cassandra by every
//! backend (doppio on both runtimes and scylla-rust-driver): `write n=...` creates the
//! legacy table and writes every key of its population, `read n=...` reads them back (every
//! read finds its row), `mixed ratio(write=1,read=3)` mixes them, each counting exactly `n`
//! operations with no error, and `-log hdrfile=` writes the HDR log; `user profile=
//! ops(...)` runs the classic profile with those op ratios, and `profile=a.yaml,b.yaml` two
//! profiles together, then validates what one of them wrote.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{doppio, drop_keyspace, json, scratch_dir};

const DRIVERS: [&str; 3] = ["doppio", "doppio-uring", "scylla"];
const KEYSPACE: &str = "doppio_stress_it";
const KEYS: u64 = 1000;
const OPS: u64 = 2000;

/// `doppio stress` on `driver`, quiet and unpinned, its report to `report`, up to `--`.
fn stress(driver: &str, report: &std::path::Path) -> Vec<String> {
    [
        "stress",
        "--driver",
        driver,
        "-q",
        // Correctness, not speed: unpinned, so that the test does not depend on the cores
        // this process may use.
        "--no-pin",
        "-o",
        &report.display().to_string(),
        "--",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// `doppio stress` of `user PROFILE WORDS...` on `driver` against `host` and `port`
/// (`native=N`), over 20 partitions from 4 threads.
fn user_line(
    driver: &str,
    report: &std::path::Path,
    profile: &str,
    words: &[&str],
    host: &str,
    port: &str,
) -> std::process::Output {
    let mut args = stress(driver, report);
    args.extend(
        ["user", profile]
            .iter()
            .chain(words)
            .map(|s| (*s).to_owned()),
    );
    let tail = [
        "-pop",
        "dist=UNIFORM(1..20)",
        "-rate",
        "threads=4",
        "-node",
        host,
        "-port",
        port,
    ];
    args.extend(tail.iter().map(|s| (*s).to_owned()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    doppio(&a)
}

/// The statement `name` of `driver`'s entry in the report at `path`: (requests, rows).
fn statement(path: &std::path::Path, driver: &str, name: &str) -> (u64, u64) {
    let j = json(path);
    let b = &j["backends"][driver];
    assert_eq!(b["errors"], 0, "{driver} {name}: {}", b["errors_by_kind"]);
    let s = b["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{driver}: no statement {name}"));
    (
        s["requests"].as_u64().unwrap(),
        s["rows"].as_u64().unwrap_or(0),
    )
}

#[test]
fn write_then_read_runs_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let Some(node) = doppio_test_support::CASSANDRA.answering() else {
        return;
    };
    let dir = scratch_dir("write_then_read");
    drop_keyspace(&node.to_string(), &dir, KEYSPACE);
    let (host, port) = (node.ip().to_string(), node.port().to_string());
    let common = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        v.extend(
            [
                "-rate",
                "threads=8",
                "-schema",
                &format!("keyspace={KEYSPACE}"),
                "-node",
                &host,
                "-port",
                &format!("native={port}"),
            ]
            .iter()
            .map(|s| (*s).to_owned()),
        );
        v
    };
    for driver in DRIVERS {
        let report = dir.join(format!("{driver}-write.json"));
        let hlog = dir.join(format!("{driver}-write.hlog"));
        let mut args = stress(driver, &report);
        args.extend(common(&[
            "write",
            &format!("n={OPS}"),
            "cl=ONE",
            "-pop",
            &format!("seq=1..{KEYS}"),
            "-col",
            "size=FIXED(16)",
            "n=FIXED(3)",
            "-log",
            &format!("hdrfile={}", hlog.display()),
            "interval=100ms",
        ]));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = doppio(&a);
        assert!(out.status.success(), "{driver}: stress write");
        assert_eq!(statement(&report, driver, "write").0, OPS, "{driver}");
        let log = std::fs::read_to_string(&hlog).unwrap();
        assert!(
            log.lines().any(|l| l.starts_with("Tag=")),
            "{driver}: {log}"
        );

        let report = dir.join(format!("{driver}-read.json"));
        let mut args = stress(driver, &report);
        args.extend(common(&[
            "read",
            &format!("n={OPS}"),
            "-pop",
            &format!("dist=UNIFORM(1..{KEYS})"),
            "-col",
            "n=FIXED(3)",
        ]));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = doppio(&a);
        assert!(out.status.success(), "{driver}: stress read");
        // Every key of the population was written: every read finds its one row.
        assert_eq!(statement(&report, driver, "read"), (OPS, OPS), "{driver}");

        let report = dir.join(format!("{driver}-mixed.json"));
        let mut args = stress(driver, &report);
        args.extend(common(&[
            "mixed",
            "ratio(write=1,read=3)",
            "n=1000",
            "-pop",
            &format!("dist=UNIFORM(1..{KEYS})"),
            "-col",
            "size=FIXED(16)",
            "n=FIXED(3)",
        ]));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(doppio(&a).status.success(), "{driver}: stress mixed");
        let (writes, _) = statement(&report, driver, "write");
        let (reads, rows) = statement(&report, driver, "read");
        assert_eq!(writes + reads, 1000, "{driver}");
        assert!(
            (600..900).contains(&reads),
            "{driver}: {reads} reads of 1000"
        );
        assert_eq!(rows, reads, "{driver}: every read finds its row");
    }
    drop_keyspace(&node.to_string(), &dir, KEYSPACE);
}

#[test]
fn a_user_profile_runs_with_its_op_ratios_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let Some(node) = doppio_test_support::CASSANDRA.answering() else {
        return;
    };
    let dir = scratch_dir("user_profile");
    drop_keyspace(&node.to_string(), &dir, "doppio_profile_classic");
    let profile = format!(
        "profile={}/profiles/classic.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let port = format!("native={}", node.port());
    let host = node.ip().to_string();
    for driver in DRIVERS {
        let report = dir.join(format!("{driver}-user.json"));
        let line = ["ops(insert=2,by_owner=1)", "n=600", "cl=ONE"];
        let out = user_line(driver, &report, &profile, &line, &host, &port);
        assert!(out.status.success(), "{driver}: stress user");
        let (inserts, _) = statement(&report, driver, "insert");
        let (queries, rows) = statement(&report, driver, "by_owner");
        assert_eq!(inserts + queries, 600, "{driver}");
        assert!(
            (300..500).contains(&inserts),
            "{driver}: {inserts} inserts of 600"
        );
        assert!(rows > 0, "{driver}: by_owner read no row");
    }
}

/// `user profile=users.yaml,orders.yaml` runs both profiles, their operations named by
/// specname (`ops(users.insert=1,orders.insert=1,orders.recent=1)`); then `ops(orders.insert=1)`
/// alone, and `ops(orders.validate=1)` reads every row it wrote back and compares it (the
/// line turns `--validate` on), on every backend.
#[test]
fn several_profiles_run_together_and_validate_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let Some(node) = doppio_test_support::CASSANDRA.answering() else {
        return;
    };
    let dir = scratch_dir("two_profiles");
    drop_keyspace(&node.to_string(), &dir, "doppio_profile_shop");
    let root = env!("CARGO_MANIFEST_DIR");
    let paths = format!("{root}/profiles/users.yaml,{root}/profiles/orders.yaml");
    let profile = format!("profile={paths}");
    // The rows 20 orders inserts write: 20 batches of the converted insert's `repeat`.
    let w = doppio_bench::workload::Workload::from_profile(&paths, &[]).unwrap();
    let orders = w.groups.iter().find(|g| g.name == "orders.insert").unwrap();
    let written = 20 * u64::from(orders.repeat);
    let port = format!("native={}", node.port());
    let host = node.ip().to_string();
    let run = |driver: &str, report: &std::path::Path, ops: &str, n: &str| {
        user_line(driver, report, &profile, &[ops, n], &host, &port)
    };
    for driver in DRIVERS {
        let report = dir.join(format!("{driver}-mixed.json"));
        let out = run(
            driver,
            &report,
            "ops(users.insert=1,orders.insert=1,orders.recent=1)",
            "n=300",
        );
        assert!(out.status.success(), "{driver}: two profiles");
        let (users, _) = statement(&report, driver, "users.insert");
        let (orders, _) = statement(&report, driver, "orders.insert");
        let (recent, rows) = statement(&report, driver, "orders.recent");
        assert_eq!(users + orders + recent, 300, "{driver}");
        assert!(
            users > 0 && orders > 0 && rows > 0,
            "{driver}: {users} {orders} {rows}"
        );
        let (by_id, _) = statement(&report, driver, "users.by_id");
        assert_eq!(by_id, 0, "{driver}: left out of ops(), so not run");

        let report = dir.join(format!("{driver}-orders.json"));
        let out = run(driver, &report, "ops(orders.insert=1)", "n=20");
        assert!(out.status.success(), "{driver}: orders.insert");
        assert_eq!(statement(&report, driver, "orders.insert").0, 20);
        assert_eq!(statement(&report, driver, "users.insert").0, 0);
        // 20 batches of the converted insert's rows.
        let report = dir.join(format!("{driver}-validate.json"));
        let out = run(
            driver,
            &report,
            "ops(orders.validate=1)",
            &format!("n={written}"),
        );
        assert!(out.status.success(), "{driver}: orders.validate");
        let j = json(&report);
        assert_eq!(
            j["config"]["validated"],
            serde_json::json!(["users.validate", "orders.validate"])
        );
        assert_eq!(
            statement(&report, driver, "orders.validate"),
            (written, written),
            "{driver}"
        );
    }
}
