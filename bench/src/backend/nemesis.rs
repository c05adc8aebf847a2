//! The nemesis's acknowledged-writes workload as a backend runs it (`doppio nemesis`): the
//! driver-neutral plan and result, and the dispatch to the adapter that runs it. Each
//! adapter maps its own driver's errors onto the history's outcomes (answered, refused,
//! unknown); nothing above this module names a driver.
//!
//! The workload: a table of one row per written value (`k bigint, v bigint, PRIMARY KEY (k,
//! v)`), every write a distinct value (a run-wide sequence number) to the key `value %
//! keys`, at `QUORUM`, sent once (no retry: a refusal after a retried attempt whose answer
//! was lost would be no refusal); then each key read back at `ALL`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::doppio;
use super::driver::Driver;
use crate::engine::phase::BackendError;
use crate::nemesis::history::Op;

/// Where the workload's table is, and how to reach it.
#[derive(Debug, Clone)]
pub(crate) struct WritesTarget {
    /// Which backend.
    pub(crate) driver: Driver,
    /// The contact point.
    pub(crate) node: SocketAddr,
    /// The keyspace (created with replication factor `replication_factor` if absent).
    pub(crate) keyspace: String,
    /// The table, created for this run.
    pub(crate) table: String,
    /// The keyspace's replication factor.
    pub(crate) replication_factor: usize,
    /// Each request's timeout.
    pub(crate) request_timeout: Duration,
}

/// What the writers do, and until when.
#[derive(Debug, Clone)]
pub(crate) struct WritesPlan {
    /// The keys the values are spread over (`value % keys`).
    pub(crate) keys: i64,
    /// Writes in flight at once (one fiber each; a fiber is the history's process).
    pub(crate) concurrency: usize,
    /// The run's clock: the history's nanoseconds count from here.
    pub(crate) epoch: Instant,
    /// No write is sent after this (those in flight are waited for).
    pub(crate) until: Instant,
    /// Set to stop early (Ctrl-C, or the fault loop failed).
    pub(crate) stop: Arc<AtomicBool>,
}

/// What the writers recorded.
#[derive(Debug, Default)]
pub(crate) struct WritesRun {
    /// Every write, in the order they completed.
    pub(crate) ops: Vec<Op>,
}

/// What the read-back found: every key it could read, with its values, and per key it
/// could not, the last error.
#[derive(Debug, Default)]
pub(crate) struct ReadBackRun {
    /// The keys read, with their values.
    pub(crate) keys: BTreeMap<i64, Vec<i64>>,
    /// The keys not read (their read failed every attempt), with the last error.
    pub(crate) unread: BTreeMap<i64, String>,
}

/// The keyspace (if absent) and the run's table created, schema agreement waited for.
pub(crate) fn create_table(target: &WritesTarget) -> Result<(), BackendError> {
    match target.driver {
        Driver::Doppio | Driver::DoppioUring => doppio::nemesis::create_table(target),
        other => Err(unsupported(other)),
    }
}

/// Runs the writers until `plan.until` (blocking this thread).
pub(crate) fn write(target: &WritesTarget, plan: &WritesPlan) -> Result<WritesRun, BackendError> {
    match target.driver {
        Driver::Doppio | Driver::DoppioUring => doppio::nemesis::write(target, plan),
        other => Err(unsupported(other)),
    }
}

/// Reads keys `0..keys` back at `ALL`, each up to `attempts` times (`pause` apart).
pub(crate) fn read_back(
    target: &WritesTarget,
    keys: i64,
    attempts: u32,
    pause: Duration,
) -> Result<ReadBackRun, BackendError> {
    match target.driver {
        Driver::Doppio | Driver::DoppioUring => {
            doppio::nemesis::read_back(target, keys, attempts, pause)
        }
        other => Err(unsupported(other)),
    }
}

/// Whether `driver` runs the nemesis's workload in this slice.
pub(crate) fn supported(driver: Driver) -> bool {
    matches!(driver, Driver::Doppio | Driver::DoppioUring)
}

fn unsupported(driver: Driver) -> BackendError {
    BackendError {
        driver: driver.name(),
        message: "the nemesis runs on doppio and doppio-uring only (for now)".to_owned(),
    }
}
