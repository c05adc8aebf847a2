//! `--retries N` on scylla-rust-driver with the bench's decisions
//! ([`crate::backend::retry`]), the ones doppio's own policy makes, so that a comparison
//! under faults resends the same failed requests on both backends.
//!
//! scylla-rust-driver's own `DefaultRetryPolicy` decides differently: it retries at most
//! once per kind of error whatever `N` is, an OVERLOADED answer only for idempotent
//! statements, a write timeout only for batch-log writes. Those are the driver's defaults,
//! not its cost; a benchmark whose `--retries 2` meant one thing on one backend and another
//! on the other would compare retry policies, not drivers.
//!
//! [`BenchRetry`] maps each scylla attempt's error onto the bench's [`AttemptFailure`] (a server
//! error by its variant, a broken connection, a request never sent) and follows the bench's
//! [`Attempts`], whose decision it maps back.
//!
//! Left different: doppio's request timeout is per attempt and a lost answer of an
//! idempotent statement is retried; scylla's `request_timeout` bounds the whole request,
//! retries included, and its retry policy never sees a timeout.
//!
//! Only the error path runs this: a request that succeeds only creates its session (one
//! small allocation per request, as scylla's own `DefaultRetrySession` costs).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use scylla::errors::{DbError, RequestAttemptError};
use scylla::policies::retry::{RequestInfo, RetryDecision, RetryPolicy, RetrySession};

use crate::backend::retry::{
    AttemptFailure, Attempts, RetryDecision as BenchDecision, RetryPolicy as BenchPolicy,
};

/// The bench's retry policy with `max_retries`, for scylla-rust-driver.
#[derive(Debug)]
pub(crate) struct BenchRetry {
    policy: BenchPolicy,
    /// The cluster's nodes, as scylla-rust-driver knows them once connected (1 until then).
    nodes: Arc<AtomicUsize>,
}

impl BenchRetry {
    /// At most `max_retries` retries per request. `nodes` is set once the session has
    /// connected (see [`BenchRetry::nodes`]).
    pub(crate) fn new(max_retries: u32) -> Self {
        Self {
            policy: BenchPolicy { max_retries },
            nodes: Arc::new(AtomicUsize::new(1)),
        }
    }

    /// The cell to store the cluster's node count in once the session knows it.
    pub(crate) fn nodes(&self) -> Arc<AtomicUsize> {
        self.nodes.clone()
    }

    /// A request's retries, none yet.
    fn attempts(&self) -> Session {
        // A plain load on the request path (no read-modify-write): the count changes only
        // when the session connects.
        Session(Attempts::new(
            self.policy,
            self.nodes.load(Ordering::Relaxed),
        ))
    }
}

impl RetryPolicy for BenchRetry {
    fn new_session(&self) -> Box<dyn RetrySession> {
        Box::new(self.attempts())
    }
}

/// One request's retries so far.
struct Session(Attempts);

impl RetrySession for Session {
    fn decide_should_retry(&mut self, info: RequestInfo<'_>) -> RetryDecision {
        self.decide(info.error, info.is_idempotent)
    }

    fn reset(&mut self) {
        self.0.reset();
    }
}

impl Session {
    fn decide(&mut self, error: &RequestAttemptError, idempotent: bool) -> RetryDecision {
        match self.0.next(failure(error), idempotent) {
            BenchDecision::RetrySameNode => RetryDecision::RetrySameTarget(None),
            BenchDecision::RetryNextNode => RetryDecision::RetryNextTarget(None),
            BenchDecision::Fail => RetryDecision::DontRetry,
        }
    }
}

/// What a scylla attempt's error says about its statement, in the bench's words.
fn failure(e: &RequestAttemptError) -> AttemptFailure {
    match e {
        RequestAttemptError::DbError(db, _) => match db {
            DbError::Overloaded
            | DbError::IsBootstrapping
            | DbError::Unavailable { .. }
            | DbError::Unprepared { .. } => AttemptFailure::NotRun,
            DbError::ReadTimeout { .. } | DbError::WriteTimeout { .. } => {
                AttemptFailure::ReplicasSlow
            }
            DbError::ServerError => AttemptFailure::CoordinatorFailed,
            // ScyllaDB's rate limit among them: another attempt only adds to the load it
            // sheds.
            _ => AttemptFailure::Final,
        },
        RequestAttemptError::BrokenConnectionError(_) => AttemptFailure::Lost,
        // scylla-rust-driver fails a request that finds no free stream id; it was not sent.
        RequestAttemptError::UnableToAllocStreamId => AttemptFailure::NotSent,
        // Serialization, an unreadable answer: never retried.
        _ => AttemptFailure::Final,
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
        policy: &BenchRetry,
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
    fn decisions_follow_the_bench_policy_for_every_kind_of_error() {
        let next = RetryDecision::RetryNextTarget(None);
        let same = RetryDecision::RetrySameTarget(None);
        let stop = RetryDecision::DontRetry;
        let policy = BenchRetry::new(2);
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
        let policy = BenchRetry::new(3);
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
        let policy = BenchRetry::new(1);
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
        attempts.reset();
        assert_eq!(attempts.decide(&error, true), first);
    }
}
