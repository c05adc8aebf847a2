//! What a stream, its sends and its multishot receive slot share: the socket, the executor
//! it belongs to, its lazy send in flight, and the receive state (the queue of provided
//! buffers the kernel filled, the reader's waker, how the receive ended).
//!
//! Plain data below the ring: the operation table keeps one in each stream's receive slot
//! ([`super::op_table::State::Stream`]) so that it outlives the `TcpStream` while the kernel
//! may still post to it. The receive logic that reads and writes it is
//! [`super::multishot_recv`], which also owns the socket's closing (when the last owner,
//! handle or slot, is gone): this file imports nothing of the runtime.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::task::Waker;

/// What a stream and its receive slot share.
pub(crate) struct StreamState {
    /// The socket, closed when the last owner is gone (see [`super::multishot_recv`]).
    pub(crate) fd: RawFd,
    /// The executor the stream belongs to.
    pub(crate) exec: u32,
    /// The slot of the lazy send in flight, if any (for `TcpStream::hurry_send`).
    pub(crate) lazy_send: Cell<Option<(u32, u32)>>,
    /// The receive side.
    pub(crate) recv: RefCell<RecvState>,
}

/// A stream's receive side (see [`super::multishot_recv`] for how it moves).
pub(crate) struct RecvState {
    /// Filled provided buffers (id, length), oldest first; capacity is kept.
    pub(crate) queue: VecDeque<(u16, u32)>,
    pub(crate) waker: Option<Waker>,
    pub(crate) eof: bool,
    pub(crate) error: Option<i32>,
    pub(crate) armed: bool,
    pub(crate) needs_rearm: bool,
    /// Listed in the ring's starving receives.
    pub(crate) starving: bool,
    pub(crate) closed: bool,
    /// The receive slot (index, generation).
    pub(crate) slot: (u32, u32),
}

impl StreamState {
    /// The state of a new stream on socket `fd` of executor `exec`, whose receive queue can
    /// hold `buffers` provided buffers without growing.
    pub(crate) fn new(fd: RawFd, exec: u32, buffers: usize) -> StreamState {
        StreamState {
            fd,
            exec,
            lazy_send: Cell::new(None),
            recv: RefCell::new(RecvState {
                queue: VecDeque::with_capacity(buffers),
                waker: None,
                eof: false,
                error: None,
                armed: false,
                needs_rearm: false,
                starving: false,
                closed: false,
                slot: (0, 0),
            }),
        }
    }
}
