//! A stream's receive side: one multishot `IORING_OP_RECV` with buffer select, and the
//! queue of provided buffers it filled.
//!
//! Each CQE names a provided buffer and a length; the stream queues (buffer id, length) in
//! arrival order and wakes its reader. `poll_recv` copies every queued byte into the
//! caller's `BytesMut` (the one copy) and returns the buffers to the ring at once.
//!
//! The kernel ends a multishot receive with a CQE without `IORING_CQE_F_MORE`:
//! - `-ENOBUFS` (the buffer ring was empty): no byte is lost (it stays in the socket); the
//!   receive is armed again as soon as buffers are back: by the stream's next `poll_recv`
//!   once it has returned its own, or, if it held none, when any stream returns some (the
//!   ring keeps a list of starving receives), so an empty ring never spins;
//! - data without `F_MORE` (any other benign end): armed again at once (or when buffers are
//!   back);
//! - `0`: end of stream, reported as `Ok(0)` after all earlier data;
//! - another error: reported after all earlier data, and the stream receives no more.
//!
//! Invariants:
//! - The slot of the multishot receive owns the stream's shared state ([`StreamState`], an
//!   `Rc` in the operation table) until its final CQE, so the receive state outlives the
//!   `TcpStream` while the kernel may still post to it. Every other owner holds a
//!   [`StreamInner`], and every `Rc` taken out of the table is wrapped in one at once, so the
//!   fd is closed exactly when the last owner, slot or handle, is gone. (The table sits
//!   below the ring and cannot close a socket itself; the one `Rc` it drops unwrapped is at
//!   the executor's end, when a live handle still owns the stream.)
//! - When the `TcpStream` is dropped, its queued buffers go back to the ring at once, the
//!   armed receive is cancelled, and buffers of CQEs that still arrive go straight back to
//!   the ring.
//! - Only one reader per stream: the last waker given to `poll_recv` is the one woken.

use std::io;
use std::ops::Deref;
use std::os::fd::RawFd;
use std::rc::Rc;
use std::task::{Context, Poll};

use bytes::BytesMut;
use io_uring::{cqueue, opcode, types};

use super::bufring::BGID;
use super::current_ring;
use super::op_table::{self, State};
use super::ring::Ring;
use super::socket;
use super::stats::bump;
use super::stream_state::{RecvState, StreamState};

/// One owner of a stream's shared state ([`StreamState`]): the `TcpStream`, a send future,
/// or a handler holding it for a moment. The receive slot in the operation table is the
/// other kind of owner (a bare `Rc`, taken out through [`slot_stream`] or [`free_slot`]).
/// Whichever owner is the last to go closes the socket (through the ring if an executor
/// runs here, see [`socket::close`]).
pub(crate) struct StreamInner(Rc<StreamState>);

impl Clone for StreamInner {
    fn clone(&self) -> StreamInner {
        StreamInner(self.0.clone())
    }
}

impl Deref for StreamInner {
    type Target = StreamState;

    fn deref(&self) -> &StreamState {
        &self.0
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        // The last owner (no other handle, and the receive slot freed): the socket goes.
        if Rc::strong_count(&self.0) == 1 {
            socket::close(self.0.fd);
        }
    }
}

impl StreamInner {
    /// Wraps a connected socket and arms its multishot receive on `ring`.
    pub(crate) fn open(ring: &Ring, fd: RawFd) -> StreamInner {
        let inner = StreamInner(Rc::new(StreamState::new(
            fd,
            ring.id(),
            ring.bufs.len() as usize,
        )));
        let slot = ring.ops.borrow_mut().alloc(State::Stream(inner.0.clone()));
        let mut st = inner.recv.borrow_mut();
        st.slot = slot;
        arm(ring, fd, &mut st);
        drop(st);
        inner
    }
}

/// The stream whose receive slot is (`index`, `gen`), if the slot is still a stream's.
fn slot_stream(ring: &Ring, index: u32, gen: u32) -> Option<StreamInner> {
    match ring.ops.borrow_mut().get(index, gen) {
        Some(State::Stream(state)) => Some(StreamInner(state.clone())),
        _ => None,
    }
}

/// Frees receive slot `index`; the slot's ownership of its stream ends outside the table's
/// borrow (closing the socket if it was the last owner).
fn free_slot(ring: &Ring, index: u32) {
    let old = ring.ops.borrow_mut().free(index);
    if let State::Stream(state) = old {
        drop(StreamInner(state));
    }
}

/// Queues the multishot receive.
fn arm(ring: &Ring, fd: RawFd, st: &mut RecvState) {
    let entry = opcode::RecvMulti::new(types::Fd(fd), BGID)
        .build()
        .user_data(op_table::user_data(
            op_table::KIND_RECV,
            st.slot.0,
            st.slot.1,
        ));
    // SAFETY: a buffer-select receive carries no pointer; the kernel writes only into the
    // provided buffers, which live as long as the executor (or leak).
    unsafe { ring.push(&entry, true) };
    st.armed = true;
    st.needs_rearm = false;
}

/// Handles a CQE of the receive slot (index, generation).
pub(crate) fn on_cqe(ring: &Ring, index: u32, gen: u32, res: i32, flags: u32) {
    let bid = cqueue::buffer_select(flags);
    if bid.is_some() {
        ring.bufs.taken();
    }
    let inner = match slot_stream(ring, index, gen) {
        Some(inner) => inner,
        None => {
            // Cannot happen (the slot lives until the final CQE); keep the buffer anyway.
            if let Some(bid) = bid {
                give_back(ring, bid);
            }
            return;
        }
    };
    let more = cqueue::more(flags);
    let mut st = inner.recv.borrow_mut();
    let mut returned = false;
    if let Some(bid) = bid {
        if res > 0 && !st.closed {
            st.queue.push_back((bid, res as u32));
        } else {
            ring.bufs.push(bid);
            ring.bufs.publish();
            returned = true;
        }
    }
    if res == 0 {
        st.eof = true;
    } else if res == -libc::ENOBUFS {
        bump(&ring.counters.recv_enobufs, 1);
        st.needs_rearm = true;
    } else if res < 0 && st.error.is_none() {
        st.error = Some(-res);
    }
    let mut free = false;
    if !more {
        st.armed = false;
        ring.request_done();
        if st.closed {
            free = true;
        } else if res > 0 {
            // A benign end with data.
            st.needs_rearm = true;
        }
        // With buffers of its own queued, the reader re-arms after returning them.
        if st.queue.is_empty() {
            try_rearm(ring, inner.fd, &mut st);
        }
    }
    let waker = st.waker.take();
    drop(st);
    if free {
        free_slot(ring, index);
    }
    drop(inner);
    if returned {
        rearm_starving(ring);
    }
    if let Some(w) = waker {
        w.wake();
    }
}

/// Returns one buffer to the ring outside any stream.
fn give_back(ring: &Ring, bid: u16) {
    ring.bufs.push(bid);
    ring.bufs.publish();
    rearm_starving(ring);
}

/// Moves every queued byte into `buf` (see `TcpStream::poll_recv`).
pub(crate) fn poll_recv(
    inner: &StreamInner,
    cx: &mut Context<'_>,
    buf: &mut BytesMut,
) -> Poll<io::Result<usize>> {
    let polled = current_ring::with_id(inner.exec, |ring| {
        let mut st = inner.recv.borrow_mut();
        if !st.queue.is_empty() {
            let mut n = 0;
            while let Some((bid, len)) = st.queue.pop_front() {
                buf.extend_from_slice(ring.bufs.slice(bid, len));
                ring.bufs.push(bid);
                n += len as usize;
            }
            ring.bufs.publish();
            try_rearm(ring, inner.fd, &mut st);
            drop(st);
            rearm_starving(ring);
            return Poll::Ready(Ok(n));
        }
        if let Some(e) = st.error {
            return Poll::Ready(Err(io::Error::from_raw_os_error(e)));
        }
        if st.eof {
            return Poll::Ready(Ok(0));
        }
        try_rearm(ring, inner.fd, &mut st);
        match &st.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => st.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    });
    polled.unwrap_or_else(|| Poll::Ready(Err(executor_gone())))
}

/// Arms the receive again if the kernel ended it benignly, as soon as the ring has a
/// buffer; until then the stream waits in the ring's starving list.
fn try_rearm(ring: &Ring, fd: RawFd, st: &mut RecvState) {
    if !st.needs_rearm
        || st.armed
        || st.closed
        || st.eof
        || st.error.is_some()
        || ring.is_shutting_down()
    {
        return;
    }
    if ring.bufs.available() == 0 {
        if !st.starving {
            st.starving = true;
            ring.starving.borrow_mut().push_back(st.slot);
        }
        return;
    }
    bump(&ring.counters.recv_rearms, 1);
    arm(ring, fd, st);
}

/// Buffers came back to the ring: re-arm the receives that were waiting for them. Must be
/// called with no stream's receive state borrowed.
fn rearm_starving(ring: &Ring) {
    let waiting = ring.starving.borrow().len();
    for _ in 0..waiting {
        if ring.bufs.available() == 0 {
            return;
        }
        let next = ring.starving.borrow_mut().pop_front();
        let Some((index, gen)) = next else {
            return;
        };
        let Some(inner) = slot_stream(ring, index, gen) else {
            continue;
        };
        let mut st = inner.recv.borrow_mut();
        st.starving = false;
        try_rearm(ring, inner.fd, &mut st);
    }
}

/// The stream handle is gone: return queued buffers, cancel the receive (or free its slot
/// if it is not armed).
pub(crate) fn close(inner: &StreamInner) {
    current_ring::with_id(inner.exec, |ring| {
        let mut st = inner.recv.borrow_mut();
        st.closed = true;
        st.waker = None;
        let mut returned = false;
        while let Some((bid, _)) = st.queue.pop_front() {
            ring.bufs.push(bid);
            returned = true;
        }
        ring.bufs.publish();
        let (index, gen) = st.slot;
        if st.armed {
            let target = op_table::user_data(op_table::KIND_RECV, index, gen);
            let cancel = opcode::AsyncCancel::new(target)
                .build()
                .user_data(op_table::user_data(op_table::KIND_IGNORE, 0, 0));
            drop(st);
            // SAFETY: a cancel SQE carries no pointer.
            unsafe { ring.push(&cancel, false) };
        } else {
            drop(st);
            free_slot(ring, index);
        }
        if returned {
            rearm_starving(ring);
        }
    });
}

/// The error of a stream used after its executor ended.
pub(crate) fn executor_gone() -> io::Error {
    io::Error::other("the io_uring executor that owned this stream has ended")
}
