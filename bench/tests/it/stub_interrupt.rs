//! Ctrl-C during `doppio run`: the first SIGINT stops the run, keeps what was measured
//! (text and JSON report written, its path printed, `fatal_error: "interrupted"`) and exits
//! with 130; while
//! the run waits for requests in flight, a second SIGINT exits at once, also with 130. Against
//! the stub (in process), with both doppio backends.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;
use support::{json, scratch_dir};

fn stub(rules: &str) -> doppio_stub::StubHandle {
    support::stub_with_rules(rules)
}

fn start_run(addr: &str, report: &std::path::Path, extra: &[&str]) -> Child {
    let mut args = vec![
        "run",
        "-w",
        "empty",
        addr,
        "--driver",
        "doppio,doppio-uring",
        "-d",
        "120s",
        "--warmup",
        "0s",
        "-o",
        report.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn sigint(child: &Child) {
    // SAFETY: signalling a child process of this test by its pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(rc, 0);
}

/// The exit code once the child exits within `within`, or None if it is still running.
fn exit_within(child: &mut Child, within: Duration) -> Option<i32> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status.code().unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn ctrl_c_keeps_the_measurements_and_exits_130() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = stub("");
    let addr = stub.addr().to_string();
    let report = scratch_dir("interrupt").join("r.json");
    let mut child = start_run(&addr, &report, &[]);
    // Measuring the first backend's first segment (120 s planned).
    std::thread::sleep(Duration::from_secs(3));
    sigint(&child);
    let code = exit_within(&mut child, Duration::from_secs(60));
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}{stderr}");
    assert_eq!(code, Some(130), "exit code 130 after Ctrl-C");
    assert!(stdout.contains("SUMMARY"), "the text report: {stdout}");
    assert!(
        stderr.contains(&format!("report written to {}", report.display())),
        "the report's path is printed after Ctrl-C too: {stderr}"
    );
    let j = json(&report);
    assert_eq!(j["fatal_error"], "interrupted", "{j}");
    let b = &j["backends"]["doppio"];
    assert!(b["requests"].as_u64().unwrap() > 0, "measured before: {b}");
    assert!(
        b["elapsed_s"].as_f64().unwrap() < 60.0,
        "stopped early: {b}"
    );
}

#[test]
fn a_second_ctrl_c_exits_at_once_while_the_first_waits_for_requests_in_flight() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // After a second every answer stalls: requests in flight wait for their 30 s timeout.
    let stub = stub("[[rule]]\nwhen = { after = \"1s\" }\nthen = { stall = \"120s\" }\n");
    let addr = stub.addr().to_string();
    let report = scratch_dir("interrupt-twice").join("r.json");
    let mut child = start_run(&addr, &report, &["--timeout", "30s", "-q"]);
    std::thread::sleep(Duration::from_secs(3));
    sigint(&child);
    assert_eq!(
        exit_within(&mut child, Duration::from_secs(2)),
        None,
        "the first Ctrl-C waits for the requests in flight"
    );
    sigint(&child);
    let code = exit_within(&mut child, Duration::from_secs(10));
    if code.is_none() {
        let _ = child.kill();
    }
    assert_eq!(code, Some(130), "a second Ctrl-C exits at once with 130");
}
