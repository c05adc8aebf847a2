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
use doppio_proto::ProtocolVersion;

use super::latency::LatencyConfig;
use super::load_balancing::{DefaultPolicyConfig, PolicyFactory};
use super::retry::{DefaultRetryPolicy, RetryPolicy};
use crate::auth::{AuthenticatorFactory, PasswordAuthenticator};
use crate::connection::{ConnectionConfig, TlsConfig};
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
    /// [`ConnectError::Unreachable`](crate::error::ConnectError::Unreachable) and why each
    /// node failed.
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
    /// The default policy's settings, as the `with_*datacenter*`/`with_token_aware` setters
    /// last left them (each remakes `load_balancing` from them).
    default_policy: DefaultPolicyConfig,
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
            default_policy: DefaultPolicyConfig::default(),
        }
    }

    /// Adds a contact point after `node` and the ones added before: tried in order when
    /// the earlier ones do not answer.
    pub fn with_contact_point(mut self, addr: SocketAddr) -> Self {
        self.contact_points.push(addr);
        self
    }

    /// Adds several contact points.
    pub fn with_contact_points(self, addrs: impl IntoIterator<Item = SocketAddr>) -> Self {
        addrs.into_iter().fold(self, Self::with_contact_point)
    }

    /// Connections to each node (per shard; at least one).
    pub fn with_connections(mut self, n: usize) -> Self {
        self.connections = n.max(1);
        self
    }

    /// Asks for lz4 body compression when the node supports it.
    pub fn with_compression(mut self, on: bool) -> Self {
        self.handshake.compression = on;
        self
    }

    /// The protocol version: `None` (the default) negotiates, v5 when the node offers it
    /// and v4 otherwise; a version a node does not offer fails its handshake.
    pub fn with_protocol_version(mut self, version: Option<ProtocolVersion>) -> Self {
        self.handshake.protocol_version = version;
        self
    }

    /// User name and password (SASL PLAIN, for `PasswordAuthenticator`).
    pub fn with_credentials(mut self, username: &str, password: &str) -> Self {
        self.handshake.authenticator =
            Some(PasswordAuthenticator::new(username, password).factory());
        self
    }

    /// A custom authenticator, made once per handshake on the shard that runs it.
    pub fn with_authenticator(mut self, factory: AuthenticatorFactory) -> Self {
        self.handshake.authenticator = Some(factory);
        self
    }

    /// TLS on every connection (control and pools): see [`TlsConfig`]. Default: plaintext.
    pub fn with_tls(mut self, tls: TlsConfig) -> Self {
        self.connection.tls = Some(tls);
        self
    }

    /// Time allowed to open one TCP connection (and its TLS handshake). Default 5 s.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connection.connect_timeout = timeout;
        self
    }

    /// How long connecting waits until a node's pool has an open connection
    /// ([`SessionConfig::startup_timeout`]). Default 10 s.
    pub fn with_startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Default time a request waits for its answer. Default 12 s.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.connection.request_timeout = timeout;
        self
    }

    /// All connection tunables at once (stream ids, buffers, keepalive, timeouts, TLS).
    pub fn with_connection_config(mut self, config: ConnectionConfig) -> Self {
        self.connection = config;
        self
    }

    /// Default consistency.
    pub fn with_consistency(mut self, c: Consistency) -> Self {
        self.consistency = c;
        self
    }

    /// Default serial consistency for conditional statements.
    pub fn with_serial_consistency(mut self, c: Option<Consistency>) -> Self {
        self.serial_consistency = c;
        self
    }

    /// Default page size (`None`: unpaged).
    pub fn with_page_size(mut self, rows: Option<i32>) -> Self {
        self.page_size = rows;
        self
    }

    /// Reconnection backoff of the node pools.
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The retry policy.
    pub fn with_retry_policy(mut self, policy: Arc<dyn RetryPolicy>) -> Self {
        self.retry_policy = policy;
        self
    }

    /// The delay before each retry (`None`, the default: at once): full-jitter exponential
    /// backoff, as the pools reconnect.
    pub fn with_retry_backoff(mut self, backoff: Option<Backoff>) -> Self {
        self.retry_backoff = backoff;
        self
    }

    /// Remakes `load_balancing` as the default policy with its settings changed by `change`.
    fn with_default_policy(mut self, change: impl FnOnce(&mut DefaultPolicyConfig)) -> Self {
        change(&mut self.default_policy);
        self.load_balancing = PolicyFactory::default_policy(self.default_policy.clone());
        self
    }

    /// The local data center (default: the contact point's): requests go to its nodes.
    /// Sets the default load-balancing policy (replacing one set before).
    pub fn with_local_datacenter(self, dc: &str) -> Self {
        self.with_default_policy(|p| p.local_datacenter = Some(dc.to_owned()))
    }

    /// Lets requests go to other data centers when no local node can take them (off by
    /// default); connections are then opened to remote nodes too. Sets the default
    /// load-balancing policy (replacing one set before).
    pub fn with_allow_remote_datacenters(self, allow: bool) -> Self {
        self.with_default_policy(|p| p.allow_remote = allow)
    }

    /// Token-aware routing (on by default): prepared statements whose partition key is
    /// bound go to one of its replicas. Sets the default load-balancing policy (replacing
    /// one set before).
    pub fn with_token_aware(self, on: bool) -> Self {
        self.with_default_policy(|p| p.token_aware = on)
    }

    /// Replaces the load-balancing policy (one is made per shard).
    pub fn with_load_balancing(mut self, factory: PolicyFactory) -> Self {
        self.load_balancing = factory;
        self
    }

    /// Speculative execution of idempotent statements (off by default).
    pub fn with_speculative_execution(mut self, spec: Option<SpeculativeExecution>) -> Self {
        self.speculative = spec;
        self
    }

    /// Whether requests' latencies are recorded, and the histogram's bounds
    /// ([`SessionConfig::latency`]).
    pub fn with_latency(mut self, latency: Option<LatencyConfig>) -> Self {
        self.latency = latency;
        self
    }

    /// How long a schema change waits for the live nodes to agree (zero: no wait).
    pub fn with_schema_agreement_timeout(mut self, timeout: Duration) -> Self {
        self.schema_agreement_timeout = timeout;
        self
    }

    /// The control connection's refresh interval, event debounce and failover backoff.
    pub fn with_control(mut self, control: ControlConfig) -> Self {
        self.control = control;
        self
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

#[cfg(feature = "unstable-internals")]
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

    /// Each of the two timeouts is stored once, in the configuration of what it bounds.
    #[test]
    fn connect_and_startup_timeouts_set_one_field_each() {
        let node = SocketAddr::from(([127, 0, 0, 1], 9042));
        let d = SessionConfig::new(node);
        let s = SessionConfig::new(node)
            .with_connect_timeout(Duration::from_millis(700))
            .with_startup_timeout(Duration::from_secs(33));
        assert_eq!(s.connection.connect_timeout, Duration::from_millis(700));
        assert_eq!(s.startup_timeout, Duration::from_secs(33));
        let c = SessionConfig::new(node).with_connect_timeout(Duration::from_millis(700));
        assert_eq!(c.startup_timeout, d.startup_timeout);
    }

    /// The data-center setters keep each other's settings; a policy set afterwards wins.
    #[test]
    fn the_default_policy_setters_accumulate() {
        let node = SocketAddr::from(([127, 0, 0, 1], 9042));
        let s = SessionConfig::new(node)
            .with_local_datacenter("dc2")
            .with_allow_remote_datacenters(true)
            .with_token_aware(false);
        assert_eq!(
            s.default_policy,
            DefaultPolicyConfig {
                local_datacenter: Some("dc2".into()),
                allow_remote: true,
                token_aware: false,
            }
        );
        let mine = PolicyFactory::default();
        let s = s.with_load_balancing(mine.clone());
        assert!(Arc::ptr_eq(&s.load_balancing.0, &mine.0));
    }

    #[cfg(feature = "unstable-internals")]
    #[test]
    fn the_default_options_constant_is_the_derived_default() {
        assert_eq!(StatementOptions::DEFAULT, StatementOptions::default());
    }
}
