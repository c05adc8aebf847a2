//! `doppio cost`: bad options are refused before anything runs (exit 2, one `error:` line,
//! no folder written), and a real run under Valgrind gives doppio's figures exactly again on
//! a second run, with no allocation per prepared INSERT. Needs Valgrind (`scripts/test.sh`
//! installs it); no Cassandra.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::Path;
use std::process::Output;

use crate::support;
use support::{assert_input_error, doppio, scratch_dir};

/// `doppio cost ARGS --out DIR/OUT`.
fn cost_in(dir: &Path, out: &str, args: &[&str]) -> Output {
    let out = dir.join(out).display().to_string();
    let mut all = vec!["cost", "--out", &out];
    all.extend_from_slice(args);
    doppio(&all)
}

#[test]
fn bad_options_are_refused_before_anything_runs() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let dir = scratch_dir("cost-options");
    for (args, names) in [
        (&["--requests", "0"][..], "--requests"),
        (&["--scenario", "selectt"], "unknown scenario `selectt`"),
        (&["--driver", "doppio-uring"], "--driver doppio-uring"),
        (&["--driver", "nope"], "nope"),
        (
            &["--check", "no-such-baseline.json"],
            "--check no-such-baseline.json",
        ),
    ] {
        let out = cost_in(&dir, "out", args);
        assert_input_error(&out, &[names]);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
    let out = cost_in(&dir, "out", &["--requests", "-1"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The figures of doppio's prepared INSERT, from `--out`'s cost.json.
fn insert_figure(out: &Path) -> serde_json::Value {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("cost.json")).unwrap()).unwrap();
    json["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["scenario"] == "insert" && f["driver"] == "doppio")
        .unwrap()["client"]
        .clone()
}

#[test]
fn doppio_figures_repeat_to_the_instruction_and_an_insert_allocates_nothing() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let dir = scratch_dir("cost-run");
    let args = [
        "--driver",
        "doppio",
        "--scenario",
        "insert",
        "--requests",
        "50",
        "--warmup",
        "10",
    ];
    let run = |out: &str| {
        assert!(
            cost_in(&dir, out, &args).status.success(),
            "doppio cost failed"
        );
        insert_figure(&dir.join(out))
    };
    let (first, second) = (run("a"), run("b"));
    assert_eq!(first, second, "the same build, the same figures");
    assert!(first["instructions"].as_f64().unwrap() > 100.0, "{first}");
    assert_eq!(first["allocations"].as_f64(), Some(0.0), "{first}");
    // The table names its row, and the check against the run's own figures passes.
    let table = std::fs::read_to_string(dir.join("a/cost.md")).unwrap();
    assert!(table.contains("| insert |"), "{table}");
    let baseline = dir.join("a/cost.json").display().to_string();
    let mut check = args.to_vec();
    check.extend(["--check", &baseline]);
    let o = cost_in(&dir, "c", &check);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("no regression"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `empty`'s figure of one process: the same whatever the environment of the command that
/// measures it (glibc reads every variable at start-up; the child is given none).
#[test]
fn the_empty_figure_does_not_count_the_callers_environment() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let dir = scratch_dir("cost-env");
    let args = ["--driver", "doppio", "--scenario", "empty"];
    let run = |out: &str, extra: usize| {
        let out_dir = dir.join(out).display().to_string();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_doppio"));
        cmd.args(["cost", "--out", &out_dir]).args(args);
        for i in 0..extra {
            cmd.env(format!("DOPPIO_COST_TEST_PADDING_{i}"), "x");
        }
        let status = cmd.output().unwrap().status;
        assert!(status.success(), "doppio cost failed: {status}");
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(out).join("cost.json")).unwrap(),
        )
        .unwrap();
        json["figures"][0]["client"]["instructions"]
            .as_f64()
            .unwrap()
    };
    let (plain, padded) = (run("plain", 0), run("padded", 100));
    assert_eq!(plain, padded, "100 more variables moved `empty`");
    std::fs::remove_dir_all(&dir).unwrap();
}
