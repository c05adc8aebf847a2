//! The scylla backend's errors: its own ([`err`]), and a request's failure mapped onto the
//! bench's kinds ([`classify`]).

use scylla::errors::{DbError, ExecutionError, RequestAttemptError};

use super::rows;
use crate::engine::error_kind::ErrorKind;
use crate::engine::phase::BackendError;
use crate::engine::RequestError;

/// Protocol v5's CDC_WRITE_FAILURE error code.
const CDC_WRITE_FAILURE: i32 = 0x1600;
/// Protocol v5's CAS_WRITE_UNKNOWN error code.
const CAS_WRITE_UNKNOWN: i32 = 0x1700;

pub(super) fn err(message: impl Into<String>) -> BackendError {
    BackendError {
        driver: "scylla",
        message: message.into(),
    }
}

/// The bench's kind of a scylla-rust-driver error: the kind of the same failure on any
/// backend (so `errors_by_kind` compares like with like).
pub(crate) fn classify(e: &ExecutionError) -> ErrorKind {
    match e {
        ExecutionError::RequestTimeout(_) => ErrorKind::Timeout,
        ExecutionError::ConnectionPoolError(_) => ErrorKind::NoConnection,
        ExecutionError::LastAttemptError(a) => match a {
            RequestAttemptError::DbError(db, _) => match db {
                DbError::Unavailable { .. } => ErrorKind::Unavailable,
                DbError::Overloaded => ErrorKind::Overloaded,
                DbError::IsBootstrapping => ErrorKind::Bootstrapping,
                DbError::WriteTimeout { .. } => ErrorKind::WriteTimeout,
                DbError::ReadTimeout { .. } => ErrorKind::ReadTimeout,
                DbError::ReadFailure { .. } => ErrorKind::ReadFailure,
                DbError::WriteFailure { .. } => ErrorKind::WriteFailure,
                DbError::FunctionFailure { .. } => ErrorKind::FunctionFailure,
                DbError::SyntaxError => ErrorKind::Syntax,
                DbError::Unauthorized => ErrorKind::Unauthorized,
                DbError::Invalid => ErrorKind::Invalid,
                DbError::ConfigError => ErrorKind::ConfigError,
                DbError::AlreadyExists { .. } => ErrorKind::AlreadyExists,
                DbError::Unprepared { .. } => ErrorKind::Unprepared,
                DbError::RateLimitReached { .. } => ErrorKind::RateLimited,
                // Protocol v5's codes, which scylla-rust-driver does not name: a CDC write
                // failure is a write failure, a CAS write unknown a write timeout (the write
                // may or may not have been applied), as on the doppio backend.
                DbError::Other(CDC_WRITE_FAILURE) => ErrorKind::WriteFailure,
                DbError::Other(CAS_WRITE_UNKNOWN) => ErrorKind::WriteTimeout,
                _ => ErrorKind::ServerError,
            },
            RequestAttemptError::BrokenConnectionError(_) => ErrorKind::ConnectionBroken,
            // scylla-rust-driver fails a request when a connection has no free stream id;
            // doppio makes it wait (backpressure): a kind of this backend's only.
            RequestAttemptError::UnableToAllocStreamId => ErrorKind::NoStreamId,
            RequestAttemptError::SerializationError(_)
            | RequestAttemptError::CqlRequestSerialization(_) => ErrorKind::Serialization,
            _ => ErrorKind::Protocol,
        },
        _ => ErrorKind::Other,
    }
}

pub(super) fn request_error(e: &ExecutionError) -> RequestError {
    RequestError {
        kind: classify(e),
        message: e.to_string(),
    }
}

pub(super) fn rows_error(e: &rows::RowsError) -> RequestError {
    RequestError {
        kind: ErrorKind::Serialization,
        // Each of its variants prints its cause.
        message: e.to_string(),
    }
}
