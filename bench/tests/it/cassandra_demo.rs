//! Ctrl-C during `scripts/demo.sh` against the local Cassandra (127.0.0.1:9042, the node the
//! demo uses), as a terminal delivers it: SIGINT to the script's whole process group while
//! its first part measures. The run keeps what it measured (report with
//! `fatal_error: "interrupted"`), the script says where the report is and that Cassandra is
//! left running, exits with 130, and the node still answers. The demo runs this test's debug
//! `doppio` (DOPPIO_DEMO_BIN) rather than building the release one.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support;
use support::{json, scratch_dir};

#[test]
fn ctrl_c_during_the_demo_keeps_the_report_and_leaves_cassandra_running() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let node = doppio_test_support::CASSANDRA;
    let Some(addr) = node.answering() else {
        return;
    };
    if addr.to_string() != "127.0.0.1:9042" {
        eprintln!("skipped: scripts/demo.sh uses 127.0.0.1:9042, the tests' node is {addr}");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let report = scratch_dir("demo-interrupt").join("demo.json");
    let mut child = Command::new(root.join("scripts/demo.sh"))
        .args(["-d", "120s", "-o", report.to_str().unwrap()])
        .env("DOPPIO_DEMO_BIN", env!("CARGO_BIN_EXE_doppio"))
        .current_dir(root)
        // Its own process group, which is what a terminal signals on Ctrl-C.
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = Arc::new(Mutex::new(String::new()));
    let reader = {
        let stderr = stderr.clone();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut s = stderr.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        })
    };
    let stdout_pipe = child.stdout.take().unwrap();
    let stdout_reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut BufReader::new(stdout_pipe), &mut s).unwrap();
        s
    });

    // Until the run step has started (schema and load of 10,000 rows come first).
    let deadline = Instant::now() + Duration::from_secs(300);
    while !stderr.lock().unwrap().contains("==> read workload") {
        assert!(
            Instant::now() < deadline && child.try_wait().unwrap().is_none(),
            "the demo did not reach its run step:\n{}",
            stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Past the node's 15 s warm-up, connected and measuring the first backend (scylla's
    // first segment: 0.5 s warm-up, then 20 s of 120 s planned over 6 rounds).
    std::thread::sleep(Duration::from_secs(24));
    // SAFETY: signalling the process group of a child of this test (its pid is the group id).
    let rc = unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGINT) };
    assert_eq!(rc, 0);

    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    let stdout = stdout_reader.join().unwrap();
    let stderr = stderr.lock().unwrap().clone();
    eprintln!("{stdout}{stderr}");
    assert_eq!(code, Some(130), "the demo exits with 130 after Ctrl-C");
    assert!(
        stdout.contains("SUMMARY"),
        "the run's text report: {stdout}"
    );
    let j = json(&report);
    assert_eq!(j["fatal_error"], "interrupted", "{j}");
    assert!(
        j["backends"]["scylla"]["requests"].as_u64().unwrap() > 0,
        "the first backend measured before the signal"
    );
    assert!(
        stderr.contains(&format!(
            "the report of what the run measured so far is in {}",
            report.display()
        )),
        "the script says where the report is"
    );
    assert!(
        stderr.contains("Cassandra is left running"),
        "the script says what it left"
    );
    assert!(
        node.answering().is_some(),
        "Cassandra still answers after the demo was interrupted"
    );
}
