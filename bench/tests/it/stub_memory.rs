//! Bounded memory: a run of 10,000 samples (2 ms each, 20 s) against the stub (in this
//! process), with the bench's resident memory read from /proc every 100 ms. Each released
//! sample goes to the spill file (`bench/src/engine/spill.rs`), so memory stays where it was
//! after the first hundred samples; before, every sample kept two full histograms (about
//! 0.5 MiB), and these 10,000 would have held about 5 GiB.
//!
//! What is asserted, with margins wide enough for a shared 2-core machine (samples waiting
//! for a late worker are held until it catches up, a few MiB at a time):
//! - the median RSS of the run's last quarter is within 16 MiB of its median over seconds
//!   2 to 4 (after the first hundreds of samples);
//! - no reading exceeds that baseline by more than 96 MiB;
//! - the report still holds every sample, and they add up to its totals.
//!
//! A CI run on a loaded machine once saw 216 MiB at 2-4 s and 590 MiB at the end: the
//! coordinator, which merges and spills each sample, fell behind the workers, and the channel
//! between them was unbounded. It now holds `SAMPLE_BACKLOG` samples (about 17 MiB) and a
//! worker that finds it full waits, which the report names in a warning.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;
use support::{json, scratch_dir};

const MIB: f64 = (1 << 20) as f64;

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

#[test]
fn ten_thousand_samples_keep_memory_flat_after_the_first_hundred() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let stub = doppio_stub::Stub::start(doppio_stub::StubConfig::default()).unwrap();
    let addr = stub.addr().to_string();
    let report = scratch_dir("memory").join("r.json");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args([
            "run",
            "-w",
            "empty",
            &addr,
            "--driver",
            "doppio-uring",
            "-d",
            "20s",
            "--warmup",
            "0s",
            "-s",
            "2ms",
            "-p",
            "16",
            "-r",
            "5000",
            "-q",
            "-o",
            report.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut readings: Vec<(f64, f64)> = Vec::new();
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = rss_kib(child.id()) {
            readings.push((started.elapsed().as_secs_f64(), kib as f64 * 1024.0));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = json(&report);
    let b = &j["backends"]["doppio-uring"];
    let samples = b["samples"].as_array().unwrap();
    let requests: u64 = samples
        .iter()
        .map(|s| s["requests"].as_u64().unwrap())
        .sum();
    assert!(samples.len() >= 9_900, "{} samples", samples.len());
    assert_eq!(
        requests,
        b["requests"].as_u64().unwrap(),
        "samples add up to the total"
    );
    assert!(samples
        .iter()
        .all(|s| !s["histogram"].as_str().unwrap().is_empty()));

    // The measured run: from connecting (about the first second) to 20 s later; the report
    // is built after it.
    let mut early: Vec<f64> = readings
        .iter()
        .filter(|(t, _)| (2.0..4.0).contains(t))
        .map(|&(_, r)| r)
        .collect();
    let run: Vec<(f64, f64)> = readings
        .iter()
        .copied()
        .filter(|(t, _)| *t < 20.5)
        .collect();
    let last_quarter_from = run.last().unwrap().0 * 0.75;
    let mut late: Vec<f64> = run
        .iter()
        .filter(|(t, _)| *t >= last_quarter_from)
        .map(|&(_, r)| r)
        .collect();
    let peak = run.iter().map(|&(_, r)| r).fold(0.0, f64::max);
    let (baseline, tail) = (median(&mut early), median(&mut late));
    eprintln!(
        "{} samples; RSS median {:.1} MiB at 2-4 s, {:.1} MiB over the last quarter, peak {:.1} \
         MiB during the run ({} readings)",
        samples.len(),
        baseline / MIB,
        tail / MIB,
        peak / MIB,
        readings.len()
    );
    assert!(
        tail - baseline < 16.0 * MIB,
        "memory grew with the samples: {:.1} -> {:.1} MiB",
        baseline / MIB,
        tail / MIB
    );
    assert!(
        peak - baseline < 96.0 * MIB,
        "a peak of {:.1} MiB over a baseline of {:.1} MiB",
        peak / MIB,
        baseline / MIB
    );
    drop(stub);
}
