//! Sequences and batches of the `doppio` binary on the stub server (perf/stub, started in
//! this process), on every backend: a `[[run]]` sequence of three steps whose second the
//! stub always refuses, a single statement, and an unlogged batch of `repeat = 4`. Which
//! `[[run]]` entry an iteration runs is a pure function of its number, so every count is
//! computed exactly with the bench's own `Workload::pick`:
//!
//! - a sequence's steps are entries of their own (`order.first`, ...), the failing step
//!   stops its iteration (the third step is never sent), and the sequence's own entry
//!   (`kind = "sequence"`) counts every iteration as an error;
//! - a batch is one request per iteration (`kind = "unlogged_batch"`);
//! - the backend's requests are the steps', the single statement's and the batches'.
//!
//! And `idempotent = true` reaching doppio's retry policy (a write timeout retried for the
//! statement marked, not for the other). No Cassandra needed.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use crate::support;
use doppio_bench::workload::Workload;
use serde_json::Value;
use support::{doppio, json, scratch_dir, CountedRun, ALL_DRIVERS};

const WORKLOAD: &str = r#"
name = "sequences"
description = "a sequence that fails at its second step, a statement, a batch"

[[run]]
name = "order"
weight = 2
[[run.step]]
name = "first"
statement = "SELECT key FROM system.local WHERE key = 'FIRST'"
[[run.step]]
name = "second"
statement = "SELECT key FROM system.local WHERE key = 'SECOND'"
[[run.step]]
name = "third"
statement = "SELECT key FROM system.local WHERE key = 'THIRD'"

[[run]]
name = "single"
weight = 1
statement = "SELECT key FROM system.local WHERE key = 'SINGLE'"

[[run]]
name = "fill"
weight = 1
batch = "unlogged"
repeat = 4
statement = "UPDATE system.local SET key = 'BATCHED' WHERE key = ?"
args = ["i"]
"#;

const ITERATIONS: u64 = 3000;

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

#[test]
fn sequence_steps_and_batches_are_counted_exactly_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let rules = r#"
[[rule]]
name = "the second step fails"
when = { opcode = "EXECUTE", statement = "SECOND" }
then = { error = { code = "overloaded", message = "the stub refuses SECOND" } }
"#;
    let stub = support::stub_with_rules(rules);
    let addr = stub.addr().to_string();
    let dir = scratch_dir("sequences");
    let workload = dir.join("sequences.toml");
    std::fs::write(&workload, WORKLOAD).unwrap();
    let report = dir.join("report.json");
    let out = CountedRun::new(&addr, ALL_DRIVERS, ITERATIONS, 8, &report)
        .args(&["-w", workload.to_str().unwrap()])
        .run();
    let text = String::from_utf8_lossy(&out.stdout);
    // Request errors are measured, not fatal: the run goes on and exits 0.
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = Workload::from_toml("sequences", WORKLOAD, &[]).unwrap();
    let mut n = [0u64; 3];
    for i in 0..ITERATIONS {
        n[w.pick(i)] += 1;
    }
    let [seq, single, batch] = n;
    assert!(seq > 0 && single > 0 && batch > 0, "{n:?}");
    let j = json(&report);
    for d in ["doppio", "doppio-uring", "scylla"] {
        let b = &j["backends"][d];
        let st = b["statements"].as_array().unwrap();
        let names: Vec<&str> = st.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "order.first",
                "order.second",
                "order.third",
                "order",
                "single",
                "fill"
            ],
            "{d}"
        );
        let figures = |k: usize| {
            (
                count(&st[k]["requests"]),
                count(&st[k]["errors"]),
                st[k]["kind"].as_str(),
            )
        };
        assert_eq!(figures(0), (seq, 0, None), "{d} first");
        assert_eq!(figures(1), (seq, seq, None), "{d} second");
        assert_eq!(figures(2), (0, 0, None), "{d} third: never sent");
        assert_eq!(figures(3), (seq, seq, Some("sequence")), "{d} order");
        assert_eq!(
            st[3]["errors_by_kind"]["overloaded"], seq,
            "{d}: the step's kind"
        );
        assert_eq!(figures(4), (single, 0, None), "{d} single");
        assert_eq!(figures(5), (batch, 0, Some("unlogged_batch")), "{d} fill");
        assert!(st[5]["cql"].as_str().unwrap().ends_with("(x4)"), "{d}");
        assert_eq!(count(&b["requests"]), 2 * seq + single + batch, "{d}");
        assert_eq!(count(&b["errors"]), seq, "{d}");
        assert!(st.iter().all(|s| s.get("not_applied").is_none()), "{d}");
    }
    assert!(
        text.contains("order: sequence (requests: its iterations"),
        "{text}"
    );
    assert!(text.contains("fill: unlogged batch"), "{text}");
}

/// `idempotent = true` reaches every backend's retry policy: with `--retries 1`, a write
/// timeout of an idempotent statement is retried on the same node (and the stub, which times
/// out every second attempt, answers the retry), one of a statement not marked stays an
/// error. scylla-rust-driver runs doppio's decisions (`backend/scylla_rust_driver/retry.rs`); with its
/// own default policy it would not have retried the write timeout (batch-log writes only).
#[test]
fn idempotent_statements_are_retried_after_a_write_timeout_and_others_are_not() {
    let _turn = doppio_test_support::file_turn(module_path!());
    const IDEMPOTENT: &str = r#"
[[run]]
name = "safe"
idempotent = true
statement = "SELECT key FROM system.local WHERE key = 'RETRIED'"

[[run]]
name = "unsafe"
statement = "SELECT key FROM system.local WHERE key = 'ONCE'"
"#;
    let rules = r#"
[[rule]]
name = "every second RETRIED times out"
when = { opcode = "EXECUTE", statement = "RETRIED", every = 2 }
then = { error = { code = "write_timeout", message = "the stub times out" } }

[[rule]]
name = "every second ONCE times out"
when = { opcode = "EXECUTE", statement = "ONCE", every = 2 }
then = { error = { code = "write_timeout", message = "the stub times out" } }
"#;
    let dir = scratch_dir("idempotent");
    let workload = dir.join("idempotent.toml");
    std::fs::write(&workload, IDEMPOTENT).unwrap();
    for driver in ["doppio", "doppio-uring", "scylla"] {
        // A stub of its own: its "every second" counts from the backend's first request.
        let stub = support::stub_with_rules(rules);
        let addr = stub.addr().to_string();
        let report = dir.join(format!("{driver}.json"));
        let out = doppio(&[
            "run",
            "-w",
            workload.to_str().unwrap(),
            &addr,
            "--driver",
            driver,
            "--retries",
            "1",
            "-d",
            "1000",
            "--segments",
            "1",
            "--warmup",
            "0",
            // One fiber: the stub's "every second" counts one request after another.
            "-p",
            "1",
            "-q",
            "-o",
            report.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{driver}: {text}");
        assert!(
            text.contains("idempotent    safe (a lost answer may be retried)"),
            "{text}"
        );
        let j = json(&report);
        assert_eq!(j["config"]["idempotent"], serde_json::json!(["safe"]));
        let b = &j["backends"][driver];
        let st = b["statements"].as_array().unwrap();
        let (safe, unsafe_) = (&st[0], &st[1]);
        assert_eq!(safe["name"], "safe");
        assert_eq!(count(&safe["errors"]), 0, "{driver}: every timeout retried");
        let n = count(&unsafe_["requests"]);
        assert!(n > 0, "{driver}");
        assert_eq!(
            count(&unsafe_["errors"]),
            n / 2,
            "{driver}: every second attempt of `unsafe` failed, none retried"
        );
        if driver == "scylla" {
            // It counts no retries (that needs its `metrics` feature).
            continue;
        }
        // Attempts 2, 4, 6, ... time out: every request but the first is retried once.
        assert_eq!(
            count(&b["retries"]),
            count(&safe["requests"]) - 1,
            "{driver}: one retry per `safe` request but the first"
        );
    }
}
