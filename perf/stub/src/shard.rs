//! One shard's state and what all shards share: the piece the server builds and every
//! connection of the shard reads.
//!
//! [`ShardContext`] holds the shard's own responder and rule matcher (`RefCell`: one thread
//! each) and a reference to [`Shared`], the control-plane counters every shard writes:
//! connection numbers (once per connection), rule fire counts (once per fired rule), the
//! stop flag, and the state of every node the stub plays (`crate::node`; a shard serves
//! each node's connections with a context of that node). Nothing here is touched per
//! request unless a rule fires, or unless the stub records the values of EXECUTEs
//! (`StubConfig::record_values`, for tests).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::answer::Responder;
use crate::events::EventLog;
use crate::node::NodeShared;
use crate::rules::{Matcher, Rules};
use crate::scylla::Emulation;

/// What every shard shares (control plane: counters written once per connection or fired
/// rule, never per request).
pub(crate) struct Shared {
    pub(crate) started: Instant,
    pub(crate) next_connection: Arc<AtomicU64>,
    pub(crate) fired: Vec<AtomicU64>,
    pub(crate) names: Vec<String>,
    log: bool,
    pub(crate) stop: AtomicBool,
    /// The first bound value of every EXECUTE, when recording (tests only).
    pub(crate) values: Option<Mutex<Vec<Vec<u8>>>>,
    /// Every node the stub plays (one unless it plays a cluster), in node order.
    pub(crate) nodes: Vec<Arc<NodeShared>>,
    /// The events pushed to registered connections (a cluster only).
    pub(crate) events: EventLog,
}

impl Shared {
    /// How often each rule fired so far, by rule name, in rule order.
    pub(crate) fn fired_counts(&self) -> Vec<(String, u64)> {
        self.names
            .iter()
            .zip(&self.fired)
            .map(|(n, c)| (n.clone(), c.load(Ordering::Relaxed)))
            .collect()
    }

    /// The first bound value of every EXECUTE so far (empty unless recording).
    pub(crate) fn recorded_values(&self) -> Vec<Vec<u8>> {
        self.values
            .as_ref()
            .map(|v| v.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }

    /// Zeroed counters for `rules`, starting the stub's clock now; fired rules are logged to
    /// stderr if `log`; EXECUTEs' first values are kept if `record_values`; `nodes` are the
    /// nodes played (at least one).
    pub(crate) fn new(
        rules: &Rules,
        log: bool,
        record_values: bool,
        nodes: Vec<Arc<NodeShared>>,
    ) -> Self {
        Self {
            started: doppio_rt::now(),
            next_connection: Arc::new(AtomicU64::new(0)),
            fired: rules.rules.iter().map(|_| AtomicU64::new(0)).collect(),
            names: rules.rules.iter().map(|r| r.name.clone()).collect(),
            log,
            stop: AtomicBool::new(false),
            values: record_values.then(|| Mutex::new(Vec::new())),
            nodes,
            events: EventLog::default(),
        }
    }
}

/// One shard's state for one node, on its own thread.
pub(crate) struct ShardContext {
    pub(crate) responder: RefCell<Responder>,
    pub(crate) matcher: RefCell<Matcher>,
    pub(crate) started: Instant,
    pub(crate) next_connection: Arc<AtomicU64>,
    shared: Arc<Shared>,
    /// The node this context serves (one of `Shared::nodes`).
    node: Arc<NodeShared>,
    /// TLS to serve, if any.
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
}

impl ShardContext {
    /// A shard's state around its `responder` and `matcher`, serving `node` (one of
    /// `shared`'s).
    pub(crate) fn new(
        responder: Responder,
        matcher: Matcher,
        shared: Arc<Shared>,
        node: Arc<NodeShared>,
        tls: Option<Arc<rustls::ServerConfig>>,
    ) -> Self {
        Self {
            responder: RefCell::new(responder),
            matcher: RefCell::new(matcher),
            started: shared.started,
            next_connection: shared.next_connection.clone(),
            shared,
            node,
            tls,
        }
    }

    /// The same context with the stub's start at `started` (rules' time windows count from
    /// it): the executor's own clock when the stub's counters were made on another thread
    /// (a stub served in memory on a simulation, whose clock is virtual).
    pub(crate) fn started_at(mut self, started: Instant) -> Self {
        self.started = started;
        self
    }

    /// The node this context serves.
    #[inline]
    pub(crate) fn node(&self) -> &NodeShared {
        &self.node
    }

    /// The events pushed to registered connections.
    pub(crate) fn events(&self) -> &EventLog {
        &self.shared.events
    }

    /// Whether the stub is stopping.
    pub(crate) fn stopping(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Keeps an EXECUTE's first bound value, when the stub records them.
    pub(crate) fn record_value(&self, value: &[u8]) {
        if let Some(values) = &self.shared.values {
            values
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(value.to_vec());
        }
    }

    /// The emulation of ScyllaDB's shards, if on.
    pub(crate) fn scylla(&self) -> Option<&Emulation> {
        self.node().scylla.as_ref()
    }

    /// Whether the stub records EXECUTEs' values.
    pub(crate) fn records_values(&self) -> bool {
        self.shared.values.is_some()
    }

    /// Counts rule `i` firing on connection `conn` and logs it: the first five times, then
    /// at every power of ten, so a hot rule does not flood the log.
    pub(crate) fn fired(&self, i: usize, conn: u64) {
        let n = self.shared.fired[i].fetch_add(1, Ordering::Relaxed) + 1;
        if self.shared.log && (n <= 5 || n.is_power_of_two() && n >= 1024 || is_power_of_ten(n)) {
            eprintln!(
                "doppio-stub: rule `{}` fired on connection {conn} ({n} time{})",
                self.shared.names[i],
                if n == 1 { "" } else { "s" }
            );
        }
    }
}

fn is_power_of_ten(mut n: u64) -> bool {
    while n >= 10 && n % 10 == 0 {
        n /= 10;
    }
    n == 1
}
