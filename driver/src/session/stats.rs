//! Per-session (so per-shard) counters: requests, retries, errors by kind, and the traffic of
//! the session's connections. Plain `Cell`s on the shard: no atomic on the request path.

use doppio_proto::response::ErrorCode;

use crate::connection::ConnectionStats;
use crate::error::Error;

/// Failed requests by kind (after retries: each counts the error the caller saw).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorCounts {
    /// Server: UNAVAILABLE.
    pub unavailable: u64,
    /// Server: READ_TIMEOUT or READ_FAILURE.
    pub read_timeout: u64,
    /// Server: WRITE_TIMEOUT or WRITE_FAILURE.
    pub write_timeout: u64,
    /// Server: OVERLOADED or IS_BOOTSTRAPPING.
    pub overloaded: u64,
    /// Server: SYNTAX_ERROR, INVALID, UNAUTHORIZED, ALREADY_EXISTS, CONFIG_ERROR.
    pub request_rejected: u64,
    /// Any other server ERROR.
    pub other_server: u64,
    /// No answer within the request timeout.
    pub client_timeout: u64,
    /// The connection broke with the request in flight.
    pub connection_broken: u64,
    /// No open connection to send on (or the session was closed).
    pub no_connection: u64,
    /// The node broke the protocol, or answered nonsense.
    pub protocol: u64,
    /// A value could not be encoded, or a result decoded.
    pub serialization: u64,
    /// Handshake or authentication failures.
    pub handshake: u64,
}

impl ErrorCounts {
    /// Counts `e` under its kind.
    pub fn count(&mut self, e: &Error) {
        let slot = match e {
            Error::Server { error, .. } => match error.code {
                ErrorCode::Unavailable => &mut self.unavailable,
                ErrorCode::ReadTimeout | ErrorCode::ReadFailure => &mut self.read_timeout,
                ErrorCode::WriteTimeout | ErrorCode::WriteFailure => &mut self.write_timeout,
                ErrorCode::Overloaded | ErrorCode::IsBootstrapping => &mut self.overloaded,
                ErrorCode::SyntaxError
                | ErrorCode::Invalid
                | ErrorCode::Unauthorized
                | ErrorCode::AlreadyExists
                | ErrorCode::ConfigError => &mut self.request_rejected,
                _ => &mut self.other_server,
            },
            Error::Timeout { .. } => &mut self.client_timeout,
            Error::ConnectionBroken(_) => &mut self.connection_broken,
            Error::NoConnection(_) | Error::Closed(_) => &mut self.no_connection,
            Error::Protocol { .. } | Error::UnexpectedResponse { .. } => &mut self.protocol,
            Error::Serialization(_) | Error::Deserialization(_) => &mut self.serialization,
            Error::Handshake { .. } | Error::Authentication { .. } => &mut self.handshake,
        };
        *slot += 1;
    }

    /// All errors.
    pub fn total(&self) -> u64 {
        self.unavailable
            + self.read_timeout
            + self.write_timeout
            + self.overloaded
            + self.request_rejected
            + self.other_server
            + self.client_timeout
            + self.connection_broken
            + self.no_connection
            + self.protocol
            + self.serialization
            + self.handshake
    }
}

/// A session's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Calls of query, execute and batch (each counted once, however many retries).
    pub requests: u64,
    /// Retries the retry policy asked for.
    pub retries: u64,
    /// Calls that returned an error, by kind.
    pub errors: ErrorCounts,
    /// Traffic of the session's connections, open and closed: bytes in and out, flushes,
    /// reads, frames, timeouts, and the in-flight high-water mark.
    pub connections: ConnectionStats,
}

/// Adds the counters of `b` to `a` (the high-water mark takes the larger).
pub(crate) fn add_connection_stats(a: &mut ConnectionStats, b: &ConnectionStats) {
    a.requests += b.requests;
    a.flushes += b.flushes;
    a.writes += b.writes;
    a.bytes_written += b.bytes_written;
    a.reads += b.reads;
    a.bytes_read += b.bytes_read;
    a.frames_read += b.frames_read;
    a.timeouts += b.timeouts;
    a.late_answers += b.late_answers;
    a.events_dropped += b.events_dropped;
    a.keepalives += b.keepalives;
    a.in_flight_high_water = a.in_flight_high_water.max(b.in_flight_high_water);
}
