//! A connection's mutable state, behind the one `RefCell` its handle and its tasks share:
//! the in-flight table, the write buffer, the tasks' wakers, queued events, counters, and
//! the stamps of requests timed stage by stage.

use std::collections::VecDeque;
use std::task::Waker;

use bytes::BytesMut;
use doppio_proto::frame::Frame;
use doppio_rt::TcpStream;

use crate::clock::Ticks;
use crate::stages;

use super::error::ConnectionError;
use super::in_flight::{InFlight, StreamHandle};
use super::stats::ConnectionStats;

/// A request being timed on its connection ([`stages`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Timed {
    /// Its stream id and generation.
    pub(super) handle: StreamHandle,
    /// Its arm's token.
    pub(super) token: u64,
    /// The number of the batch it was queued in.
    pub(super) batch: u64,
    /// Its stamps so far.
    pub(super) stamps: stages::Stamps,
}

pub(super) struct State {
    pub(super) in_flight: InFlight<Frame, ConnectionError>,
    /// Frames encoded by callers and not yet handed to the flusher.
    pub(super) write_buf: BytesMut,
    pub(super) flusher: Option<Waker>,
    pub(super) sweeper: Option<Waker>,
    pub(super) keepalive: Option<Waker>,
    /// The earliest deadline the sweeper knows of.
    pub(super) next_sweep: Option<Ticks>,
    pub(super) closed: Option<ConnectionError>,
    pub(super) events: VecDeque<Frame>,
    pub(super) event_waiter: Option<Waker>,
    /// Tasks waiting for the connection to close (its pool's watcher).
    pub(super) close_waiters: Vec<Waker>,
    /// When bytes last arrived (for keepalive).
    pub(super) last_read: Ticks,
    pub(super) stats: ConnectionStats,
    /// Requests timed stage by stage ([`stages`]), at most [`stages::MAX_TIMED`] (its
    /// capacity, reserved at connect): empty unless a caller armed one.
    pub(super) timed: Vec<Timed>,
    /// The number of the batch the write buffer is filling (counted from 0).
    pub(super) batch: u64,
    /// When each of the last 64 batches was handed to the runtime (by batch number modulo
    /// 64), written only while a request is timed.
    pub(super) flushed_at: [u64; 64],
    /// Requests written to the write buffer since the flusher last took it.
    pub(super) unflushed: usize,
    /// Requests handed to the kernel whose answer has not arrived (timed out ones too, until
    /// their late answer or the connection's end).
    pub(super) awaited: usize,
    /// The answers awaited last told to the runtime ([`State::publish_awaited`]).
    pub(super) awaited_published: usize,
}

impl State {
    /// A new connection's state: `max_streams` stream ids, nothing in flight, queued or
    /// counted yet.
    pub(super) fn new(max_streams: usize) -> Self {
        State {
            in_flight: InFlight::new(max_streams),
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
        }
    }

    /// Tells the runtime how many answers this connection awaits (requests handed to the
    /// kernel and not answered; none once closed), if that changed since it was last told:
    /// the io_uring runtime's batched wait waits for the thread's awaited answers together,
    /// and learns from their decrease how many answers a receive brings. Called once per
    /// batch handed to the kernel, per read and at close, not per request. (Not the stream
    /// ids in use: an answered id stays in use until its caller takes the answer, after the
    /// read.)
    #[inline]
    pub(super) fn publish_awaited(&mut self, socket: &TcpStream) {
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
    pub(super) fn timed_done(&mut self, handle: StreamHandle, answered: bool) {
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
    pub(super) fn timed_answer(&mut self, stream: i16, read_at: u64) {
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
    pub(super) fn queued(&mut self, start: usize, socket: &TcpStream) {
        if start == 0 {
            match self.flusher.take() {
                Some(w) => w.wake(),
                None => socket.hurry_send(),
            }
        }
    }
}
