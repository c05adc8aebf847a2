//! The `doppio` binary against the stub server's faults (perf/stub, started in this
//! process): server errors counted by kind while the run goes on, and coordinated omission:
//! a stall in a fixed-rate run shows in the latency from the due time and not in the
//! service time, and the check that says so fails on the service time; A/A calibration of
//! `doppio show`'s p-values; the bench's syscall and CPU counts against `perf stat` and
//! `/usr/bin/time` on the same run.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use doppio_bench::stats::welch_t_test_raw;
use doppio_stub::{Rules, Shape, Stub, StubConfig, StubHandle};

use crate::support;
use support::{doppio, json, scratch_dir as scratch};

/// These tests measure (latency, p-values, CPU and syscall counts, RSS): they run one at a
/// time, not beside each other on the machine's two cores (run in parallel, the 100,000-fiber
/// test pushed the 20 % test's throughput p-value from 0 to 0.006).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    support::one_at_a_time(&SERIAL)
}

fn stub(rules: &str) -> StubHandle {
    Stub::start(StubConfig {
        shape: Shape::default(),
        rules: Rules::parse(rules).unwrap(),
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap()
}

#[test]
fn overloaded_answers_are_counted_by_kind_and_the_run_goes_on_with_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _serial = serial();
    let stub = stub(
        r#"
[[rule]]
name = "overloaded"
when = { opcode = "EXECUTE", every = 10 }
then = { error = { code = "overloaded", message = "shedding load" } }
"#,
    );
    let addr = stub.addr().to_string();
    let report = scratch("overloaded").join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "--driver",
        "doppio,doppio-uring,scylla",
        // Rotated rounds: each backend sits parked through the others' segments, before and
        // after its own, and what its threads do then must not land on theirs.
        "--segments",
        "2",
        "-d",
        "4s",
        "--warmup",
        "0s",
        "-p",
        "16",
        "--retries",
        "0",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "the run goes on through the errors");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("overloaded"),
        "the text report names the kind"
    );
    let j = json(&report);
    for driver in ["doppio", "doppio-uring", "scylla"] {
        let b = &j["backends"][driver];
        let requests = b["requests"].as_u64().unwrap();
        let overloaded = b["errors_by_kind"]["overloaded"].as_u64().unwrap_or(0);
        let share = overloaded as f64 / requests as f64;
        eprintln!("{driver}: {overloaded} overloaded of {requests} requests ({share:.3})");
        assert!(requests > 1000, "{driver}: {requests} requests");
        assert_eq!(b["errors"].as_u64().unwrap(), overloaded, "{driver}");
        // One EXECUTE in ten, counted over all backends' requests together.
        assert!((0.08..=0.12).contains(&share), "{driver}: {share}");
        assert!(b["first_errors"]["overloaded"]
            .as_str()
            .unwrap()
            .contains("shedding load"));
    }
    syscall_kinds_are_reported(&j, &text);
}

/// Every backend entry carries the syscall-kind and io_uring fields; where the kernel counted
/// them, the kinds add up to the total, doppio (glommio: an io_uring per shard) enters its
/// io_uring and submits operations to it, and scylla-rust-driver (tokio: epoll) waits in
/// epoll and never enters an io_uring: doppio's shards, parked during scylla's segments,
/// still enter theirs now and then (a connection's request sweeper, once, at the deadline of
/// the last request it saw), and those calls are doppio's, in its `while_parked`, not in
/// scylla's figures (before they were set apart, 1 to 1,900 of them landed there).
fn syscall_kinds_are_reported(j: &serde_json::Value, text: &str) {
    let overhead = text.split("OVERHEAD").nth(1).unwrap_or_default();
    eprintln!(
        "OVERHEAD{}",
        overhead.split("ERRORS").next().unwrap_or_default()
    );
    for driver in ["doppio", "doppio-uring", "scylla"] {
        let b = &j["backends"][driver];
        for field in [
            "syscalls_by_kind",
            "syscalls_by_kind_per_req",
            "syscall_kinds_unavailable",
            "io_uring_submitted",
            "io_uring_submitted_per_req",
            "io_uring_completed",
            "io_uring_completed_per_req",
            "io_uring_unavailable",
        ] {
            assert!(b.get(field).is_some(), "{driver}: no `{field}` in {b}");
        }
        let kinds = &b["syscalls_by_kind"];
        if kinds.is_null() {
            let why = b["syscall_kinds_unavailable"].as_str().unwrap();
            eprintln!("{driver}: syscalls by kind not counted here: {why}");
            assert!(text.contains("not counted"), "the text report says why");
            continue;
        }
        let requests = b["requests"].as_f64().unwrap();
        let per_req = &b["syscalls_by_kind_per_req"];
        let mut sum = 0;
        for kind in [
            "io_uring_enter",
            "send",
            "recv",
            "epoll",
            "futex",
            "membarrier",
            "other",
        ] {
            let n = kinds[kind].as_u64().unwrap();
            sum += n;
            let x = per_req[kind].as_f64().unwrap();
            assert!((x - n as f64 / requests).abs() < 1e-9, "{driver} {kind}");
            assert!(overhead.contains(&format!("  {kind} ")), "a row for {kind}");
        }
        let total = b["syscalls_per_req"].as_f64().unwrap() * requests;
        assert!(
            (sum as f64 - total).abs() < 0.5,
            "{driver}: {sum} vs {total}"
        );
        let io_uring_enter = kinds["io_uring_enter"].as_u64().unwrap();
        let submitted = b["io_uring_submitted_per_req"].as_f64();
        // The bench's own thread reads /proc (the `recv` family) and wakes workers (`futex`)
        // in every backend's segments: "never" for those is "under one per thousand requests".
        let rare = |kind: &str| kinds[kind].as_u64().unwrap() as f64 / requests < 1e-3;
        let parked = &b["while_parked"];
        eprintln!("{driver} while parked: {parked}");
        assert_eq!(parked["segments"].as_u64(), Some(4), "{driver}: {parked}");
        assert!(parked["syscalls"].as_u64().is_some(), "{driver}: {parked}");
        match driver {
            "doppio" => {
                assert!(io_uring_enter > 0, "{driver}: {kinds}");
                if let Some(s) = submitted {
                    assert!(s > 0.0, "{driver}: {s} io_uring operations per request");
                }
            }
            "doppio-uring" => {
                assert!(io_uring_enter > 0, "{driver}: {kinds}");
                if let Some(s) = submitted {
                    assert!(s > 0.0, "{driver}: {s} io_uring operations per request");
                }
                // Socket data moves through the ring, and nothing waits in membarrier
                // (glommio's, parked, are doppio's own).
                for kind in ["send", "recv"] {
                    assert!(rare(kind), "{driver}: {kind} in {kinds}");
                }
                for kind in ["epoll", "membarrier"] {
                    assert_eq!(kinds[kind].as_u64(), Some(0), "{driver}: {kind} in {kinds}");
                }
            }
            _ => {
                assert!(kinds["epoll"].as_u64().unwrap() > 0, "{driver}: {kinds}");
                assert_eq!(io_uring_enter, 0, "{driver}: {kinds}");
                assert_eq!(b["io_uring_submitted"].as_u64(), Some(0), "{driver}");
                assert_eq!(kinds["membarrier"].as_u64(), Some(0), "{driver}: {kinds}");
            }
        }
        if submitted.is_none() {
            let why = b["io_uring_unavailable"].as_str().unwrap();
            eprintln!("{driver}: io_uring operations not counted here: {why}");
        }
    }
}

/// Whether a latency summary shows a 1-second stall in a 3-second run at 5,000 req/s: the
/// requests due during the stall (a third of the run) waited up to the whole second, so
/// the 99th percentile is above 0.8 s and the maximum above 0.95 s.
fn shows_the_stall(summary: &serde_json::Value) -> bool {
    let p99 = summary["p99"].as_u64().unwrap();
    let max = summary["max"].as_u64().unwrap();
    p99 >= 800_000_000 && max >= 950_000_000
}

#[test]
fn a_stall_at_a_fixed_rate_shows_in_latency_from_the_due_time_but_not_in_service_time() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _serial = serial();
    // 5,000 req/s for 3 s: the 8,000th EXECUTE (1.6 s in) stalls its connection for 1 s.
    let stub = stub(
        r#"
[[rule]]
name = "stall"
when = { opcode = "EXECUTE", every = 8000 }
then = { stall = "1s" }
"#,
    );
    let addr = stub.addr().to_string();
    let report = scratch("omission").join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        &addr,
        "-r",
        "5000",
        "-p",
        "50",
        "-d",
        "3s",
        "--warmup",
        "0s",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert_eq!(stub.fired(), vec![("stall".to_owned(), 1)], "one stall");
    let b = &json(&report)["backends"]["doppio"];
    let latency = &b["latency_ns"];
    let service = &b["service_time_ns"];
    eprintln!(
        "latency p50 {} p99 {} max {}; service p50 {} p99 {} max {}",
        latency["p50"],
        latency["p99"],
        latency["max"],
        service["p50"],
        service["p99"],
        service["max"]
    );
    assert_eq!(b["errors"].as_u64().unwrap(), 0);
    // Latency from the due time holds the queued requests.
    assert!(shows_the_stall(latency), "{latency}");
    // Measured from the actual send, the same run hides them: the same check fails, which is
    // what a benchmark with coordinated omission would report.
    assert!(!shows_the_stall(service), "{service}");
    assert!(service["p99"].as_u64().unwrap() < 100_000_000, "{service}");
}

fn delay_stub(delay: &str) -> StubHandle {
    stub(&format!(
        "seed = 11\n[[rule]]\nname = \"delay\"\nwhen = {{ opcode = \"EXECUTE\" }}\nthen = {{ delay = {delay} }}\n"
    ))
}

/// One closed-loop run of the `empty` workload with `fibers` fibers.
fn closed_run(addr: &str, fibers: usize, duration: &str, sample: &str, report: &Path) {
    let fibers = fibers.to_string();
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        addr,
        "-p",
        &fibers,
        "-d",
        duration,
        "--warmup",
        "300ms",
        "-s",
        sample,
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success());
}

/// `doppio show A B`'s p-values of the throughput and the mean latency.
fn show_p_values(a: &Path, b: &Path) -> (f64, f64) {
    let out = doppio(&["show", b.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let p_of = |prefix: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` row in:\n{text}"));
        line.split_whitespace().last().unwrap().parse().unwrap()
    };
    (p_of("throughput [req/s]"), p_of("mean"))
}

#[test]
fn a_20_percent_slower_server_is_found_with_p_below_0_001_on_throughput() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _serial = serial();
    // Delays uniform in 20-60 ms and in 24-72 ms: means 40 and 48 ms. The difference must
    // stand above the machine's timer and scheduling noise, which is absolute, not
    // relative: on the CI machine (debug build, five Cassandra JVMs beside it) a 4 ms delay
    // was answered after 4.3-35 ms (p50 5.8 ms), and 4 ms against 4.8 ms came out the wrong
    // way round (p = 0.25); at 40 ms a 2 ms drift between runs is 5 %, a quarter of the
    // difference. Uniform, not fixed: with fixed delays the fibers answer in lockstep and a
    // 100 ms sample holds a whole number of their rounds, a swing of its own. 32 fibers keep
    // ~70 answers in a sample; 10 s runs give 100 samples in 10 batches.
    let base = delay_stub("{ uniform = [\"20ms\", \"60ms\"] }");
    let slow = delay_stub("{ uniform = [\"24ms\", \"72ms\"] }");
    let dir = scratch("slower");
    // A disturbance of half a second (seen here beside a fuzzer: throughput halved for
    // 0.5 s) widens one run's variance: up to three attempts, each a fresh pair, the second
    // one slow-first so a drift in one direction cannot decide every attempt. The slower
    // server must come out slower, at p < 0.001 on throughput, in one of them.
    let mut seen = Vec::new();
    for attempt in 0..3 {
        let a = dir.join(format!("base{attempt}.json"));
        let b = dir.join(format!("slow{attempt}.json"));
        let mut runs = [(&base, &a), (&slow, &b)];
        if attempt == 1 {
            runs.reverse();
        }
        for (stub, report) in runs {
            closed_run(&stub.addr().to_string(), 32, "10s", "100ms", report);
        }
        let (pt, pl) = show_p_values(&a, &b);
        let throughput = |r: &Path| {
            json(r)["backends"]["doppio"]["throughput_rps"]
                .as_f64()
                .unwrap()
        };
        let ratio = throughput(&b) / throughput(&a);
        eprintln!(
            "20 % delay, attempt {attempt}: slow/base throughput {ratio:.3}, p(throughput) {pt}, \
             p(mean latency) {pl}"
        );
        seen.push((ratio, pt, pl));
        if pt < 0.001 && ratio < 1.0 {
            return;
        }
    }
    panic!("a 20 % slower server was not found slower at p < 0.001 in 3 attempts: {seen:?}");
}

/// A/A calibration: pairs of identical runs compared by `doppio show` should be
/// "significant" at p < 0.01 about 1 % of the time. `doppio show` tests batch means
/// (`doppio_bench::stats`); the naive per-sample test is computed beside it from the same
/// reports and printed, for comparison. Measured on this 2-core machine (40 pairs of 1 s
/// runs, 80 comparisons; the two of a pair are nearly the same verdict): 3 of 80 with batch
/// means, 11 of 80 with the naive test; the earlier AR(1) correction gave 6-10 of 80.
///
/// The bound is a guard against gross miscalibration, not the calibration figure (that is
/// the count printed). A pair's two verdicts mostly agree, so 9 or more of 80 means about
/// 5 or more of 40 pairs: probability 0.007 at a true 3 % per pair, 0.05 at 5 % (both sets:
/// 0.00004 and 0.002). The machine's own drift is the limit: consecutive runs here differed by up
/// to 20 % in throughput when neighbours started or stopped between them, and no test on
/// the two runs alone can tell that from a real difference (hence a second set, below).
#[test]
fn a_a_comparisons_are_significant_at_p_below_0_01_about_1_percent_of_the_time() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _serial = serial();
    let base = delay_stub("{ exponential = \"1ms\" }");
    let addr = base.addr().to_string();
    let dir = scratch("calibration");
    // A second set of 40 pairs runs only when the first crosses the bound, and the test
    // fails only when both do: a neighbour that comes and goes during one set (the drift
    // above) should not fail CI, while a miscalibrated test (the naive one's 11-16 of 80,
    // every set) still does.
    let mut counts = Vec::new();
    for set in 0..2 {
        let significant = a_a_set(&addr, &dir.join(format!("set{set}")));
        counts.push(significant);
        if significant <= A_A_BOUND {
            return;
        }
    }
    panic!(
        "false verdicts at p < 0.01 in both sets of {} comparisons: {counts:?} (bound {A_A_BOUND})",
        2 * A_A_PAIRS
    );
}

/// Pairs of identical runs in one A/A set.
const A_A_PAIRS: usize = 40;
/// Most false verdicts (of `2 * A_A_PAIRS`) a well-calibrated test shows in one set.
const A_A_BOUND: usize = 8;

/// Runs one A/A set against the stub at `addr`, prints its counts and p-values, and
/// returns how many of its comparisons `doppio show` called significant at p < 0.01.
fn a_a_set(addr: &str, dir: &Path) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let (mut significant, mut naive) = (0, 0);
    let mut ps = Vec::new();
    for i in 0..A_A_PAIRS {
        let (a, b) = (
            dir.join(format!("a{i}.json")),
            dir.join(format!("b{i}.json")),
        );
        closed_run(addr, 4, "1s", "50ms", &a);
        closed_run(addr, 4, "1s", "50ms", &b);
        let (pt, pl) = show_p_values(&a, &b);
        ps.push((pt, pl));
        significant += usize::from(pt < 0.01) + usize::from(pl < 0.01);
        for figure in ["throughput_rps", "latency_mean_ns"] {
            let (x, y) = (full_samples(&a, figure), full_samples(&b, figure));
            naive += usize::from(welch_t_test_raw(&x, &y).p_value < 0.01);
        }
    }
    eprintln!(
        "A/A: {significant} of {} comparisons significant at p < 0.01 (naive per-sample \
         test: {naive}); p-values {ps:?}",
        2 * A_A_PAIRS
    );
    significant
}

/// `figure` of each full-length sample of a one-driver report (the last one may be
/// shorter or longer: left out here, as `doppio show` leaves out a short one).
fn full_samples(report: &Path, figure: &str) -> Vec<f64> {
    let j = json(report);
    let samples = j["backends"]["doppio"]["samples"]
        .as_array()
        .unwrap()
        .clone();
    let length = samples[0]["duration_s"].as_f64().unwrap();
    samples
        .iter()
        .filter(|s| s["duration_s"].as_f64() == Some(length))
        .filter(|s| s["requests"].as_u64() > s["errors"].as_u64())
        .map(|s| s[figure].as_f64().unwrap())
        .collect()
}

#[test]
fn the_bench_counts_agree_with_perf_stat_and_usr_bin_time() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _serial = serial();
    let stub = delay_stub("{ exponential = \"20us\" }");
    let addr = stub.addr().to_string();
    for driver in ["doppio", "doppio-uring"] {
        counts_agree_with_perf_stat_and_usr_bin_time(&addr, driver);
    }
}

/// One run of `driver` under `perf stat` and `/usr/bin/time`: the bench's own syscall and CPU
/// counts agree with theirs.
fn counts_agree_with_perf_stat_and_usr_bin_time(addr: &str, driver: &str) {
    let report = scratch(&format!("counters-{driver}")).join("r.json");
    let stat = report.with_extension("perf");
    // The node (the stub) is this process: named, so that the bench does not scan every
    // process's descriptors for the listener (some thousands of syscalls at start-up, outside
    // the measured segments but inside perf stat's count).
    let pid = std::process::id().to_string();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "time: %U %S"])
        .args([
            "perf",
            "stat",
            "-x",
            ",",
            "-e",
            "raw_syscalls:sys_enter",
            "-o",
        ])
        .arg(&stat)
        .arg(env!("CARGO_BIN_EXE_doppio"))
        .args([
            "run",
            "-w",
            "empty",
            addr,
            "--driver",
            driver,
            "-p",
            "8",
            // Long enough that the ~600 syscalls of start-up and shutdown (outside the
            // measured segments, inside perf stat's count) stay well below the 5 % bound
            // on a loaded machine (at 4 s they reached 5.9 % under a parallel build).
            "-d",
            "6s",
            "--warmup",
            "0s",
            "-q",
            "--server-pid",
            &pid,
            "-o",
        ])
        .arg(&report)
        .output()
        .expect("run /usr/bin/time perf stat doppio");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let b = &json(&report)["backends"][driver];
    let requests = b["requests"].as_f64().unwrap();
    // perf stat counts the whole process (start-up, connecting, writing the report too).
    let perf_text = std::fs::read_to_string(&stat).unwrap();
    let perf_syscalls: f64 = perf_text
        .lines()
        .find(|l| l.contains("raw_syscalls:sys_enter"))
        .and_then(|l| l.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {perf_text}"));
    let ours = b["syscalls_per_req"].as_f64().unwrap() * requests;
    let syscall_gap = (perf_syscalls - ours) / perf_syscalls;
    // /usr/bin/time: user and system seconds of the whole process (perf stat's are ~0).
    let line = stderr.lines().find(|l| l.starts_with("time: ")).unwrap();
    let secs: Vec<f64> = line[6..]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let time_cpu = secs[0] + secs[1];
    let our_cpu = b["cpu_us_per_req"].as_f64().unwrap() * requests / 1e6;
    let cpu_gap = (time_cpu - our_cpu) / time_cpu;
    eprintln!(
        "{driver}: {requests} requests: syscalls bench {ours:.0} vs perf stat {perf_syscalls:.0} \
         ({:.1} %); CPU bench {our_cpu:.3} s vs /usr/bin/time {time_cpu:.3} s ({:.1} %)",
        syscall_gap * 100.0,
        cpu_gap * 100.0
    );
    // The bench counts only the measured segment, so it may only be below, and by little.
    assert!(
        (0.0..0.05).contains(&syscall_gap),
        "{driver}: {syscall_gap}"
    );
    assert!((-0.02..0.10).contains(&cpu_gap), "{driver}: {cpu_gap}");
}

#[test]
fn a_hundred_thousand_concurrent_requests_on_a_slow_stub_stay_under_512_mib() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let _serial = serial();
    // Every answer 50 ms late: 100,000 fibers, at most 32,768 requests in flight on the one
    // connection, the rest waiting for a stream id. Measured: 307 MiB peak RSS (release and
    // debug builds alike, about 3 KiB per fiber).
    let stub = delay_stub("{ fixed = \"50ms\" }");
    let addr = stub.addr().to_string();
    for driver in ["doppio", "doppio-uring"] {
        a_hundred_thousand_concurrent_requests_with(&addr, driver);
    }
}

fn a_hundred_thousand_concurrent_requests_with(addr: &str, driver: &str) {
    let report = scratch(&format!("c100k-{driver}")).join("r.json");
    let out = doppio(&[
        "run",
        "-w",
        "empty",
        addr,
        "--driver",
        driver,
        "-p",
        "100000",
        // A count, not a time: every fiber sends twice, however slow the machine is.
        "-d",
        "200k",
        "--warmup",
        "0s",
        "-q",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let b = &json(&report)["backends"][driver];
    let rss = b["peak_rss_bytes"].as_u64().unwrap();
    eprintln!(
        "{driver}: {} requests, {} errors, peak RSS {:.1} MiB",
        b["requests"],
        b["errors"],
        rss as f64 / 1048576.0
    );
    assert_eq!(b["errors"], 0);
    assert_eq!(
        b["requests"].as_u64().unwrap(),
        200_000,
        "every iteration ran"
    );
    assert!(rss < 512 << 20, "{driver}: {rss} bytes");
}
