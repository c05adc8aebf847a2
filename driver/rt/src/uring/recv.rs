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
//!   executor keeps a list of starving receives), so an empty ring never spins;
//! - data without `F_MORE` (any other benign end): armed again at once (or when buffers are
//!   back);
//! - `0`: end of stream, reported as `Ok(0)` after all earlier data;
//! - another error: reported after all earlier data, and the stream receives no more.
//!
//! Invariants:
//! - The slot of the multishot receive owns an `Rc<StreamInner>` until its final CQE, so the
//!   receive state outlives the `TcpStream` while the kernel may still post to it, and the
//!   fd is closed only when the last owner is gone.
//! - When the `TcpStream` is dropped, its queued buffers go back to the ring at once, the
//!   armed receive is cancelled, and buffers of CQEs that still arrive go straight back to
//!   the ring.
//! - Only one reader per stream: the last waker given to `poll_recv` is the one woken.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use io_uring::{cqueue, opcode, types};

use super::bufring::BGID;
use super::context;
use super::executor::Executor;
use super::fd;
use super::ops::{self, State};
use super::stats::bump;

/// What a stream and its receive slot share.
pub(crate) struct StreamInner {
    /// The socket, closed when the last owner is gone.
    pub(crate) fd: RawFd,
    /// The executor the stream belongs to.
    pub(crate) exec: u32,
    /// The slot of the lazy send in flight, if any (for `TcpStream::hurry_send`).
    pub(crate) lazy_send: Cell<Option<(u32, u32)>>,
    recv: RefCell<RecvState>,
}

struct RecvState {
    /// Filled provided buffers (id, length), oldest first; capacity is kept.
    queue: VecDeque<(u16, u32)>,
    waker: Option<Waker>,
    eof: bool,
    error: Option<i32>,
    armed: bool,
    needs_rearm: bool,
    /// Listed in the executor's starving receives.
    starving: bool,
    closed: bool,
    /// The receive slot (index, generation).
    slot: (u32, u32),
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        fd::close(self.fd);
    }
}

impl StreamInner {
    /// Wraps a connected socket and arms its multishot receive on `ex`.
    pub(crate) fn open(ex: &Executor, fd: RawFd) -> Rc<StreamInner> {
        let inner = Rc::new(StreamInner {
            fd,
            exec: ex.id(),
            lazy_send: Cell::new(None),
            recv: RefCell::new(RecvState {
                queue: VecDeque::with_capacity(ex.bufs.len() as usize),
                waker: None,
                eof: false,
                error: None,
                armed: false,
                needs_rearm: false,
                starving: false,
                closed: false,
                slot: (0, 0),
            }),
        });
        let slot = ex.ops.borrow_mut().alloc(State::Stream(inner.clone()));
        let mut st = inner.recv.borrow_mut();
        st.slot = slot;
        arm(ex, fd, &mut st);
        drop(st);
        inner
    }
}

/// Queues the multishot receive.
fn arm(ex: &Executor, fd: RawFd, st: &mut RecvState) {
    let entry = opcode::RecvMulti::new(types::Fd(fd), BGID)
        .build()
        .user_data(ops::user_data(ops::KIND_RECV, st.slot.0, st.slot.1));
    // SAFETY: a buffer-select receive carries no pointer; the kernel writes only into the
    // provided buffers, which live as long as the executor (or leak).
    unsafe { ex.push(&entry, true) };
    st.armed = true;
    st.needs_rearm = false;
}

/// Handles a CQE of the receive slot (index, generation).
pub(crate) fn on_cqe(ex: &Executor, index: u32, gen: u32, res: i32, flags: u32) {
    let bid = cqueue::buffer_select(flags);
    if bid.is_some() {
        ex.bufs.taken();
    }
    let inner = match ex.ops.borrow_mut().get(index, gen) {
        Some(State::Stream(inner)) => inner.clone(),
        _ => {
            // Cannot happen (the slot lives until the final CQE); keep the buffer anyway.
            if let Some(bid) = bid {
                give_back(ex, bid);
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
            ex.bufs.push(bid);
            ex.bufs.publish();
            returned = true;
        }
    }
    if res == 0 {
        st.eof = true;
    } else if res == -libc::ENOBUFS {
        bump(&ex.counters.recv_enobufs, 1);
        st.needs_rearm = true;
    } else if res < 0 && st.error.is_none() {
        st.error = Some(-res);
    }
    let mut free_slot = false;
    if !more {
        st.armed = false;
        ex.request_done();
        if st.closed {
            free_slot = true;
        } else if res > 0 {
            // A benign end with data.
            st.needs_rearm = true;
        }
        // With buffers of its own queued, the reader re-arms after returning them.
        if st.queue.is_empty() {
            try_rearm(ex, inner.fd, &mut st);
        }
    }
    let waker = st.waker.take();
    drop(st);
    if free_slot {
        let old = ex.ops.borrow_mut().free(index);
        drop(old);
    }
    drop(inner);
    if returned {
        rearm_starving(ex);
    }
    if let Some(w) = waker {
        w.wake();
    }
}

/// Returns one buffer to the ring outside any stream.
fn give_back(ex: &Executor, bid: u16) {
    ex.bufs.push(bid);
    ex.bufs.publish();
    rearm_starving(ex);
}

/// Moves every queued byte into `buf`; see [`super::TcpStream::poll_recv`].
pub(crate) fn poll_recv(
    inner: &StreamInner,
    cx: &mut Context<'_>,
    buf: &mut BytesMut,
) -> Poll<io::Result<usize>> {
    let polled = context::with_id(inner.exec, |ex| {
        let mut st = inner.recv.borrow_mut();
        if !st.queue.is_empty() {
            let mut n = 0;
            while let Some((bid, len)) = st.queue.pop_front() {
                buf.extend_from_slice(ex.bufs.slice(bid, len));
                ex.bufs.push(bid);
                n += len as usize;
            }
            ex.bufs.publish();
            try_rearm(ex, inner.fd, &mut st);
            drop(st);
            rearm_starving(ex);
            return Poll::Ready(Ok(n));
        }
        if let Some(e) = st.error {
            return Poll::Ready(Err(io::Error::from_raw_os_error(e)));
        }
        if st.eof {
            return Poll::Ready(Ok(0));
        }
        try_rearm(ex, inner.fd, &mut st);
        match &st.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => st.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    });
    polled.unwrap_or_else(|| Poll::Ready(Err(executor_gone())))
}

/// Arms the receive again if the kernel ended it benignly, as soon as the ring has a
/// buffer; until then the stream waits in the executor's starving list.
fn try_rearm(ex: &Executor, fd: RawFd, st: &mut RecvState) {
    if !st.needs_rearm
        || st.armed
        || st.closed
        || st.eof
        || st.error.is_some()
        || ex.is_shutting_down()
    {
        return;
    }
    if ex.bufs.available() == 0 {
        if !st.starving {
            st.starving = true;
            ex.starving.borrow_mut().push_back(st.slot);
        }
        return;
    }
    bump(&ex.counters.recv_rearms, 1);
    arm(ex, fd, st);
}

/// Buffers came back to the ring: re-arm the receives that were waiting for them. Must be
/// called with no stream's receive state borrowed.
fn rearm_starving(ex: &Executor) {
    let waiting = ex.starving.borrow().len();
    for _ in 0..waiting {
        if ex.bufs.available() == 0 {
            return;
        }
        let next = ex.starving.borrow_mut().pop_front();
        let Some((index, gen)) = next else {
            return;
        };
        let inner = match ex.ops.borrow_mut().get(index, gen) {
            Some(State::Stream(inner)) => inner.clone(),
            _ => continue,
        };
        let mut st = inner.recv.borrow_mut();
        st.starving = false;
        try_rearm(ex, inner.fd, &mut st);
    }
}

/// The stream handle is gone: return queued buffers, cancel the receive (or free its slot
/// if it is not armed).
pub(crate) fn close(inner: &StreamInner) {
    context::with_id(inner.exec, |ex| {
        let mut st = inner.recv.borrow_mut();
        st.closed = true;
        st.waker = None;
        let mut returned = false;
        while let Some((bid, _)) = st.queue.pop_front() {
            ex.bufs.push(bid);
            returned = true;
        }
        ex.bufs.publish();
        let (index, gen) = st.slot;
        if st.armed {
            let cancel = opcode::AsyncCancel::new(ops::user_data(ops::KIND_RECV, index, gen))
                .build()
                .user_data(ops::user_data(ops::KIND_IGNORE, 0, 0));
            drop(st);
            // SAFETY: a cancel SQE carries no pointer.
            unsafe { ex.push(&cancel, false) };
        } else {
            drop(st);
            let old = ex.ops.borrow_mut().free(index);
            drop(old);
        }
        if returned {
            rearm_starving(ex);
        }
    });
}

/// The error of a stream used after its executor ended.
pub(crate) fn executor_gone() -> io::Error {
    io::Error::other("the io_uring executor that owned this stream has ended")
}
