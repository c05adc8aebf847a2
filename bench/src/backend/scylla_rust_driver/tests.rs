//! The scylla backend's tests: errors mapped onto the bench's kinds, threads pinned,
//! settings mapped.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::sync::Arc;
use std::time::Duration;

use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::statement::SerialConsistency;

use super::error::classify;
use super::pins::Pins;
use super::profile::{load_balancing, serial_consistency};
use crate::backend::settings::{Locality, SerialConsistency as BenchSerial};
use crate::engine::error_kind::ErrorKind;

/// ScyllaDB's rate-limit error counts as the bench's kind `rate_limited`, as doppio's does,
/// so that `errors_by_kind` compares like with like.
#[test]
fn a_rate_limited_request_counts_as_rate_limited() {
    let e = ExecutionError::LastAttemptError(RequestAttemptError::DbError(
        DbError::RateLimitReached {
            op_type: scylla::errors::OperationType::Read,
            rejected_by_coordinator: false,
        },
        "Per-partition rate limit reached".into(),
    ));
    assert_eq!(classify(&e), ErrorKind::RateLimited);
}

/// Protocol v5's codes that scylla-rust-driver leaves unnamed count as the doppio backend
/// counts them: CDC_WRITE_FAILURE a write failure, CAS_WRITE_UNKNOWN a write timeout, any
/// other a server error.
#[test]
fn v5_codes_count_as_on_the_doppio_backend() {
    let of = |code| {
        classify(&ExecutionError::LastAttemptError(
            RequestAttemptError::DbError(DbError::Other(code), "test".into()),
        ))
    };
    assert_eq!(of(0x1600), ErrorKind::WriteFailure);
    assert_eq!(of(0x1700), ErrorKind::WriteTimeout);
    assert_eq!(of(0x7777), ErrorKind::ServerError);
}

/// The cores the calling thread may run on, as the kernel lists them (`0`, `0-1`).
fn allowed_cores() -> String {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_owned()
}

#[test]
fn tokio_workers_and_bench_threads_are_pinned_to_the_given_cores() {
    let pins = Arc::new(Pins::new(vec![0]).unwrap());
    let hook = pins.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .on_thread_start(move || hook.pin_next())
        .build()
        .unwrap();
    // Each task runs on a tokio worker: both workers are on core 0 only.
    let seen: Vec<String> = runtime.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|_| tokio::spawn(async { allowed_cores() }))
            .collect();
        let mut seen = Vec::new();
        for t in tasks {
            seen.push(t.await.unwrap());
        }
        seen
    });
    assert!(seen.iter().all(|c| c == "0"), "{seen:?}");
    let bench_thread = {
        let pins = pins.clone();
        std::thread::spawn(move || {
            pins.pin(0);
            allowed_cores()
        })
    };
    assert_eq!(bench_thread.join().unwrap(), "0");
    assert!(pins.check().is_ok());
    runtime.shutdown_timeout(Duration::from_secs(1));
}

#[test]
fn no_pin_leaves_threads_alone_and_a_missing_core_is_refused() {
    let before = std::thread::spawn(allowed_cores).join().unwrap();
    let pins = Pins::new(Vec::new()).unwrap();
    let after = std::thread::scope(|s| {
        s.spawn(|| {
            pins.pin(0);
            allowed_cores()
        })
        .join()
        .unwrap()
    });
    assert_eq!(after, before, "no core list: not pinned");
    let e = Pins::new(vec![100_000]).err().unwrap();
    assert!(
        e.message.contains("cannot pin a thread to core 100000"),
        "{e}"
    );
}

#[test]
fn serial_consistency_and_locality_map_to_scylla_settings() {
    assert_eq!(
        serial_consistency(BenchSerial::Serial),
        SerialConsistency::Serial
    );
    assert_eq!(
        serial_consistency(BenchSerial::LocalSerial),
        SerialConsistency::LocalSerial
    );
    assert!(
        load_balancing(&Locality::default()).is_none(),
        "the default policy"
    );
    let locality = Locality::new(Some("dc1".into()), Some("r1".into())).unwrap();
    let policy = format!("{:?}", load_balancing(&locality).unwrap());
    assert!(policy.contains("dc1") && policy.contains("r1"), "{policy}");
}
