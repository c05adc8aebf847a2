//! Several loader machines on the stub server (perf/stub, in this process, recording the
//! first bound value of every EXECUTE): `--loader K/N` and `--cycles START..END` make each
//! loader send its own keys, and `doppio merge` combines their reports. No Cassandra needed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::BTreeMap;
use std::path::Path;

use crate::support;
use doppio_bench::stats::LatencyHistogram;
use support::{assert_input_error, doppio, json, scratch_dir};

/// A stub that keeps the first bound value of every EXECUTE.
fn recording_stub() -> doppio_stub::StubHandle {
    doppio_stub::Stub::start(doppio_stub::StubConfig {
        log_rules: false,
        record_values: true,
        ..doppio_stub::StubConfig::default()
    })
    .unwrap()
}

/// The stub reports every bind marker as a blob, so an integer key arrives as its 8 bytes.
fn keys(values: &[Vec<u8>]) -> Vec<u64> {
    values
        .iter()
        .map(|v| u64::from_be_bytes(v.as_slice().try_into().unwrap()))
        .collect()
}

/// How often each key was sent.
fn counts(keys: &[u64]) -> BTreeMap<u64, u32> {
    let mut out = BTreeMap::new();
    for k in keys {
        *out.entry(*k).or_default() += 1;
    }
    out
}

#[test]
fn two_half_loads_send_disjoint_keys_that_together_are_the_whole_load() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = recording_stub();
    let addr = stub.addr().to_string();
    let rows = 1001u64;
    let rows_param = format!("rows={rows}");
    let mut seen = 0;
    let mut slices = Vec::new();
    // Loader 1 on doppio, loader 2 on scylla-rust-driver: the slice is the bench's, not the
    // driver's.
    for (loader, driver) in [("1/2", "doppio"), ("2/2", "scylla")] {
        let out = doppio(&[
            "load",
            "-w",
            "read",
            "-P",
            &rows_param,
            "--loader",
            loader,
            "--driver",
            driver,
            "-p",
            "16",
            "-q",
            &addr,
        ]);
        assert!(out.status.success(), "load --loader {loader}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let values = stub.executed_first_values();
        let sent = keys(&values[seen..]);
        seen = values.len();
        assert!(
            stdout.contains(&format!("loaded {} rows", sent.len())),
            "{stdout}"
        );
        assert!(stdout.contains(&format!(", loader {loader})")), "{stdout}");
        let c = counts(&sent);
        assert!(c.values().all(|&n| n == 1), "each key once: {loader}");
        slices.push(c.into_keys().collect::<Vec<u64>>());
    }
    // 1001 rows in two: 0..500 and 500..1001.
    assert_eq!(slices[0], (0..500).collect::<Vec<_>>());
    assert_eq!(slices[1], (500..rows).collect::<Vec<_>>());
    let mut all: Vec<u64> = slices.concat();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len() as u64, rows, "disjoint and together complete");
}

#[test]
fn a_timed_run_that_exhausts_its_cycles_wraps_around_within_them() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = recording_stub();
    let dir = scratch_dir("cycles-wrap");
    let workload = dir.join("by-i.toml");
    std::fs::write(
        &workload,
        "name = \"by-i\"\n[[run]]\nstatement = \"SELECT v FROM ks.t WHERE k = ?\"\nargs = [\"i\"]\n",
    )
    .unwrap();
    let report = dir.join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        workload.to_str().unwrap(),
        "--cycles",
        "100..110",
        "-d",
        "300ms",
        "--warmup",
        "0s",
        "-p",
        "4",
        "-q",
        "-o",
        report.to_str().unwrap(),
        &stub.addr().to_string(),
    ]);
    assert!(out.status.success());
    let sent = keys(&stub.executed_first_values());
    assert!(sent.len() > 20, "the range was exhausted: {}", sent.len());
    let c = counts(&sent);
    assert_eq!(
        c.keys().copied().collect::<Vec<_>>(),
        (100..110).collect::<Vec<_>>(),
        "only the range, all of it"
    );
    assert!(c.values().all(|&n| n >= 2), "wrapped around: {c:?}");
    let j = json(&report);
    assert_eq!(j["config"]["cycles"]["start"].as_u64(), Some(100));
    assert_eq!(j["config"]["cycles"]["end"].as_u64(), Some(110));
    assert!(j["config"]["cycles"]["loader"].is_null());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("  cycles        100..110 (10 iterations"),
        "{text}"
    );
}

/// `--loader index/N` as each pod of a Kubernetes Indexed Job runs it: the job sets
/// `JOB_COMPLETION_INDEX` (from 0), the pods share one command line. No cluster here: the
/// variable is set as the job would set it.
#[test]
fn pods_of_an_indexed_job_load_their_own_slices() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = recording_stub();
    let addr = stub.addr().to_string();
    let mut seen = 0;
    let mut slices = Vec::new();
    for index in ["0", "1", "2"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_doppio"))
            .args([
                "load", "-w", "read", "-P", "rows=300", "--loader", "index/3", "-p", "8", "-q",
                &addr,
            ])
            .env("JOB_COMPLETION_INDEX", index)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "index {index}: {out:?}");
        let k = index.parse::<u64>().unwrap() + 1;
        assert!(stdout.contains(&format!(", loader {k}/3)")), "{stdout}");
        let values = stub.executed_first_values();
        let mut sent = keys(&values[seen..]);
        seen = values.len();
        sent.sort_unstable();
        slices.push(sent);
    }
    assert_eq!(slices[0], (0..100).collect::<Vec<_>>());
    assert_eq!(slices[1], (100..200).collect::<Vec<_>>());
    assert_eq!(slices[2], (200..300).collect::<Vec<_>>());
    // Outside a job: one sentence naming the variable, before connecting.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args([
            "load",
            "-w",
            "read",
            "--loader",
            "index/3",
            "-q",
            "127.0.0.1:1",
        ])
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .unwrap();
    assert_input_error(&out, &["JOB_COMPLETION_INDEX", "not set"]);
}

/// The documented manifest (bench/deploy/loaders-job.yaml) agrees with itself: an Indexed
/// Job whose pods all run at once (merge needs overlapping runs) and whose command names the
/// same N as its completions.
#[test]
fn the_indexed_job_manifest_runs_n_loaders_at_once() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/loaders-job.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let field = |name: &str| -> String {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .unwrap_or_else(|| panic!("{name} in the manifest"))
            .trim()
            .to_owned()
    };
    assert_eq!(field("completionMode:"), "Indexed");
    let n = field("completions:");
    assert_eq!(field("parallelism:"), n);
    assert!(text.contains(&format!("--loader index/{n}")), "{text}");
    assert!(text.contains("loader-$JOB_COMPLETION_INDEX.json"), "{text}");
}

#[test]
fn bad_cycles_and_loaders_exit_with_2_before_connecting() {
    let _turn = doppio_test_support::file_turn(module_path!());
    for (args, expect) in [
        (&["--cycles", "10..5"][..], "is empty"),
        (&["--cycles", "10..10"][..], "is empty"),
        (&["--loader", "3/2"][..], "K must be between 1 and N"),
        (&["--loader", "1/0"][..], "K must be between 1 and N"),
        (&["--loader", "0/2"][..], "K must be between 1 and N"),
        (
            &["--loader", "1/2", "--cycles", "0..10"][..],
            "cannot be used with",
        ),
        (&["--cycles", "0..50", "-d", "100"][..], "more than the 50"),
        (
            &["--cycles", "0..50", "--warmup", "51"][..],
            "--warmup is 51",
        ),
    ] {
        let mut argv = vec!["run", "-w", "read", "-q", "127.0.0.1:1"];
        argv.extend_from_slice(args);
        let out = doppio(&argv);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: `{expect}` in {err}");
    }
    // The bench's own checks: one sentence each.
    let out = doppio(&["run", "-w", "empty", "--loader", "1/2", "-q", "127.0.0.1:1"]);
    assert_input_error(&out, &["no key space", "--cycles"]);
    let out = doppio(&[
        "load",
        "-w",
        "read",
        "-P",
        "rows=1",
        "--loader",
        "1/2",
        "-q",
        "127.0.0.1:1",
    ]);
    assert_input_error(&out, &["slice 1 is empty"]);
}

/// A short run of `empty` on `addr` drawing `cycles`, its report at `path`.
fn short_run(addr: &str, cycles: &str, path: &Path) {
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        "--cycles",
        cycles,
        "-d",
        "600ms",
        "-s",
        "200ms",
        "--warmup",
        "0s",
        "-p",
        "4",
        "-q",
        "-o",
        path.to_str().unwrap(),
        addr,
    ]);
    assert!(out.status.success());
}

fn histogram_count(text: &serde_json::Value) -> u64 {
    LatencyHistogram::from_base64(text.as_str().unwrap())
        .unwrap()
        .count()
}

#[test]
fn merged_reports_add_histograms_and_requests_and_show_and_hdr_read_them() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig {
        log_rules: false,
        ..doppio_stub::StubConfig::default()
    })
    .unwrap();
    let addr = stub.addr().to_string();
    let dir = scratch_dir("merge");
    let (a, b, all) = (dir.join("a.json"), dir.join("b.json"), dir.join("all.json"));
    // Two loaders one after the other on this machine (they would run at once on two).
    short_run(&addr, "0..1G", &a);
    short_run(&addr, "1G..2G", &b);
    // Made one after the other: merged as such (runs apart in time are refused otherwise).
    let apart = doppio(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        all.to_str().unwrap(),
    ]);
    assert_input_error(&apart, &["do not overlap", "--sequential"]);
    let out = doppio(&[
        "merge",
        "--sequential",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        all.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let (ja, jb, jm) = (json(&a), json(&b), json(&all));
    let (ba, bb, bm) = (
        &ja["backends"]["doppio"],
        &jb["backends"]["doppio"],
        &jm["backends"]["doppio"],
    );
    let sum = |f: &str| ba[f].as_u64().unwrap() + bb[f].as_u64().unwrap();
    assert!(sum("requests") > 0);
    assert_eq!(bm["requests"].as_u64(), Some(sum("requests")));
    assert_eq!(bm["errors"].as_u64(), Some(sum("errors")));
    assert_eq!(
        histogram_count(&bm["histogram"]),
        histogram_count(&ba["histogram"]) + histogram_count(&bb["histogram"]),
        "histograms added exactly"
    );
    let tp = ba["throughput_rps"].as_f64().unwrap() + bb["throughput_rps"].as_f64().unwrap();
    assert!((bm["throughput_rps"].as_f64().unwrap() - tp).abs() < 1e-6 * tp);
    // The samples' requests add up too, and every sample has its wall-clock start.
    let sample_requests: u64 = bm["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(sample_requests, sum("requests"));
    assert!(ba["samples"][0]["start_unix_s"].as_f64().unwrap() > 1.7e9);
    // Overheads per machine, each input's config kept.
    let machines = bm["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 2);
    assert_eq!(machines[0]["cpu_us_per_req"], ba["cpu_us_per_req"]);
    assert_eq!(machines[1]["requests"], bb["requests"]);
    let from = jm["merged_from"].as_array().unwrap();
    assert_eq!(
        from[1]["config"]["cycles"]["start"].as_u64(),
        Some(1_000_000_000)
    );
    assert!(
        jm["warnings"].as_array().unwrap().is_empty(),
        "disjoint ranges: {}",
        jm["warnings"]
    );

    // `show` and `hdr` read the merged report.
    let out = doppio(&["show", all.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for part in ["merged from   2 machines", "SUMMARY", "MACHINES", "a.json"] {
        assert!(text.contains(part), "`{part}` in:\n{text}");
    }
    let hlog = dir.join("all.hlog");
    let out = doppio(&["hdr", all.to_str().unwrap(), "-o", hlog.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&hlog).unwrap().lines().count() > 2);

    // A merged report is not merged again, and different workloads are refused.
    let out = doppio(&[
        "merge",
        all.to_str().unwrap(),
        a.to_str().unwrap(),
        "-o",
        "x.json",
    ]);
    assert_input_error(&out, &["itself a merged report"]);
    let mut other = ja.clone();
    other["workload"]["name"] = "write".into();
    let c = dir.join("c.json");
    std::fs::write(&c, other.to_string()).unwrap();
    let out = doppio(&[
        "merge",
        a.to_str().unwrap(),
        c.to_str().unwrap(),
        "-o",
        dir.join("bad.json").to_str().unwrap(),
    ]);
    assert_input_error(&out, &["cannot be merged", "workloads differ"]);
    assert!(!dir.join("bad.json").exists());
}
