//! The pool proper ([`NodePool`]): its slots, picking an open connection (round-robin, or
//! on a token's ScyllaDB shard), where a slot's next connection should land, its counters,
//! and closing or retiring it, or one connection that left its slot.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::connection::{ConnectFailure, Connection, ConnectionError, ConnectionStats};
use crate::routing::murmur3::Token;
use crate::routing::sharding::{Sharder, ShardingInfo};
use crate::telemetry::event;

use super::backoff::{Backoff, Jitter};
use super::connect::{ConnectFn, ShardTarget};
use super::stats::PoolStats;

/// The connections of one shard to one node.
pub(crate) struct NodePool {
    pub(super) addr: SocketAddr,
    pub(super) slots: RefCell<Vec<Option<Connection>>>,
    pub(super) next: Cell<usize>,
    pub(super) connect: ConnectFn,
    pub(super) backoff: Backoff,
    pub(super) jitter: Jitter,
    pub(super) last_error: RefCell<Option<ConnectionError>>,
    pub(super) stats: Cell<PoolStats>,
    /// Traffic of the connections that have closed (the open ones count their own).
    pub(super) retired: Cell<ConnectionStats>,
    pub(super) stopped: Cell<bool>,
    /// Bumped by [`NodePool::reconnect_now`]: watchers in a backoff sleep wake and retry.
    pub(super) kick: Cell<u64>,
    /// Watchers sleeping in a backoff (woken by a kick or a close).
    pub(super) sleepers: RefCell<Vec<std::task::Waker>>,
    /// Connections wanted per ScyllaDB shard (the pool's size).
    pub(super) per_shard: usize,
    /// The node's sharding, once a connection reported it (`None`: Cassandra, or not yet).
    pub(super) sharding: Cell<Option<ShardingInfo>>,
    /// Set when a connection aimed at the shard-aware port was connected to the plain port
    /// (the port did not answer and the connect fell back): until then, later ones go to
    /// the plain port at once; after it, they try the shard-aware port again.
    pub(super) plain_until: Cell<Option<Instant>>,
    /// How long [`NodePool::plain_until`] lasts after a fallback.
    pub(super) shard_aware_retry: Cell<Duration>,
    /// Requests sent by the closed connections, per ScyllaDB shard they had landed on.
    pub(super) retired_by_shard: RefCell<Vec<u64>>,
    /// Connections that left their slot (a wrong-shard one, replaced), open until their
    /// requests in flight are answered or their request timeout passes.
    pub(super) draining: RefCell<Vec<Connection>>,
}

impl std::fmt::Debug for NodePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodePool")
            .field("addr", &self.addr)
            .field("open", &self.open_count())
            .field("stats", &self.stats.get())
            .finish()
    }
}

impl NodePool {
    /// Sets how long new connections skip the shard-aware port after a fallback.
    pub(crate) fn set_shard_aware_retry(&self, retry: Duration) {
        self.shard_aware_retry.set(retry);
    }

    /// True while new connections go to the plain port (a fallback not long ago).
    fn plain_for_now(&self) -> bool {
        self.plain_until
            .get()
            .is_some_and(|until| doppio_rt::now() < until)
    }

    /// The node's sharding, if a connection reported it.
    pub(crate) fn sharding(&self) -> Option<ShardingInfo> {
        self.sharding.get()
    }

    /// Requests sent per ScyllaDB shard (the shard each connection landed on), by every
    /// connection this pool opened, open or closed; empty for an unsharded node.
    pub(crate) fn requests_by_shard(&self) -> Vec<u64> {
        let Some(info) = self.sharding.get() else {
            return Vec::new();
        };
        let mut counts = self.retired_by_shard.borrow().clone();
        counts.resize(usize::from(info.sharder.nr_shards.get()), 0);
        let slots = self.slots.borrow();
        let draining = self.draining.borrow();
        for conn in slots.iter().flatten().chain(draining.iter()) {
            if let Some(at) = conn
                .sharding()
                .and_then(|s| counts.get_mut(usize::from(s.shard)))
            {
                *at += conn.stats().requests;
            }
        }
        counts
    }

    /// An open connection of the ScyllaDB shard that owns `token` when the node is sharded
    /// and such a connection is open; else any open connection, round-robin (as
    /// [`NodePool::pick`]).
    #[inline]
    pub(crate) fn pick_for(&self, token: Option<Token>) -> Option<Connection> {
        match (self.sharding.get(), token) {
            (Some(info), Some(token)) => self.pick_on_shard(info.sharder.shard_of(token)),
            _ => self.pick(),
        }
    }

    /// An open connection of ScyllaDB shard `shard` (a tablet's replica there) when the
    /// node is sharded and one is open; else any open connection (as [`NodePool::pick`]).
    #[inline]
    pub(crate) fn pick_on_shard(&self, shard: u16) -> Option<Connection> {
        if let Some(info) = self.sharding.get() {
            if shard < info.sharder.nr_shards.get() {
                if let Some(conn) = self.pick_shard(info.sharder, shard) {
                    return Some(conn);
                }
            }
        }
        self.pick()
    }

    /// An open connection that landed on ScyllaDB shard `shard`: the slots meant for it
    /// first (round-robin among them), then any other slot.
    fn pick_shard(&self, sharder: Sharder, shard: u16) -> Option<Connection> {
        let slots = self.slots.borrow();
        let nr = usize::from(sharder.nr_shards.get());
        let on_shard =
            |c: &Connection| c.is_open() && c.sharding().is_some_and(|s| s.shard == shard);
        let start = self.next.get();
        for k in 0..self.per_shard {
            let idx = usize::from(shard) + ((start + k) % self.per_shard) * nr;
            if let Some(Some(conn)) = slots.get(idx) {
                if on_shard(conn) {
                    self.next.set(start.wrapping_add(k + 1));
                    return Some(conn.clone());
                }
            }
        }
        slots.iter().flatten().find(|c| on_shard(c)).cloned()
    }

    /// True if `conn` reported a ScyllaDB shard other than slot `slot`'s (`slot` modulo the
    /// node's shards); false while the node's shards are not known.
    pub(super) fn off_shard(&self, slot: usize, conn: &Connection) -> bool {
        self.sharding.get().is_some()
            && conn.sharding().is_some()
            && !self.on_slot_shard(slot, conn)
    }

    /// True if `conn` landed on slot `slot`'s ScyllaDB shard of the node's sharding as the
    /// pool knows it (a connection that reports other shards does not fit).
    pub(super) fn on_slot_shard(&self, slot: usize, conn: &Connection) -> bool {
        match (self.sharding.get(), conn.sharding()) {
            (Some(info), Some(s)) => {
                s.sharder == info.sharder
                    && usize::from(s.shard) == slot % usize::from(info.sharder.nr_shards.get())
            }
            _ => false,
        }
    }

    /// Notes whether `conn`, aimed at `target`, fell back from the shard-aware port to the
    /// plain port (the port did not answer; judged by the port, not by the shard it landed
    /// on, which the node may happen to pick right): new connections then go to the plain
    /// port for `shard_aware_retry`.
    pub(super) fn note_fallback(&self, conn: &Connection, target: Option<ShardTarget>) {
        if let Some(port) = target.and_then(|t| t.shard_aware_port) {
            if conn.dialed_port() != port {
                self.plain_until
                    .set(Some(doppio_rt::now() + self.shard_aware_retry.get()));
                self.bump(|s| s.shard_aware_fallbacks += 1);
            }
        }
    }

    /// When new connections will try the shard-aware port again, if the node has one and
    /// they skip it for now (a fallback not long ago).
    pub(super) fn plain_port_until(&self) -> Option<Instant> {
        let has_port = self
            .sharding
            .get()
            .is_some_and(|i| i.shard_aware_port.is_some());
        self.plain_until
            .get()
            .filter(|&until| has_port && doppio_rt::now() < until)
    }

    /// True if `conn` landed on a ScyllaDB shard other than slot `slot`'s while the
    /// shard-aware port is there to reach the right one.
    pub(super) fn misplaced(&self, slot: usize, conn: &Connection) -> bool {
        match (self.target(slot), conn.sharding()) {
            (Some(t), Some(s)) => t.shard_aware_port.is_some() && s.shard != t.shard,
            _ => false,
        }
    }

    /// Where slot `slot`'s next connection should land (`None`: unsharded, anywhere).
    pub(super) fn target(&self, slot: usize) -> Option<ShardTarget> {
        let info = self.sharding.get()?;
        let nr = usize::from(info.sharder.nr_shards.get());
        Some(ShardTarget {
            shard: (slot % nr) as u16,
            sharder: info.sharder,
            shard_aware_port: info.shard_aware_port.filter(|_| !self.plain_for_now()),
            random: self.jitter.next(),
        })
    }

    /// True if this shard has evidence the node is down: no connection is open and one has
    /// been tried and failed, or has closed. A pool still making its first attempts is not
    /// known down (its node may well be up: the session does not wait for every pool).
    pub(crate) fn known_down(&self) -> bool {
        let s = self.stats.get();
        !self.is_up() && (s.failed_attempts > 0 || s.closed > 0 || self.stopped.get())
    }

    /// Open connections right now.
    pub(crate) fn open_count(&self) -> usize {
        self.slots
            .borrow()
            .iter()
            .flatten()
            .filter(|c| c.is_open())
            .count()
    }

    /// True if at least one connection is open (the node is up for this shard).
    pub(crate) fn is_up(&self) -> bool {
        self.slots.borrow().iter().flatten().any(|c| c.is_open())
    }

    /// The open connections (for control-path work on each, such as `USE`).
    pub(crate) fn open_connections(&self) -> Vec<Connection> {
        self.slots
            .borrow()
            .iter()
            .flatten()
            .filter(|c| c.is_open())
            .cloned()
            .collect()
    }

    /// Requests in flight on the open connections, those draining included (orphans
    /// included).
    pub(crate) fn in_flight(&self) -> usize {
        let slots = self.slots.borrow();
        let draining = self.draining.borrow();
        slots
            .iter()
            .flatten()
            .chain(draining.iter())
            .map(Connection::in_flight)
            .sum()
    }

    /// Ends the backoff of every watcher waiting to reconnect: they try at once, and their
    /// next failure starts the backoff from the base again (the node was reported up).
    pub(crate) fn reconnect_now(&self) {
        self.kick.set(self.kick.get() + 1);
        for w in self.sleepers.borrow_mut().drain(..) {
            w.wake();
        }
    }

    /// Counters.
    pub(crate) fn stats(&self) -> PoolStats {
        self.stats.get()
    }

    /// Traffic of every connection this pool has opened, open, draining or closed.
    pub(crate) fn connection_stats(&self) -> ConnectionStats {
        let mut total = self.retired.get();
        let slots = self.slots.borrow();
        let draining = self.draining.borrow();
        for conn in slots.iter().flatten().chain(draining.iter()) {
            total.add(&conn.stats());
        }
        total
    }

    /// Why the last connect attempt failed, if the last one did.
    pub(crate) fn last_error(&self) -> Option<ConnectionError> {
        self.last_error.borrow().clone()
    }

    /// An open connection, round-robin; `None` if none is open (the node is down or still
    /// connecting).
    pub(crate) fn pick(&self) -> Option<Connection> {
        let slots = self.slots.borrow();
        let n = slots.len();
        let start = self.next.get();
        for i in 0..n {
            let idx = (start + i) % n;
            if let Some(conn) = &slots[idx] {
                if conn.is_open() {
                    self.next.set(idx + 1);
                    return Some(conn.clone());
                }
            }
        }
        None
    }

    /// Waits until at least one connection is open, or `timeout` passes; on timeout returns
    /// the last connect error.
    pub(crate) async fn wait_ready(&self, timeout: Duration) -> Result<(), ConnectionError> {
        let deadline = doppio_rt::now() + timeout;
        loop {
            if self.open_count() > 0 {
                return Ok(());
            }
            if doppio_rt::now() >= deadline {
                return Err(self.last_error().unwrap_or(ConnectionError::Connect {
                    addr: self.addr,
                    failure: ConnectFailure::NotWithin(timeout),
                }));
            }
            doppio_rt::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Closes every connection, those draining too (requests in flight on them fail with
    /// `reason`), and stops the watchers.
    pub(crate) fn close(&self, reason: &str) {
        self.stopped.set(true);
        for conn in self.slots.borrow_mut().iter_mut().filter_map(Option::take) {
            conn.close(reason);
        }
        // Each one's task counts it as it closes (and takes it off the list).
        let draining = self.draining.borrow().clone();
        for conn in draining {
            conn.close(reason);
        }
    }

    /// Retires the pool of a node that left the cluster: nothing reconnects and no request
    /// picks its connections any more, but each is closed only once the requests in flight
    /// on it have been answered, or after `grace` (then they fail with `reason`). A node
    /// that is decommissioned answers until it stops; closing at once failed the requests
    /// it was still serving (3 per departure in a bench run against Cassandra).
    ///
    /// One task per connection still busy, on a topology change: never on the request path.
    pub(crate) fn retire(&self, reason: &'static str, grace: Duration) {
        self.stopped.set(true);
        for conn in self.slots.borrow_mut().iter_mut().filter_map(Option::take) {
            if conn.in_flight() == 0 {
                conn.close(reason);
            } else {
                doppio_rt::spawn_local(close_when_drained(conn, reason, grace)).detach();
            }
        }
    }

    /// Takes `conn`, which left slot `slot`, out of service: no request picks it any more;
    /// it is closed once its requests in flight have been answered, or after its request
    /// timeout (then they fail with `reason`), and counted as closed then. One task per
    /// connection replaced: never on the request path.
    pub(super) fn retire_connection(
        self: &Rc<Self>,
        slot: usize,
        conn: Connection,
        reason: &'static str,
    ) {
        self.draining.borrow_mut().push(conn.clone());
        let pool = Rc::downgrade(self);
        let grace = conn.config().request_timeout;
        doppio_rt::spawn_local(async move {
            close_when_drained(conn.clone(), reason, grace).await;
            let why = conn.wait_closed().await;
            if let Some(p) = pool.upgrade() {
                p.draining.borrow_mut().retain(|c| !c.same(&conn));
                p.account_closed(slot, &conn, &why);
            }
        })
        .detach();
    }

    /// Counts `conn`, slot `slot`'s, closed (`why`): its traffic joins the closed
    /// connections'.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))] // `slot`, `why`: the event's
    pub(super) fn account_closed(&self, slot: usize, conn: &Connection, why: &ConnectionError) {
        self.bump(|s| s.closed += 1);
        event!(
            info,
            node = %self.addr,
            slot,
            reason = %crate::error::Report(why),
            "connection closed"
        );
        let mut retired = self.retired.get();
        retired.add(&conn.stats());
        self.retired.set(retired);
        if let Some(s) = conn.sharding() {
            let mut by_shard = self.retired_by_shard.borrow_mut();
            let at = usize::from(s.shard);
            if by_shard.len() <= at {
                by_shard.resize(at + 1, 0);
            }
            by_shard[at] += conn.stats().requests;
        }
    }

    pub(super) fn bump(&self, f: impl FnOnce(&mut PoolStats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }
}

/// Closes `conn` once no request is in flight on it (checked every few milliseconds), or
/// after `grace`, or at once if it closed meanwhile.
async fn close_when_drained(conn: Connection, reason: &'static str, grace: Duration) {
    let deadline = doppio_rt::now() + grace;
    while conn.in_flight() > 0 && conn.is_open() && doppio_rt::now() < deadline {
        doppio_rt::sleep(Duration::from_millis(5)).await;
    }
    conn.close(reason);
}
