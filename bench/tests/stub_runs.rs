//! The `doppio` binary against the stub server's faults (perf/stub, started in this
//! process): server errors counted by kind while the run goes on, and coordinated omission:
//! a stall in a fixed-rate run shows in the latency from the due time and not in the
//! service time, and the check that says so fails on the service time.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use doppio_stub::{Rules, Shape, Stub, StubConfig, StubHandle};

fn stub(rules: &str) -> StubHandle {
    Stub::start(StubConfig {
        shape: Shape::default(),
        rules: Rules::parse(rules).unwrap(),
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap()
}

fn doppio(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(args)
        .output()
        .expect("run the doppio binary");
    eprintln!(
        "$ doppio {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("doppio-stub-runs-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn overloaded_answers_are_counted_by_kind_and_the_run_goes_on_with_both_backends() {
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
        "doppio,scylla",
        "-d",
        "2s",
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
    for driver in ["doppio", "scylla"] {
        let b = &j["backends"][driver];
        let requests = b["requests"].as_u64().unwrap();
        let overloaded = b["errors_by_kind"]["overloaded"].as_u64().unwrap_or(0);
        let share = overloaded as f64 / requests as f64;
        eprintln!("{driver}: {overloaded} overloaded of {requests} requests ({share:.3})");
        assert!(requests > 1000, "{driver}: {requests} requests");
        assert_eq!(b["errors"].as_u64().unwrap(), overloaded, "{driver}");
        // One EXECUTE in ten, counted over both backends' requests together.
        assert!((0.08..=0.12).contains(&share), "{driver}: {share}");
        assert!(b["first_errors"]["overloaded"]
            .as_str()
            .unwrap()
            .contains("shedding load"));
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
