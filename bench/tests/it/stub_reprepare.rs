//! A node that forgets prepared statements under load (as one does when it restarts): the
//! stub (in this process) answers every 500th EXECUTE with UNPREPARED. doppio prepares the
//! statement again and executes it once more within the same request, so the workload sees
//! no error, and the report counts the re-prepares (`reprepares`), for both runtimes.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use support::{doppio, json, scratch_dir};

#[test]
fn forgotten_statements_are_prepared_again_without_errors_and_counted() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = support::stub_with_rules(
        "[[rule]]\nname = \"forgets\"\nwhen = { opcode = \"EXECUTE\", every = 500 }\n\
             then = { error = { code = \"unprepared\", message = \"forgotten\" } }\n",
    );
    let addr = stub.addr().to_string();
    let report = scratch_dir("reprepare").join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "--driver",
        "doppio,doppio-uring",
        "-d",
        "4s",
        "--warmup",
        "0s",
        "-p",
        "64",
        "-r",
        "20000",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("re-prepares"), "SUMMARY shows them: {text}");
    let j = json(&report);
    let forgotten = stub
        .fired()
        .into_iter()
        .find(|(n, _)| n == "forgets")
        .map_or(0, |(_, n)| n);
    let mut counted = 0;
    for driver in ["doppio", "doppio-uring"] {
        let b = &j["backends"][driver];
        let requests = b["requests"].as_u64().unwrap();
        let reprepares = b["reprepares"].as_u64().unwrap();
        eprintln!(
            "{driver}: {requests} requests, {reprepares} re-prepares, {} errors",
            b["errors"]
        );
        assert_eq!(b["errors"], 0, "{driver}: nothing surfaced to the workload");
        assert_eq!(b["retries"], 0, "{driver}: a re-prepare is not a retry");
        // One EXECUTE in 500 is forgotten: a re-prepare per 500 requests or so (the second
        // EXECUTE of a healed request counts towards the next one).
        let expected = requests / 500;
        assert!(
            reprepares.abs_diff(expected) <= expected / 10 + 2,
            "{driver}: {reprepares} re-prepares for {requests} requests"
        );
        counted += reprepares;
    }
    // The stub also answered the runs' warm-up-free connects; every UNPREPARED it sent in
    // the measured segments was healed once.
    assert!(counted <= forgotten, "{counted} counted, {forgotten} sent");
}
