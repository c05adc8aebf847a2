//! A request awaited in one future ([`super::Connection::request`]): a stream id awaited
//! within the request's timeout ([`AcquireWithin`], whose polling [`super::StreamWait`]
//! shares), then the answer ([`Answer`]).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::BytesMut;
use doppio_proto::frame::Frame;
use doppio_proto::ProtoError;
use doppio_rt::Timer;

use crate::clock::Ticks;

use super::error::{ConnectionError, RequestError};
use super::in_flight::{Outcome, StreamHandle};
use super::shared::Shared;

impl Shared {
    /// See [`Connection::request`].
    pub(super) async fn request<F>(
        &self,
        timeout: Option<Duration>,
        encode: F,
    ) -> Result<Frame, RequestError>
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
}

/// Polls for a free stream id for a request whose wait is bounded by `timeout`: the id, or
/// why none will come (the connection failed, or `timeout` passed first). `ticket` is the
/// caller's place in the queue of acquirers (see [`InFlight::poll_acquire`]); `timer` is
/// armed only when the first poll found no free id: the timer (one allocation) is paid on
/// the backpressure path, never on the hot path where an id is free at once.
pub(super) fn poll_stream_within(
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
pub(super) fn leave_queue(shared: &Shared, ticket: Option<u64>) {
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
