//! The nemesis's acknowledged-writes workload as a backend runs it (`doppio nemesis`): the
//! driver-neutral plan and result, which the adapters import (`super::nemesis_run`
//! dispatches to them). Each adapter maps its own driver's errors onto the history's
//! outcomes (answered, refused, unknown); nothing above the backends names a driver.
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

use super::driver::Driver;
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
