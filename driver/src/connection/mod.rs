//! One connection to one node, owned by one shard: DESIGN section 3 made concrete.
//!
//! Written once for both runtimes: it names no executor, only [`doppio_rt`] (tasks, timers
//! and the stream's three operations: receive into a buffer, send a whole buffer, shut
//! down).
//!
//! A request's way through it:
//! 1. The caller takes a stream id from the `in_flight` table (waiting if all are in use:
//!    backpressure) and encodes its frame **directly into the connection's write buffer**.
//! 2. The caller parks on its slot. The first enqueue into an empty write buffer wakes the
//!    **flusher**, which swaps the buffer with its own (empty, capacity kept) and hands
//!    everything queued to the runtime as one send (glommio: a `send` syscall, more only if
//!    the kernel takes less; io_uring: one lazy send operation in the ring's next
//!    submission, whose completion does not wake the executor on its own). If the flusher
//!    is still sending the batch before, that first enqueue hurries the send instead.
//! 3. The **reader** appends whatever arrived to its buffer (glommio: one `recv` of up to
//!    `read_chunk` bytes; io_uring: the multishot receive's provided buffers), splits off
//!    every complete frame as a zero-copy `Bytes` body, and completes the slot of each
//!    stream id.
//! 4. The **sweeper** sleeps until the earliest deadline, then fails every request past its
//!    deadline with a timeout; their ids stay orphaned until the late answer comes. Too many
//!    orphans close the connection (the node is not answering).
//! 5. The **keepalive** task (when configured) probes an idle node with OPTIONS.
//!
//! Four tasks per connection, spawned once at connect; per request: no task, no channel, no
//! allocation once buffers have grown, no lock and no atomic (state is `Rc<RefCell<_>>`,
//! borrowed only between awaits, never across one).
//!
//! A request the caller armed for timing ([`crate::stages`]) keeps its stamps in the
//! connection's `timed` list (at most [`crate::stages::MAX_TIMED`], reserved at connect):
//! queued, its batch handed to the runtime, its read arrived, its frame handed to its slot,
//! its answer polled. Untimed requests pay one thread-local read when queued and an
//! empty-list check per read, flush and answer polled.
//!
//! With TLS ([`ConnectionConfig::tls`]), the `tls` module's handshake runs after TCP
//! connect and before any CQL (within the connect timeout); then the reader decrypts what
//! arrived into its frame buffer and the flusher encrypts each batch before sending it.
//!
//! Public: [`Connection`] is the low-level single-connection API; the protocol state the
//! handshake sets on it (version, compression, v5 framing, ScyllaDB sharding) is the
//! crate's. Its errors ([`ConnectionError`] and its causes, [`RequestError`]) and TLS
//! settings ([`TlsConfig`]) are re-exported here from the private `error` and `tls`.
//!
//! A read, a write or a protocol violation closes the connection: every request in flight
//! fails at once with a [`ConnectionError`], later requests fail immediately, and the socket
//! is shut down. Dropping the last [`Connection`] handle closes it too.

mod error;
mod in_flight;
mod tls;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::sync::Arc;
use std::task::{ready, Context, Poll, Waker};
use std::time::Duration;

use crate::clock::Ticks;
use crate::routing::sharding::ShardingInfo;
use crate::stages;
use doppio_proto::scylla_extensions::Extensions;

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::frame::{Direction, Flags, Frame, FrameDecoder, Opcode, DEFAULT_MAX_BODY_LEN};
use doppio_proto::request::{encode_envelope, encode_request_compressed, Options, RequestBody};
use doppio_proto::response::ResponseFrame;
use doppio_proto::segment::{
    EnvelopeAssembler, SegmentCompression, SegmentDecoder, SegmentEncoder,
};
use doppio_proto::ProtoError;
use doppio_proto::ProtocolVersion;

use doppio_rt::{self as rt, TcpStream, Timer};

pub use error::{
    BreakCause, ConnectFailure, ConnectionError, ProtocolFault, RequestError, TlsCause, TlsFailure,
};
pub(crate) use in_flight::StreamHandle;
use in_flight::{InFlight, Outcome};
#[cfg(feature = "unstable-internals")]
pub use in_flight::{InFlightTable, TableSlot};
use tls::TlsSession;
pub use tls::{TlsConfig, TlsConfigError};

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

/// Counters of one connection, for tests, the bench and overhead studies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// Requests queued for sending.
    pub requests: u64,
    /// Flushes: one per batch of queued frames handed to the socket.
    pub flushes: u64,
    /// Send operations (more than `flushes` only when the kernel took a partial write).
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Receives that delivered bytes (glommio: `recv` calls; io_uring: wake-ups of the
    /// reader, each taking every buffer that had arrived).
    pub reads: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Whole frames parsed.
    pub frames_read: u64,
    /// Requests failed by the deadline sweep.
    pub timeouts: u64,
    /// Answers that arrived after their request had timed out or been dropped.
    pub late_answers: u64,
    /// Server events dropped because nobody read them in time.
    pub events_dropped: u64,
    /// Keepalive probes sent.
    pub keepalives: u64,
    /// The most stream ids in use at once (in flight, including orphans).
    pub in_flight_high_water: u64,
}

impl ConnectionStats {
    /// Adds the counters of `other` (the high-water mark takes the larger).
    pub fn add(&mut self, other: &ConnectionStats) {
        self.requests += other.requests;
        self.flushes += other.flushes;
        self.writes += other.writes;
        self.bytes_written += other.bytes_written;
        self.reads += other.reads;
        self.bytes_read += other.bytes_read;
        self.frames_read += other.frames_read;
        self.timeouts += other.timeouts;
        self.late_answers += other.late_answers;
        self.events_dropped += other.events_dropped;
        self.keepalives += other.keepalives;
        self.in_flight_high_water = self.in_flight_high_water.max(other.in_flight_high_water);
    }
}

/// A request being timed on its connection ([`stages`]).
#[derive(Debug, Clone, Copy)]
struct Timed {
    /// Its stream id and generation.
    handle: StreamHandle,
    /// Its arm's token.
    token: u64,
    /// The number of the batch it was queued in.
    batch: u64,
    /// Its stamps so far.
    stamps: stages::Stamps,
}

struct State {
    in_flight: InFlight<Frame, ConnectionError>,
    /// Frames encoded by callers and not yet handed to the flusher.
    write_buf: BytesMut,
    flusher: Option<Waker>,
    sweeper: Option<Waker>,
    keepalive: Option<Waker>,
    /// The earliest deadline the sweeper knows of.
    next_sweep: Option<Ticks>,
    closed: Option<ConnectionError>,
    events: VecDeque<Frame>,
    event_waiter: Option<Waker>,
    /// Tasks waiting for the connection to close (its pool's watcher).
    close_waiters: Vec<Waker>,
    /// When bytes last arrived (for keepalive).
    last_read: Ticks,
    stats: ConnectionStats,
    /// Requests timed stage by stage ([`stages`]), at most [`stages::MAX_TIMED`] (its
    /// capacity, reserved at connect): empty unless a caller armed one.
    timed: Vec<Timed>,
    /// The number of the batch the write buffer is filling (counted from 0).
    batch: u64,
    /// When each of the last 64 batches was handed to the runtime (by batch number modulo
    /// 64), written only while a request is timed.
    flushed_at: [u64; 64],
    /// Requests written to the write buffer since the flusher last took it.
    unflushed: usize,
    /// Requests handed to the kernel whose answer has not arrived (timed out ones too, until
    /// their late answer or the connection's end).
    awaited: usize,
    /// The answers awaited last told to the runtime ([`State::publish_awaited`]).
    awaited_published: usize,
}

impl State {
    /// Tells the runtime how many answers this connection awaits (requests handed to the
    /// kernel and not answered; none once closed), if that changed since it was last told:
    /// the io_uring runtime's batched wait waits for the thread's awaited answers together,
    /// and learns from their decrease how many answers a receive brings. Called once per
    /// batch handed to the kernel, per read and at close, not per request. (Not the stream
    /// ids in use: an answered id stays in use until its caller takes the answer, after the
    /// read.)
    #[inline]
    fn publish_awaited(&mut self, socket: &TcpStream) {
        let now = if self.closed.is_some() {
            0
        } else {
            self.awaited
        };
        if now != self.awaited_published {
            socket.answers_awaited(self.awaited_published, now);
            self.awaited_published = now;
        }
    }

    /// A request's outcome was polled (or its caller gave up): its stamps, if it was timed,
    /// leave the list, and go to its caller when it was answered.
    #[inline]
    fn timed_done(&mut self, handle: StreamHandle, answered: bool) {
        if self.timed.is_empty() {
            return;
        }
        if let Some(i) = self.timed.iter().position(|t| t.handle == handle) {
            let t = self.timed.swap_remove(i);
            if answered && t.stamps.completed != 0 {
                stages::finish(
                    t.token,
                    stages::Stamps {
                        polled: stages::now(),
                        ..t.stamps
                    },
                );
            }
        }
    }

    /// The answer to `stream` was handed to its slot, from a read that arrived at `read_at`:
    /// if the request was timed, its stamps up to now.
    #[inline]
    fn timed_answer(&mut self, stream: i16, read_at: u64) {
        let batch = self.batch;
        let flushed_at = &self.flushed_at;
        if let Some(t) = self.timed.iter_mut().find(|t| t.handle.stream == stream) {
            // The batch's hand-over time, unless 64 batches or more went since.
            if batch > t.batch && batch - t.batch <= 64 {
                t.stamps.flushed = flushed_at[(t.batch % 64) as usize];
            }
            t.stamps.read = read_at;
            t.stamps.completed = stages::now();
        }
    }

    /// Frames were appended to the write buffer from `start` on: the first of a batch (the
    /// buffer was empty) wakes the flusher, or, if the flusher is still sending the batch
    /// before lazily, hurries that send (its completion matters now: this frame waits for
    /// it); later ones ride along with it.
    #[inline]
    fn queued(&mut self, start: usize, socket: &TcpStream) {
        if start == 0 {
            match self.flusher.take() {
                Some(w) => w.wake(),
                None => socket.hurry_send(),
            }
        }
    }
}

struct Shared {
    addr: SocketAddr,
    /// The port the socket was connected to: the node's own, or ScyllaDB's shard-aware
    /// port.
    dialed_port: u16,
    config: ConnectionConfig,
    socket: TcpStream,
    state: RefCell<State>,
    /// Body compression of requests, once STARTUP has negotiated it.
    compression: std::cell::Cell<Option<Compression>>,
    /// Compression accepted on answers (set just before STARTUP, whose answer may already
    /// be compressed, while STARTUP itself must not be).
    accept_compression: std::cell::Cell<Option<Compression>>,
    /// Uncompressed bodies are encoded here before compression (reused: no allocation but
    /// lz4's own output block).
    scratch: RefCell<BytesMut>,
    /// The protocol version requests are encoded in (v4 until the handshake says otherwise).
    version: std::cell::Cell<ProtocolVersion>,
    /// v5 framing, once STARTUP was answered in v5: envelopes travel in segments both ways,
    /// compressed or not (v5 compresses segments, not envelopes).
    segments: std::cell::Cell<Option<SegmentCompression>>,
    /// The ScyllaDB shard this connection landed on, and the node's sharding, once the
    /// handshake read them (`None` on Cassandra).
    sharding: std::cell::Cell<Option<ShardingInfo>>,
    /// ScyllaDB's extensions turned on in STARTUP (none on Cassandra).
    extensions: std::cell::Cell<Extensions>,
    /// TLS state, shared by the reader (decrypt) and the flusher (encrypt); each borrows it
    /// only between awaits.
    tls: Option<RefCell<TlsSession>>,
}

impl Shared {
    /// Closes the connection with `err` (the first reason wins): fails everything in flight,
    /// wakes the tasks, and shuts the socket down so a parked read returns.
    fn close(&self, err: ConnectionError) {
        let mut st = self.state.borrow_mut();
        if st.closed.is_some() {
            return;
        }
        st.in_flight.fail_all(&err);
        st.closed = Some(err);
        st.publish_awaited(&self.socket);
        let wakers = [
            st.flusher.take(),
            st.sweeper.take(),
            st.keepalive.take(),
            st.event_waiter.take(),
        ];
        let close_waiters = std::mem::take(&mut st.close_waiters);
        for w in wakers.into_iter().flatten().chain(close_waiters) {
            w.wake();
        }
        drop(st);
        self.socket.shutdown();
    }

    /// See [`Connection::request`].
    async fn request<F>(&self, timeout: Option<Duration>, encode: F) -> Result<Frame, RequestError>
    where
        F: FnOnce(&mut BytesMut, i16) -> Result<(), ProtoError>,
    {
        let shared = self;
        let timeout = timeout.unwrap_or(shared.config.request_timeout);
        // The deadline runs from the call, so time spent waiting for a stream id (all in
        // use, or held by orphans while the node stalls) counts against it.
        let deadline = Ticks::deadline(timeout);
        let handle = AcquireWithin {
            shared,
            ticket: None,
            timeout,
            timer: None,
        }
        .await?;
        shared.queue(&mut shared.state.borrow_mut(), handle, deadline, encode)?;
        let outcome = Answer {
            shared,
            handle,
            done: false,
        }
        .await;
        shared.answer(outcome, timeout)
    }

    /// Encodes a request on the stream id `handle` (just acquired) into the write buffer
    /// and arms its `deadline`; if `encode` fails, whatever it wrote is removed and the id
    /// freed.
    #[inline]
    fn queue<F>(
        &self,
        st: &mut State,
        handle: StreamHandle,
        deadline: Ticks,
        encode: F,
    ) -> Result<(), RequestError>
    where
        F: FnOnce(&mut BytesMut, i16) -> Result<(), ProtoError>,
    {
        let start = st.write_buf.len();
        if let Err(e) = encode(&mut st.write_buf, handle.stream) {
            st.write_buf.truncate(start);
            st.in_flight.cancel_unsent(handle);
            return Err(e.into());
        }
        st.in_flight.set_deadline(handle, deadline);
        if st.next_sweep.is_none_or(|next| deadline < next) {
            st.next_sweep = Some(deadline);
            if let Some(w) = st.sweeper.take() {
                w.wake();
            }
        }
        if let Some(token) = stages::take_armed() {
            if st.timed.len() < stages::MAX_TIMED {
                st.timed.push(Timed {
                    handle,
                    token,
                    batch: st.batch,
                    stamps: stages::Stamps {
                        queued: stages::now(),
                        ..stages::Stamps::default()
                    },
                });
            }
        }
        st.queued(start, &self.socket);
        st.unflushed += 1;
        st.stats.requests += 1;
        let in_use = st.in_flight.in_use() as u64;
        if in_use > st.stats.in_flight_high_water {
            st.stats.in_flight_high_water = in_use;
        }
        Ok(())
    }

    /// A request's outcome as its caller sees it (`timeout` names the wait that ran out).
    #[inline]
    fn answer(
        &self,
        outcome: Outcome<Frame, ConnectionError>,
        timeout: Duration,
    ) -> Result<Frame, RequestError> {
        match outcome {
            Outcome::Answer(frame) => Ok(frame),
            Outcome::TimedOut => Err(RequestError::Timeout {
                addr: self.addr,
                after: timeout,
            }),
            Outcome::Failed(e) => Err(e.into()),
        }
    }

    fn broken(&self, cause: BreakCause) {
        self.close(ConnectionError::Broken {
            addr: self.addr,
            cause,
        });
    }

    fn protocol_violation(&self, fault: ProtocolFault) {
        self.close(ConnectionError::Protocol {
            addr: self.addr,
            fault,
        });
    }
}

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
    shared: Rc<Shared>,
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
            state: RefCell::new(State {
                in_flight: InFlight::new(config.max_streams),
                write_buf: BytesMut::with_capacity(64 * 1024),
                flusher: None,
                sweeper: None,
                keepalive: None,
                next_sweep: None,
                closed: None,
                events: VecDeque::new(),
                event_waiter: None,
                close_waiters: Vec::new(),
                last_read: Ticks::now(),
                stats: ConnectionStats::default(),
                timed: Vec::with_capacity(stages::MAX_TIMED),
                batch: 0,
                flushed_at: [0; 64],
                unflushed: 0,
                awaited: 0,
                awaited_published: 0,
            }),
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

    /// As [`Connection::request`], for a caller that does not wait for a stream id: if one
    /// is free at once (nobody queued for one), the request is encoded into the write buffer
    /// and its answer is awaited through the [`PendingAnswer`] returned; if none is,
    /// `Ok(None)` and nothing is sent (the caller takes the waiting path instead).
    ///
    /// For callers that drive the wait from their own future rather than nesting
    /// [`Connection::request`]'s (the session's first attempt of an EXECUTE).
    #[inline]
    pub fn try_request<F>(
        &self,
        timeout: Option<Duration>,
        encode: F,
    ) -> Result<Option<PendingAnswer>, RequestError>
    where
        F: FnOnce(&mut BytesMut, i16) -> Result<(), ProtoError>,
    {
        let timeout = timeout.unwrap_or(self.shared.config.request_timeout);
        self.queue_pending(None, Ticks::deadline(timeout), timeout, encode)
    }

    /// Encodes a request on `held` (an id already taken for it), or else on an id free at
    /// once, and returns its [`PendingAnswer`]; `Ok(None)` when there is neither (nothing
    /// sent). The one body of [`Connection::try_request`] and [`StreamWait::send`].
    #[inline]
    fn queue_pending<F>(
        &self,
        held: Option<StreamHandle>,
        deadline: Ticks,
        timeout: Duration,
        encode: F,
    ) -> Result<Option<PendingAnswer>, RequestError>
    where
        F: FnOnce(&mut BytesMut, i16) -> Result<(), ProtoError>,
    {
        let shared = &*self.shared;
        let mut st = shared.state.borrow_mut();
        if let Some(e) = &st.closed {
            let e = e.clone();
            if let Some(h) = held {
                st.in_flight.cancel_unsent(h);
            }
            return Err(e.into());
        }
        let Some(handle) = held.or_else(|| st.in_flight.try_acquire_now()) else {
            return Ok(None);
        };
        shared.queue(&mut st, handle, deadline, encode)?;
        drop(st);
        Ok(Some(PendingAnswer {
            conn: self.clone(),
            handle,
            timeout,
            done: false,
        }))
    }

    /// The waiting path of [`Connection::try_request`]: a request that found no stream id
    /// free at once takes its place in the queue for one (see [`StreamWait`]); `timeout`
    /// (the configured one if `None`) bounds the wait and the answer's, from now.
    pub fn wait_for_stream(&self, timeout: Option<Duration>) -> StreamWait {
        let timeout = timeout.unwrap_or(self.shared.config.request_timeout);
        StreamWait {
            conn: self.clone(),
            ticket: None,
            timer: None,
            timeout,
            deadline: Ticks::deadline(timeout),
            handle: None,
        }
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
        ResponseFrame::decode(frame, accept, shared.config.max_frame_body)
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

/// Polls for a free stream id for a request whose wait is bounded by `timeout`: the id, or
/// why none will come (the connection failed, or `timeout` passed first). `ticket` is the
/// caller's place in the queue of acquirers (see [`InFlight::poll_acquire`]); `timer` is
/// armed only when the first poll found no free id: the timer (one allocation) is paid on
/// the backpressure path, never on the hot path where an id is free at once.
fn poll_stream_within(
    shared: &Shared,
    ticket: &mut Option<u64>,
    timer: &mut Option<Timer>,
    timeout: Duration,
    cx: &mut Context<'_>,
) -> Poll<Result<StreamHandle, RequestError>> {
    {
        let mut st = shared.state.borrow_mut();
        if let Some(e) = &st.closed {
            return Poll::Ready(Err(e.clone().into()));
        }
        if let Poll::Ready(handle) = st.in_flight.poll_acquire(ticket, cx) {
            return Poll::Ready(Ok(handle));
        }
    }
    let timer = timer.get_or_insert_with(|| Timer::new(timeout));
    match Pin::new(timer).poll(cx) {
        Poll::Ready(_) => Poll::Ready(Err(RequestError::Timeout {
            addr: shared.addr,
            after: timeout,
        })),
        Poll::Pending => Poll::Pending,
    }
}

/// A caller leaves the queue of acquirers (timeout, drop) if it is in it: an id granted to
/// it goes to the next waiter rather than being lost.
fn leave_queue(shared: &Shared, ticket: Option<u64>) {
    if let Some(ticket) = ticket {
        if let Ok(mut st) = shared.state.try_borrow_mut() {
            st.in_flight.cancel_acquire(ticket);
        }
    }
}

/// Waits for a free stream id, bounded by the request's timeout: a request that cannot get
/// one in time fails with `Timeout` instead of waiting for as long as the node stalls. If
/// dropped while queued, passes its turn on, so that a cancelled waiter never strands a
/// freed id.
struct AcquireWithin<'a> {
    shared: &'a Shared,
    /// The place in the connection's queue of acquirers, once it waits.
    ticket: Option<u64>,
    timeout: Duration,
    timer: Option<Timer>,
}

impl Future for AcquireWithin<'_> {
    type Output = Result<StreamHandle, RequestError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        poll_stream_within(
            this.shared,
            &mut this.ticket,
            &mut this.timer,
            this.timeout,
            cx,
        )
    }
}

impl Drop for AcquireWithin<'_> {
    fn drop(&mut self) {
        leave_queue(self.shared, self.ticket);
    }
}

/// A request waiting for a free stream id on its connection (every id in use, or others
/// queued first), for a caller that drives the wait from its own future: made by
/// [`Connection::wait_for_stream`] when [`Connection::try_request`] found no id free. It
/// holds its place in the queue, not a boxed future: waiting costs no allocation but the
/// timer's (armed once it first has to wait), so 100,000 requests queued behind a full
/// stream-id space hold little beyond their own futures.
///
/// Dropped while queued it passes its turn on; dropped holding an id it did not use, it
/// frees the id (nothing was sent).
pub struct StreamWait {
    conn: Connection,
    ticket: Option<u64>,
    timer: Option<Timer>,
    timeout: Duration,
    /// When the request times out: from the call, so time spent waiting for an id counts.
    deadline: Ticks,
    /// The id once acquired, until [`StreamWait::send`] uses it.
    handle: Option<StreamHandle>,
}

impl StreamWait {
    /// The connection the request waits on.
    #[inline]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// `Ready(Ok)` once a stream id is held for the request (then [`StreamWait::send`]),
    /// or why none will be: the connection failed, or the request's timeout passed first.
    pub fn poll_stream(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), RequestError>> {
        if self.handle.is_some() {
            return Poll::Ready(Ok(()));
        }
        let shared = &*self.conn.shared;
        let handle = ready!(poll_stream_within(
            shared,
            &mut self.ticket,
            &mut self.timer,
            self.timeout,
            cx
        ))?;
        self.handle = Some(handle);
        Poll::Ready(Ok(()))
    }

    /// Encodes the request on the id held (as [`Connection::try_request`] does on one free
    /// at once) and returns its [`PendingAnswer`]. Without an id held (`poll_stream` has
    /// not returned `Ready(Ok)`), one is taken if it is free at once, else `Ok(None)` and
    /// nothing is sent.
    pub fn send<F>(mut self, encode: F) -> Result<Option<PendingAnswer>, RequestError>
    where
        F: FnOnce(&mut BytesMut, i16) -> Result<(), ProtoError>,
    {
        let held = self.handle.take();
        self.conn
            .queue_pending(held, self.deadline, self.timeout, encode)
    }
}

impl Drop for StreamWait {
    fn drop(&mut self) {
        let shared = &*self.conn.shared;
        leave_queue(shared, self.ticket);
        if let Some(handle) = self.handle {
            if let Ok(mut st) = shared.state.try_borrow_mut() {
                st.in_flight.cancel_unsent(handle);
            }
        }
    }
}

impl std::fmt::Debug for StreamWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamWait")
            .field("addr", &self.conn.shared.addr)
            .field("queued", &self.ticket.is_some())
            .field("held", &self.handle.map(|h| h.stream))
            .finish()
    }
}

/// Waits for the outcome of one request; dropped early, it orphans the request's id.
struct Answer<'a> {
    shared: &'a Shared,
    handle: StreamHandle,
    done: bool,
}

impl Future for Answer<'_> {
    type Output = Outcome<Frame, ConnectionError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let handle = self.handle;
        let mut st = self.shared.state.borrow_mut();
        let polled = st.in_flight.poll_outcome(handle, cx);
        if let Poll::Ready(outcome) = &polled {
            st.timed_done(handle, matches!(outcome, Outcome::Answer(_)));
            drop(st);
            self.done = true;
        }
        polled
    }
}

impl Drop for Answer<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Ok(mut st) = self.shared.state.try_borrow_mut() {
                st.in_flight.abandon(self.handle);
                st.timed_done(self.handle, false);
            }
        }
    }
}

/// A request queued by [`Connection::try_request`], waiting for its answer; dropped before
/// that, it orphans the request's stream id (as a dropped [`Connection::request`] does).
pub struct PendingAnswer {
    conn: Connection,
    handle: StreamHandle,
    timeout: Duration,
    done: bool,
}

impl PendingAnswer {
    /// The connection the request went to.
    #[inline]
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The answer's frame once it has come, or why it will not (timeout, connection
    /// failure). Once it returns `Ready` the request is over; polling again is a caller bug
    /// and stays pending.
    #[inline]
    pub fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<Result<Frame, RequestError>> {
        if self.done {
            return Poll::Pending;
        }
        let shared = &*self.conn.shared;
        let mut st = shared.state.borrow_mut();
        match st.in_flight.poll_outcome(self.handle, cx) {
            Poll::Ready(outcome) => {
                st.timed_done(self.handle, matches!(outcome, Outcome::Answer(_)));
                drop(st);
                self.done = true;
                Poll::Ready(shared.answer(outcome, self.timeout))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl std::fmt::Debug for PendingAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingAnswer")
            .field("addr", &self.conn.shared.addr)
            .field("stream", &self.handle.stream)
            .field("done", &self.done)
            .finish()
    }
}

impl Drop for PendingAnswer {
    fn drop(&mut self) {
        if !self.done {
            if let Ok(mut st) = self.conn.shared.state.try_borrow_mut() {
                st.in_flight.abandon(self.handle);
                st.timed_done(self.handle, false);
            }
        }
    }
}

/// Reads, parses every complete frame, and hands each to its caller.
async fn read_loop(shared: Rc<Shared>, mut raw: BytesMut) {
    // Received bytes are appended to `buf` by the runtime's stream (glommio: one `recv` into
    // a scratch buffer; io_uring: a copy out of each provided buffer, which goes back to the
    // ring at once); complete frames are split off it as zero-copy bodies.
    let mut buf = BytesMut::with_capacity(shared.config.read_chunk.max(1024) * 2);
    // Until STARTUP is answered the version is not settled (a node refusing the one offered
    // answers in its own): any version doppio speaks is read.
    let bare = FrameDecoder::new(Direction::Response)
        .with_any_version()
        .with_max_body_len(shared.config.max_frame_body);
    // v5 framing: segments are checked and their payloads gathered into `envelopes` (one
    // copy per segment, the price of the CRC32 over the payload), whose frames are then
    // split off as from `buf` before.
    let mut envelopes = BytesMut::new();
    let mut assembler = EnvelopeAssembler::new(shared.config.max_frame_body);
    // Whether nothing has arrived yet: a plaintext connection that a node closes before
    // answering anything, or answers with TLS, is talking to a TLS port.
    let mut first = true;
    loop {
        let read = if raw.is_empty() {
            poll_fn(|cx| {
                if shared.state.borrow().closed.is_some() {
                    return Poll::Ready(Ok(0));
                }
                match &shared.tls {
                    None => shared.socket.poll_recv(cx, &mut buf),
                    Some(_) => shared.socket.poll_recv(cx, &mut raw),
                }
            })
            .await
        } else {
            // Ciphertext left over from the TLS handshake. (No plaintext can be: CQL's
            // client speaks first, so a node sends no data with its handshake flights.)
            Ok(raw.len())
        };
        if let Some(tls) = &shared.tls {
            if let Ok(n) = read {
                if n > 0 {
                    match tls.borrow_mut().decrypt(&mut raw, &mut buf) {
                        Ok(true) => {}
                        Ok(false) => return shared.broken(BreakCause::CloseNotify),
                        Err((failure, cause)) => {
                            return shared.close(ConnectionError::Tls {
                                addr: shared.addr,
                                failure,
                                cause,
                            })
                        }
                    }
                }
            }
        } else if first && matches!(read, Ok(n) if n > 0) && tls::looks_like_tls(&buf) {
            // A node that closes without a byte may require TLS too; the handshake judges
            // that case (`handshake::handshake`), since only it knows nothing else was sent.
            return shared.close(ConnectionError::Tls {
                addr: shared.addr,
                failure: TlsFailure::NodeRequiresTls,
                cause: TlsCause::AnsweredWithTls,
            });
        }
        first = false;
        let n = match read {
            Ok(0) if !buf.is_empty() => {
                return shared.broken(BreakCause::ClosedMidFrame {
                    received: buf.len(),
                })
            }
            Ok(0) => return shared.broken(BreakCause::ClosedByNode),
            Ok(n) => n,
            Err(e) => return shared.broken(BreakCause::Read(Arc::new(e))),
        };
        let mut st = shared.state.borrow_mut();
        if st.closed.is_some() {
            return;
        }
        st.stats.reads += 1;
        st.stats.bytes_read += n as u64;
        st.last_read = Ticks::now();
        // The read's arrival, for timed requests answered in it (no clock read otherwise).
        let read_at = if st.timed.is_empty() {
            0
        } else {
            stages::now()
        };
        let (decoder, source) = match shared.segments.get() {
            None => (bare, &mut buf),
            Some(compression) => {
                let segments = SegmentDecoder::new(compression);
                loop {
                    let gathered = segments
                        .decode(&mut buf)
                        .and_then(|s| s.map(|s| assembler.push(s, &mut envelopes)).transpose());
                    match gathered {
                        Ok(Some(())) => {}
                        Ok(None) => break,
                        Err(e) => {
                            drop(st);
                            return shared.protocol_violation(ProtocolFault::Segment(Arc::new(e)));
                        }
                    }
                }
                (bare.with_version(ProtocolVersion::V5), &mut envelopes)
            }
        };
        loop {
            let frame = match decoder.decode(source) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(e) => {
                    drop(st);
                    return shared.protocol_violation(ProtocolFault::Frame(Arc::new(e)));
                }
            };
            st.stats.frames_read += 1;
            let stream = frame.header.stream;
            if stream < 0 {
                if frame.header.opcode != Opcode::Event {
                    let op = frame.header.opcode;
                    drop(st);
                    return shared
                        .protocol_violation(ProtocolFault::ServerStream { opcode: op, stream });
                }
                if st.events.len() >= shared.config.max_queued_events {
                    st.events.pop_front();
                    st.stats.events_dropped += 1;
                }
                st.events.push_back(frame);
                if let Some(w) = st.event_waiter.take() {
                    w.wake();
                }
                continue;
            }
            let completion = st.in_flight.complete(stream, frame);
            if !matches!(completion, in_flight::Completion::UnknownStream) {
                st.awaited = st.awaited.saturating_sub(1);
            }
            match completion {
                in_flight::Completion::Delivered if read_at != 0 => {
                    st.timed_answer(stream, read_at);
                }
                in_flight::Completion::Delivered => {}
                in_flight::Completion::Late => st.stats.late_answers += 1,
                in_flight::Completion::UnknownStream => {
                    drop(st);
                    return shared.protocol_violation(ProtocolFault::UnknownStream { stream });
                }
            }
        }
        st.publish_awaited(&shared.socket);
        if st.in_flight.orphans() > shared.config.max_orphans {
            let orphans = st.in_flight.orphans();
            drop(st);
            return shared.close(ConnectionError::Closed {
                addr: shared.addr,
                reason: format!("{orphans} requests timed out without an answer"),
            });
        }
    }
}

/// Writes whatever callers queued, one batch per wake-up.
async fn flush_loop(shared: Rc<Shared>) {
    // Swapped with the shared write buffer: both keep their capacity, so steady-state
    // flushing allocates nothing.
    let mut out = BytesMut::with_capacity(64 * 1024);
    // v5: the batch's envelopes are framed into segments here, then the buffers swap (both
    // keep their capacity).
    let mut framed = BytesMut::new();
    // TLS: the batch is encrypted into records here, then the buffers swap likewise.
    let mut cipher = BytesMut::new();
    loop {
        let open = poll_fn(|cx| {
            let mut st = shared.state.borrow_mut();
            if st.closed.is_some() {
                return Poll::Ready(None);
            }
            if st.write_buf.is_empty() {
                st.flusher = Some(cx.waker().clone());
                return Poll::Pending;
            }
            std::mem::swap(&mut st.write_buf, &mut out);
            st.awaited += std::mem::take(&mut st.unflushed);
            st.publish_awaited(&shared.socket);
            let batch = st.batch;
            st.batch += 1;
            Poll::Ready(Some((batch, !st.timed.is_empty())))
        })
        .await;
        let Some((batch, timed)) = open else {
            return;
        };
        if let Some(compression) = shared.segments.get() {
            framed.clear();
            if let Err(e) = SegmentEncoder::new(compression).encode(&out, &mut framed) {
                return shared.broken(BreakCause::Segments(Arc::new(e)));
            }
            out.clear();
            std::mem::swap(&mut out, &mut framed);
        }
        if let Some(tls) = &shared.tls {
            cipher.clear();
            if let Err(e) = tls.borrow_mut().encrypt(&out, &mut cipher) {
                return shared.close(ConnectionError::Tls {
                    addr: shared.addr,
                    failure: TlsFailure::Other,
                    cause: TlsCause::Encrypt(Arc::new(e)),
                });
            }
            out.clear();
            std::mem::swap(&mut out, &mut cipher);
        }
        let written = out.len();
        if timed {
            // Handed to the runtime now, framed and encrypted (for timed requests in it).
            shared.state.borrow_mut().flushed_at[(batch % 64) as usize] = stages::now();
        }
        // Lazy: nothing needs `out` back until more is queued, and whoever queues it hurries
        // this send (see `Shared::request`), so on io_uring the send's completion alone does
        // not end the executor's wait: a request and its answer cost one enter.
        let (result, back) = shared.socket.send_lazy(out).await;
        out = back;
        let writes = match result {
            Ok(writes) => writes,
            Err(e) if e.kind() == std::io::ErrorKind::WriteZero => {
                return shared.broken(BreakCause::WriteZero)
            }
            Err(e) => return shared.broken(BreakCause::Write(Arc::new(e))),
        };
        let mut st = shared.state.borrow_mut();
        st.stats.flushes += 1;
        st.stats.writes += writes;
        st.stats.bytes_written += written as u64;
        drop(st);
        out.clear();
    }
}

/// Fails requests at their deadlines, sleeping until the earliest one.
async fn sweep_loop(shared: Rc<Shared>) {
    loop {
        let planned = shared.state.borrow().next_sweep;
        let mut timer =
            pin!(planned.map(|t| Timer::new(t.saturating_duration_since(Ticks::now()))));
        let proceed = poll_fn(|cx| {
            let mut st = shared.state.borrow_mut();
            if st.closed.is_some() {
                return Poll::Ready(false);
            }
            if st.next_sweep != planned {
                // An earlier deadline arrived: plan again.
                return Poll::Ready(true);
            }
            st.sweeper = Some(cx.waker().clone());
            drop(st);
            match timer.as_mut().as_pin_mut() {
                Some(t) => t.poll(cx).map(|_| true),
                None => Poll::Pending,
            }
        })
        .await;
        if !proceed {
            return;
        }
        let now = Ticks::now();
        let mut st = shared.state.borrow_mut();
        if st.next_sweep.is_some_and(|t| t <= now) {
            let sweep = st.in_flight.sweep(now);
            st.stats.timeouts += sweep.expired as u64;
            st.next_sweep = sweep.next;
        }
    }
}

/// Probes an idle node with OPTIONS; a node that does not answer within the interval is
/// treated as gone.
async fn keepalive_loop(shared: Rc<Shared>, interval: Duration) {
    loop {
        let idle_for = Ticks::now().saturating_duration_since(shared.state.borrow().last_read);
        if idle_for < interval {
            // Sleep until the connection has been idle for `interval`, or it closes.
            let mut timer = pin!(Timer::new(interval - idle_for));
            let open = poll_fn(|cx| {
                let mut st = shared.state.borrow_mut();
                if st.closed.is_some() {
                    return Poll::Ready(false);
                }
                st.keepalive = Some(cx.waker().clone());
                drop(st);
                timer.as_mut().poll(cx).map(|_| true)
            })
            .await;
            if !open {
                return;
            }
            continue;
        }
        shared.state.borrow_mut().stats.keepalives += 1;
        let version = shared.version.get();
        let probe = shared.request(Some(interval), |buf, stream| {
            encode_envelope(buf, version, stream, Flags::NONE, &Options)
        });
        match probe.await {
            Ok(_) => {}
            Err(RequestError::Timeout { .. }) => {
                return shared.close(ConnectionError::Closed {
                    addr: shared.addr,
                    reason: format!("no answer to a keepalive within {interval:?}"),
                })
            }
            Err(_) => return,
        }
    }
}
