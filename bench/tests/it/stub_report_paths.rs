//! Where reports go, as a newcomer would find out: a run that cannot connect leaves nothing
//! behind in its folder (unless its report was named with -o); runs started at the same
//! moment in one folder keep a report each, under names that never collide; a report file
//! that cannot be written is refused before anything starts. (Ctrl-C printing the report's
//! path: stub_interrupt.rs.)

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support;
use support::{assert_input_error, json, scratch_dir};

/// `doppio ARGS` run in `folder`, echoed to stderr.
fn doppio_in(folder: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(args)
        .current_dir(folder)
        .output()
        .unwrap();
    eprintln!(
        "$ (in {}) doppio {}\n{}{}",
        folder.display(),
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The files in `folder`, sorted.
fn files(folder: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

#[test]
fn a_run_that_cannot_connect_leaves_no_report_behind() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let dir = scratch_dir("paths-dead");
    for command in ["run", "findmax"] {
        let out = doppio_in(
            &dir,
            &[
                command,
                "-w",
                "empty",
                "127.0.0.1:1",
                "--warmup",
                "0s",
                "-q",
            ],
        );
        assert_input_error(&out, &["127.0.0.1:1"]);
        assert_eq!(files(&dir), Vec::<PathBuf>::new(), "{command} left files");
    }
    let err = String::from_utf8_lossy(
        &doppio_in(&dir, &["run", "-w", "empty", "127.0.0.1:1", "-q"]).stderr,
    )
    .into_owned();
    assert!(err.contains("no report written"), "{err}");
    // Named with -o, the report is written: the caller asked for that file.
    let named = dir.join("named.json");
    let out = doppio_in(
        &dir,
        &[
            "run",
            "-w",
            "empty",
            "127.0.0.1:1",
            "-q",
            "-o",
            named.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(json(&named)["fatal_error"]
        .as_str()
        .unwrap()
        .contains("127.0.0.1:1"));
}

#[test]
fn runs_started_together_in_one_folder_keep_a_report_each() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let addr = stub.addr().to_string();
    let dir = scratch_dir("paths-together");
    // Three runs at once: at least two start within the same second, where the default
    // names (to the second) are the same.
    let outs: Vec<Output> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    doppio_in(
                        &dir,
                        &[
                            "run", "-w", "empty", &addr, "-d", "1s", "--warmup", "0s", "-q",
                        ],
                    )
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut named = Vec::new();
    for out in &outs {
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        let path = err
            .lines()
            .find_map(|l| l.strip_prefix("report written to "))
            .unwrap_or_else(|| panic!("the path is printed: {err}"));
        named.push(dir.join(path));
    }
    named.sort();
    named.dedup();
    assert_eq!(named.len(), 3, "three distinct reports: {named:?}");
    assert_eq!(files(&dir), named, "nothing else in the folder");
    for report in &named {
        assert!(
            json(report)["backends"]["doppio"]["requests"]
                .as_u64()
                .unwrap()
                > 0
        );
    }
}

#[test]
fn a_report_that_cannot_be_written_is_refused_before_the_run() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let dir = scratch_dir("paths-unwritable");
    // A folder that takes no new file, from root either.
    let out = doppio_in(
        &dir,
        &[
            "run",
            "-w",
            "empty",
            "127.0.0.1:1",
            "-q",
            "-o",
            "/proc/doppio-r.json",
        ],
    );
    assert_input_error(&out, &["-o /proc/doppio-r.json", "cannot write"]);
    let out = doppio_in(
        &dir,
        &[
            "findmax",
            "-w",
            "empty",
            "127.0.0.1:1",
            "-q",
            "-o",
            "/no/such/folder/r.json",
        ],
    );
    assert_input_error(&out, &["-o /no/such/folder/r.json"]);
    assert_eq!(files(&dir), Vec::<PathBuf>::new());
}

#[test]
fn list_shows_run_and_findmax_reports_and_says_what_it_skipped() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let addr = stub.addr().to_string();
    let dir = scratch_dir("paths-list");
    let run = doppio_in(
        &dir,
        &[
            "run", "-w", "empty", &addr, "-d", "1s", "--warmup", "0s", "-q", "--tag", "one", "-o",
            "run.json",
        ],
    );
    assert!(run.status.success());
    let findmax = doppio_in(
        &dir,
        &[
            "findmax",
            "-w",
            "empty",
            &addr,
            "--start",
            "100",
            "--max-rate",
            "150",
            "--step-duration",
            "500ms",
            "--warmup",
            "0s",
            "-q",
            "-o",
            "fm.json",
        ],
    );
    assert!(findmax.status.success());
    std::fs::write(dir.join("junk.json"), "{\"not\": \"a report\"}").unwrap();
    std::fs::write(dir.join("notes.txt"), "not json").unwrap();
    let out = doppio_in(&dir, &["list", "."]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("run.json") && l.contains("one")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("fm.json") && l.contains("findmax: doppio")),
        "{stdout}"
    );
    assert!(stderr.contains("skipped 1 file(s)"), "{stderr}");
    assert!(stderr.contains("junk.json"), "{stderr}");
    assert!(
        !stderr.contains("notes.txt"),
        "only .json files are looked at: {stderr}"
    );
    let missing = doppio_in(&dir, &["list", "no-such-folder"]);
    assert_input_error(&missing, &["no-such-folder", "not a folder"]);
}
