//! `--flamegraph` and `--anatomy` where `perf` fails: the run says why (the command, how it
//! ended, what it printed or that it printed nothing), keeps its report with the reason among
//! its warnings, and exits with 1 rather than 0, so that a script knows the flamegraph or the
//! anatomy was not made. A `perf` that fails at once stands in for a machine where perf is
//! refused.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::support;
use support::{json, scratch_dir};

/// A `perf` that exits with 3 at once, first on the PATH it returns.
fn failing_perf(dir: &std::path::Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let perf = bin.join("perf");
    std::fs::write(&perf, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&perf, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn a_flamegraph_perf_could_not_record_fails_the_run_and_says_why() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let dir = scratch_dir("flame-fails");
    let path = failing_perf(&dir);
    let report = dir.join("r.json");
    let prefix = dir.join("flame");
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(["run", "-w", "empty", &stub.addr().to_string(), "-d", "1s"])
        .args(["--warmup", "0s", "-q", "-o", report.to_str().unwrap()])
        .args(["--flamegraph", prefix.to_str().unwrap()])
        .env("PATH", path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert_eq!(out.status.code(), Some(1), "the run failed: {err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("an error line: {err}"));
    assert!(line.contains("no flamegraph"), "{line}");
    assert!(
        line.contains("`perf record` failed (exit status: 3)"),
        "{line}"
    );
    assert!(line.contains("it printed nothing"), "{line}");
    // The measurements are kept, and the report says why there is no flamegraph.
    let j = json(&report);
    assert!(j["backends"]["doppio"]["requests"].as_u64().unwrap() > 0);
    let warnings = j["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .starts_with("no flamegraph: `perf record`")),
        "{warnings:?}"
    );
    assert!(err.contains(&format!("report written to {}", report.display())));
}

#[test]
fn an_anatomy_perf_could_not_record_fails_the_run_and_says_why() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let dir = scratch_dir("anatomy-fails");
    let path = failing_perf(&dir);
    let report = dir.join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(["run", "-w", "empty", &stub.addr().to_string(), "-d", "1s"])
        .args(["--warmup", "0s", "-q", "-o", report.to_str().unwrap()])
        .arg("--anatomy")
        .env("PATH", path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the run failed: {err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("an error line: {err}"));
    assert!(
        line.contains("no anatomy: `perf record` failed (exit status: 3)"),
        "{line}"
    );
    // The measurements are kept, without an anatomy, and the report says why.
    let j = json(&report);
    let b = &j["backends"]["doppio"];
    assert!(b["requests"].as_u64().unwrap() > 0);
    assert!(b["anatomy"].is_null(), "{b}");
    assert!(j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().starts_with("no anatomy: `perf record`")));
}
