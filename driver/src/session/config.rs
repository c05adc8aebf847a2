//! What a session is configured with ([`SessionConfig`]: contact points, connections,
//! defaults of every statement, policies) and what one request runs with
//! (`StatementOptions`, resolved from its statement's settings and the call's page).
//!
//! A `SessionConfig` is `Send + Sync`: a [`crate::Cluster`] holds one and each shard opens
//! its session from it (policies and authenticators are made per shard from factories).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use doppio_proto::consistency::Consistency;

use super::latency::LatencyConfig;
use super::load_balancing::PolicyFactory;
use super::retry::{DefaultRetryPolicy, RetryPolicy};
use crate::connection::ConnectionConfig;
use crate::control::ControlConfig;
use crate::handshake::HandshakeConfig;
use crate::pool::Backoff;

/// Speculative execution: an idempotent request still unanswered after `delay` is also sent
/// to the next node of its plan (up to `max` extra nodes, `delay` apart); the first answer
/// wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpeculativeExecution {
    /// How long to wait for an answer before asking the next node.
    pub delay: Duration,
    /// Extra nodes asked at most.
    pub max: usize,
}

impl SpeculativeExecution {
    /// Up to `max` extra nodes, each asked after `delay` without an answer.
    pub const fn new(delay: Duration, max: usize) -> Self {
        Self { delay, max }
    }
}

/// How a session connects and what its statements default to.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// The contact point: the first node asked for the cluster's topology.
    pub node: SocketAddr,
    /// Further contact points, tried in order if `node` does not answer.
    pub contact_points: Vec<SocketAddr>,
    /// Connections to each node (per shard).
    pub connections: usize,
    /// Connection tunables (stream ids, timeouts, buffers, keepalive).
    pub connection: ConnectionConfig,
    /// Handshake: compression and credentials.
    pub handshake: HandshakeConfig,
    /// Reconnection backoff of the node pools.
    pub backoff: Backoff,
    /// Default consistency.
    pub consistency: Consistency,
    /// Default serial consistency (for conditional statements).
    pub serial_consistency: Option<Consistency>,
    /// Default page size.
    pub page_size: Option<i32>,
    /// How long `connect` waits until one node's pool has an open connection: every TCP
    /// connect (each bounded by `connection.connect_timeout`), handshake and reconnection
    /// with backoff across the contact points, together. Past it, `connect` fails with
    /// [`Error::NoConnection`](crate::Error::NoConnection) and why each node failed.
    pub startup_timeout: Duration,
    /// Which failed requests are sent again, and where (consulted only on failure).
    pub retry_policy: Arc<dyn RetryPolicy>,
    /// The delay before each retry (`None`, the default: at once): retry `n` (0-based)
    /// waits `Backoff::delay(n, random)`, full jitter up to `min(cap, base * 2^n)`.
    pub retry_backoff: Option<Backoff>,
    /// Which node each request goes to (one policy is made per shard).
    pub load_balancing: PolicyFactory,
    /// Speculative execution of idempotent statements (off by default).
    pub speculative: Option<SpeculativeExecution>,
    /// How long a schema change waits for every live node to agree on the schema
    /// (`Duration::ZERO`: does not wait).
    pub schema_agreement_timeout: Duration,
    /// The control connection's tunables.
    pub control: ControlConfig,
    /// ScyllaDB: after a connection aimed at the shard-aware port fell back to the plain
    /// port (the port did not answer), new connections to that node go to the plain port at
    /// once for this long, then try the shard-aware port again (it may be back).
    pub shard_aware_retry: Duration,
    /// Whether each request's latency is recorded into the shard's histogram, and its
    /// bounds ([`Session::latency`](crate::Session::latency)); `None` (the default): not
    /// recorded. Opt in with `Some(LatencyConfig::default())`: it costs two reads of the
    /// precise clock and one histogram update per request (no allocation, no lock, no
    /// atomic), about 205 instructions on `doppio cost`'s `insert` (+5.7 %).
    pub latency: Option<LatencyConfig>,
}

impl SessionConfig {
    /// Defaults for contact point `node`: one connection per node, LOCAL_QUORUM, pages of
    /// 5000 rows, token-aware routing in the contact point's data center.
    pub fn new(node: SocketAddr) -> Self {
        Self {
            node,
            contact_points: Vec::new(),
            connections: 1,
            connection: ConnectionConfig::default(),
            handshake: HandshakeConfig::default(),
            backoff: Backoff::default(),
            consistency: Consistency::LocalQuorum,
            serial_consistency: None,
            page_size: Some(5000),
            startup_timeout: Duration::from_secs(10),
            retry_policy: Arc::new(DefaultRetryPolicy::default()),
            retry_backoff: None,
            load_balancing: PolicyFactory::default(),
            speculative: None,
            schema_agreement_timeout: Duration::from_secs(10),
            control: ControlConfig::default(),
            shard_aware_retry: Duration::from_secs(60),
            // Off: recording costs ~205 instructions per request (`doppio cost`: +5.7 % on
            // `insert`), past the cost gate's 2 %.
            latency: None,
        }
    }

    /// The contact points in order: `node` first, then the others (each once).
    pub(crate) fn contact_points(&self) -> Vec<SocketAddr> {
        let mut out = vec![self.node];
        for c in &self.contact_points {
            if !out.contains(c) {
                out.push(*c);
            }
        }
        out
    }
}

/// The options one request runs with: its statement's settings ([`StatementConfig`], its
/// profile's where the statement has none) and the call's page; `None` fields take the
/// session's defaults.
///
/// [`StatementConfig`]: super::StatementConfig
#[derive(Clone, Copy, Default)]
pub(crate) struct StatementOptions<'a> {
    /// Consistency.
    pub(crate) consistency: Option<Consistency>,
    /// Serial consistency.
    pub(crate) serial_consistency: Option<Consistency>,
    /// Default timestamp, microseconds since the epoch.
    pub(crate) timestamp: Option<i64>,
    /// Page size (`Some(0)`: no paging).
    pub(crate) page_size: Option<i32>,
    /// Continue from this paging state.
    pub(crate) paging_state: Option<&'a [u8]>,
    /// Ask the node to trace the request (the result carries the tracing id).
    pub(crate) tracing: bool,
    /// Whether the statement may be applied twice safely (for retry policies and
    /// speculative execution).
    pub(crate) idempotent: bool,
    /// Request timeout.
    pub(crate) timeout: Option<Duration>,
    /// The retry policy of the statement's profile.
    pub(crate) retry_policy: Option<&'a dyn RetryPolicy>,
    /// The speculative execution of the statement's profile.
    pub(crate) speculative: Option<SpeculativeExecution>,
}

impl StatementOptions<'static> {
    /// Every field `None` or `false`: the session's defaults (the same as `default()`, as a
    /// constant that outlives any request).
    pub(crate) const DEFAULT: StatementOptions<'static> = StatementOptions {
        consistency: None,
        serial_consistency: None,
        timestamp: None,
        page_size: None,
        paging_state: None,
        tracing: false,
        idempotent: false,
        timeout: None,
        retry_policy: None,
        speculative: None,
    };
}

/// Equal when every setting is, the retry policies being the same object.
impl PartialEq for StatementOptions<'_> {
    fn eq(&self, other: &Self) -> bool {
        let same_policy = match (self.retry_policy, other.retry_policy) {
            (None, None) => true,
            (Some(a), Some(b)) => std::ptr::addr_eq(a, b),
            _ => false,
        };
        same_policy
            && self.consistency == other.consistency
            && self.serial_consistency == other.serial_consistency
            && self.timestamp == other.timestamp
            && self.page_size == other.page_size
            && self.paging_state == other.paging_state
            && self.tracing == other.tracing
            && self.idempotent == other.idempotent
            && self.timeout == other.timeout
            && self.speculative == other.speculative
    }
}

impl std::fmt::Debug for StatementOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatementOptions")
            .field("consistency", &self.consistency)
            .field("serial_consistency", &self.serial_consistency)
            .field("timestamp", &self.timestamp)
            .field("page_size", &self.page_size)
            .field("paging_state", &self.paging_state)
            .field("tracing", &self.tracing)
            .field("idempotent", &self.idempotent)
            .field("timeout", &self.timeout)
            .field("retry_policy", &self.retry_policy)
            .field("speculative", &self.speculative)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_options_constant_is_the_derived_default() {
        assert_eq!(StatementOptions::DEFAULT, StatementOptions::default());
    }
}
