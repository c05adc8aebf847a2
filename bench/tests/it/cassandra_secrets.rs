//! The password never leaves the bench except to the node: not in the text report, the JSON
//! report, anything printed on stdout or stderr (a successful run with every backend and a
//! refused one), nor `--help` with `DOPPIO_PASSWORD` set. Against the node with
//! authentication (`scripts/cassandra-auth.sh`), with a role of its own whose password
//! appears nowhere else.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::process::Command;

use crate::support;
use doppio_test_support::CASSANDRA_AUTH;
use support::{doppio, scratch_dir};

const ROLE: &str = "doppio_secret_probe";
const SECRET: &str = "Pw-0f5e9c2a-never-printed";

/// Everything a command showed: stdout, stderr and, when it wrote one, the JSON report.
fn shown(out: &std::process::Output, report: Option<&std::path::Path>) -> String {
    let mut all = String::from_utf8_lossy(&out.stdout).into_owned();
    all.push_str(&String::from_utf8_lossy(&out.stderr));
    if let Some(r) = report.filter(|r| r.exists()) {
        all.push_str(&std::fs::read_to_string(r).unwrap());
    }
    all
}

#[test]
fn the_password_appears_in_no_report_output_or_help() {
    let _turn = doppio_test_support::file_turn(module_path!());
    if CASSANDRA_AUTH.answering().is_none() {
        return; // skipped (outside CI) with a message
    }
    let auth = CASSANDRA_AUTH.addr().to_string();
    let dir = scratch_dir("secrets");
    let role = dir.join("role.toml");
    std::fs::write(
        &role,
        format!(
            "[schema]\nstatements = [\"CREATE ROLE IF NOT EXISTS {ROLE} WITH PASSWORD = \
             '{SECRET}' AND LOGIN = true\"]\n[[run]]\nstatement = \"SELECT key FROM \
             system.local\"\n"
        ),
    )
    .unwrap();
    let out = doppio(&[
        "schema",
        "-w",
        role.to_str().unwrap(),
        &auth,
        "--user",
        "cassandra",
        "--password",
        "cassandra",
        "-q",
    ]);
    assert!(out.status.success(), "the role is created");

    // A run with every backend, logged in as the role.
    let report = dir.join("run.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &auth,
        "--driver",
        "doppio,doppio-uring,scylla",
        "--user",
        ROLE,
        "--password",
        SECRET,
        "-d",
        "1s",
        "--warmup",
        "0s",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "the role logs in with every backend");
    let all = shown(&out, Some(&report));
    assert!(all.contains(ROLE), "the report names the user");
    assert!(!all.contains(SECRET), "the password was shown:\n{all}");

    // The same from the environment, refused: the error names the user, not the password.
    let refused = dir.join("refused.json");
    let wrong = format!("{SECRET}-wrong");
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args([
            "run",
            "-w",
            "empty",
            &auth,
            "--user",
            ROLE,
            "-d",
            "1s",
            "-o",
            refused.to_str().unwrap(),
        ])
        .env("DOPPIO_PASSWORD", &wrong)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a refused login");
    let all = shown(&out, Some(&refused));
    assert!(!all.contains(SECRET), "the password was shown:\n{all}");

    // --help with the password in the environment.
    for sub in ["run", "load", "schema"] {
        let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
            .args([sub, "--help"])
            .env("DOPPIO_PASSWORD", SECRET)
            .output()
            .unwrap();
        assert!(out.status.success());
        let all = shown(&out, None);
        assert!(all.contains("DOPPIO_PASSWORD"), "{all}");
        assert!(
            !all.contains(SECRET),
            "{sub} --help shows the password:\n{all}"
        );
    }
}
