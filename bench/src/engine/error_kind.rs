//! The bench's own kind of a failed request ([`ErrorKind`]): what the engine counts errors
//! by and the report names them by, whichever backend failed it.
//!
//! Each adapter maps its driver's errors onto these kinds (`backend::doppio` from doppio's
//! errors, `backend::scylla_rust_driver` from scylla-rust-driver's), so that `errors_by_kind` compares
//! like with like and neither driver's vocabulary is the bench's. The names
//! ([`ErrorKind::as_str`]) are the report's keys: stable, snake case.

/// Why a request failed, as the bench counts it. `Copy`, so the request path carries it
/// without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum ErrorKind {
    /// The node answered UNAVAILABLE (not enough live replicas).
    Unavailable,
    /// The node answered OVERLOADED.
    Overloaded,
    /// The node answered IS_BOOTSTRAPPING.
    Bootstrapping,
    /// The node answered READ_TIMEOUT.
    ReadTimeout,
    /// The node answered WRITE_TIMEOUT.
    WriteTimeout,
    /// The node answered READ_FAILURE.
    ReadFailure,
    /// The node answered WRITE_FAILURE.
    WriteFailure,
    /// The node answered FUNCTION_FAILURE.
    FunctionFailure,
    /// The node answered SYNTAX_ERROR.
    Syntax,
    /// The node answered UNAUTHORIZED.
    Unauthorized,
    /// The node answered INVALID.
    Invalid,
    /// The node answered CONFIG_ERROR.
    ConfigError,
    /// The node answered ALREADY_EXISTS.
    AlreadyExists,
    /// The node answered UNPREPARED (after the driver's own re-prepare failed too).
    Unprepared,
    /// Any other ERROR of the node (SERVER_ERROR, PROTOCOL_ERROR, TRUNCATE_ERROR, codes the
    /// protocol version does not define).
    ServerError,
    /// ScyllaDB's per-partition rate limit refused the operation.
    RateLimited,
    /// No answer within the client's request timeout.
    Timeout,
    /// The connection broke with the request in flight.
    ConnectionBroken,
    /// No open connection to send on.
    NoConnection,
    /// A connection had no free stream id, and the driver failed the request rather than
    /// wait for one (scylla-rust-driver does; doppio waits).
    NoStreamId,
    /// The session was closed.
    Closed,
    /// The node broke the protocol, or answered nonsense.
    Protocol,
    /// A value could not be encoded, or a result decoded.
    Serialization,
    /// The connection's handshake or authentication failed.
    Handshake,
    /// TLS failed: a certificate refused, a node not speaking TLS, a TLS handshake that timed
    /// out.
    Tls,
    /// A trace asked for was not found, or never finished.
    TraceUnavailable,
    /// `--validate`: a returned value is not the one its writer wrote.
    InvalidValue,
    /// `--validate`: a row its writer wrote was not returned.
    MissingRow,
    /// A failure the backend's driver reports and no other kind names.
    Other,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    #[cfg(test)]
    pub(crate) const ALL: [ErrorKind; 29] = [
        ErrorKind::Unavailable,
        ErrorKind::Overloaded,
        ErrorKind::Bootstrapping,
        ErrorKind::ReadTimeout,
        ErrorKind::WriteTimeout,
        ErrorKind::ReadFailure,
        ErrorKind::WriteFailure,
        ErrorKind::FunctionFailure,
        ErrorKind::Syntax,
        ErrorKind::Unauthorized,
        ErrorKind::Invalid,
        ErrorKind::ConfigError,
        ErrorKind::AlreadyExists,
        ErrorKind::Unprepared,
        ErrorKind::ServerError,
        ErrorKind::RateLimited,
        ErrorKind::Timeout,
        ErrorKind::ConnectionBroken,
        ErrorKind::NoConnection,
        ErrorKind::NoStreamId,
        ErrorKind::Closed,
        ErrorKind::Protocol,
        ErrorKind::Serialization,
        ErrorKind::Handshake,
        ErrorKind::Tls,
        ErrorKind::TraceUnavailable,
        ErrorKind::InvalidValue,
        ErrorKind::MissingRow,
        ErrorKind::Other,
    ];

    /// The kinds that mean the node went out of reach (a worker whose every request fails
    /// with one of them stops).
    pub(crate) const NODE_GONE: [ErrorKind; 3] = [
        ErrorKind::ConnectionBroken,
        ErrorKind::NoConnection,
        ErrorKind::Closed,
    ];

    /// The kind's stable name, as reports key it.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Bootstrapping => "bootstrapping",
            ErrorKind::ReadTimeout => "read_timeout",
            ErrorKind::WriteTimeout => "write_timeout",
            ErrorKind::ReadFailure => "read_failure",
            ErrorKind::WriteFailure => "write_failure",
            ErrorKind::FunctionFailure => "function_failure",
            ErrorKind::Syntax => "syntax",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Invalid => "invalid",
            ErrorKind::ConfigError => "config_error",
            ErrorKind::AlreadyExists => "already_exists",
            ErrorKind::Unprepared => "unprepared",
            ErrorKind::ServerError => "server_error",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Timeout => "timeout",
            ErrorKind::ConnectionBroken => "connection_broken",
            ErrorKind::NoConnection => "no_connection",
            ErrorKind::NoStreamId => "no_stream_id",
            ErrorKind::Closed => "closed",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Serialization => "serialization",
            ErrorKind::Handshake => "handshake",
            ErrorKind::Tls => "tls",
            ErrorKind::TraceUnavailable => "trace_unavailable",
            ErrorKind::InvalidValue => "invalid_value",
            ErrorKind::MissingRow => "missing_row",
            ErrorKind::Other => "other",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ALL` lists each kind once, and no two kinds share a name (the report keys by it).
    #[test]
    fn every_kind_has_its_own_name() {
        let mut names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k}: ALL is in declaration order");
        }
    }
}
