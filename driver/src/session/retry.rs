//! Retry policies: whether a failed request is sent again.
//!
//! A policy sees the error, whether the statement was marked idempotent
//! ([`StatementOptions::idempotent`](super::StatementOptions)), and how many retries were
//! made already. The session consults it only on the error path; a request that succeeds
//! never touches it.
//!
//! Invariant of [`DefaultRetryPolicy`]: a statement that is not idempotent is sent again only
//! when the node's answer proves it was not applied (OVERLOADED, IS_BOOTSTRAPPING,
//! UNAVAILABLE); a lost answer (client timeout, broken connection, server-side read or write
//! timeout) is retried only for idempotent statements.

use doppio_proto::response::ErrorCode;

use crate::error::Error;

/// What to do with a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
    /// Send it again (on the next open connection).
    Retry,
    /// Return the error to the caller.
    Fail,
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
/// applied, idempotent statements also when the answer was lost.
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
        let retry = match error {
            // The coordinator did not run the statement.
            Error::Server { error, .. } => match error.code {
                ErrorCode::Overloaded | ErrorCode::IsBootstrapping | ErrorCode::Unavailable => true,
                // The statement may have been applied on some replicas.
                ErrorCode::ReadTimeout | ErrorCode::WriteTimeout | ErrorCode::ServerError => {
                    idempotent
                }
                _ => false,
            },
            // The answer was lost; the request may or may not have been applied.
            Error::Timeout { .. } | Error::ConnectionBroken(_) => idempotent,
            _ => false,
        };
        if retry {
            RetryDecision::Retry
        } else {
            RetryDecision::Fail
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

    #[test]
    fn non_idempotent_statements_are_retried_only_when_not_applied() {
        let p = DefaultRetryPolicy::default();
        for code in [
            ErrorCode::Overloaded,
            ErrorCode::IsBootstrapping,
            ErrorCode::Unavailable,
        ] {
            assert_eq!(p.decide(&server(code), false, 0), RetryDecision::Retry);
            assert_eq!(
                p.decide(&server(code), false, 1),
                RetryDecision::Fail,
                "at most max_retries"
            );
        }
        let lost = [
            server(ErrorCode::WriteTimeout),
            server(ErrorCode::ReadTimeout),
            Error::Timeout {
                node: node(),
                after: Duration::from_secs(1),
            },
        ];
        for e in &lost {
            assert_eq!(p.decide(e, false, 0), RetryDecision::Fail, "{e}");
            assert_eq!(p.decide(e, true, 0), RetryDecision::Retry, "{e}");
        }
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
