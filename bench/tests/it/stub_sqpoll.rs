//! `doppio-uring-sqpoll` (doppio's own io_uring runtime in SQPOLL mode) against the stub
//! server (perf/stub, started in this process): the kernel's submission thread's CPU time
//! appears in the report on its own and inside the client CPU, the enters that remain are
//! counted by reason, the setup flags are shown, and bad `--sqpoll-*` values are refused
//! before anything starts.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::sync::{Mutex, MutexGuard};

use doppio_stub::{Rules, Shape, Stub, StubConfig};

use crate::support;
use support::{assert_input_error, doppio, json, scratch_dir as scratch};

/// The run measures CPU: not beside the other test of this file.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    support::one_at_a_time(&SERIAL)
}

#[test]
fn a_busy_sqpoll_thread_s_cpu_time_is_in_the_report_on_its_own_and_in_the_client_cpu() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _serial = serial();
    let stub = Stub::start(StubConfig {
        shape: Shape::default(),
        rules: Rules::parse("").unwrap(),
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap();
    let addr = stub.addr().to_string();
    let report = scratch("sqpoll").join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "--driver",
        "doppio-uring,doppio-uring-sqpoll",
        "--sqpoll-idle",
        "100ms",
        "--sqpoll-cpu",
        "none",
        "-d",
        "4s",
        "--warmup",
        "0s",
        "-p",
        "64",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let j = json(&report);
    assert_eq!(j["config"]["sqpoll"]["idle_ms"].as_u64(), Some(100));
    assert!(j["config"]["sqpoll"]["cpu"].is_null());
    let setup = &j["config"]["uring_setup"];
    let sq_flags = setup["doppio-uring-sqpoll"].as_str().unwrap();
    let plain_flags = setup["doppio-uring"].as_str().unwrap();
    assert!(sq_flags.contains("SQPOLL"), "{setup}");
    assert!(!sq_flags.contains("DEFER_TASKRUN"), "{setup}");
    assert!(!plain_flags.contains("SQPOLL"), "{setup}");
    assert!(text.contains("  io_uring      "), "CONFIG shows the flags");
    assert!(text.contains("  sqpoll        idle 100 ms   SQ thread not pinned"));

    let b = &j["backends"]["doppio-uring-sqpoll"];
    let cpu = b["cpu_us_per_req"].as_f64().unwrap();
    let sq = b["sqpoll_thread_cpu_us_per_req"].as_f64().unwrap();
    eprintln!(
        "doppio-uring-sqpoll: {} requests, client CPU {cpu:.3} us/req of which the SQ thread \
         {sq:.3}; enters {}; io_uring submitted {}",
        b["requests"], b["uring_enters_per_req"], b["io_uring_submitted_per_req"]
    );
    assert!(b["requests"].as_u64().unwrap() > 1000);
    // The SQ thread polled throughout: its time is there, and inside the client's.
    assert!(sq > 0.0, "{b}");
    assert!(cpu >= sq, "client CPU {cpu} below its SQ thread's {sq}");
    // Every enter that remains waited, woke the thread or flushed an overflow.
    let e = &b["uring_enters"];
    let reasons = e["waiting"].as_u64().unwrap()
        + e["sq_wakeup"].as_u64().unwrap()
        + e["cq_overflow"].as_u64().unwrap();
    assert!(e["total"].as_u64().unwrap() <= reasons, "{e}");
    // The SQ thread's submissions are counted (the tracepoint fires on it), where the
    // kernel lets us count them.
    if let Some(s) = b["io_uring_submitted_per_req"].as_f64() {
        assert!(s > 0.0, "{b}");
    }
    // The plain backend has no SQ thread of its own: its line shows the other backend's
    // parked one (it was there), its enters are counted too.
    let plain = &j["backends"]["doppio-uring"];
    assert!(plain["sqpoll_thread_cpu_us_per_req"].as_f64().is_some());
    assert!(plain["uring_enters"]["total"].as_u64().unwrap() > 0);
    let overhead = text.split("OVERHEAD").nth(1).unwrap_or_default();
    for row in [
        "  sqpoll thread CPU [us]",
        "executor enters",
        "  waiting",
        "  waking SQ thread",
    ] {
        assert!(
            overhead.contains(row),
            "no `{row}` row in OVERHEAD{overhead}"
        );
    }
}

#[test]
fn bad_sqpoll_options_are_refused_before_anything_starts() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _serial = serial();
    // Nothing listens on port 9: a run that got as far as connecting would say so instead.
    let base = ["run", "-w", "empty", "127.0.0.1:9", "-d", "1s", "-q"];
    let sq = ["--driver", "doppio-uring-sqpoll"];
    let cases: [(&[&str], &[&str]); 8] = [
        (
            &["--sqpoll-idle", "0ms"],
            &["--sqpoll-idle", "whole milliseconds"],
        ),
        // A time needs its unit (one grammar for every time option).
        (
            &["--sqpoll-idle", "0"],
            &["--sqpoll-idle", "needs its unit"],
        ),
        (&["--sqpoll-idle=-5ms"], &["--sqpoll-idle", "-5ms"]),
        (&["--sqpoll-idle", "1500us"], &["whole milliseconds"]),
        (&["--sqpoll-idle", "11s"], &["1ms to 10s"]),
        (&["--sqpoll-cpu", "4096"], &["--sqpoll-cpu 4096", "online"]),
        (&["--sqpoll-cpu", "two"], &["--sqpoll-cpu", "`two`"]),
        (
            &["--driver", "doppio-uring", "--sqpoll-idle", "10ms"],
            &["doppio-uring-sqpoll only"],
        ),
    ];
    for (args, expect) in cases {
        let mut argv: Vec<&str> = base.to_vec();
        if !args.contains(&"--driver") {
            argv.extend(sq);
        }
        argv.extend(args);
        let out = doppio(&argv);
        assert_input_error(&out, expect);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("refused"), "it connected first: {err}");
    }
}
