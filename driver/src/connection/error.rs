//! Errors of one connection and of one request on it.
//!
//! `ConnectionError` is `Clone`: when a connection breaks, every request in flight on it gets
//! its own copy (a cold path; the strings are built once per failure, not per request).

use std::net::SocketAddr;
use std::time::Duration;

use doppio_proto::ProtoError;

use super::tls::TlsFailure;

/// Why a connection cannot carry requests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The TCP connection could not be opened.
    #[error("cannot connect to {addr}: {message}")]
    Connect {
        /// The node.
        addr: SocketAddr,
        /// The operating system's reason.
        message: String,
    },
    /// Reading or writing the socket failed, or the node closed it.
    #[error("connection to {addr} broken: {message}")]
    Broken {
        /// The node.
        addr: SocketAddr,
        /// What failed.
        message: String,
    },
    /// The node sent something that is not CQL v4; the connection was closed.
    #[error("{addr} broke the protocol ({detail}); connection closed")]
    Protocol {
        /// The node.
        addr: SocketAddr,
        /// What was wrong.
        detail: String,
    },
    /// TLS failed: the handshake (certificate refused, not TLS, timed out), a record after
    /// it, or a plaintext connection to a node that requires TLS.
    #[error("TLS with {addr} failed: {failure} ({detail})")]
    Tls {
        /// The node.
        addr: SocketAddr,
        /// The kind of failure.
        failure: TlsFailure,
        /// rustls's or the socket's own words.
        detail: String,
    },
    /// The connection was closed on purpose (shutdown, or too many orphaned stream ids).
    #[error("connection to {addr} closed: {reason}")]
    Closed {
        /// The node.
        addr: SocketAddr,
        /// Why.
        reason: String,
    },
}

impl ConnectionError {
    /// The node of the connection.
    pub fn addr(&self) -> SocketAddr {
        match self {
            ConnectionError::Connect { addr, .. }
            | ConnectionError::Broken { addr, .. }
            | ConnectionError::Protocol { addr, .. }
            | ConnectionError::Tls { addr, .. }
            | ConnectionError::Closed { addr, .. } => *addr,
        }
    }

    /// The kind of TLS failure, if this is one.
    pub fn tls_failure(&self) -> Option<TlsFailure> {
        match self {
            ConnectionError::Tls { failure, .. } => Some(*failure),
            _ => None,
        }
    }
}

/// Why one request got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// No answer within the request timeout; the stream id stays reserved until the late
    /// answer arrives.
    #[error("no answer from {addr} within {after:?}")]
    Timeout {
        /// The node.
        addr: SocketAddr,
        /// The timeout that passed.
        after: Duration,
    },
    /// The connection failed before the answer came.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The request could not be encoded (nothing was sent).
    #[error("request not sent: {0}")]
    Encode(#[from] ProtoError),
    /// The answer could not be decoded; the connection was closed as broken by the node.
    #[error("bad answer from {addr}: {error}; connection closed")]
    BadResponse {
        /// The node.
        addr: SocketAddr,
        /// What was wrong.
        error: ProtoError,
    },
}
