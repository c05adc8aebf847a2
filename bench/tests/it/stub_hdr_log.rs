//! `--hdr-log FILE` against the stub (in this process): the interval log grows while the run
//! goes (intervals are there before it ends), reads back with HdrHistogram's own parser,
//! has one interval per measured sample of each backend, tagged with the backend, and the
//! intervals' counts add up to the report's successful requests.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use doppio_bench::stats::LatencyHistogram;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use crate::support;
use support::{json, scratch_dir};

/// (tag, start offset s, histogram count) of every interval in `text`.
fn intervals(text: &str) -> Vec<(String, f64, u64)> {
    IntervalLogIterator::new(text.as_bytes())
        .filter_map(|e| match e.unwrap() {
            LogEntry::Interval(i) => Some((
                i.tag().map(|t| t.as_str().to_owned()).unwrap_or_default(),
                i.start_timestamp().as_secs_f64(),
                LatencyHistogram::from_base64(i.encoded_histogram())
                    .unwrap()
                    .count(),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn the_interval_log_is_written_while_the_run_goes_one_interval_per_sample() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let addr = stub.addr().to_string();
    let dir = scratch_dir("hdr-log");
    let (report, log) = (dir.join("r.json"), dir.join("run.hlog"));
    let child = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args([
            "run",
            "-w",
            "empty",
            &addr,
            "--driver",
            "doppio,doppio-uring",
            "-d",
            "8s",
            "--warmup",
            "0s",
            "-p",
            "16",
            "-r",
            "5000",
            "-q",
            "--hdr-log",
            log.to_str().unwrap(),
            "-o",
            report.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first of four segments (2 s each) is under way: some intervals are already there.
    std::thread::sleep(Duration::from_millis(3500));
    let early = intervals(&std::fs::read_to_string(&log).unwrap());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!early.is_empty(), "intervals written before the run ended");
    let all = intervals(&std::fs::read_to_string(&log).unwrap());
    assert!(all.len() > early.len(), "the log grew after that");
    let j = json(&report);
    let mut by_tag: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    for (tag, _, count) in &all {
        let e = by_tag.entry(tag.clone()).or_default();
        e.0 += 1;
        e.1 += count;
    }
    for driver in ["doppio", "doppio-uring"] {
        let b = &j["backends"][driver];
        let samples = b["samples"].as_array().unwrap().len();
        let successes = b["requests"].as_u64().unwrap() - b["errors"].as_u64().unwrap();
        let (n, count) = by_tag.get(driver).copied().unwrap_or_default();
        eprintln!("{driver}: {n} intervals ({samples} samples), {count} latencies ({successes} successes)");
        assert_eq!(n, samples, "{driver}: one interval per sample");
        assert_eq!(count, successes, "{driver}: every success in the log");
    }
    // Offsets grow within the log (segments alternate, A B A B).
    assert!(
        all.windows(2).all(|w| w[1].1 >= w[0].1 - 0.01),
        "interval starts in order"
    );
}
