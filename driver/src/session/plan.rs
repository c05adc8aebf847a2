//! Running one request along its query plan: the policy's first node, then, only if the
//! retry policy says so, the same node again or the next node of the plan; optionally a
//! speculative execution on the next node when an idempotent request is slow.
//!
//! The common case (first node answers) asks the policy once and allocates nothing; the
//! plan is built only on the failure or speculative path.
//!
//! Invariants:
//! - A node without an open connection is skipped without counting as a retry (nothing was
//!   sent to it).
//! - Every attempt is counted on its node when it starts (and as an error when it fails); the
//!   session counts the request once, with its retries, when it ends.
//! - A retry waits the session's retry backoff first, if it has one (none by default).
//! - A speculative execution is started only for idempotent statements, and the first
//!   successful answer wins; the others are dropped (their stream ids wait for the late
//!   answers as orphans).

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use doppio_proto::response::ResultBody;

use super::attempt::FirstAttempt;
use super::config::SpeculativeExecution;
use super::config::StatementOptions;
use super::handle::Session;
use super::load_balancing::RoutingInfo;
use super::retry::{same_node_may_serve, RetryDecision, RetryPolicy};
use super::view::{ClusterView, Node};
use crate::connection::Connection;
use crate::error::Error;
use crate::result::QueryResult;
use crate::routing::murmur3::Token;
use crate::routing::ring::{NodeIndex, ReplicaMap};
use crate::routing::tablets::TabletReplicas;
use crate::telemetry::event;
use doppio_proto::tablet_version::UNKNOWN_VERSION_BLOCK;

/// Where a request may go: the view it is routed with, and its token's replicas.
pub(super) struct Placement {
    pub(super) view: Rc<ClusterView>,
    pub(super) token: Option<Token>,
    pub(super) map: Option<Rc<ReplicaMap>>,
    /// The replicas of the token's tablet, when this shard knows it (ScyllaDB): they take
    /// the place of the ring's, each on its own shard.
    pub(super) tablet: Option<Rc<TabletReplicas>>,
    /// A lightweight transaction: its replicas are tried primary first.
    pub(super) lwt: bool,
}

impl Placement {
    /// The tablet version block an EXECUTE of this placement sends on a connection with
    /// tablets routing v2: its known tablet's next probe, else the block of an unknown
    /// version.
    #[inline]
    pub(super) fn tablet_block(&self) -> u8 {
        self.tablet
            .as_ref()
            .map_or(UNKNOWN_VERSION_BLOCK, |t| t.block())
    }

    /// What the load-balancing policy is told: the token and its replicas in placement
    /// order (its tablet's, or the ring's when the keyspace's replication is known).
    pub(super) fn routing(&self) -> RoutingInfo<'_> {
        let replicas = match (&self.tablet, &self.map, self.token) {
            (Some(tablet), _, _) => &tablet.nodes[..],
            (None, Some(map), Some(token)) => self.view.replicas(map, token),
            _ => &[],
        };
        RoutingInfo {
            token: self.token,
            replicas,
            lwt: self.lwt,
        }
    }

    /// The connection to send to on node `node` (index `index`): its ScyllaDB shard's,
    /// the tablet's shard there when the tablet is known and `node` holds a replica, else
    /// the shard that owns the token.
    #[inline]
    pub(super) fn connection(&self, index: NodeIndex, node: &Node) -> Option<Connection> {
        match self.tablet.as_ref().and_then(|t| t.shard_of(index)) {
            Some(shard) => node.pool.pick_on_shard(shard),
            None => node.pool.pick_for(self.token),
        }
    }
}

/// The rest of a plan, built on first need.
struct Plan {
    nodes: Vec<NodeIndex>,
    tried: Vec<NodeIndex>,
}

impl Plan {
    /// The next node of the plan not tried yet, with an open connection.
    fn next(&mut self, view: &ClusterView) -> Option<NodeIndex> {
        let next = self
            .nodes
            .iter()
            .copied()
            .find(|i| !self.tried.contains(i) && view.is_up(*i))?;
        self.tried.push(next);
        Some(next)
    }
}

/// How a request goes along its plan: whether it may be applied twice, which retry policy
/// decides after a failure, and its speculative execution (its statement's or profile's,
/// else the session's).
#[derive(Clone, Copy)]
pub(super) struct Attempts<'a> {
    pub(super) idempotent: bool,
    pub(super) retry: &'a dyn RetryPolicy,
    pub(super) speculative: Option<SpeculativeExecution>,
}

impl Session {
    /// How a request with `options` goes along its plan.
    pub(super) fn attempts<'a>(&'a self, options: &StatementOptions<'a>) -> Attempts<'a> {
        let config = &self.inner.config;
        Attempts {
            idempotent: options.idempotent,
            retry: options.retry_policy.unwrap_or(&*config.retry_policy),
            speculative: options.speculative.or(config.speculative),
        }
    }

    /// How the driver's own requests go along their plan: the session's policies.
    pub(super) fn own_attempts(&self, idempotent: bool) -> Attempts<'_> {
        let config = &self.inner.config;
        Attempts {
            idempotent,
            retry: &*config.retry_policy,
            speculative: config.speculative,
        }
    }

    /// Runs `attempt` on the nodes of `placement`'s plan as the retry policy directs, its
    /// latency recorded (QUERY and BATCH; an EXECUTE's future records its own).
    pub(super) async fn run<F, Fut>(
        &self,
        placement: Placement,
        attempts: Attempts<'_>,
        attempt: F,
    ) -> Result<QueryResult, Error>
    where
        F: Fn(Connection) -> Fut,
        Fut: Future<Output = Result<QueryResult, Error>>,
    {
        let started = self.latency_start();
        let result = self.run_from(placement, attempts, None, attempt).await;
        self.latency_end(started);
        result
    }

    /// As [`Session::run`], after the `first` attempt when the caller already made it (on
    /// the node its policy picked, counted as started there): its result is taken as that
    /// attempt's, then the plan goes on as the retry policy directs.
    pub(super) async fn run_from<F, Fut>(
        &self,
        placement: Placement,
        attempts: Attempts<'_>,
        mut first: Option<FirstAttempt>,
        attempt: F,
    ) -> Result<QueryResult, Error>
    where
        F: Fn(Connection) -> Fut,
        Fut: Future<Output = Result<QueryResult, Error>>,
    {
        if first.is_none() {
            if let Some(reason) = self.inner.closed.borrow().clone() {
                let e = Err(Error::Closed(reason));
                self.count(&e, 0);
                return e;
            }
        }
        let view = &placement.view;
        let routing = placement.routing();
        let policy = &self.inner.policy;
        let mut current = match &first {
            Some(f) => Some(f.index),
            None => policy.pick(view, &routing),
        };
        let mut plan: Option<Plan> = None;
        let mut retries = 0u32;
        let mut last_error: Option<Error> = None;
        let plan_of = |current: Option<NodeIndex>| -> Plan {
            let mut p = Plan {
                nodes: Vec::new(),
                tried: current.into_iter().collect(),
            };
            policy.plan(view, &routing, &mut p.nodes);
            p
        };
        loop {
            let Some(index) = current else {
                let e = Err(last_error.unwrap_or_else(|| Error::NoConnection(self.why_no_node())));
                self.count(&e, retries);
                return e;
            };
            let Some(node) = view.node(index) else {
                current = plan.get_or_insert_with(|| plan_of(current)).next(view);
                continue;
            };
            // The result is matched by reference and returned as it came: rebuilding it
            // (`Ok(r)` from `r`) or holding it across an await costs a copy of it per request.
            let speculative = attempts
                .speculative
                .filter(|spec| attempts.idempotent && spec.max > 0)
                .filter(|_| first.is_none());
            let result = match first.take() {
                Some(f) => f.result,
                None => {
                    // A ScyllaDB node: the connection of the shard that owns the token.
                    let Some(conn) = placement.connection(index, node) else {
                        // Went down since the plan was made: nothing was sent; next node.
                        current = plan.get_or_insert_with(|| plan_of(current)).next(view);
                        continue;
                    };
                    match speculative {
                        Some(spec) => {
                            let plan = plan.get_or_insert_with(|| plan_of(current));
                            // Boxed: the rare path must not grow every request's future.
                            let speculate = self.speculate(
                                &placement,
                                node.clone(),
                                conn,
                                plan,
                                spec,
                                &attempt,
                            );
                            Box::pin(speculate).await
                        }
                        None => {
                            node.started();
                            attempt(conn).await
                        }
                    }
                }
            };
            match &result {
                Ok(r) if matches!(r.body, ResultBody::SchemaChange(_)) => {
                    // Boxed: rare, and large; the result moves into it.
                    return Box::pin(self.schema_changed(result, retries)).await;
                }
                Ok(_) => {
                    self.count(&result, retries);
                    return result;
                }
                // (The speculative path counts its attempts' failures itself.)
                Err(_) if speculative.is_none() => node.failed(),
                Err(_) => {}
            }
            let error = match result {
                Ok(r) => return Ok(r),
                Err(e) => e,
            };
            let decision = attempts.retry.decide(&error, attempts.idempotent, retries);
            event!(
                debug,
                node = %node.addr(),
                error = %crate::error::Report(&error),
                kind = error.kind().name(),
                ?decision,
                retries,
                "request failed; the retry policy decided"
            );
            match decision {
                RetryDecision::Fail => {
                    let e = Err(error);
                    self.count(&e, retries);
                    return e;
                }
                RetryDecision::RetrySameNode => {
                    retries += 1;
                    last_error = Some(error);
                }
                RetryDecision::RetryNextNode => {
                    let next = plan.get_or_insert_with(|| plan_of(current)).next(view);
                    // With no other node: the same node again only if its connection failed
                    // the request (another may serve it) and it is still up; a node that
                    // refused it is not asked again at once (see `retry`).
                    let again = current.filter(|&i| same_node_may_serve(&error) && view.is_up(i));
                    let Some(target) = next.or(again) else {
                        let e = Err(error);
                        self.count(&e, retries);
                        return e;
                    };
                    retries += 1;
                    last_error = Some(error);
                    current = Some(target);
                }
            }
            if let Some(backoff) = self.inner.config.retry_backoff {
                let delay =
                    backoff.delay(retries.saturating_sub(1), self.inner.retry_jitter.next());
                if !delay.is_zero() {
                    // Boxed: the rare path must not grow every request's future.
                    Box::pin(doppio_rt::sleep(delay)).await;
                }
            }
        }
    }

    /// A schema change succeeded: waits for schema agreement (as configured), then counts
    /// and returns the result.
    async fn schema_changed(
        &self,
        result: Result<QueryResult, Error>,
        retries: u32,
    ) -> Result<QueryResult, Error> {
        if let Ok(r) = &result {
            self.after_schema_change(r).await;
        }
        self.count(&result, retries);
        result
    }

    /// Runs `attempt` on `first`, and on the next nodes of `plan` each `spec.delay` later
    /// while no answer has come; the first success wins. If every attempt fails, the last
    /// error is returned.
    async fn speculate<F, Fut>(
        &self,
        placement: &Placement,
        first: Rc<Node>,
        conn: Connection,
        plan: &mut Plan,
        spec: SpeculativeExecution,
        attempt: &F,
    ) -> Result<QueryResult, Error>
    where
        F: Fn(Connection) -> Fut,
        Fut: Future<Output = Result<QueryResult, Error>>,
    {
        let view = &*placement.view;
        // The speculative path only: boxed attempts, one per node asked.
        first.started();
        let mut running: Vec<(Rc<Node>, Pin<Box<Fut>>)> = vec![(first, Box::pin(attempt(conn)))];
        let mut launched = 0usize;
        let mut timer = Some(Box::pin(doppio_rt::Timer::new(spec.delay)));
        let mut last_error: Option<Error> = None;
        std::future::poll_fn(|cx| {
            loop {
                let mut i = 0;
                while i < running.len() {
                    match running[i].1.as_mut().poll(cx) {
                        Poll::Ready(Ok(r)) => return Poll::Ready(Ok(r)),
                        Poll::Ready(Err(e)) => {
                            let (node, _) = running.swap_remove(i);
                            node.failed();
                            last_error = Some(e);
                        }
                        Poll::Pending => i += 1,
                    }
                }
                let more = launched < spec.max;
                let fire = match timer.as_mut() {
                    Some(t) if more => t.as_mut().poll(cx).is_ready(),
                    _ => false,
                };
                // Launch the next node when the delay passed.
                if fire {
                    if let Some(next) = plan.next(view) {
                        if let Some(node) = view.node(next).cloned() {
                            if let Some(c) = placement.connection(next, &node) {
                                launched += 1;
                                node.started();
                                running.push((node, Box::pin(attempt(c))));
                                timer = Some(Box::pin(doppio_rt::Timer::new(spec.delay)));
                                continue;
                            }
                        }
                    }
                    timer = None;
                }
                if running.is_empty() {
                    return Poll::Ready(Err(last_error
                        .take()
                        .unwrap_or_else(|| Error::NoConnection("no node left to try".into()))));
                }
                return Poll::Pending;
            }
        })
        .await
    }
}
