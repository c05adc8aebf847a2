//! Retry policies: whether a failed request is sent again.
//!
//! A policy sees the error, whether the statement was marked idempotent
//! ([`StatementConfig::idempotent`](super::StatementConfig::idempotent)), and how many retries were
//! made already. The session consults it only on the error path; a request that succeeds
//! never touches it.
//!
//! A decision says where the request goes next: the same node again, or the next node of the
//! load-balancing plan. When the plan has no other node, a "next node" request goes to the
//! same node again only if its connection failed it (a client timeout, a broken
//! connection: another connection may serve it, [`same_node_may_serve`]); a node that
//! refused it (OVERLOADED, UNAVAILABLE, IS_BOOTSTRAPPING, SERVER_ERROR, UNPREPARED again)
//! is not asked again at once, and the request fails with its answer, as the Java driver
//! and scylla-rust-driver end a plan that has run out. Resending at once what a node shed
//! only adds to the load it shed.
//!
//! Invariant of [`DefaultRetryPolicy`]: a statement that is not idempotent is sent again only
//! when the node's answer proves it was not applied (OVERLOADED, IS_BOOTSTRAPPING,
//! UNAVAILABLE, and UNPREPARED once the session's own re-prepare on that node did not
//! help: the next node); a lost answer (client timeout, broken connection) or a
//! server-side read or write timeout is retried only for idempotent statements (timeouts
//! on the same node, whose replicas may just have been slow; lost answers on the next).

use doppio_proto::response::{ErrorCode, ErrorDetail};

use crate::error::Error;

/// What to do with a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
    /// Send it again to the node that failed it.
    RetrySameNode,
    /// Send it to the next node of the plan (with no other: the same one only if
    /// [`same_node_may_serve`] the error; else the request fails with it).
    RetryNextNode,
    /// Return the error to the caller.
    Fail,
}

/// Whether a request that failed with `error`, which the policy sends to the next node, may
/// go to the same node when the plan has no other: only when the failure was its
/// connection's (a client timeout, a broken connection, no connection or stream id to send
/// on), which another connection to it may not share. An answer of the node itself (it
/// shed the request, lacks replicas, is starting) would come again.
pub fn same_node_may_serve(error: &Error) -> bool {
    matches!(
        error,
        Error::Timeout { .. } | Error::ConnectionBroken(_) | Error::NoConnection(_)
    )
}

/// Decides whether a failed request is retried. Shared by every shard, hence `Send + Sync`;
/// called only after a failure.
pub trait RetryPolicy: std::fmt::Debug + Send + Sync {
    /// `retries` is the number of retries already made for this request (0 on the first
    /// failure).
    fn decide(&self, error: &Error, idempotent: bool, retries: u32) -> RetryDecision;
}

/// Never retries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoRetry;

impl RetryPolicy for NoRetry {
    fn decide(&self, _error: &Error, _idempotent: bool, _retries: u32) -> RetryDecision {
        RetryDecision::Fail
    }
}

/// Retries up to `max_retries` times: any statement on errors that prove it was not
/// applied (on the next node), idempotent statements also when the answer was lost (on the
/// next node) or the replicas timed out (on the same node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultRetryPolicy {
    /// Retries per request at most.
    pub max_retries: u32,
}

impl Default for DefaultRetryPolicy {
    fn default() -> Self {
        Self { max_retries: 1 }
    }
}

impl RetryPolicy for DefaultRetryPolicy {
    fn decide(&self, error: &Error, idempotent: bool, retries: u32) -> RetryDecision {
        if retries >= self.max_retries {
            return RetryDecision::Fail;
        }
        match error {
            // ScyllaDB's per-partition rate limit: another attempt, anywhere, only adds to
            // the load the limit sheds (its extension says never to retry it).
            Error::Server { error, .. } if matches!(error.detail, ErrorDetail::RateLimit(_)) => {
                RetryDecision::Fail
            }
            // The coordinator did not run the statement: another coordinator may.
            Error::Server { error, .. } => match error.code {
                ErrorCode::Overloaded | ErrorCode::IsBootstrapping | ErrorCode::Unavailable => {
                    RetryDecision::RetryNextNode
                }
                // The session heals one UNPREPARED by preparing again on that node; this is
                // a second one, from a node that forgot the statement again at once (a node
                // that has just joined, still applying the schema it pulls). The EXECUTE was
                // not run: another node may take it.
                ErrorCode::Unprepared => RetryDecision::RetryNextNode,
                // The statement may have been applied on some replicas; the coordinator is
                // fine, its replicas were slow.
                ErrorCode::ReadTimeout | ErrorCode::WriteTimeout if idempotent => {
                    RetryDecision::RetrySameNode
                }
                ErrorCode::ServerError if idempotent => RetryDecision::RetryNextNode,
                _ => RetryDecision::Fail,
            },
            // The answer was lost; the request may or may not have been applied.
            Error::Timeout { .. } | Error::ConnectionBroken(_) if idempotent => {
                RetryDecision::RetryNextNode
            }
            // Nothing was sent: another node may take it.
            Error::NoConnection(_) => RetryDecision::RetryNextNode,
            _ => RetryDecision::Fail,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::time::Duration;

    use doppio_proto::response::{ErrorDetail, ErrorResponse};

    use super::*;

    fn node() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 9042))
    }

    fn server(code: ErrorCode) -> Error {
        Error::Server {
            node: node(),
            error: Box::new(ErrorResponse {
                code,
                message: "test".into(),
                detail: ErrorDetail::None,
            }),
        }
    }

    /// ScyllaDB's rate-limit error, read (its detail typed), is never retried, idempotent or
    /// not, and counts as its own kind.
    #[test]
    fn a_rate_limited_request_is_never_retried() {
        use doppio_proto::scylla_extensions::{RateLimitError, RateLimitedOp};
        let e = Error::Server {
            node: node(),
            error: Box::new(ErrorResponse {
                code: ErrorCode::Other(0xF000),
                message: "Per-partition rate limit reached".into(),
                detail: ErrorDetail::RateLimit(RateLimitError {
                    op: RateLimitedOp::Read,
                    rejected_by_coordinator: false,
                }),
            }),
        };
        assert_eq!(e.kind(), crate::ErrorKind::RateLimited);
        let p = DefaultRetryPolicy { max_retries: 5 };
        for idempotent in [false, true] {
            assert_eq!(p.decide(&e, idempotent, 0), RetryDecision::Fail);
        }
    }

    #[test]
    fn non_idempotent_statements_are_retried_only_when_not_applied() {
        let p = DefaultRetryPolicy::default();
        for code in [
            ErrorCode::Overloaded,
            ErrorCode::IsBootstrapping,
            ErrorCode::Unavailable,
            ErrorCode::Unprepared,
        ] {
            assert_eq!(
                p.decide(&server(code), false, 0),
                RetryDecision::RetryNextNode
            );
            assert_eq!(
                p.decide(&server(code), false, 1),
                RetryDecision::Fail,
                "at most max_retries"
            );
        }
        for e in [
            server(ErrorCode::WriteTimeout),
            server(ErrorCode::ReadTimeout),
        ] {
            assert_eq!(p.decide(&e, false, 0), RetryDecision::Fail, "{e}");
            assert_eq!(p.decide(&e, true, 0), RetryDecision::RetrySameNode, "{e}");
        }
        let lost = Error::Timeout {
            node: node(),
            after: Duration::from_secs(1),
        };
        assert_eq!(p.decide(&lost, false, 0), RetryDecision::Fail);
        assert_eq!(p.decide(&lost, true, 0), RetryDecision::RetryNextNode);
        for code in [
            ErrorCode::SyntaxError,
            ErrorCode::Invalid,
            ErrorCode::Unauthorized,
            ErrorCode::AlreadyExists,
        ] {
            assert_eq!(p.decide(&server(code), true, 0), RetryDecision::Fail);
        }
        assert_eq!(
            NoRetry.decide(&server(ErrorCode::Overloaded), true, 0),
            RetryDecision::Fail
        );
    }
}
