//! Driver-side counters of a backend ([`DriverCounters`]: requests, flushes, bytes, retries,
//! per node and per ScyllaDB shard; [`UringEnters`], doppio's own runtime's
//! `io_uring_enter` calls), and [`add_counts`], adding per-shard counts up.

use std::collections::BTreeMap;

/// Driver-side counters of a backend (doppio only: scylla-rust-driver does not expose them).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DriverCounters {
    /// Requests written.
    pub requests: u64,
    /// Flushes (one write of coalesced frames each).
    pub flushes: u64,
    /// Reads from the sockets.
    pub reads: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Retries the retry policy asked for (each request counted once however many).
    #[serde(default)]
    pub retries: u64,
    /// Statements prepared again on a node that had forgotten them (UNPREPARED).
    #[serde(default)]
    pub reprepares: u64,
    /// Answers that carried a ScyllaDB tablet's routing: requests that reached a node or
    /// shard holding no replica of their tablet (each taught that doppio shard the tablet).
    #[serde(default)]
    pub tablet_misroutes: u64,
    /// Requests sent to each node (address), retries and speculative ones included.
    #[serde(default)]
    pub nodes: BTreeMap<String, u64>,
    /// Requests sent to each ScyllaDB shard of each node (address: one count per shard),
    /// from the driver's per-connection counters grouped by the shard each connection
    /// landed on; empty for nodes without ScyllaDB shards (Cassandra).
    #[serde(default)]
    pub scylla_shards: BTreeMap<String, Vec<u64>>,
    /// doppio on its own io_uring runtime: its shards' `io_uring_enter` calls by reason
    /// (`None` on glommio).
    #[serde(default)]
    pub uring_enters: Option<UringEnters>,
}

/// `io_uring_enter` calls of doppio's own runtime (every shard), by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UringEnters {
    /// Every enter (at most one per loop turn).
    pub total: u64,
    /// Enters that waited: the shard had nothing to run (or, under SQPOLL, waited for room
    /// in a full submission queue).
    pub waiting: u64,
    /// Enters that woke the SQPOLL thread (it slept with submissions queued); a waiting
    /// enter may carry it too.
    pub sq_wakeup: u64,
    /// Enters that did not wait, made to flush a completion-queue overflow.
    pub cq_overflow: u64,
    /// Waiting enters that ended with an I/O completion that woke a task (answers' bytes).
    /// With the three below, every waiting enter by why it woke.
    #[serde(default)]
    pub woke_by_completion: u64,
    /// Waiting enters that ended with a wake from another thread.
    #[serde(default)]
    pub woke_by_remote: u64,
    /// Waiting enters that ended with a timer due (a paced request's release, a timeout).
    #[serde(default)]
    pub woke_by_timer: u64,
    /// Waiting enters that ended with nothing to do (a batched wait's first half that ran
    /// out, completions nobody waited for).
    #[serde(default)]
    pub woke_empty: u64,
}

impl UringEnters {
    /// What was counted from `before` to `self`.
    pub fn since(&self, before: &UringEnters) -> UringEnters {
        UringEnters {
            total: self.total.saturating_sub(before.total),
            waiting: self.waiting.saturating_sub(before.waiting),
            sq_wakeup: self.sq_wakeup.saturating_sub(before.sq_wakeup),
            cq_overflow: self.cq_overflow.saturating_sub(before.cq_overflow),
            woke_by_completion: self
                .woke_by_completion
                .saturating_sub(before.woke_by_completion),
            woke_by_remote: self.woke_by_remote.saturating_sub(before.woke_by_remote),
            woke_by_timer: self.woke_by_timer.saturating_sub(before.woke_by_timer),
            woke_empty: self.woke_empty.saturating_sub(before.woke_empty),
        }
    }

    /// Both counts added.
    pub fn plus(&self, o: &UringEnters) -> UringEnters {
        UringEnters {
            total: self.total + o.total,
            waiting: self.waiting + o.waiting,
            sq_wakeup: self.sq_wakeup + o.sq_wakeup,
            cq_overflow: self.cq_overflow + o.cq_overflow,
            woke_by_completion: self.woke_by_completion + o.woke_by_completion,
            woke_by_remote: self.woke_by_remote + o.woke_by_remote,
            woke_by_timer: self.woke_by_timer + o.woke_by_timer,
            woke_empty: self.woke_empty + o.woke_empty,
        }
    }
}

/// Adds `counts` to `total` element by element (growing it as needed).
pub(crate) fn add_counts(total: &mut Vec<u64>, counts: &[u64]) {
    if total.len() < counts.len() {
        total.resize(counts.len(), 0);
    }
    for (t, n) in total.iter_mut().zip(counts) {
        *t += n;
    }
}
