//! The driver's one error type: every way a request can fail, with the context needed to act.

use std::net::SocketAddr;
use std::time::Duration;

use doppio_proto::response::{ErrorCode, ErrorResponse};
use doppio_proto::ProtoError;

use crate::connection::{ConnectionError, RequestError};

/// Why a driver call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    #[error("{0}")]
    ConnectionBroken(ConnectionError),
    /// No answer within the request timeout (the request may still be applied).
    #[error("no answer from {node} within {after:?}")]
    Timeout {
        /// The node.
        node: SocketAddr,
        /// The timeout.
        after: Duration,
    },
    /// The node sent something that is not valid CQL v4.
    #[error("{node} broke the protocol: {detail}")]
    Protocol {
        /// The node.
        node: SocketAddr,
        /// What was wrong.
        detail: String,
    },
    /// A value could not be serialized (the error names the column), or the request could
    /// not be encoded; nothing was sent.
    #[error("request not sent: {0}")]
    Serialization(ProtoError),
    /// The connection handshake failed (unsupported protocol version, refused options).
    #[error("handshake with {node} failed: {reason}")]
    Handshake {
        /// The node.
        node: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The node refused the credentials, or wanted credentials that were not configured.
    #[error("authentication with {node} failed: {reason}")]
    Authentication {
        /// The node.
        node: SocketAddr,
        /// Why.
        reason: String,
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
    #[error("cannot read the result: {0}")]
    Deserialization(ProtoError),
}

impl Error {
    /// The server's error code, if the node answered with an ERROR.
    pub fn server_code(&self) -> Option<ErrorCode> {
        match self {
            Error::Server { error, .. } => Some(error.code),
            _ => None,
        }
    }

    /// Converts a connection-level failure of a request to `node`.
    pub fn from_request(node: SocketAddr, e: RequestError) -> Self {
        match e {
            RequestError::Timeout { after, .. } => Error::Timeout { node, after },
            RequestError::Connection(ConnectionError::Protocol { addr, detail }) => {
                Error::Protocol { node: addr, detail }
            }
            RequestError::Connection(c) => Error::ConnectionBroken(c),
            RequestError::Encode(p) => Error::Serialization(p),
            RequestError::BadResponse { addr, error } => Error::Protocol {
                node: addr,
                detail: error.to_string(),
            },
        }
    }
}
