//! The handle: [`Connection`], opening one (its tasks spawned) and its methods (requests,
//! protocol state, events, counters, closing).

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Flags, Frame};
use doppio_proto::request::{encode_envelope, encode_request_compressed, RequestBody};
use doppio_proto::response::ResponseFrame;
use doppio_proto::scylla_extensions::Extensions;
use doppio_proto::segment::SegmentCompression;
use doppio_proto::{MetadataIds, ProtoError, ProtocolVersion};
use doppio_rt::{self as rt, TcpStream};

use crate::routing::sharding::ShardingInfo;

use super::config::ConnectionConfig;
use super::error::{ConnectFailure, ConnectionError, ProtocolFault, RequestError};
use super::keepalive::keepalive_loop;
use super::reader::read_loop;
use super::shared::Shared;
use super::state::State;
use super::stats::ConnectionStats;
use super::sweeper::sweep_loop;
use super::tls::TlsSession;
use super::writer::flush_loop;

/// Closes the connection when the last user handle goes (the tasks hold `Shared` too).
struct CloseOnDrop(Rc<Shared>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close(ConnectionError::Closed {
            addr: self.0.addr,
            reason: "dropped by its owner".into(),
        });
    }
}

/// A CQL connection on the current thread's executor (either runtime). Cheap to clone,
/// `!Send`.
///
/// Public as the driver's low-level single-connection API (the integration tests drive one
/// directly): requests as encoded frames ([`Connection::request`],
/// [`Connection::try_request`], [`Connection::wait_for_stream`]) or request bodies
/// ([`Connection::send`]), server events, counters. It runs no handshake: a connection
/// speaks v4 without compression until the driver's own handshake (which a
/// [`crate::Session`] runs on its connections) switches version, compression or v5 framing,
/// which only it can.
#[derive(Clone)]
pub struct Connection {
    pub(super) shared: Rc<Shared>,
    _closer: Rc<CloseOnDrop>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("addr", &self.shared.addr)
            .field("closed", &self.shared.state.borrow().closed)
            .finish()
    }
}

impl Connection {
    /// Opens a TCP connection to `addr` and starts its reader, flusher and sweeper tasks on
    /// the current executor. No CQL is exchanged yet (the handshake is the caller's).
    pub async fn connect(
        addr: SocketAddr,
        config: ConnectionConfig,
    ) -> Result<Self, ConnectionError> {
        Self::connect_via(addr, addr, None, config)
            .await
            .map_err(|(e, _)| e)
    }

    /// As [`Connection::connect`] to node `addr` (the address the connection and its errors
    /// name), with the socket connected to `dial` (another port of the node: ScyllaDB's
    /// shard-aware port) from the local (source) port `local_port` when given (how a driver
    /// picks its ScyllaDB shard there). On failure the error comes with the socket's own
    /// error kind, so that a caller can tell a port in use (`AddrInUse`, `AddrNotAvailable`:
    /// try another) from a node that does not answer.
    pub async fn connect_via(
        addr: SocketAddr,
        dial: SocketAddr,
        local_port: Option<u16>,
        config: ConnectionConfig,
    ) -> Result<Self, (ConnectionError, std::io::ErrorKind)> {
        let connect_err = |failure| ConnectionError::Connect { addr, failure };
        let socket =
            TcpStream::connect_from(dial, local_port, config.connect_timeout, config.read_chunk)
                .await
                .map_err(|e| {
                    let kind = e.kind();
                    let source = Arc::new(e);
                    let failure = match (dial == addr, local_port) {
                        (true, None) => ConnectFailure::Socket(source),
                        _ => ConnectFailure::Dial {
                            port: dial.port(),
                            local_port,
                            source,
                        },
                    };
                    (connect_err(failure), kind)
                })?;
        socket.set_nodelay(true).map_err(|e| {
            let failure = ConnectFailure::NoDelay(Arc::new(e));
            (connect_err(failure), std::io::ErrorKind::Other)
        })?;
        // Ciphertext that came with the handshake's last flight is the reader's to decrypt.
        let mut raw = BytesMut::new();
        let tls = match &config.tls {
            None => None,
            Some(tls) => {
                let session =
                    TlsSession::handshake(&socket, addr, tls, config.connect_timeout, &mut raw)
                        .await;
                if session.is_err() {
                    socket.shutdown();
                }
                Some(RefCell::new(
                    session.map_err(|e| (e, std::io::ErrorKind::Other))?,
                ))
            }
        };
        let shared = Rc::new(Shared {
            addr,
            dialed_port: dial.port(),
            state: RefCell::new(State::new(config.max_streams)),
            config,
            socket,
            compression: std::cell::Cell::new(None),
            accept_compression: std::cell::Cell::new(None),
            scratch: RefCell::new(BytesMut::new()),
            version: std::cell::Cell::new(ProtocolVersion::V4),
            segments: std::cell::Cell::new(None),
            sharding: std::cell::Cell::new(None),
            extensions: std::cell::Cell::new(Extensions::default()),
            tls,
        });
        rt::spawn_local(read_loop(shared.clone(), raw)).detach();
        rt::spawn_local(flush_loop(shared.clone())).detach();
        rt::spawn_local(sweep_loop(shared.clone())).detach();
        if let Some(interval) = shared.config.keepalive {
            rt::spawn_local(keepalive_loop(shared.clone(), interval)).detach();
        }
        Ok(Self {
            _closer: Rc::new(CloseOnDrop(shared.clone())),
            shared,
        })
    }

    /// The node's address.
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// The port the socket was connected to: the node's own, or ScyllaDB's shard-aware
    /// port (a connection aimed there that shows the node's own port fell back).
    pub fn dialed_port(&self) -> u16 {
        self.shared.dialed_port
    }

    /// The configuration in force.
    pub fn config(&self) -> &ConnectionConfig {
        &self.shared.config
    }

    /// Why the connection is closed, if it is.
    pub fn closed(&self) -> Option<ConnectionError> {
        self.shared.state.borrow().closed.clone()
    }

    /// True if `other` is a handle to this very connection.
    pub(crate) fn same(&self, other: &Connection) -> bool {
        Rc::ptr_eq(&self.shared, &other.shared)
    }

    /// Whether the connection is open (asked on every request's pick: no copy of a reason).
    #[inline]
    pub fn is_open(&self) -> bool {
        self.shared.state.borrow().closed.is_none()
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> ConnectionStats {
        self.shared.state.borrow().stats
    }

    /// Requests in flight (including orphaned ids awaiting late answers).
    pub fn in_flight(&self) -> usize {
        self.shared.state.borrow().in_flight.in_use()
    }

    /// Orphaned stream ids: timed out or abandoned, answer still owed.
    pub fn orphans(&self) -> usize {
        self.shared.state.borrow().in_flight.orphans()
    }

    /// Closes the connection: requests in flight fail with `Closed { reason }`.
    pub fn close(&self, reason: &str) {
        self.shared.close(ConnectionError::Closed {
            addr: self.shared.addr,
            reason: reason.into(),
        });
    }

    /// Sends one request and waits for its answer.
    ///
    /// `encode` writes one whole frame into the write buffer, using the stream id it is given
    /// (it must not touch what the buffer already holds). If it fails, whatever it wrote is
    /// removed, the id is freed and nothing is sent. `timeout` overrides the configured one.
    ///
    /// The future is the connection's own, not one wrapped around it (a level of async
    /// nesting less on every request).
    pub fn request<'a, F>(
        &'a self,
        timeout: Option<Duration>,
        encode: F,
    ) -> impl Future<Output = Result<Frame, RequestError>> + 'a
    where
        F: FnOnce(&mut BytesMut, i16) -> Result<(), ProtoError> + 'a,
    {
        self.shared.request(timeout, encode)
    }

    #[cfg(feature = "unstable-internals")]
    /// Queues `frames` (whole encoded frames) for the flusher as a request queues its own,
    /// without a stream id and without waiting for an answer: the submit stage alone, for
    /// the request-path benchmarks (`bench_internals::queue_raw`). Not an API (an answer to
    /// these frames would be a protocol violation).
    pub(crate) fn queue_raw(&self, frames: &[u8]) {
        let mut st = self.shared.state.borrow_mut();
        if st.closed.is_some() {
            return;
        }
        let start = st.write_buf.len();
        st.write_buf.extend_from_slice(frames);
        st.queued(start, &self.shared.socket);
    }
    /// Compresses request bodies and accepts compressed answers from now on (after STARTUP
    /// negotiated `compression`).
    pub(crate) fn set_compression(&self, compression: Option<Compression>) {
        self.shared.compression.set(compression);
        self.shared.accept_compression.set(compression);
    }

    /// Accepts compressed answers without compressing requests yet (for STARTUP's answer).
    pub(crate) fn accept_compression(&self, compression: Option<Compression>) {
        self.shared.accept_compression.set(compression);
    }

    /// The negotiated body compression (v4; v5 compresses segments: see
    /// [`Connection::segments`]).
    pub fn compression(&self) -> Option<Compression> {
        self.shared.compression.get()
    }

    /// Records what the node said about its ScyllaDB shards (the handshake does).
    pub(crate) fn set_sharding(&self, sharding: Option<ShardingInfo>) {
        self.shared.sharding.set(sharding);
    }

    /// The ScyllaDB shard this connection landed on, with the node's sharding (`None` on
    /// Cassandra, or before the handshake).
    #[inline]
    pub fn sharding(&self) -> Option<ShardingInfo> {
        self.shared.sharding.get()
    }

    /// Records the ScyllaDB extensions STARTUP turned on (the handshake does).
    pub(crate) fn set_extensions(&self, extensions: Extensions) {
        self.shared.extensions.set(extensions);
    }

    /// The ScyllaDB extensions this connection turned on in STARTUP (the LWT mark, the
    /// rate-limit error): none on Cassandra, or before the handshake.
    pub fn extensions(&self) -> Extensions {
        self.shared.extensions.get()
    }

    /// Whether this connection turned on ScyllaDB's result metadata ids in v4
    /// (`SCYLLA_USE_METADATA_ID`): how its PREPARED, EXECUTE and Rows messages are laid out
    /// beside its version.
    #[inline]
    pub fn metadata_ids(&self) -> MetadataIds {
        self.shared.extensions.get().metadata_ids()
    }

    /// Encodes requests in `version` from now on (the handshake sets it before STARTUP).
    pub(crate) fn set_version(&self, version: ProtocolVersion) {
        self.shared.version.set(version);
    }

    /// The protocol version requests are encoded in.
    pub fn version(&self) -> ProtocolVersion {
        self.shared.version.get()
    }

    /// Starts v5 framing both ways (after a v5 STARTUP was answered with READY or
    /// AUTHENTICATE, the last unframed message): from now on envelopes are written and
    /// read in segments, compressed with `compression`.
    ///
    /// Safe to switch here: the node sends nothing unasked after that answer, so no framed
    /// byte can be in the read buffer yet.
    pub(crate) fn start_segments(&self, compression: SegmentCompression) {
        self.shared.segments.set(Some(compression));
    }

    /// The v5 framing in force, if any.
    pub fn segments(&self) -> Option<SegmentCompression> {
        self.shared.segments.get()
    }

    /// Sends `request` and decodes its answer (decompressing as negotiated).
    ///
    /// An answer that does not decode closes the connection: the node broke the protocol.
    pub async fn send(
        &self,
        flags: Flags,
        request: &impl RequestBody,
        timeout: Option<Duration>,
    ) -> Result<ResponseFrame, RequestError> {
        let shared = &*self.shared;
        let compression = shared.compression.get();
        let version = shared.version.get();
        let frame = self
            .request(timeout, |buf, stream| match compression {
                None => encode_envelope(buf, version, stream, flags, request),
                Some(c) => {
                    let mut scratch = shared.scratch.borrow_mut();
                    encode_request_compressed(buf, stream, flags, request, c, &mut scratch)
                }
            })
            .await?;
        self.decode(&frame)
    }

    /// Decodes an answer `frame` (decompressing as negotiated). An answer that does not
    /// decode closes the connection: the node broke the protocol, and nothing else it sends
    /// on this connection can be trusted.
    pub fn decode(&self, frame: &Frame) -> Result<ResponseFrame, RequestError> {
        let shared = &*self.shared;
        let accept = shared.accept_compression.get();
        ResponseFrame::decode_with(
            frame,
            accept,
            shared.config.max_frame_body,
            self.metadata_ids(),
        )
        .map_err(|error| self.undecodable(frame, error))
    }

    /// An answer `frame` that did not decode: closes the connection (the node broke the
    /// protocol) and returns the request's error. For callers that decode answers
    /// themselves (the EXECUTE fast path decodes in place rather than through
    /// [`Connection::decode`]'s result, a copy of the frame per request).
    pub(crate) fn undecodable(&self, frame: &Frame, error: ProtoError) -> RequestError {
        let shared = &*self.shared;
        shared.protocol_violation(ProtocolFault::Undecodable {
            opcode: frame.header.opcode,
            error: Arc::new(error.clone()),
        });
        RequestError::BadResponse {
            addr: shared.addr,
            error,
        }
    }

    /// Waits until the connection closes, and says why.
    pub async fn wait_closed(&self) -> ConnectionError {
        poll_fn(|cx| {
            let mut st = self.shared.state.borrow_mut();
            match &st.closed {
                Some(e) => Poll::Ready(e.clone()),
                None => {
                    if !st.close_waiters.iter().any(|w| w.will_wake(cx.waker())) {
                        st.close_waiters.push(cx.waker().clone());
                    }
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// Waits for the next server event (a frame on stream -1, after REGISTER).
    pub async fn next_event(&self) -> Result<Frame, ConnectionError> {
        poll_fn(|cx| {
            let mut st = self.shared.state.borrow_mut();
            if let Some(frame) = st.events.pop_front() {
                return Poll::Ready(Ok(frame));
            }
            if let Some(e) = &st.closed {
                return Poll::Ready(Err(e.clone()));
            }
            st.event_waiter = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}
