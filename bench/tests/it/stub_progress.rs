//! Progress when stderr is not a terminal (a pipe here, as in CI logs or under `nohup`):
//! plain lines every `--progress-every` of phase time, each with elapsed and remaining time,
//! the last sample's rate (and target rate) and p99 and the errors so far, and one when the phase ends;
//! `--quiet` prints none. Against the stub (in this process).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{doppio, scratch_dir};

fn run(addr: &str, extra: &[&str]) -> String {
    let report = scratch_dir("progress").join("r.json");
    let mut args = vec![
        "run",
        "-w",
        "empty",
        addr,
        "-d",
        "4s",
        "--warmup",
        "0s",
        "-p",
        "8",
        "-r",
        "2000",
        "-o",
        report.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = doppio(&args);
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn plain_progress_lines_when_stderr_is_not_a_terminal_and_none_when_quiet() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let addr = stub.addr().to_string();
    let err = run(&addr, &["--progress-every", "1s"]);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("[doppio] ")).collect();
    assert!(
        lines.len() >= 4,
        "a line a second and one at the end: {err}"
    );
    let (last, periodic) = lines.split_last().unwrap();
    for l in periodic {
        assert!(l.contains("s left: "), "{l}");
        assert!(
            // `-r 2000`: the sample's target beside its rate.
            l.contains(" req/s (target 2000)  p99 ") && l.contains(" ms  errors 0"),
            "{l}"
        );
    }
    // One line ends the phase, saying it ran to its end (not what was left).
    assert!(last.starts_with("[doppio] done after "), "{err}");
    assert!(!last.contains("left"), "{last}");
    assert!(
        lines[0].contains("[doppio] 1.0s, 3s left: "),
        "{}",
        lines[0]
    );
    // No terminal codes in a log.
    assert!(!err.contains('\x1b'), "{err:?}");
    let quiet = run(&addr, &["--progress-every", "1s", "-q"]);
    assert!(!quiet.contains("[doppio] "), "{quiet}");
}
