//! The core a connection's handles and its tasks share (`Shared`): the socket, the settings,
//! the protocol state the handshake negotiates, the state; closing the connection, and
//! queueing a request into the write buffer.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::compression::Compression;
use doppio_proto::frame::Frame;
use doppio_proto::scylla_extensions::Extensions;
use doppio_proto::segment::SegmentCompression;
use doppio_proto::{ProtoError, ProtocolVersion};
use doppio_rt::TcpStream;

use crate::clock::Ticks;
use crate::routing::sharding::ShardingInfo;
use crate::stages;

use super::config::ConnectionConfig;
use super::error::{BreakCause, ConnectionError, ProtocolFault, RequestError};
use super::in_flight::{Outcome, StreamHandle};
use super::state::{State, Timed};
use super::tls::TlsSession;

pub(super) struct Shared {
    pub(super) addr: SocketAddr,
    /// The port the socket was connected to: the node's own, or ScyllaDB's shard-aware
    /// port.
    pub(super) dialed_port: u16,
    pub(super) config: ConnectionConfig,
    pub(super) socket: TcpStream,
    pub(super) state: RefCell<State>,
    /// Body compression of requests, once STARTUP has negotiated it.
    pub(super) compression: std::cell::Cell<Option<Compression>>,
    /// Compression accepted on answers (set just before STARTUP, whose answer may already
    /// be compressed, while STARTUP itself must not be).
    pub(super) accept_compression: std::cell::Cell<Option<Compression>>,
    /// Uncompressed bodies are encoded here before compression (reused: no allocation but
    /// lz4's own output block).
    pub(super) scratch: RefCell<BytesMut>,
    /// The protocol version requests are encoded in (v4 until the handshake says otherwise).
    pub(super) version: std::cell::Cell<ProtocolVersion>,
    /// v5 framing, once STARTUP was answered in v5: envelopes travel in segments both ways,
    /// compressed or not (v5 compresses segments, not envelopes).
    pub(super) segments: std::cell::Cell<Option<SegmentCompression>>,
    /// The ScyllaDB shard this connection landed on, and the node's sharding, once the
    /// handshake read them (`None` on Cassandra).
    pub(super) sharding: std::cell::Cell<Option<ShardingInfo>>,
    /// ScyllaDB's extensions turned on in STARTUP (none on Cassandra).
    pub(super) extensions: std::cell::Cell<Extensions>,
    /// TLS state, shared by the reader (decrypt) and the flusher (encrypt); each borrows it
    /// only between awaits.
    pub(super) tls: Option<RefCell<TlsSession>>,
}

impl Shared {
    /// Closes the connection with `err` (the first reason wins): fails everything in flight,
    /// wakes the tasks, and shuts the socket down so a parked read returns.
    pub(super) fn close(&self, err: ConnectionError) {
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

    /// Encodes a request on the stream id `handle` (just acquired) into the write buffer
    /// and arms its `deadline`; if `encode` fails, whatever it wrote is removed and the id
    /// freed.
    #[inline]
    pub(super) fn queue<F>(
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
    pub(super) fn answer(
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

    pub(super) fn broken(&self, cause: BreakCause) {
        self.close(ConnectionError::Broken {
            addr: self.addr,
            cause,
        });
    }

    pub(super) fn protocol_violation(&self, fault: ProtocolFault) {
        self.close(ConnectionError::Protocol {
            addr: self.addr,
            fault,
        });
    }
}
