//! Every numeric and duration option of `load`, `run` and `findmax` fed 0, -1, an absurdly
//! large value and garbage, and every file option a path the command could not write: each
//! is refused before anything starts, with exit code 2, one `error:` line naming the option,
//! no report file, and no connection made to the node (a listener nobody connects to). No
//! Cassandra needed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use crate::support;
use support::{assert_input_error, scratch_dir};

/// `doppio ARGS NODE` run in `dir` (where a default report would land).
fn doppio_in(dir: &Path, args: &[&str], node: &str) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(args)
        .arg(node)
        .arg("-q")
        .current_dir(dir)
        .output()
        .unwrap();
    eprintln!(
        "$ doppio {} {node}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `args` against a listener that must see no connection, in an empty folder that must
/// stay empty, and checks the refusal names `names`.
fn refused(args: &[&str], names: &str) {
    let node = TcpListener::bind("127.0.0.1:0").unwrap();
    node.set_nonblocking(true).unwrap();
    let addr = node.local_addr().unwrap().to_string();
    let dir = scratch_dir(&format!("ranges-{}", args.join("_").replace('/', "-")));
    let out = doppio_in(&dir, args, &addr);
    assert_input_error(&out, &[names]);
    assert!(
        node.accept().is_err(),
        "{args:?}: the command connected to the node"
    );
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "{args:?} left {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_of_range_counts_and_durations_are_refused_before_anything_starts() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // (subcommands, option, values refused)
    let table: &[(&[&str], &str, &[&str])] = &[
        (
            &["load", "run", "findmax"],
            "--concurrency",
            &["0", "-1", "1000001", "1e99", "many"],
        ),
        (
            &["load", "run", "findmax"],
            "--threads",
            // 1000: more pinned threads than this machine has cores.
            &["0", "-1", "1025", "x", "1000"],
        ),
        (
            &["load", "run", "findmax"],
            "--connections",
            &["0", "-1", "257", "x"],
        ),
        (
            &["load", "run", "findmax"],
            "--retries",
            &["-1", "101", "x"],
        ),
        (
            &["load", "run", "findmax"],
            "--timeout",
            &["0", "0s", "-1s", "2h", "1k", "x"],
        ),
        (
            &["load", "run", "findmax"],
            "--progress-every",
            &["0", "50ms", "x"],
        ),
        (&["load", "run"], "--rate", &["0", "-5", "x"]),
        (
            &["run", "findmax"],
            "--sampling",
            &["0", "0s", "500us", "-1s", "x"],
        ),
        (
            &["run", "findmax"],
            "--page-size",
            &["0", "-1", "3000000000", "x"],
        ),
        (&["run"], "--duration", &["0", "0s", "-1", "x"]),
        (&["run"], "--segments", &["0", "-1", "1001", "x"]),
        (
            &["run"],
            "--waterfall",
            &["0", "-1", "1000000001", "x", "1.5"],
        ),
        (&["run"], "--order", &["random", "0", ""]),
        (&["run"], "--syscalls", &["none", "", "kinds"]),
        (
            &["run"],
            "--equal-load",
            &[
                "0",
                "0%",
                "-1",
                "150%",
                "1.5",
                "NaN",
                "inf",
                "x",
                "70 percent",
            ],
        ),
        (&["run"], "--server-warmup", &["-1s", "20", "1month", "x"]),
        (&["run"], "--server-pid", &["-1", "x", "4294967296"]),
        (&["findmax"], "--step-duration", &["0", "50ms", "x"]),
        (&["findmax"], "--refine", &["-1", "31", "x"]),
        (&["findmax"], "--start", &["0", "-1", "x"]),
        (&["findmax"], "--factor", &["1", "0.5", "1000", "x"]),
        (&["findmax"], "--max-rate", &["0", "x"]),
    ];
    let mut cases = 0;
    for (commands, option, values) in table {
        for command in *commands {
            for value in *values {
                let value = format!("{option}={value}");
                refused(&[command, "-w", "empty", &value], option);
                cases += 1;
            }
        }
    }
    eprintln!("{cases} refusals checked");
}

#[test]
fn files_the_run_could_not_write_are_refused_before_anything_starts() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let dir = scratch_dir("ranges-files");
    let folder = dir.to_str().unwrap();
    let missing = "/nonexistent-doppio-folder/r.json";
    // /proc takes no new files, even from root (CI runs as root: permissions would not do).
    let unwritable = "/proc/doppio-report.json";
    for command in ["run", "findmax"] {
        refused(&[command, "-w", "empty", "-o", missing], "does not exist");
        refused(
            &[command, "-w", "empty", "-o", unwritable],
            "cannot write a file in /proc",
        );
        refused(
            &[command, "-w", "empty", "-o", folder],
            "a folder, not a file",
        );
    }
    refused(&["run", "-w", "empty", "--hdr-log", missing], "--hdr-log");
    refused(
        &[
            "run",
            "-w",
            "empty",
            "--flamegraph",
            "/nonexistent-doppio-folder/flame",
        ],
        "--flamegraph",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn time_options_take_a_unit_and_months_are_no_unit() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // Every option that takes only a time, on every subcommand that has it. A bare number
    // meant seconds on some of these and iterations on `-d`: it is refused with a hint.
    let table: &[(&[&str], &str)] = &[
        (&["load", "run", "findmax"], "--timeout"),
        (&["load", "run", "findmax"], "--max-outage"),
        (&["load", "run", "findmax"], "--spin"),
        (&["load", "run", "findmax"], "--sqpoll-idle"),
        (&["load", "run", "findmax"], "--progress-every"),
        (&["run", "findmax"], "--sampling"),
        (&["findmax"], "--step-duration"),
        (&["findmax"], "--warmup"),
    ];
    let mut cases = 0;
    for (commands, option) in table {
        for command in *commands {
            refused(
                &[command, "-w", "empty", &format!("{option}=30")],
                "`30` is not a duration: a number needs its unit, e.g. `30s` or `30ms`",
            );
            refused(
                &[command, "-w", "empty", &format!("{option}=1M")],
                "`M` is not a unit of time",
            );
            cases += 2;
        }
    }
    // Where a time or a count is meant (`-d`, `--warmup` of `run`), `1M` is a count and a
    // time needs its unit; `1 month` is neither.
    refused(&["run", "-w", "empty", "--duration=1month"], "--duration");
    // Equal load finds its own rate: a rate beside it is refused.
    refused(
        &["run", "-w", "empty", "--equal-load=70%", "-r", "1000"],
        "--equal-load",
    );
    // A node process that does not exist is named before anything connects.
    refused(
        &["run", "-w", "empty", "--server-pid=4294967295"],
        "--server-pid",
    );
    refused(&["run", "-w", "empty", "--warmup=1month"], "--warmup");
    refused(
        &["run", "-w", "empty", "--retry-backoff=10,100"],
        "a number needs its unit",
    );
    refused(
        &["findmax", "-w", "empty", "--slo=p99<10"],
        "a number needs its unit",
    );
    refused(
        &["run", "-w", "empty", "--rate=ramp:1k..2k/10"],
        "a number needs its unit",
    );
    eprintln!("{} refusals checked", cases + 5);
}
