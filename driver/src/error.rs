//! The driver's errors: every way a request can fail, with the context needed to act, and
//! the one family of its own, connecting.
//!
//! - [`Error`]: what a request returns (prepare, execute, query, page, batch). Each variant says what failed at the driver's level and
//!   keeps its cause as the error's [`source`](std::error::Error::source) (a connection
//!   error, a protocol decoding error, a malformed system table), not as a string; print the
//!   whole chain with [`Report`].
//! - [`ErrorKind`]: the one table of error kinds, by which the session counts its failures
//!   ([`crate::session::ErrorCounts`]) and the bench reports `errors_by_kind` for both of its
//!   backends (a server's ERROR code maps to a kind with [`ErrorKind::of_server_code`]).
//! - [`ConnectError`]: what `Session::connect` returns (and a cluster's shard's connect
//!   inside [`crate::cluster::ClusterError`]): refused for good, unreachable (retrying may
//!   help), or the cluster's metadata unreadable; each with the [`Error`] that ended it.
//! - The causes: a connection's ([`ConnectionError`] and its parts), a TLS setting's
//!   ([`TlsConfigError`]).
//! - [`Violation`]: how a node broke the protocol; [`VersionError`]: why a handshake found no
//!   protocol version to speak.

use std::net::SocketAddr;
use std::time::Duration;

use doppio_proto::response::{ErrorCode, ErrorDetail, ErrorResponse};
use doppio_proto::{ProtoError, ProtocolVersion};

use crate::auth::AuthError;
/// The errors of one connection (a cause of [`Error::ConnectionBroken`] and of failed
/// connects) and of a TLS setting, defined beside the connection.
pub use crate::connection::{
    BreakCause, ConnectFailure, ConnectionError, ProtocolFault, RequestError, TlsCause,
    TlsConfigError, TlsFailure,
};
use crate::routing::topology::TopologyError;

/// Why a session, or a cluster's shard, could not connect: the one error family whose
/// split tells the caller what to do next (retrying with the same settings may help after
/// [`ConnectError::Unreachable`], never after [`ConnectError::Refused`]). Each carries the
/// [`Error`] that ended the connect; a `ConnectError` becomes that error with `?`.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// A node refused the connection for good: credentials refused or missing, no protocol
    /// version in common (offered, or answered with a protocol error to the version asked
    /// for), a TLS handshake that failed (certificate expired, of another
    /// name or an unknown CA; a node that requires TLS, or speaks none). The same settings
    /// fail the same way: fix the configuration.
    #[error(transparent)]
    Refused(Error),
    /// No contact point could be connected within the startup timeout (each one's reason,
    /// in order: refused, timed out, reset). The cluster may be down or unreachable;
    /// retrying later may succeed.
    #[error(transparent)]
    Unreachable(Error),
    /// A node was connected but the cluster's metadata (its topology or schema, read from
    /// the system tables) could not be read.
    #[error("the cluster's metadata could not be read: {0}")]
    Metadata(#[source] Error),
}

impl ConnectError {
    /// Sorts a failed connect's error into its family member.
    pub(crate) fn from_connect(error: Error) -> Self {
        match &error {
            Error::Handshake { .. } | Error::Authentication { .. } => Self::Refused(error),
            // A node that answers the version asked for with a protocol error does not speak
            // it (Cassandra: "Invalid or unsupported protocol version"): the same again.
            Error::Server { error: e, .. } if e.code == ErrorCode::ProtocolError => {
                Self::Refused(error)
            }
            Error::ConnectionBroken(c) if c.tls_failure().is_some() => Self::Refused(error),
            Error::NoConnection(_) | Error::ConnectionBroken(_) | Error::Timeout { .. } => {
                Self::Unreachable(error)
            }
            _ => Self::Metadata(error),
        }
    }

    /// The error that ended the connect.
    pub fn cause(&self) -> &Error {
        match self {
            Self::Refused(e) | Self::Unreachable(e) | Self::Metadata(e) => e,
        }
    }

    /// The kind of that error ([`Error::kind`]).
    pub fn kind(&self) -> ErrorKind {
        self.cause().kind()
    }
}

impl From<ConnectError> for Error {
    /// The error that ended the connect, for code that handles every failure as an
    /// [`Error`] (`?`).
    fn from(e: ConnectError) -> Self {
        match e {
            ConnectError::Refused(e) | ConnectError::Unreachable(e) | ConnectError::Metadata(e) => {
                e
            }
        }
    }
}

/// Why a driver call failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The node answered with an ERROR (unavailable, timeouts, overloaded, syntax, invalid,
    /// unauthorized, already exists, unprepared, ...): every field it sent is in `error`.
    #[error("{node} refused the request: {error}")]
    Server {
        /// The node that answered.
        node: SocketAddr,
        /// The error with its code-specific fields (boxed: errors are the cold path, and a
        /// small `Result` keeps the hot path's moves cheap).
        error: Box<ErrorResponse>,
    },
    /// The connection broke or closed while the request was in flight (it may or may not
    /// have been applied).
    #[error(transparent)]
    ConnectionBroken(#[from] ConnectionError),
    /// No answer within the request timeout (the request may still be applied).
    #[error("no answer from {node} within {after:?}")]
    Timeout {
        /// The node.
        node: SocketAddr,
        /// The timeout.
        after: Duration,
    },
    /// The node sent something that is not valid CQL v4, or system tables the driver cannot
    /// read.
    #[error("{node} broke the protocol")]
    Protocol {
        /// The node.
        node: SocketAddr,
        /// What was wrong (boxed: errors are the cold path, and a small `Error` keeps the
        /// results and futures of the request path small).
        #[source]
        violation: Box<Violation>,
    },
    /// A value could not be serialized (the error names the column), or the request could
    /// not be encoded; nothing was sent.
    #[error("request not sent")]
    Serialization(#[source] ProtoError),
    /// The connection handshake failed (unsupported protocol version, refused options).
    #[error("handshake with {node} failed: {error}")]
    Handshake {
        /// The node.
        node: SocketAddr,
        /// Why.
        #[source]
        error: VersionError,
    },
    /// The node refused the credentials, or wanted credentials that were not configured.
    #[error("authentication with {node} failed: {error}")]
    Authentication {
        /// The node.
        node: SocketAddr,
        /// Why (the authenticator's refusal, or the node's).
        #[source]
        error: AuthError,
    },
    /// The session was closed (the client is shutting down, or the session failed to
    /// connect); nothing was sent.
    #[error("the session is closed: {0}")]
    Closed(String),
    /// No open connection to any node that could take the request.
    #[error("no connection available: {0}")]
    NoConnection(String),
    /// The node answered with a message that makes no sense for the request.
    #[error("{node} answered {got} to a {request} request")]
    UnexpectedResponse {
        /// The node.
        node: SocketAddr,
        /// What was sent.
        request: &'static str,
        /// What came back.
        got: &'static str,
    },
    /// A result could not be read into the requested type (the error names the column).
    #[error("cannot read the result")]
    Deserialization(#[source] ProtoError),
    /// The trace of a traced request could not be read whole
    /// ([`Session::fetch_trace`](crate::Session::fetch_trace)): after the bounded wait,
    /// `system_traces.sessions` still had no row of that id (`found: false`: a wrong id, a
    /// trace expired, or one not written yet), or only an unfinished one (`found: true`: its
    /// `duration` still unset).
    #[error(
        "the trace {} is {} after {reads} reads",
        hyphenated(id),
        if *found { "unfinished" } else { "not found" }
    )]
    TraceUnavailable {
        /// The tracing id asked for (`QueryResult::tracing_id`).
        id: [u8; 16],
        /// Whether a session row was there (unfinished) at all.
        found: bool,
        /// How many times `system_traces.sessions` was read.
        reads: u32,
    },
}

/// How a node broke the protocol.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// An answer did not decode; the connection it came on was closed.
    #[error("undecodable answer; connection closed")]
    Decode(#[source] ProtoError),
    /// The connection saw a frame it could not accept (a bad header, an unknown stream id)
    /// and closed.
    #[error(transparent)]
    Frame(ConnectionError),
    /// A system table the driver reads for the topology is malformed.
    #[error("unreadable topology")]
    Topology(#[source] TopologyError),
    /// A query on a system table returned something other than rows.
    #[error("{table} returned no rows result")]
    NoRows {
        /// The table.
        table: &'static str,
    },
    /// Rows of a prepared statement came with a different number of columns than it was
    /// prepared with, even after preparing it again.
    #[error(
        "the result of `{cql}` does not match its prepared columns even after preparing it again"
    )]
    StaleColumns {
        /// The statement.
        cql: String,
    },
    /// An unpaged request (`*_unpaged`) was answered with one page and a paging state: the
    /// rows after it were not sent. The result is refused rather than handed back as if it
    /// were whole; page through it with `*_single_page` or `*_iter` instead.
    #[error("an unpaged request was answered with one page of its result (more rows follow)")]
    PagedAnswer,
}

/// Why no protocol version could be agreed on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VersionError {
    /// The version configured is not one the node offers.
    #[error("protocol {wanted} was asked for, but the node offers {offered:?}")]
    NotOffered {
        /// The version configured.
        wanted: ProtocolVersion,
        /// The node's `PROTOCOL_VERSIONS`.
        offered: Vec<String>,
    },
    /// The node offers neither v5 nor v4 as a final version.
    #[error("the node speaks neither v5 nor v4 (it offers {offered:?})")]
    NoneSpoken {
        /// The node's `PROTOCOL_VERSIONS`.
        offered: Vec<String>,
    },
}

/// The kind of a failure: the one classification used for counting errors, by the
/// session and by the bench (for either of its backends). Names are stable (`name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Server: UNAVAILABLE (not enough live replicas).
    Unavailable,
    /// Server: OVERLOADED.
    Overloaded,
    /// Server: IS_BOOTSTRAPPING.
    Bootstrapping,
    /// Server: READ_TIMEOUT.
    ReadTimeout,
    /// Server: WRITE_TIMEOUT.
    WriteTimeout,
    /// Server: READ_FAILURE.
    ReadFailure,
    /// Server: WRITE_FAILURE.
    WriteFailure,
    /// Server: FUNCTION_FAILURE.
    FunctionFailure,
    /// Server: SYNTAX_ERROR.
    Syntax,
    /// Server: UNAUTHORIZED.
    Unauthorized,
    /// Server: INVALID.
    Invalid,
    /// Server: CONFIG_ERROR.
    ConfigError,
    /// Server: ALREADY_EXISTS.
    AlreadyExists,
    /// Server: UNPREPARED (after the driver's own re-prepare failed too).
    Unprepared,
    /// Any other server ERROR (SERVER_ERROR, PROTOCOL_ERROR, TRUNCATE_ERROR, codes this
    /// protocol version does not define).
    ServerError,
    /// No answer within the client's request timeout.
    Timeout,
    /// The connection broke with the request in flight.
    ConnectionBroken,
    /// No open connection to send on.
    NoConnection,
    /// The session was closed.
    Closed,
    /// The node broke the protocol, or answered nonsense.
    Protocol,
    /// A value could not be encoded, or a result decoded.
    Serialization,
    /// Handshake or authentication failures.
    Handshake,
    /// TLS failures: a certificate refused, a node not speaking TLS (or requiring it), a
    /// TLS handshake that timed out.
    Tls,
    /// Server: ScyllaDB's per-partition rate limit refused the operation
    /// (`SCYLLA_RATE_LIMIT_ERROR`, [`ErrorDetail::RateLimit`]).
    /// Never retried by [`DefaultRetryPolicy`](crate::session::DefaultRetryPolicy): a retry
    /// adds to the load the limit sheds.
    RateLimited,
    /// A trace asked for was not in `system_traces`, or never finished, within the wait
    /// ([`Error::TraceUnavailable`]).
    TraceUnavailable,
}

impl ErrorKind {
    /// Every kind, in declaration order (`kind as usize` indexes it).
    pub const ALL: [ErrorKind; 25] = [
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
        ErrorKind::Timeout,
        ErrorKind::ConnectionBroken,
        ErrorKind::NoConnection,
        ErrorKind::Closed,
        ErrorKind::Protocol,
        ErrorKind::Serialization,
        ErrorKind::Handshake,
        ErrorKind::Tls,
        ErrorKind::RateLimited,
        ErrorKind::TraceUnavailable,
    ];

    /// The kind of a server ERROR: by its extension's fields where they were read as one
    /// (the rate-limit error), else by its code.
    pub fn of_server(error: &ErrorResponse) -> Self {
        match error.detail {
            ErrorDetail::RateLimit(_) => ErrorKind::RateLimited,
            _ => Self::of_server_code(error.code),
        }
    }

    /// The kind of a server ERROR with `code`.
    pub fn of_server_code(code: ErrorCode) -> Self {
        match code {
            ErrorCode::Unavailable => ErrorKind::Unavailable,
            ErrorCode::Overloaded => ErrorKind::Overloaded,
            ErrorCode::IsBootstrapping => ErrorKind::Bootstrapping,
            ErrorCode::ReadTimeout => ErrorKind::ReadTimeout,
            ErrorCode::ReadFailure => ErrorKind::ReadFailure,
            // v5's CDC write failure is a write failure with no fields.
            ErrorCode::WriteFailure | ErrorCode::CdcWriteFailure => ErrorKind::WriteFailure,
            // v5's CAS write unknown: like a CAS write timeout, the write may or may not
            // have been applied.
            ErrorCode::WriteTimeout | ErrorCode::CasWriteUnknown => ErrorKind::WriteTimeout,
            ErrorCode::FunctionFailure => ErrorKind::FunctionFailure,
            ErrorCode::SyntaxError => ErrorKind::Syntax,
            ErrorCode::Unauthorized => ErrorKind::Unauthorized,
            ErrorCode::Invalid => ErrorKind::Invalid,
            ErrorCode::ConfigError => ErrorKind::ConfigError,
            ErrorCode::AlreadyExists => ErrorKind::AlreadyExists,
            ErrorCode::Unprepared => ErrorKind::Unprepared,
            ErrorCode::ServerError
            | ErrorCode::ProtocolError
            | ErrorCode::AuthenticationError
            | ErrorCode::TruncateError
            | ErrorCode::Other(_) => ErrorKind::ServerError,
        }
    }

    /// The kind's stable name (snake case), as reports print it.
    pub fn name(self) -> &'static str {
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
            ErrorKind::Timeout => "timeout",
            ErrorKind::ConnectionBroken => "connection_broken",
            ErrorKind::NoConnection => "no_connection",
            ErrorKind::Closed => "closed",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Serialization => "serialization",
            ErrorKind::Handshake => "handshake",
            ErrorKind::Tls => "tls",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::TraceUnavailable => "trace_unavailable",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Error {
    /// The server's error code, if the node answered with an ERROR.
    pub fn server_code(&self) -> Option<ErrorCode> {
        match self {
            Error::Server { error, .. } => Some(error.code),
            _ => None,
        }
    }

    /// The kind of this error (see [`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Server { error, .. } => ErrorKind::of_server(error),
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::ConnectionBroken(ConnectionError::Tls { .. }) => ErrorKind::Tls,
            Error::ConnectionBroken(_) => ErrorKind::ConnectionBroken,
            Error::NoConnection(_) => ErrorKind::NoConnection,
            Error::Closed(_) => ErrorKind::Closed,
            Error::Protocol { .. } | Error::UnexpectedResponse { .. } => ErrorKind::Protocol,
            Error::Serialization(_) | Error::Deserialization(_) => ErrorKind::Serialization,
            Error::Handshake { .. } | Error::Authentication { .. } => ErrorKind::Handshake,
            Error::TraceUnavailable { .. } => ErrorKind::TraceUnavailable,
        }
    }

    /// Converts a connection-level failure of a request to `node`.
    pub fn from_request(node: SocketAddr, e: RequestError) -> Self {
        match e {
            RequestError::Timeout { after, .. } => Error::Timeout { node, after },
            RequestError::Connection(c @ ConnectionError::Protocol { .. }) => Error::Protocol {
                node: c.addr(),
                violation: Box::new(Violation::Frame(c)),
            },
            RequestError::Connection(c) => Error::ConnectionBroken(c),
            RequestError::Encode(p) => Error::Serialization(p),
            RequestError::BadResponse { addr, error } => Error::Protocol {
                node: addr,
                violation: Box::new(Violation::Decode(error)),
            },
        }
    }
}

/// A UUID in its usual text form (`8-4-4-4-12` lowercase hex digits), for messages.
fn hyphenated(id: &[u8; 16]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(36);
    for (i, b) in id.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}"); // writing to a String cannot fail
    }
    s
}

/// Prints an error with every cause in its chain: `outer: cause: root cause`. A cause whose
/// text its parent's already ends with is not repeated (the protocol layer's errors print
/// their value error and also return it as their source).
///
/// ```
/// use doppio_driver::error::{Error, Report};
/// let e = Error::Closed("shutting down".into());
/// assert_eq!(Report(&e).to_string(), "the session is closed: shutting down");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Report<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Cold path (printing an error): the strings are built only to compare them.
        let mut last = self.0.to_string();
        f.write_str(&last)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            let text = c.to_string();
            if !last.ends_with(&text) {
                write!(f, ": {text}")?;
            }
            last = text;
            cause = c.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// A failed connect lands in the family member that says whether retrying can help,
    /// and `?` gives back the very error that ended it.
    #[test]
    fn a_failed_connect_is_sorted_by_what_retrying_would_do() {
        let node: SocketAddr = "127.0.0.1:9042".parse().expect("an address");
        let auth = Error::Authentication {
            node,
            error: AuthError::NotConfigured {
                server_authenticator: "PasswordAuthenticator".into(),
            },
        };
        let tls = Error::ConnectionBroken(ConnectionError::Tls {
            addr: node,
            failure: TlsFailure::UnknownCa,
            cause: TlsCause::Read(std::sync::Arc::new(std::io::Error::other("reset"))),
        });
        let down = Error::NoConnection("127.0.0.1:9042: connection refused".into());
        let timeout = Error::Timeout {
            node,
            after: Duration::from_secs(1),
        };
        let metadata = Error::Deserialization(ProtoError::UnsupportedVersion(3));
        let no_v4 = Error::Server {
            node,
            error: Box::new(ErrorResponse {
                code: ErrorCode::ProtocolError,
                message: "Invalid or unsupported protocol version (4)".into(),
                detail: ErrorDetail::None,
            }),
        };
        assert!(matches!(
            ConnectError::from_connect(no_v4),
            ConnectError::Refused(_)
        ));
        assert!(matches!(
            ConnectError::from_connect(auth.clone()),
            ConnectError::Refused(_)
        ));
        assert!(matches!(
            ConnectError::from_connect(tls),
            ConnectError::Refused(_)
        ));
        assert!(matches!(
            ConnectError::from_connect(down),
            ConnectError::Unreachable(_)
        ));
        assert!(matches!(
            ConnectError::from_connect(timeout),
            ConnectError::Unreachable(_)
        ));
        let unread = ConnectError::from_connect(metadata);
        assert!(matches!(unread, ConnectError::Metadata(_)));
        // Its text says what went wrong, not only that something did; a report of it says
        // it once.
        let text = unread.to_string();
        assert!(text.ends_with(&unread.cause().to_string()), "{text}");
        let report = Report(&unread).to_string();
        assert_eq!(
            report.matches("cannot read the result").count(),
            1,
            "{report}"
        );
        let refused = ConnectError::from_connect(auth);
        assert_eq!(refused.kind(), ErrorKind::Handshake);
        assert_eq!(refused.to_string(), refused.cause().to_string());
        assert!(matches!(Error::from(refused), Error::Authentication { .. }));
    }

    #[test]
    fn a_trace_id_prints_as_a_hyphenated_uuid() {
        let id: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
        let e = Error::TraceUnavailable {
            id,
            found: true,
            reads: 3,
        };
        assert_eq!(
            e.to_string(),
            "the trace 00112233-4455-6677-8899-aabbccddeeff is unfinished after 3 reads"
        );
        assert_eq!(e.kind(), ErrorKind::TraceUnavailable);
    }

    #[test]
    fn every_kind_is_listed_once_in_declaration_order_with_a_distinct_name() {
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k:?}");
        }
        let mut names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }

    #[test]
    fn causes_are_kept_as_sources_and_reported_in_one_line() {
        let node: SocketAddr = "127.0.0.1:9042".parse().expect("address");
        let e = Error::Protocol {
            node,
            violation: Box::new(Violation::NoRows {
                table: "system.local",
            }),
        };
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(e.source().is_some(), "the violation is the source");
        assert_eq!(
            Report(&e).to_string(),
            "127.0.0.1:9042 broke the protocol: system.local returned no rows result"
        );
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let broken = Error::from(ConnectionError::Broken {
            addr: node,
            cause: crate::connection::BreakCause::Read(std::sync::Arc::new(reset)),
        });
        assert_eq!(broken.kind(), ErrorKind::ConnectionBroken);
        let bad_value = Error::Serialization(ProtoError::Value {
            column: "v".into(),
            reason: Box::new(doppio_proto::ValueError::TimeOutsideDay { nanos: -1 }),
        });
        assert_eq!(
            Report(&bad_value).to_string(),
            "request not sent: column v: time -1 is outside one day",
            "a cause its parent already printed is not repeated"
        );
        assert_eq!(
            Report(&broken).to_string(),
            "connection to 127.0.0.1:9042 broken: read failed: connection reset",
            "the io error is the cause of the cause, printed once"
        );
        let cause = broken.source().and_then(|c| c.source());
        assert!(
            cause.is_some_and(|c| c.is::<std::sync::Arc<std::io::Error>>()),
            "the socket's own error is in the chain: {cause:?}"
        );
    }

    #[test]
    fn errors_stay_small_for_the_request_path() {
        // Every request's result and futures carry an `Error`: causes are boxed so that it
        // stays as small as the connection error it may hold (a loopback A/B measured a
        // 96-byte Error and a 64-byte ProtoError at +4 % and +3 % client CPU per request).
        assert!(
            std::mem::size_of::<Error>() <= 72,
            "{}",
            std::mem::size_of::<Error>()
        );
        assert!(std::mem::size_of::<ProtoError>() <= 48);
    }

    #[test]
    fn server_codes_map_to_their_kinds() {
        assert_eq!(
            ErrorKind::of_server_code(ErrorCode::ReadFailure),
            ErrorKind::ReadFailure
        );
        assert_eq!(
            ErrorKind::of_server_code(ErrorCode::Other(0x7777)),
            ErrorKind::ServerError
        );
    }
}
