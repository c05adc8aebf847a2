//! Errors of one connection and of one request on it.
//!
//! `ConnectionError` is `Clone`: when a connection breaks, every request in flight on it gets
//! its own copy (a cold path). Its causes stay typed and are its
//! [`source`](std::error::Error::source): the socket's [`io::Error`], the protocol layer's
//! [`ProtoError`] and rustls's error, each behind an `Arc` (none is cheap to clone,
//! `io::Error` not at all, and the `Arc` keeps the error as small as the request path
//! needs). Each cause's text
//! is also part of its parent's message, so that `Display` alone says everything;
//! [`crate::error::Report`] prints such a chain without repeating it.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use doppio_proto::frame::Opcode;
use doppio_proto::ProtoError;

/// Why a connection cannot carry requests.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The TCP connection could not be opened.
    #[error("cannot connect to {addr}: {failure}")]
    Connect {
        /// The node.
        addr: SocketAddr,
        /// What failed, with the operating system's error.
        #[source]
        failure: ConnectFailure,
    },
    /// Reading or writing the socket failed, or the node closed it.
    #[error("connection to {addr} broken: {cause}")]
    Broken {
        /// The node.
        addr: SocketAddr,
        /// What failed.
        #[source]
        cause: BreakCause,
    },
    /// The node sent something that is not CQL; the connection was closed.
    #[error("{addr} broke the protocol, connection closed: {fault}")]
    Protocol {
        /// The node.
        addr: SocketAddr,
        /// What was wrong.
        #[source]
        fault: ProtocolFault,
    },
    /// TLS failed: the handshake (certificate refused, not TLS, timed out), a record after
    /// it, or a plaintext connection to a node that requires TLS.
    #[error("TLS with {addr} failed: {failure}: {cause}")]
    Tls {
        /// The node.
        addr: SocketAddr,
        /// The kind of failure.
        failure: TlsFailure,
        /// What happened: rustls's or the socket's error, or what the node did.
        #[source]
        cause: TlsCause,
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

/// Why a TCP connection could not be opened.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectFailure {
    /// Connecting the socket to the node failed (refused, unreachable, timed out).
    #[error("{0}")]
    Socket(#[source] Arc<io::Error>),
    /// Connecting the socket to another port of the node (ScyllaDB's shard-aware port) from
    /// a chosen local port failed.
    #[error("to port {port} from port {local_port:?}: {source}")]
    Dial {
        /// The node's port dialled.
        port: u16,
        /// The local (source) port asked for.
        local_port: Option<u16>,
        /// The operating system's error.
        source: Arc<io::Error>,
    },
    /// The socket connected, but TCP_NODELAY could not be set on it.
    #[error("cannot set TCP_NODELAY: {0}")]
    NoDelay(#[source] Arc<io::Error>),
    /// No connection of a pool opened within the time it was given (the last attempt's
    /// error, when there was one, is reported instead).
    #[error("no connection opened within {0:?}")]
    NotWithin(Duration),
}

impl ConnectFailure {
    /// The operating system's error, if there was one.
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            ConnectFailure::Socket(e)
            | ConnectFailure::Dial { source: e, .. }
            | ConnectFailure::NoDelay(e) => Some(e),
            ConnectFailure::NotWithin(_) => None,
        }
    }
}

/// What a TLS failure came from (its kind is the [`TlsFailure`] beside it).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TlsCause {
    /// rustls refused what the node sent (a certificate, an alert, a record).
    #[error("{0}")]
    Rustls(#[source] Arc<rustls::Error>),
    /// Moving bytes into or out of rustls failed.
    #[error("{0}")]
    Io(#[source] Arc<io::Error>),
    /// Reading the socket failed during the handshake.
    #[error("read failed: {0}")]
    Read(#[source] Arc<io::Error>),
    /// Writing the socket failed during the handshake.
    #[error("write failed: {0}")]
    Write(#[source] Arc<io::Error>),
    /// The node closed the connection during the handshake.
    #[error("closed by the node")]
    ClosedByNode,
    /// The handshake did not finish within the connect timeout.
    #[error("no TLS handshake within {0:?}")]
    TimedOut(Duration),
    /// The queued requests could not be encrypted.
    #[error("cannot encrypt requests: {0}")]
    Encrypt(#[source] Arc<io::Error>),
    /// A plaintext connection's first answer opened a TLS record.
    #[error("the node answered a plaintext request with TLS")]
    AnsweredWithTls,
    /// A plaintext connection broke at its first request without a byte from the node.
    #[error(
        "{0} in answer to the first request, without a byte: a TLS-only port does this to a \
         plaintext client"
    )]
    BrokenAtFirstRequest(#[source] BreakCause),
}

/// What broke an open connection.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BreakCause {
    /// Reading the socket failed.
    #[error("read failed: {0}")]
    Read(#[source] Arc<io::Error>),
    /// Writing the socket failed.
    #[error("write failed: {0}")]
    Write(#[source] Arc<io::Error>),
    /// The socket took no more bytes (a write of zero).
    #[error("the node stopped accepting data")]
    WriteZero,
    /// The node closed the connection between frames.
    #[error("closed by the node")]
    ClosedByNode,
    /// The node closed the connection with part of a frame sent.
    #[error("closed by the node in the middle of a frame ({received} bytes of it received)")]
    ClosedMidFrame {
        /// The bytes of the frame that had arrived.
        received: usize,
    },
    /// The node ended the TLS session (close_notify).
    #[error("closed by the node (TLS close_notify)")]
    CloseNotify,
    /// The queued requests could not be framed into v5 segments.
    #[error("cannot frame requests into segments: {0}")]
    Segments(#[source] Arc<ProtoError>),
}

/// How a node broke the protocol on a connection.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolFault {
    /// A v5 segment did not decode (a bad CRC, a length past the limit, corrupt lz4).
    #[error("bad segment: {0}")]
    Segment(#[source] Arc<ProtoError>),
    /// A frame (or a v5 envelope) did not decode: a bad header, an oversized body.
    #[error("bad frame: {0}")]
    Frame(#[source] Arc<ProtoError>),
    /// A frame other than EVENT on a server stream (a negative id).
    #[error("{opcode} on server stream {stream}")]
    ServerStream {
        /// The frame's opcode.
        opcode: Opcode,
        /// The stream id.
        stream: i16,
    },
    /// An answer on a stream id no request holds.
    #[error("answer on stream {stream}, which has no request waiting")]
    UnknownStream {
        /// The stream id.
        stream: i16,
    },
    /// An answer whose body did not decode.
    #[error("undecodable {opcode}: {error}")]
    Undecodable {
        /// The answer's opcode.
        opcode: Opcode,
        /// Why it did not decode.
        #[source]
        error: Arc<ProtoError>,
    },
}

/// Why a TLS connection failed, as a kind to match on ([`ConnectionError::Tls`] carries the
/// details).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsFailure {
    /// The node's certificate does not chain to a trusted CA.
    UnknownCa,
    /// The node's certificate has expired (or is not valid yet).
    Expired,
    /// The node's certificate does not carry the expected name (or IP address).
    NameMismatch,
    /// Some other problem with the node's certificate (revoked, wrong usage, malformed).
    BadCertificate,
    /// The node answered with something that is not TLS (a plaintext port?).
    NotTls,
    /// The node speaks TLS but this connection does not (plaintext against a TLS-only port).
    NodeRequiresTls,
    /// The node refused the handshake with an alert (for instance a client certificate it
    /// does not accept, or none when it requires one).
    Refused,
    /// The node closed the connection during the handshake.
    Closed,
    /// The handshake did not finish within the connect timeout.
    TimedOut,
    /// Any other TLS failure (after the handshake: a corrupt record).
    Other,
}

impl std::fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TlsFailure::UnknownCa => "certificate signed by an unknown CA",
            TlsFailure::Expired => "certificate expired or not yet valid",
            TlsFailure::NameMismatch => "certificate not valid for the expected name",
            TlsFailure::BadCertificate => "certificate refused",
            TlsFailure::NotTls => "the node does not speak TLS on this port",
            TlsFailure::NodeRequiresTls => {
                "the node speaks TLS on this port, and TLS is not configured"
            }
            TlsFailure::Refused => "handshake refused by the node",
            TlsFailure::Closed => "the node closed the connection during the handshake",
            TlsFailure::TimedOut => "handshake timed out",
            TlsFailure::Other => "TLS error",
        })
    }
}

/// Why one request got no answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
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
    #[error("bad answer from {addr}, connection closed: {error}")]
    BadResponse {
        /// The node.
        addr: SocketAddr,
        /// What was wrong.
        #[source]
        error: ProtoError,
    },
}
