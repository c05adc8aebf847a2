//! Requests whose caller drives the wait from its own future: [`Connection::try_request`]
//! and [`Connection::wait_for_stream`], their [`StreamWait`] and [`PendingAnswer`].

use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::frame::Frame;
use doppio_proto::ProtoError;
use doppio_rt::Timer;

use crate::clock::Ticks;

use super::error::RequestError;
use super::handle::Connection;
use super::in_flight::{Outcome, StreamHandle};
use super::request::{leave_queue, poll_stream_within};

impl Connection {
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
