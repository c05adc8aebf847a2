//! A connection's tunables: [`ConnectionConfig`] and its defaults.

use std::time::Duration;

use doppio_proto::frame::DEFAULT_MAX_BODY_LEN;

use super::in_flight;
use super::tls::TlsConfig;

/// Tunables of one connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConnectionConfig {
    /// Concurrent requests (stream ids) allowed; at most 32768.
    pub max_streams: usize,
    /// Default time a request may wait for its answer.
    pub request_timeout: Duration,
    /// Time allowed to open one TCP connection (and, with TLS, for its handshake). The
    /// session's wait for its first connection, retries included, is
    /// `SessionConfig::startup_timeout`.
    pub connect_timeout: Duration,
    /// glommio: bytes read per `recv` at most (the read buffer grows past this only for
    /// larger frames). The io_uring runtime receives into its provided buffers instead.
    pub read_chunk: usize,
    /// Largest frame body accepted from the node; a larger one closes the connection.
    pub max_frame_body: usize,
    /// Orphaned stream ids (timed out, answer still owed) tolerated before the connection is
    /// closed as unresponsive.
    pub max_orphans: usize,
    /// Server events (stream -1) kept until read; older ones are dropped past this.
    pub max_queued_events: usize,
    /// After this long with nothing read, an OPTIONS probes the node; no answer within the
    /// same interval closes the connection. `None` disables keepalive.
    pub keepalive: Option<Duration>,
    /// TLS: `None` (the default) speaks plaintext CQL. The TLS handshake is bounded by
    /// `connect_timeout` too.
    pub tls: Option<TlsConfig>,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self {
            max_streams: in_flight::MAX_STREAMS,
            request_timeout: Duration::from_secs(12),
            connect_timeout: Duration::from_secs(5),
            read_chunk: 64 * 1024,
            max_frame_body: DEFAULT_MAX_BODY_LEN,
            max_orphans: in_flight::MAX_STREAMS / 4,
            max_queued_events: 1024,
            keepalive: Some(Duration::from_secs(30)),
            tls: None,
        }
    }
}
