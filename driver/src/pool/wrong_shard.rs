//! A slot whose connection landed on another ScyllaDB shard than the slot's (through the
//! plain port, where the node picks the shard, or opened before the node's shards were
//! known): the connection keeps serving (the requests for its own shard's tokens find it,
//! those for the slot's shard go to a connection of that shard if one is open, else to any),
//! while the slot tries again in the background for one on its shard, and swaps that one in
//! when it lands; the replaced connection is closed once its requests in flight have been
//! answered.
//!
//! Bounds: one try at a time per slot (and the replaced connection drains for at most its
//! request timeout); at most `TRIES` (8) tries per
//! wrong-shard connection, each after the pool's backoff delay for its number (full jitter,
//! growing up to the backoff's cap) and, while new connections skip the node's shard-aware
//! port after a fallback, not before they use it again (a try through the plain port lands
//! where the node puts it). A try that lands elsewhere is closed at once: it has carried
//! only its handshake. When the tries run out, the slot keeps its connection until it
//! closes. A try that reports other shards than the pool knows (the node resharded) does
//! not fit either: the slots' own reconnects learn the new shards.
//!
//! Nothing here runs on the request path. `PoolStats`' `wrong_shard`, `wrong_shard_attempts`,
//! `wrong_shard_replaced` and `wrong_shard_kept` say what happened.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Weak;
use std::task::Poll;
use std::time::Duration;

use crate::connection::Connection;
use crate::telemetry::event;

use super::node::NodePool;

/// Background tries for a wrong-shard connection before the slot keeps it. With the default
/// backoff (100 ms doubling up to 10 s) they span about 11 s on average, 23 s at most.
const TRIES: u32 = 8;

/// Slot `slot` holds `stopgap`, open on another ScyllaDB shard than the slot's: tries for a
/// connection on the slot's shard until one lands (it then replaces `stopgap` in the slot),
/// the tries run out, `stopgap` closes or the pool stops. Returns the connection the slot
/// holds then, for its watcher to wait on; `None` if the pool is gone.
pub(super) async fn aim_again(
    pool: &Weak<NodePool>,
    slot: usize,
    stopgap: Connection,
) -> Option<Connection> {
    {
        let p = pool.upgrade()?;
        p.bump(|s| s.wrong_shard += 1);
        event!(
            info,
            node = %p.addr,
            slot,
            landed_on = ?stopgap.sharding().map(|s| s.shard),
            "connection landed on another ScyllaDB shard than its slot's; \
             it serves while the slot tries again"
        );
    }
    for attempt in 0..TRIES {
        let p = pool.upgrade()?;
        let mut delay = p.backoff.delay(attempt, p.jitter.next());
        if let Some(until) = p.plain_port_until() {
            delay = delay.max(until.saturating_duration_since(doppio_rt::now()));
        }
        drop(p);
        if !sleep_while_open(&stopgap, delay).await {
            // Closed: its watcher opens the slot's next connection, aimed afresh.
            return Some(stopgap);
        }
        let p = pool.upgrade()?;
        if p.stopped.get() || !p.off_shard(slot, &stopgap) {
            return Some(stopgap);
        }
        let target = p.target(slot);
        let connecting = (p.connect)(p.addr, target);
        p.bump(|s| s.wrong_shard_attempts += 1);
        drop(p);
        let result = connecting.await;
        let p = pool.upgrade()?;
        let extra = match result {
            Ok(extra) => extra,
            Err(e) => {
                p.bump(|s| s.failed_attempts += 1);
                event!(
                    debug,
                    node = %p.addr,
                    slot,
                    attempt,
                    error = %crate::error::Report(&e),
                    "a try for the slot's ScyllaDB shard failed"
                );
                *p.last_error.borrow_mut() = Some(e);
                continue;
            }
        };
        p.note_fallback(&extra, target);
        if p.stopped.get() {
            extra.close("pool stopped");
            return Some(stopgap);
        }
        *p.last_error.borrow_mut() = None;
        if !p.on_slot_shard(slot, &extra) {
            event!(
                debug,
                node = %p.addr,
                slot,
                attempt,
                landed_on = ?extra.sharding().map(|s| s.shard),
                "a try for the slot's ScyllaDB shard landed on another"
            );
            extra.close("landed on another ScyllaDB shard than its slot's");
            continue;
        }
        p.bump(|s| {
            s.opened += 1;
            s.wrong_shard_replaced += 1;
        });
        if let Some(held) = p.slots.borrow_mut().get_mut(slot) {
            *held = Some(extra.clone());
        }
        p.retire_connection(
            slot,
            stopgap,
            "replaced by a connection on its slot's ScyllaDB shard",
        );
        event!(
            info,
            node = %p.addr,
            slot,
            attempt,
            "a connection on the slot's ScyllaDB shard replaced the one on another"
        );
        return Some(extra);
    }
    let p = pool.upgrade()?;
    if stopgap.is_open() && !p.stopped.get() {
        p.bump(|s| s.wrong_shard_kept += 1);
        event!(
            warn,
            node = %p.addr,
            slot,
            tries = TRIES,
            "no try landed on the slot's ScyllaDB shard: the connection on another one is kept"
        );
    }
    Some(stopgap)
}

/// Sleeps for `delay` unless `conn` closes first. Returns true if the delay passed with
/// `conn` still open.
async fn sleep_while_open(conn: &Connection, delay: Duration) -> bool {
    let mut timer = pin!(doppio_rt::Timer::new(delay));
    let mut closed = pin!(conn.wait_closed());
    poll_fn(|cx| {
        if closed.as_mut().poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        timer.as_mut().poll(cx).map(|()| true)
    })
    .await
}
