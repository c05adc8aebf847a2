//! `--retries N` on scylla-rust-driver with doppio's decisions, so that a comparison under
//! faults resends the same failed requests on both backends.
//!
//! scylla-rust-driver's own `DefaultRetryPolicy` decides differently: it retries at most
//! once per kind of error whatever `N` is, an OVERLOADED answer only for idempotent
//! statements, a write timeout only for batch-log writes. Those are the driver's defaults,
//! not its cost; a benchmark whose `--retries 2` meant one thing on one backend and another
//! on the other would compare retry policies, not drivers.
//!
//! [`SameAsDoppio`] asks doppio's [`DefaultRetryPolicy`] itself (no second copy of its
//! table): each scylla error is mapped to the doppio error it is (a server error by its wire
//! code, a broken connection, a request never sent), and doppio's decision is mapped back.
//! Once a request has moved to every other node of the cluster, a "next node" decision
//! becomes "same node" when doppio would send it there (its connection failed it:
//! `doppio_driver::session::same_node_may_serve`) and ends the request otherwise, as doppio does.
//!
//! Left different: doppio's request timeout is per attempt and a lost answer of an
//! idempotent statement is retried; scylla's `request_timeout` bounds the whole request,
//! retries included, and its retry policy never sees a timeout.
//!
//! Only the error path runs this: a request that succeeds only creates its session (one
//! small allocation per request, as scylla's own `DefaultRetrySession` costs).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use doppio_driver::connection::{BreakCause, ConnectionError};
use doppio_driver::proto::response::{ErrorCode, ErrorDetail, ErrorResponse};
use doppio_driver::proto::scylla_extensions::{RateLimitError, RateLimitedOp};
use doppio_driver::session::{
    same_node_may_serve, DefaultRetryPolicy, RetryDecision as DoppioDecision, RetryPolicy as _,
};
use doppio_driver::Error;
use scylla::errors::{DbError, OperationType, RequestAttemptError};
use scylla::frame::protocol_features::ProtocolFeatures;
use scylla::policies::retry::{RequestInfo, RetryDecision, RetryPolicy, RetrySession};

/// doppio's [`DefaultRetryPolicy`] with `max_retries`, for scylla-rust-driver.
#[derive(Debug)]
pub(crate) struct SameAsDoppio {
    policy: DefaultRetryPolicy,
    /// The cluster's nodes, as scylla-rust-driver knows them once connected (1 until then).
    nodes: Arc<AtomicUsize>,
}

impl SameAsDoppio {
    /// At most `max_retries` retries per request. `nodes` is set once the session has
    /// connected (see [`SameAsDoppio::nodes`]).
    pub(crate) fn new(max_retries: u32) -> Self {
        Self {
            policy: DefaultRetryPolicy { max_retries },
            nodes: Arc::new(AtomicUsize::new(1)),
        }
    }

    /// The cell to store the cluster's node count in once the session knows it.
    pub(crate) fn nodes(&self) -> Arc<AtomicUsize> {
        self.nodes.clone()
    }

    /// A request's retries, none yet.
    fn attempts(&self) -> Attempts {
        Attempts {
            policy: self.policy,
            // A plain load on the request path (no read-modify-write): the count changes
            // only when the session connects.
            nodes: self.nodes.load(Ordering::Relaxed),
            retries: 0,
            moves: 0,
        }
    }
}

impl RetryPolicy for SameAsDoppio {
    fn new_session(&self) -> Box<dyn RetrySession> {
        Box::new(self.attempts())
    }
}

/// One request's retries so far.
struct Attempts {
    policy: DefaultRetryPolicy,
    nodes: usize,
    retries: u32,
    /// Retries sent to another node: at `nodes - 1`, every other node has been tried.
    moves: usize,
}

impl RetrySession for Attempts {
    fn decide_should_retry(&mut self, info: RequestInfo<'_>) -> RetryDecision {
        self.decide(info.error, info.is_idempotent)
    }

    fn reset(&mut self) {
        self.retries = 0;
        self.moves = 0;
    }
}

impl Attempts {
    fn decide(&mut self, error: &RequestAttemptError, idempotent: bool) -> RetryDecision {
        let Some(error) = doppio_error(error) else {
            return RetryDecision::DontRetry;
        };
        let decision = self.policy.decide(&error, idempotent, self.retries);
        match decision {
            DoppioDecision::Fail => return RetryDecision::DontRetry,
            DoppioDecision::RetrySameNode => {}
            DoppioDecision::RetryNextNode if self.moves + 1 < self.nodes => {
                self.moves += 1;
                self.retries += 1;
                return RetryDecision::RetryNextTarget(None);
            }
            // No other node left: the same node again if its connection failed the
            // request, as doppio does; else the request ends with the node's answer.
            DoppioDecision::RetryNextNode if same_node_may_serve(&error) => {}
            DoppioDecision::RetryNextNode => return RetryDecision::DontRetry,
        }
        self.retries += 1;
        RetryDecision::RetrySameTarget(None)
    }
}

/// The doppio error a scylla attempt's error is, for the decisions that depend on it: a
/// server error (by its wire code), a broken connection, or a request that was never sent
/// (no stream id). Others (serialization, parse errors) are never retried by either policy.
fn doppio_error(e: &RequestAttemptError) -> Option<Error> {
    // The node is not part of a decision; the retry policy never sees it.
    let node = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
    match e {
        // ScyllaDB's rate-limit error is known by its fields, not by its code (the node
        // chooses it, and `DbError::code` panics without the negotiated features): doppio's
        // policy never retries it.
        RequestAttemptError::DbError(
            DbError::RateLimitReached {
                op_type,
                rejected_by_coordinator,
            },
            _,
        ) => Some(Error::Server {
            node,
            error: Box::new(ErrorResponse {
                code: ErrorCode::Other(0),
                message: String::new(),
                detail: ErrorDetail::RateLimit(RateLimitError {
                    op: match op_type {
                        OperationType::Read => RateLimitedOp::Read,
                        _ => RateLimitedOp::Write,
                    },
                    rejected_by_coordinator: *rejected_by_coordinator,
                }),
            }),
        }),
        RequestAttemptError::DbError(db, _) => Some(Error::Server {
            node,
            error: Box::new(ErrorResponse {
                code: ErrorCode::from_code(db.code(&ProtocolFeatures::default())),
                message: String::new(),
                detail: ErrorDetail::None,
            }),
        }),
        RequestAttemptError::BrokenConnectionError(_) => {
            Some(Error::ConnectionBroken(ConnectionError::Broken {
                addr: node,
                cause: BreakCause::ClosedByNode,
            }))
        }
        RequestAttemptError::UnableToAllocStreamId => Some(Error::NoConnection(String::new())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use scylla::errors::{BrokenConnectionErrorKind, WriteType};
    use scylla::frame::types::Consistency;

    use super::*;

    fn db(e: DbError) -> RequestAttemptError {
        RequestAttemptError::DbError(e, "test".into())
    }

    fn every_kind() -> Vec<(&'static str, RequestAttemptError)> {
        vec![
            ("overloaded", db(DbError::Overloaded)),
            ("bootstrapping", db(DbError::IsBootstrapping)),
            (
                "unavailable",
                db(DbError::Unavailable {
                    consistency: Consistency::Quorum,
                    required: 2,
                    alive: 1,
                }),
            ),
            (
                "read timeout",
                db(DbError::ReadTimeout {
                    consistency: Consistency::Quorum,
                    received: 2,
                    required: 2,
                    data_present: true,
                }),
            ),
            (
                "write timeout",
                db(DbError::WriteTimeout {
                    consistency: Consistency::Quorum,
                    received: 1,
                    required: 2,
                    write_type: WriteType::Simple,
                }),
            ),
            ("server error", db(DbError::ServerError)),
            ("invalid", db(DbError::Invalid)),
            ("syntax", db(DbError::SyntaxError)),
            (
                "broken",
                RequestAttemptError::BrokenConnectionError(
                    BrokenConnectionErrorKind::KeepaliveTimeout(IpAddr::from([127, 0, 0, 1]))
                        .into(),
                ),
            ),
            ("no stream id", RequestAttemptError::UnableToAllocStreamId),
            (
                "rate limited",
                db(DbError::RateLimitReached {
                    op_type: scylla::errors::OperationType::Write,
                    rejected_by_coordinator: true,
                }),
            ),
        ]
    }

    /// The decisions of a request failing with `error` every time, until it stops.
    fn decisions(
        policy: &SameAsDoppio,
        error: &RequestAttemptError,
        idempotent: bool,
    ) -> Vec<RetryDecision> {
        let mut attempts = policy.attempts();
        let mut out = Vec::new();
        loop {
            let d = attempts.decide(error, idempotent);
            out.push(d.clone());
            if d == RetryDecision::DontRetry || out.len() > 10 {
                return out;
            }
        }
    }

    #[test]
    fn decisions_follow_doppios_policy_for_every_kind_of_error() {
        let next = RetryDecision::RetryNextTarget(None);
        let same = RetryDecision::RetrySameTarget(None);
        let stop = RetryDecision::DontRetry;
        let policy = SameAsDoppio::new(2);
        policy.nodes().store(3, Ordering::Relaxed);
        for (name, error) in every_kind() {
            let expected: [Vec<RetryDecision>; 2] = match name {
                // Not applied: any statement, to the next node.
                "overloaded" | "bootstrapping" | "unavailable" | "no stream id" => [
                    vec![next.clone(), next.clone(), stop.clone()],
                    vec![next.clone(), next.clone(), stop.clone()],
                ],
                // Replicas slow: idempotent statements only, on the same node.
                "read timeout" | "write timeout" => [
                    vec![stop.clone()],
                    vec![same.clone(), same.clone(), stop.clone()],
                ],
                // Answer lost or the coordinator failed: idempotent only, next node.
                "broken" | "server error" => [
                    vec![stop.clone()],
                    vec![next.clone(), next.clone(), stop.clone()],
                ],
                _ => [vec![stop.clone()], vec![stop.clone()]],
            };
            for (idempotent, expected) in [false, true].into_iter().zip(expected) {
                assert_eq!(
                    decisions(&policy, &error, idempotent),
                    expected,
                    "{name}, idempotent {idempotent}"
                );
            }
        }
    }

    #[test]
    fn a_next_node_retry_stays_on_the_node_when_every_other_was_tried() {
        let (next, same) = (
            RetryDecision::RetryNextTarget(None),
            RetryDecision::RetrySameTarget(None),
        );
        let stop = RetryDecision::DontRetry;
        let policy = SameAsDoppio::new(3);
        let overloaded = db(DbError::Overloaded);
        let broken = every_kind()
            .into_iter()
            .find(|(name, _)| *name == "broken")
            .unwrap()
            .1;
        for (nodes, error, expected) in [
            // One node (the stub): a node that shed the request is not asked again at once,
            // as doppio does not.
            (1, &overloaded, vec![stop.clone()]),
            // Two nodes: the other one, then the request ends.
            (2, &overloaded, vec![next.clone(), stop.clone()]),
            // A broken connection: another connection of the same node may serve it.
            (
                1,
                &broken,
                vec![same.clone(), same.clone(), same.clone(), stop.clone()],
            ),
            (2, &broken, vec![next, same.clone(), same, stop]),
        ] {
            policy.nodes().store(nodes, Ordering::Relaxed);
            assert_eq!(
                decisions(&policy, error, true),
                expected,
                "{nodes} nodes, {error}"
            );
        }
    }

    #[test]
    fn a_reset_session_starts_counting_again() {
        let policy = SameAsDoppio::new(1);
        let mut attempts = policy.attempts();
        let error = db(DbError::WriteTimeout {
            consistency: Consistency::Quorum,
            received: 1,
            required: 2,
            write_type: WriteType::Simple,
        });
        let first = RetryDecision::RetrySameTarget(None);
        assert_eq!(attempts.decide(&error, true), first);
        assert_eq!(attempts.decide(&error, true), RetryDecision::DontRetry);
        RetrySession::reset(&mut attempts);
        assert_eq!(attempts.decide(&error, true), first);
    }
}
