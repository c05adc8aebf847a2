//! A soak of the driver against the loopback stub (perf/stub, in this process): C = 1024
//! requests kept in flight for `DOPPIO_SOAK_SECS` seconds per runtime (default 60, so the
//! two runtimes take two minutes of CI; `perf/soak.sh` records the long runs). What it checks
//! is what a long run must not do:
//!
//! - grow: the process's resident memory after the first third of the run stays within
//!   [`RSS_GROWTH_LIMIT`] of what it was at that point (sampled every 250 ms from
//!   `/proc/self/status`; the stub shares the process, so its memory counts too);
//! - leak: when the load stops no stream id is left in use (`in_flight` of every node is 0),
//!   and once the session is closed the process's open file descriptors return to their
//!   count before it connected (counted on the session's executor: glommio keeps one
//!   eventfd of every executor that ever ran, which is the runtime's, not the session's);
//! - lose: every request is answered, none fails.
//!
//! The throughput's trend (least-squares slope of the per-second completions, with its 95 %
//! margin) is printed, not asserted: speed is measured, and this machine is noisy.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{Session, SessionConfig};
use doppio_stub::Shape;

use crate::support;

use support::{on_runtime, stub};

/// Requests in flight.
const CONCURRENCY: usize = 1024;
/// Resident memory may grow by this share after the first third of the run.
const RSS_GROWTH_LIMIT: f64 = 0.02;

/// The two runtimes' soaks take turns: each measures the whole process's memory.
static TURN: Mutex<()> = Mutex::new(());

fn soak_duration() -> Duration {
    let secs = std::env::var("DOPPIO_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(60);
    Duration::from_secs(secs.max(6))
}

/// `VmRSS` of this process, bytes.
fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS in /proc/self/status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("VmRSS in kB");
    kib * 1024
}

/// Open file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Least-squares slope of `ys` against 0, 1, 2, ... and the half-width of its 95 %
/// confidence interval (normal approximation: the series are tens of points long).
fn slope_with_margin(ys: &[f64]) -> (f64, f64) {
    let n = ys.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = ys.iter().sum::<f64>() / n;
    let sxx: f64 = (0..ys.len()).map(|x| (x as f64 - mean_x).powi(2)).sum();
    let sxy: f64 = ys
        .iter()
        .enumerate()
        .map(|(x, y)| (x as f64 - mean_x) * (y - mean_y))
        .sum();
    let slope = sxy / sxx;
    let residual: f64 = ys
        .iter()
        .enumerate()
        .map(|(x, y)| (y - mean_y - slope * (x as f64 - mean_x)).powi(2))
        .sum();
    let se = (residual / (n - 2.0) / sxx).sqrt();
    (slope, 1.96 * se)
}

fn a_long_run_at_c1024_keeps_memory_flat_and_returns_every_stream_id_and_descriptor(
    runtime: Runtime,
) {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let stub = stub(runtime, "", Shape::default());
    let addr = stub.addr();
    let duration = soak_duration();

    // Resident memory every 250 ms, from a thread of its own.
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut samples = Vec::new();
            while sampling.load(Ordering::Relaxed) {
                samples.push((start.elapsed(), rss_bytes()));
                std::thread::sleep(Duration::from_millis(250));
            }
            samples
        })
    };

    let (per_second, in_flight_after, failures, fds_before, fds_after) =
        on_runtime(runtime, "soak", move || async move {
            // The stub and this executor are up; no session exists yet.
            let fds_before = open_fds();
            let mut c = SessionConfig::new(addr);
            c.consistency = Consistency::One;
            c.connection.request_timeout = Duration::from_secs(10);
            let s = Rc::new(Session::connect(c).await.unwrap());
            let start = Instant::now();
            let end = start + duration;
            let seconds = duration.as_secs() as usize + 1;
            let completions: Rc<Vec<Cell<u64>>> =
                Rc::new((0..seconds).map(|_| Cell::new(0)).collect());
            let failures = Rc::new(Cell::new(0u64));
            let fibers: Vec<_> = (0..CONCURRENCY)
                .map(|_| {
                    let s = s.clone();
                    let completions = completions.clone();
                    let failures = failures.clone();
                    doppio_driver::rt::spawn_local(async move {
                        while Instant::now() < end {
                            let r = s.query_unpaged("SELECT v FROM t", &()).await;
                            if r.is_err() {
                                failures.set(failures.get() + 1);
                            }
                            let second = (start.elapsed().as_secs() as usize).min(seconds - 1);
                            let slot = &completions[second];
                            slot.set(slot.get() + 1);
                        }
                    })
                })
                .collect();
            for f in fibers {
                f.await;
            }
            let in_flight: usize = s.nodes().iter().map(|n| n.in_flight).sum();
            s.close("soak done");
            drop(s);
            // Let the closed connections' tasks end before the executor does: glommio
            // does not drop the tasks still alive when its executor returns, so a socket
            // whose task had not yet seen the close would stay open for good (measured:
            // two sockets left without this pause; doppio's own runtime closes them).
            doppio_driver::rt::sleep(Duration::from_millis(200)).await;
            // The stub's side of each connection closes when it reads the end of the stream
            // (give it a moment).
            let mut fds_after = open_fds();
            let settle = Instant::now();
            while fds_after > fds_before && settle.elapsed() < Duration::from_secs(5) {
                doppio_driver::rt::sleep(Duration::from_millis(50)).await;
                fds_after = open_fds();
            }
            let per_second: Vec<u64> = completions.iter().map(Cell::get).collect();
            (per_second, in_flight, failures.get(), fds_before, fds_after)
        });

    sampling.store(false, Ordering::Relaxed);
    let rss = sampler.join().unwrap();

    let third = duration / 3;
    let at_third = rss
        .iter()
        .find(|(t, _)| *t >= third)
        .map(|&(_, b)| b)
        .expect("samples after the first third");
    let peak_after = rss
        .iter()
        .filter(|(t, _)| *t >= third)
        .map(|&(_, b)| b)
        .max()
        .unwrap();
    let growth = peak_after as f64 / at_third as f64 - 1.0;
    // The first and last seconds are partial (start-up, fibers draining).
    let full: Vec<f64> = per_second[1..per_second.len().saturating_sub(1)]
        .iter()
        .map(|&c| c as f64)
        .collect();
    let mean = full.iter().sum::<f64>() / full.len() as f64;
    let (slope, margin) = slope_with_margin(&full);
    let total: u64 = per_second.iter().sum();
    eprintln!(
        "soak {runtime}: {total} requests in {}s at C = {CONCURRENCY} ({mean:.0}/s), {failures} \
         failed; throughput slope {slope:+.1} ± {margin:.1} req/s per second ({:+.3} % ± {:.3} % \
         of the mean per second); RSS {:.1} MiB at {}s, peak after {:.1} MiB ({:+.2} %); fds \
         {fds_before} before, {fds_after} after; stream ids in use at the end: {in_flight_after}",
        duration.as_secs(),
        100.0 * slope / mean,
        100.0 * margin / mean,
        at_third as f64 / (1 << 20) as f64,
        third.as_secs(),
        peak_after as f64 / (1 << 20) as f64,
        100.0 * growth,
    );
    assert_eq!(failures, 0, "every request answered");
    assert!(total > 0);
    assert_eq!(
        in_flight_after, 0,
        "no stream id left in use when the load stops"
    );
    // At most as many as before: a leak adds descriptors. Fewer is no leak: the previous
    // test's executor or stub may close one of its own during this run (13 after against
    // 14 before, seen once in a full run).
    assert!(
        fds_after <= fds_before,
        "the session's descriptors all closed: {fds_after} after, {fds_before} before"
    );
    assert!(
        growth < RSS_GROWTH_LIMIT,
        "resident memory grew {:.2} % after the first third ({at_third} -> {peak_after} bytes)",
        100.0 * growth
    );
    drop(stub);
}

support::runtime_tests!(
    a_long_run_at_c1024_keeps_memory_flat_and_returns_every_stream_id_and_descriptor
);
