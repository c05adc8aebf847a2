//! Per-session (so per-shard) counters: requests, retries, errors by kind, and the traffic of
//! the session's connections. Plain `Cell`s on the shard: no atomic on the request path.

use std::cell::Cell;

use crate::connection::ConnectionStats;
use crate::error::{Error, ErrorKind};

/// Failed requests by kind (after retries: each counts the error the caller saw), indexed
/// by [`ErrorKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCounts([u64; ErrorKind::ALL.len()]);

impl Default for ErrorCounts {
    fn default() -> Self {
        Self([0; ErrorKind::ALL.len()])
    }
}

impl ErrorCounts {
    /// Counts `e` under its kind.
    pub fn count(&mut self, e: &Error) {
        self.0[e.kind() as usize] += 1;
    }

    /// The errors of `kind`.
    pub fn get(&self, kind: ErrorKind) -> u64 {
        self.0[kind as usize]
    }

    /// The kinds that occurred, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        ErrorKind::ALL
            .iter()
            .zip(self.0)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (*k, n))
    }

    /// All errors.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// A session's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionStats {
    /// Calls of query, execute and batch (each counted once, however many retries).
    pub requests: u64,
    /// Retries the retry policy asked for.
    pub retries: u64,
    /// Prepared statements prepared again because a node had forgotten them (UNPREPARED,
    /// e.g. after a restart) or their result columns had changed; each is followed by one
    /// more execution, which is not counted as a retry.
    pub reprepares: u64,
    /// Answers that carried a ScyllaDB tablet's routing (`tablets-routing-v1`): requests
    /// that reached a node or shard holding no replica of their tablet (the node served
    /// them). Each taught this shard the tablet.
    pub tablet_payloads: u64,
    /// Of those, the payloads that could not be read or used (left out).
    pub tablet_payloads_unreadable: u64,
    /// Calls that returned an error, by kind.
    pub errors: ErrorCounts,
    /// Traffic of the session's connections, open and closed: bytes in and out, flushes,
    /// reads, frames, timeouts, and the in-flight high-water mark.
    pub connections: ConnectionStats,
}

/// The session's own counters, each updated in place on the request path (one `Cell` add
/// per request, one more on failure; no copy of the whole record).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    requests: Cell<u64>,
    retries: Cell<u64>,
    reprepares: Cell<u64>,
    tablet_payloads: Cell<u64>,
    tablet_payloads_unreadable: Cell<u64>,
    errors: [Cell<u64>; ErrorKind::ALL.len()],
}

impl Counters {
    /// Counts one request that ended after `retries` retries, failed with `error` if any.
    pub(crate) fn record(&self, error: Option<&Error>, retries: u32) {
        self.requests.set(self.requests.get() + 1);
        if retries > 0 {
            self.retries.set(self.retries.get() + u64::from(retries));
        }
        if let Some(e) = error {
            let slot = &self.errors[e.kind() as usize];
            slot.set(slot.get() + 1);
        }
    }

    /// Counts one tablet payload received (`taken`: read and used).
    pub(crate) fn tablet_payload(&self, taken: bool) {
        self.tablet_payloads.set(self.tablet_payloads.get() + 1);
        if !taken {
            let bad = &self.tablet_payloads_unreadable;
            bad.set(bad.get() + 1);
        }
    }

    /// Counts one re-prepare (the rare healing path).
    pub(crate) fn reprepared(&self) {
        self.reprepares.set(self.reprepares.get() + 1);
    }

    /// The counters, with `connections` as the traffic.
    pub(crate) fn snapshot(&self, connections: ConnectionStats) -> SessionStats {
        let mut errors = ErrorCounts::default();
        for (n, c) in errors.0.iter_mut().zip(&self.errors) {
            *n = c.get();
        }
        SessionStats {
            requests: self.requests.get(),
            retries: self.retries.get(),
            reprepares: self.reprepares.get(),
            tablet_payloads: self.tablet_payloads.get(),
            tablet_payloads_unreadable: self.tablet_payloads_unreadable.get(),
            errors,
            connections,
        }
    }
}
