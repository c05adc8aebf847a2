//! A shard's connections to one node, kept filled in the background.
//!
//! Each of the pool's slots has a watcher task: it opens a connection (TCP and handshake, by
//! the pool's connect function), publishes it, waits for it to close, and opens the next one
//! after a jittered exponential backoff. Requests pick an open connection round-robin and
//! never wait for a reconnect: a node with no open connection is reported as such at once.
//!
//! Invariants:
//! - At most `size` connections per node per shard; one watcher per slot, spawned once.
//! - Picking is a few `Cell`/`RefCell` operations: no allocation, no atomic.
//! - ScyllaDB: once a connection reports the node's shards ([`ShardingInfo`]), the pool
//!   grows to `size` connections per ScyllaDB shard (slot `i` is for shard `i % nr_shards`),
//!   each opened towards its shard (through the shard-aware port when the node has one, see
//!   `session::connect`). A connection that landed elsewhere (the plain port, the
//!   fallback) is kept and serves the shard it did land on; after a fallback, new
//!   connections go to the plain port at once for `shard_aware_retry` (60 s by default),
//!   then try the shard-aware port again, which may be back. [`NodePool::pick_for`] sends a
//!   token to a connection of its owning shard: a few `Cell` reads and a scan of the slots,
//!   no allocation.
//! - Backoff delays are random in `[0, min(cap, base * 2^attempt)]` ("full jitter"), so the
//!   shards of many clients do not reconnect in lockstep; a success resets the attempt count.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::connection::{ConnectFailure, Connection, ConnectionError, ConnectionStats};
use crate::routing::murmur3::Token;
use crate::routing::sharding::{Sharder, ShardingInfo};
use crate::telemetry::event;

/// Opens one ready connection (TCP connect plus CQL handshake) to a node, aimed at a
/// ScyllaDB shard when a target is given.
pub(crate) type ConnectFn = Rc<
    dyn Fn(
        SocketAddr,
        Option<ShardTarget>,
    ) -> Pin<Box<dyn Future<Output = Result<Connection, ConnectionError>>>>,
>;

/// The ScyllaDB shard a connection should land on, and how to reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShardTarget {
    /// The wanted shard.
    pub(crate) shard: u16,
    /// The node's sharding.
    pub(crate) sharder: Sharder,
    /// The node's shard-aware port (`None`: the plain port, where the node picks the shard).
    pub(crate) shard_aware_port: Option<u16>,
    /// A random value to start the source-port search from.
    pub(crate) random: u64,
}

/// How long new connections skip the shard-aware port after a fallback, unless the session
/// says otherwise (`SessionConfig::shard_aware_retry`).
const DEFAULT_SHARD_AWARE_RETRY: Duration = Duration::from_secs(60);

/// Reconnection delays: full-jitter exponential backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Backoff {
    /// The first delay's upper bound.
    pub base: Duration,
    /// No delay exceeds this.
    pub cap: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(100),
            cap: Duration::from_secs(10),
        }
    }
}

impl Backoff {
    /// Delays of full jitter up to `min(cap, base * 2^attempt)`.
    pub const fn new(base: Duration, cap: Duration) -> Self {
        Self { base, cap }
    }

    /// The delay before reconnect attempt `attempt` (0-based), given a random `u64`.
    pub fn delay(&self, attempt: u32, random: u64) -> Duration {
        let ceiling = self
            .base
            .saturating_mul(1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX))
            .min(self.cap);
        let nanos = ceiling.as_nanos().min(u64::MAX as u128) as u64;
        Duration::from_nanos(if nanos == 0 { 0 } else { random % (nanos + 1) })
    }
}

/// A small xorshift generator for backoff jitter (the pools' and the control connection's):
/// not for anything that needs real randomness.
#[derive(Debug)]
pub(crate) struct Jitter(Cell<u64>);

impl Jitter {
    /// A generator seeded from the clock, mixed with `salt` (so that pools started in the
    /// same instant differ); on a simulation, from its seed (so that a run replays).
    pub(crate) fn seeded(salt: u64) -> Self {
        let clock = doppio_rt::sim::random_u64().unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0x9e37_79b9_7f4a_7c15, |d| d.as_nanos() as u64)
        });
        Self(Cell::new((clock ^ salt) | 1))
    }

    /// The next random value.
    pub(crate) fn next(&self) -> u64 {
        let mut x = self.0.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0.set(x);
        x
    }
}

/// Counters of one pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Connections opened (first ones and replacements).
    pub opened: u64,
    /// Connect attempts that failed.
    pub failed_attempts: u64,
    /// Connections that closed after opening.
    pub closed: u64,
    /// Connections aimed at the shard-aware port that landed elsewhere (the port did not
    /// answer: the connect fell back to the plain port).
    pub shard_aware_fallbacks: u64,
}

/// The connections of one shard to one node.
pub(crate) struct NodePool {
    addr: SocketAddr,
    slots: RefCell<Vec<Option<Connection>>>,
    next: Cell<usize>,
    connect: ConnectFn,
    backoff: Backoff,
    jitter: Jitter,
    last_error: RefCell<Option<ConnectionError>>,
    stats: Cell<PoolStats>,
    /// Traffic of the connections that have closed (the open ones count their own).
    retired: Cell<ConnectionStats>,
    stopped: Cell<bool>,
    /// Bumped by [`NodePool::reconnect_now`]: watchers in a backoff sleep wake and retry.
    kick: Cell<u64>,
    /// Watchers sleeping in a backoff (woken by a kick or a close).
    sleepers: RefCell<Vec<std::task::Waker>>,
    /// Connections wanted per ScyllaDB shard (the pool's size).
    per_shard: usize,
    /// The node's sharding, once a connection reported it (`None`: Cassandra, or not yet).
    sharding: Cell<Option<ShardingInfo>>,
    /// Set when a connection aimed at the shard-aware port was connected to the plain port
    /// (the port did not answer and the connect fell back): until then, later ones go to
    /// the plain port at once; after it, they try the shard-aware port again.
    plain_until: Cell<Option<Instant>>,
    /// How long [`NodePool::plain_until`] lasts after a fallback.
    shard_aware_retry: Cell<Duration>,
    /// Requests sent by the closed connections, per ScyllaDB shard they had landed on.
    retired_by_shard: RefCell<Vec<u64>>,
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
        });
        for slot in 0..size.max(1) {
            doppio_rt::spawn_local(watch_slot(Rc::downgrade(&pool), slot)).detach();
        }
        pool
    }

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
        for conn in self.slots.borrow().iter().flatten() {
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

    /// True if `conn` landed on a ScyllaDB shard other than slot `slot`'s while the
    /// shard-aware port is there to reach the right one.
    fn misplaced(&self, slot: usize, conn: &Connection) -> bool {
        match (self.target(slot), conn.sharding()) {
            (Some(t), Some(s)) => t.shard_aware_port.is_some() && s.shard != t.shard,
            _ => false,
        }
    }

    /// Where slot `slot`'s next connection should land (`None`: unsharded, anywhere).
    fn target(&self, slot: usize) -> Option<ShardTarget> {
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

    /// Requests in flight on the open connections (orphans included).
    pub(crate) fn in_flight(&self) -> usize {
        self.slots
            .borrow()
            .iter()
            .flatten()
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

    /// Traffic of every connection this pool has opened, open or closed.
    pub(crate) fn connection_stats(&self) -> ConnectionStats {
        let mut total = self.retired.get();
        for conn in self.slots.borrow().iter().flatten() {
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

    /// Closes every connection (requests in flight on them fail with `reason`) and stops
    /// the watchers.
    pub(crate) fn close(&self, reason: &str) {
        self.stopped.set(true);
        for conn in self.slots.borrow_mut().iter_mut().filter_map(Option::take) {
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

    fn bump(&self, f: impl FnOnce(&mut PoolStats)) {
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

/// Keeps one slot filled: connect (with backoff on failure), publish, wait for the close.
/// Holds only a weak reference between steps, so dropping the pool ends the watcher.
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
                if let Some(port) = target.and_then(|t| t.shard_aware_port) {
                    if conn.dialed_port() != port {
                        // Aimed through the shard-aware port, connected elsewhere: the port
                        // did not answer and the connect fell back to the plain port (by
                        // the port, not the shard it landed on, which the node may happen
                        // to pick right).
                        p.plain_until
                            .set(Some(doppio_rt::now() + p.shard_aware_retry.get()));
                        p.bump(|s| s.shard_aware_fallbacks += 1);
                    }
                }
                p.bump(|s| s.opened += 1);
                event!(debug, node = %p.addr, slot, "connection opened");
                *p.last_error.borrow_mut() = None;
                if let Some(slot) = p.slots.borrow_mut().get_mut(slot) {
                    *slot = Some(conn.clone());
                }
                drop(p);
                let _why = conn.wait_closed().await;
                let Some(p) = pool.upgrade() else { return };
                p.bump(|s| s.closed += 1);
                event!(info, node = %p.addr, slot, reason = %crate::error::Report(&_why), "connection closed");
                let mut retired = p.retired.get();
                retired.add(&conn.stats());
                p.retired.set(retired);
                if let Some(s) = conn.sharding() {
                    let mut by_shard = p.retired_by_shard.borrow_mut();
                    let at = usize::from(s.shard);
                    if by_shard.len() <= at {
                        by_shard.resize(at + 1, 0);
                    }
                    by_shard[at] += conn.stats().requests;
                }
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

#[cfg(test)]
mod tests {
    use doppio_proto::frame::Flags;
    use doppio_proto::request::{encode_request, Options};

    use super::*;
    use crate::connection::ConnectionConfig;
    use doppio_rt::Runtime;

    /// TCP connections with no handshake (OPTIONS needs none).
    fn plain_connections() -> ConnectFn {
        Rc::new(|addr, _| {
            Box::pin(async move { Connection::connect(addr, ConnectionConfig::default()).await })
        })
    }

    fn on<T: Send + 'static, Fut: Future<Output = T> + 'static>(
        runtime: Runtime,
        f: impl FnOnce() -> Fut + Send + 'static,
    ) -> T {
        doppio_rt::run_on(runtime, "pool-test", f).expect("the runtime starts")
    }

    /// A stub node for a test on any runtime: on its own threads over loopback TCP, or on
    /// the simulated runtime (no sockets, virtual time) in memory, served by the test's own
    /// executor ([`StubNode::on`]).
    struct StubNode {
        handle: doppio_stub::StubHandle,
        memory: Option<doppio_stub::MemoryStub>,
        runtime: Runtime,
    }

    impl StubNode {
        fn start(runtime: Runtime, config: doppio_stub::StubConfig) -> Self {
            let config = doppio_stub::StubConfig { runtime, ..config };
            let (handle, memory) = if runtime == Runtime::Sim {
                let config = doppio_stub::StubConfig {
                    listen: SocketAddr::from(([10, 0, 0, 1], 9042)),
                    ..config
                };
                let (handle, memory) =
                    doppio_stub::Stub::in_memory(config).expect("the stub is made");
                (handle, Some(memory))
            } else {
                (
                    doppio_stub::Stub::start(config).expect("the stub starts"),
                    None,
                )
            };
            Self {
                handle,
                memory,
                runtime,
            }
        }

        fn addr(&self) -> SocketAddr {
            self.handle.addr()
        }

        /// Runs `f` on a fresh executor of the test's runtime, the stub served on it first
        /// on the simulated runtime.
        fn on<T: Send + 'static, Fut: Future<Output = T> + 'static>(
            &self,
            f: impl FnOnce() -> Fut + Send + 'static,
        ) -> T {
            let memory = self.memory.clone();
            on(self.runtime, move || {
                if let Some(stub) = memory {
                    doppio_rt::sim::as_peer(|| stub.serve()).expect("the stub serves");
                }
                f()
            })
        }

        fn stop(self) {
            self.handle.stop();
        }
    }

    fn pool_replaces_a_closed_connection_in_the_background(runtime: Runtime) {
        let stub = StubNode::start(runtime, doppio_stub::StubConfig::default());
        let node = stub.addr();
        stub.on(move || async move {
            let pool = NodePool::start(node, 2, plain_connections(), Backoff::default());
            pool.wait_ready(Duration::from_secs(10))
                .await
                .expect("a connection opens");
            while pool.open_count() < 2 {
                doppio_rt::sleep(Duration::from_millis(5)).await;
            }
            let victim = pool.pick().expect("an open connection");
            victim.close("test closes it");
            // The other connection still serves requests while the slot refills.
            let conn = pool.pick().expect("the survivor");
            assert!(conn.closed().is_none());
            conn.request(None, |buf, stream| {
                encode_request(buf, stream, Flags::NONE, &Options)
            })
            .await
            .expect("answered");
            let start = doppio_rt::now();
            while pool.open_count() < 2 {
                assert!(
                    (doppio_rt::now() - start) < Duration::from_secs(10),
                    "slot not refilled: {pool:?}"
                );
                doppio_rt::sleep(Duration::from_millis(5)).await;
            }
            let stats = pool.stats();
            assert_eq!(stats.opened, 3);
            assert_eq!(stats.closed, 1);
            pool.close("test over");
            assert_eq!(pool.open_count(), 0);
        });
        stub.stop();
    }

    fn pool_to_a_dead_node_backs_off_and_reports_why(runtime: Runtime) {
        // A port that was just free: connecting is refused.
        let dead = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr")
        };
        on(runtime, move || async move {
            let backoff = Backoff {
                base: Duration::from_millis(20),
                cap: Duration::from_millis(100),
            };
            let pool = NodePool::start(dead, 1, plain_connections(), backoff);
            let err = pool
                .wait_ready(Duration::from_millis(600))
                .await
                .expect_err("nothing listens");
            assert!(
                matches!(err, ConnectionError::Connect { addr, .. } if addr == dead),
                "{err}"
            );
            assert!(pool.pick().is_none());
            assert!(pool.known_down(), "a refused connect is evidence");
            let attempts = pool.stats().failed_attempts;
            // Backoff, not a busy loop: at most one attempt per few ms on average, at least 2.
            assert!(
                (2..=200).contains(&attempts),
                "{attempts} attempts in 600 ms"
            );
            pool.close("test over");
        });
    }

    /// A stub that answers OPTIONS after `delay`.
    fn slow_options_stub(runtime: Runtime, delay: &str) -> StubNode {
        let rules = doppio_stub::Rules::parse(&format!(
            "[[rule]]\nname = \"slow\"\nwhen = {{ opcode = \"OPTIONS\" }}\n\
             then = {{ delay = {{ fixed = \"{delay}\" }} }}\n"
        ))
        .expect("the rules parse");
        StubNode::start(
            runtime,
            doppio_stub::StubConfig {
                rules,
                log_rules: false,
                ..doppio_stub::StubConfig::default()
            },
        )
    }

    /// A pool of one connection to `node` with one OPTIONS in flight: the pool, its
    /// connection and the request's task.
    async fn pool_with_a_request_in_flight(
        node: SocketAddr,
    ) -> (
        Rc<NodePool>,
        Connection,
        doppio_rt::Task<Result<(), crate::connection::RequestError>>,
    ) {
        let pool = NodePool::start(node, 1, plain_connections(), Backoff::default());
        pool.wait_ready(Duration::from_secs(10))
            .await
            .expect("a connection opens");
        let conn = pool.pick().expect("an open connection");
        let asking = conn.clone();
        let request = doppio_rt::spawn_local(async move {
            asking
                .request(None, |buf, stream| {
                    encode_request(buf, stream, Flags::NONE, &Options)
                })
                .await
                .map(|_| ())
        });
        while conn.in_flight() == 0 {
            doppio_rt::sleep(Duration::from_millis(1)).await;
        }
        (pool, conn, request)
    }

    fn a_retired_pool_lets_its_requests_in_flight_finish_then_closes(runtime: Runtime) {
        let stub = slow_options_stub(runtime, "300ms");
        let node = stub.addr();
        stub.on(move || async move {
            let (pool, conn, request) = pool_with_a_request_in_flight(node).await;
            pool.retire("the node left", Duration::from_secs(10));
            assert!(pool.pick().is_none(), "no new request picks it");
            assert_eq!(pool.open_count(), 0);
            assert!(
                conn.closed().is_none(),
                "open while its request is in flight"
            );
            request.await.expect("answered, not cut off");
            let start = doppio_rt::now();
            while conn.closed().is_none() {
                assert!(
                    (doppio_rt::now() - start) < Duration::from_secs(5),
                    "never closed"
                );
                doppio_rt::sleep(Duration::from_millis(5)).await;
            }
            // Retired: no watcher opens another connection.
            doppio_rt::sleep(Duration::from_millis(100)).await;
            assert_eq!(pool.stats().opened, 1);
            assert_eq!(pool.open_count(), 0);
        });
        stub.stop();
    }

    fn a_retired_pool_closes_after_its_grace_even_if_requests_remain(runtime: Runtime) {
        let stub = slow_options_stub(runtime, "5s");
        let node = stub.addr();
        stub.on(move || async move {
            let (pool, conn, request) = pool_with_a_request_in_flight(node).await;
            let start = doppio_rt::now();
            pool.retire("the node left", Duration::from_millis(100));
            let err = request.await.expect_err("cut off after the grace");
            assert!(err.to_string().contains("the node left"), "{err}");
            assert!(
                (doppio_rt::now() - start) < Duration::from_secs(4),
                "not the 5 s answer"
            );
            assert!(conn.closed().is_some());
        });
        stub.stop();
    }

    /// A pool whose first connect has not finished is not known down (the session's schema
    /// agreement counts its node: right after a session starts, most pools are in this
    /// state, and a node left out of the agreement missed a fresh table); an open one is not
    /// either; a closed one is.
    fn a_pool_still_connecting_is_not_known_down(runtime: Runtime) {
        let stub = StubNode::start(runtime, doppio_stub::StubConfig::default());
        let node = stub.addr();
        stub.on(move || async move {
            let never: ConnectFn = Rc::new(|_, _| Box::pin(std::future::pending()));
            let connecting = NodePool::start(node, 1, never, Backoff::default());
            doppio_rt::sleep(Duration::from_millis(50)).await;
            assert!(!connecting.is_up());
            assert!(!connecting.known_down(), "no attempt has ended yet");
            connecting.close("test over");

            let pool = NodePool::start(node, 1, plain_connections(), Backoff::default());
            pool.wait_ready(Duration::from_secs(10))
                .await
                .expect("a connection opens");
            assert!(!pool.known_down());
            pool.close("test over");
            assert!(pool.known_down(), "closed");
        });
        stub.stop();
    }

    doppio_rt::runtime_tests!(;
        and_sim:
        a_pool_still_connecting_is_not_known_down,
        pool_replaces_a_closed_connection_in_the_background,
        pool_to_a_dead_node_backs_off_and_reports_why,
        a_retired_pool_lets_its_requests_in_flight_finish_then_closes,
        a_retired_pool_closes_after_its_grace_even_if_requests_remain,
    );

    #[test]
    fn backoff_grows_exponentially_within_the_cap() {
        let b = Backoff {
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
        };
        // With the largest random value the delay is the ceiling itself.
        let max = |attempt| b.delay(attempt, u64::MAX - 1);
        assert!(max(0) <= Duration::from_millis(100));
        assert!(max(3) <= Duration::from_millis(800));
        assert!(max(10) <= Duration::from_secs(2));
        assert!(
            max(200) <= Duration::from_secs(2),
            "no overflow on many attempts"
        );
        assert_eq!(b.delay(5, 0), Duration::ZERO);
        let j = Jitter::seeded(42);
        let delays: Vec<_> = (0..100).map(|_| b.delay(4, j.next())).collect();
        assert!(delays.iter().all(|d| *d <= Duration::from_millis(1600)));
        let distinct: std::collections::HashSet<_> = delays.iter().collect();
        assert!(distinct.len() > 90, "jitter spreads the delays");
    }
}
