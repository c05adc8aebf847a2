//! The session API a shard's user code calls: query, prepare, execute, batch, use_keyspace.
//!
//! A [`Session`] belongs to one shard (`!Send`, cheap to clone). It keeps the shard's view of
//! the cluster ([`view::ClusterView`]: every node with its connection pool and counters, the
//! token ring and each keyspace's replicas), its prepared-statement cache and its counters.
//! A standalone session runs its own control connection (the private `control` module); in a
//! [`crate::Cluster`] one shard runs it for all.
//!
//! Its modules, one concern each, from the bottom up (no file imports one above it):
//! - `latency`: the shard's histogram of request latencies, recorded per request
//!   ([`Latency`], [`LatencyConfig`]).
//! - `config`: [`SessionConfig`], [`SpeculativeExecution`], and `StatementOptions`: what
//!   one request runs with.
//! - `statement`: what a statement carries ([`StatementConfig`], [`Statement`]) and what
//!   a page of its result is ([`Page`], [`PagingState`]).
//! - `profile`: [`ExecutionProfile`], settings shared by statements (a retry policy and
//!   speculative execution among them).
//! - `prepared`: [`PreparedStatement`], the value the cache holds and executions read.
//! - `batch`: [`Batch`], prepared and unprepared statements run as one BATCH, and
//!   [`BatchValues`], each statement's values per run.
//! - `handle`: [`Session`] itself and the state its clones share; the other files add
//!   their methods to it.
//! - `attempt`: what one attempt needs on every path (the caller's first attempt,
//!   template or not, decoding an answer, a forgotten statement).
//! - `connect`: connecting, the pools' connect function, installing topology snapshots.
//! - `prepare`: preparing (the cache, every node) and preparing again.
//! - `plan`: running one request along its query plan (retries, speculative execution).
//! - `execute`: the future of an EXECUTE, its common case (first node answers) as one state
//!   machine and the rest on the general path.
//! - `request`: the request path of QUERY, EXECUTE and BATCH, and where each goes.
//! - `keyspace`: `use_keyspace`.
//! - `schema`: waiting for schema agreement after a schema change.
//! - `tablets`: ScyllaDB's tablets: learned from answers' payloads per shard, looked up
//!   for a bound partition key.
//! - [`paging`]: [`PageStream`] and [`RowStream`], pages fetched one ahead.
//! - `trace`: reading a traced request's trace back from `system_traces`
//!   ([`Session::fetch_trace`], [`Trace`]), waiting (bounded) for the node to finish it.
//! - [`load_balancing`] and [`retry`]: the policies (which node; whether to try again).
//! - [`view`]: the shard's view of the cluster; [`stats`]: the session's counters;
//!   `latency`: the shard's histogram of request latencies ([`Latency`]).
//! - `bench` (hidden): the request path's stages one at a time, for the request-path
//!   benchmarks (`driver/benches/request_path/`).
//!
//! Per request: the load-balancing policy picks a node (for a prepared statement whose
//! partition key is bound, one of its replicas: the token is computed from the values),
//! the statement is encoded straight into one of that node's connections' write buffer,
//! the caller parks on its stream id, and the answer comes back as a zero-copy frame body.
//! No task, channel or lock. Only on failure does the session ask the policy for the rest
//! of the plan and the retry policy whether and where to try again.
//!
//! Invariants:
//! - A request routed with a view keeps that view (an `Rc`) until it is answered.
//! - A closed session fails every request with [`Error::Closed`](crate::Error::Closed) and its reason.
//! - After a statement that changed the schema, the session waits (bounded) until every
//!   live node reports the same schema version, so the next statement sees the change.

mod attempt;
mod batch;
#[doc(hidden)]
#[cfg(feature = "unstable-internals")]
pub(crate) mod bench;
mod config;
mod connect;
mod execute;
mod handle;
mod keyspace;
mod latency;
pub mod load_balancing;
pub mod paging;
mod plan;
mod prepare;
mod prepared;
mod profile;
mod request;
pub mod retry;
mod schema;
mod statement;
pub mod stats;
mod tablets;
pub(crate) mod trace;
pub mod view;

pub use crate::connection::ConnectionStats;
pub use crate::pool::PoolStats;
pub use batch::{Batch, BatchValues};
pub use config::{SessionConfig, SpeculativeExecution};
pub(crate) use connect::ControlRole;
pub use doppio_proto::request::BatchType;
pub use handle::Session;
pub use latency::{Latency, LatencyConfig};
pub use load_balancing::{
    DefaultPolicy, DefaultPolicyConfig, LoadBalancingPolicy, PolicyFactory, RoutingInfo,
};
pub use paging::{PageStream, RowStream};
pub use prepared::PreparedStatement;
pub use profile::{ExecutionProfile, ExecutionProfileBuilder};
pub use retry::{same_node_may_serve, DefaultRetryPolicy, NoRetry, RetryDecision, RetryPolicy};
pub use statement::{Page, PagingState, Statement, StatementConfig};
pub use stats::{ErrorCounts, SessionStats};
pub use trace::{Trace, TraceEvent, TraceWait};
pub use view::{ClusterView, Distance, Node, NodeCounters, NodeStatus};
