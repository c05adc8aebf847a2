//! Keeping a pool filled: starting it with one watcher task per slot, each of which
//! connects (with backoff on failure), publishes the connection, tries in the background for
//! one on the slot's ScyllaDB shard if it landed on another (`wrong_shard`), and waits for
//! its close; growing the pool once a node's ScyllaDB shards are known.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use crate::connection::{Connection, ConnectionStats};
use crate::telemetry::event;

use super::backoff::{Backoff, Jitter};
use super::connect::{ConnectFn, DEFAULT_SHARD_AWARE_RETRY};
use super::node::NodePool;
use super::stats::PoolStats;
use super::wrong_shard::aim_again;

impl NodePool {
    /// Creates a pool of `size` connections to `addr` and starts its watchers. Returns at
    /// once; use [`NodePool::wait_ready`] to wait for the first connection.
    pub(crate) fn start(
        addr: SocketAddr,
        size: usize,
        connect: ConnectFn,
        backoff: Backoff,
    ) -> Rc<Self> {
        let pool = Rc::new(Self {
            addr,
            slots: RefCell::new(vec![None; size.max(1)]),
            next: Cell::new(0),
            connect,
            backoff,
            jitter: Jitter::seeded(u64::from(addr.port()).rotate_left(32)),
            last_error: RefCell::new(None),
            stats: Cell::new(PoolStats::default()),
            retired: Cell::new(ConnectionStats::default()),
            stopped: Cell::new(false),
            kick: Cell::new(0),
            sleepers: RefCell::new(Vec::new()),
            per_shard: size.max(1),
            sharding: Cell::new(None),
            plain_until: Cell::new(None),
            shard_aware_retry: Cell::new(DEFAULT_SHARD_AWARE_RETRY),
            retired_by_shard: RefCell::new(Vec::new()),
            draining: RefCell::new(Vec::new()),
        });
        for slot in 0..size.max(1) {
            doppio_rt::spawn_local(watch_slot(Rc::downgrade(&pool), slot)).detach();
        }
        pool
    }

    /// Learns the node's sharding from a new connection's handshake: the first time, the
    /// pool grows to `per_shard` slots per ScyllaDB shard and starts their watchers.
    fn learn_sharding(self: &Rc<Self>, conn: &Connection) {
        let Some(info) = conn.sharding() else { return };
        let known = self.sharding.get();
        if known.is_some_and(|k| k.sharder == info.sharder) {
            return;
        }
        self.sharding.set(Some(info));
        let wanted = self.per_shard * usize::from(info.sharder.nr_shards.get());
        let mut slots = self.slots.borrow_mut();
        let had = slots.len();
        if wanted > had {
            slots.resize(wanted, None);
            drop(slots);
            for slot in had..wanted {
                doppio_rt::spawn_local(watch_slot(Rc::downgrade(self), slot)).detach();
            }
        }
    }
}

/// Keeps one slot filled: connect (with backoff on failure), publish, aim again if it landed
/// on another ScyllaDB shard than the slot's, wait for the close. Holds only a weak
/// reference between steps, so dropping the pool ends the watcher.
async fn watch_slot(pool: std::rc::Weak<NodePool>, slot: usize) {
    let mut attempt: u32 = 0;
    loop {
        let Some(p) = pool.upgrade() else { return };
        if p.stopped.get() {
            return;
        }
        let target = p.target(slot);
        let connecting = (p.connect)(p.addr, target);
        drop(p);
        let result = connecting.await;
        let Some(p) = pool.upgrade() else { return };
        if p.stopped.get() {
            if let Ok(conn) = result {
                conn.close("pool stopped");
            }
            return;
        }
        match result {
            Ok(conn) => {
                attempt = 0;
                p.learn_sharding(&conn);
                if target.is_none() && p.misplaced(slot, &conn) {
                    // Opened before the node's shards were known, on a shard this slot is
                    // not for, while the shard-aware port can reach the right one: replace
                    // it at once (it has carried only its handshake).
                    conn.close("reopened towards its ScyllaDB shard");
                    continue;
                }
                p.note_fallback(&conn, target);
                p.bump(|s| s.opened += 1);
                event!(debug, node = %p.addr, slot, "connection opened");
                *p.last_error.borrow_mut() = None;
                if let Some(slot) = p.slots.borrow_mut().get_mut(slot) {
                    *slot = Some(conn.clone());
                }
                let elsewhere = p.off_shard(slot, &conn);
                drop(p);
                // On another shard than the slot's: it serves while the slot tries for one
                // on its own, which then takes its place (and is the one watched).
                let conn = if elsewhere {
                    let Some(conn) = aim_again(&pool, slot, conn).await else {
                        return;
                    };
                    conn
                } else {
                    conn
                };
                let why = conn.wait_closed().await;
                let Some(p) = pool.upgrade() else { return };
                p.account_closed(slot, &conn, &why);
                let mut slots = p.slots.borrow_mut();
                if let Some(slot) = slots.get_mut(slot) {
                    *slot = None;
                }
            }
            Err(e) => {
                p.bump(|s| s.failed_attempts += 1);
                let delay = p.backoff.delay(attempt, p.jitter.next());
                event!(
                    warn,
                    node = %p.addr,
                    slot,
                    attempt,
                    retry_in = ?delay,
                    error = %crate::error::Report(&e),
                    "connect failed; reconnecting after a backoff"
                );
                *p.last_error.borrow_mut() = Some(e);
                attempt = attempt.saturating_add(1);
                let kicked_at = p.kick.get();
                drop(p);
                if backoff_sleep(&pool, delay, kicked_at).await {
                    attempt = 0;
                }
            }
        }
    }
}

/// Sleeps for `delay`, or until the pool is kicked past `kicked_at` or closed. Returns true
/// if it was kicked (the node was reported up: the backoff starts over).
async fn backoff_sleep(pool: &std::rc::Weak<NodePool>, delay: Duration, kicked_at: u64) -> bool {
    let mut timer = std::pin::pin!(doppio_rt::Timer::new(delay));
    std::future::poll_fn(|cx| {
        let Some(p) = pool.upgrade() else {
            return std::task::Poll::Ready(false);
        };
        if p.kick.get() != kicked_at {
            return std::task::Poll::Ready(true);
        }
        if p.stopped.get() {
            return std::task::Poll::Ready(false);
        }
        if timer.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(false);
        }
        let mut sleepers = p.sleepers.borrow_mut();
        if !sleepers.iter().any(|w| w.will_wake(cx.waker())) {
            sleepers.push(cx.waker().clone());
        }
        std::task::Poll::Pending
    })
    .await
}
