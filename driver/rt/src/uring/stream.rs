//! [`TcpStream`]: a TCP connection whose data moves only through the ring.
//!
//! Connect is `IORING_OP_CONNECT`, receive is the stream's multishot receive
//! ([`super::multishot_recv`]), send is `IORING_OP_SEND` (resubmitted after a partial send). Only the
//! setup-time calls (`socket`, `setsockopt`, `shutdown`, `getsockname`) are plain syscalls.
//!
//! Invariants:
//! - The socket address of a connect and the buffer of a send are owned by their operation
//!   slot until the CQE, so dropping `connect` or `send` futures is safe at any point.
//! - A send future keeps the stream's fd open (it owns an `Rc` of the stream) until it is
//!   dropped, so its fd number is never reused under it.

use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::BytesMut;
use io_uring::{opcode, types};

use super::current_ring;
use super::multishot_recv::{self, executor_gone, StreamInner};
use super::op_future::{self, Op};
use super::op_table::Hold;
use super::sockaddr::SockAddrBuf;
use super::socket::{self, FdGuard};
use super::stats::bump;
use super::timer_future::Timer;

/// A TCP connection on the io_uring executor of this thread (`!Send`).
///
/// One reader at a time: [`TcpStream::poll_recv`] wakes only the last waker it was given.
/// Sends may be issued by several tasks, but each `send` writes its whole buffer with as
/// many requests as it takes, so concurrent sends can interleave: serialise them.
pub struct TcpStream {
    inner: StreamInner,
}

impl TcpStream {
    /// Connects to `addr` through the ring, giving up after `timeout` with
    /// [`io::ErrorKind::TimedOut`] (the connect is then cancelled). A refused connection
    /// returns the OS error (`ConnectionRefused`).
    ///
    /// # Panics
    ///
    /// If no io_uring executor runs on this thread.
    pub async fn connect(addr: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
        Self::connect_fd(socket::tcp_socket(&addr)?, addr, timeout).await
    }

    /// As [`TcpStream::connect`], with the socket `sock` made (and bound to its local port)
    /// by the caller.
    pub(crate) async fn connect_bound(
        sock: std::os::fd::OwnedFd,
        addr: SocketAddr,
        timeout: Duration,
    ) -> io::Result<TcpStream> {
        Self::connect_fd(std::os::fd::IntoRawFd::into_raw_fd(sock), addr, timeout).await
    }

    /// Connects the socket `raw` (owned from here on: closed on failure).
    async fn connect_fd(raw: RawFd, addr: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
        let mut timer = Timer::new(timeout);
        let mut sock = FdGuard(Some(raw));
        let sa = Box::new(SockAddrBuf::from_addr(&addr));
        let entry =
            opcode::Connect::new(types::Fd(sock.0.unwrap_or(-1)), sa.as_ptr(), sa.len).build();
        // SAFETY: the entry points into the boxed address, which the slot owns (Hold) until
        // the CQE arrives.
        let op = unsafe {
            Op::start(
                entry,
                Hold::Addr {
                    addr: sa,
                    accept: false,
                },
            )
        };
        let Some(mut op) = op else {
            panic!("doppio_rt::uring::TcpStream::connect called outside an io_uring executor");
        };
        let res = poll_fn(|cx| {
            if let Poll::Ready(c) = op.poll(cx) {
                return Poll::Ready(Some(c.res));
            }
            if Pin::new(&mut timer).poll(cx).is_ready() {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await;
        // Cancel a connect still in flight before the socket's close is queued.
        drop(op);
        match res {
            None => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("connect to {addr} timed out after {timeout:?}"),
            )),
            Some(r) if r < 0 => Err(io::Error::from_raw_os_error(-r)),
            Some(_) => {
                let fd = sock.take();
                current_ring::with(|ring| TcpStream {
                    inner: StreamInner::open(ring, fd),
                })
                .ok_or_else(executor_gone)
            }
        }
    }

    /// Wraps an accepted socket.
    pub(crate) fn from_accepted(inner: StreamInner) -> TcpStream {
        TcpStream { inner }
    }

    /// Sets `TCP_NODELAY`.
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        socket::set_int_opt(
            self.inner.fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            on as i32,
        )
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        socket::sock_name(self.inner.fd, false)
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        socket::sock_name(self.inner.fd, true)
    }

    /// Appends every byte received so far to `buf` and returns how many (`> 0`), returning
    /// the provided buffers to the ring at once; `Ok(0)` at end of stream (after all earlier
    /// data); `Err` on a socket error (after all earlier data). Pending until one of these.
    ///
    /// One reader per stream: only the last waker given here is woken.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut BytesMut) -> Poll<io::Result<usize>> {
        multishot_recv::poll_recv(&self.inner, cx, buf)
    }

    /// Waits for data and appends it to `buf` (see [`TcpStream::poll_recv`]).
    pub async fn recv(&self, buf: &mut BytesMut) -> io::Result<usize> {
        poll_fn(|cx| self.poll_recv(cx, buf)).await
    }

    /// Writes all of `buf` with `IORING_OP_SEND` (`MSG_NOSIGNAL`), submitting the rest
    /// again after a partial send, then hands `buf` back unchanged (so its capacity can be
    /// reused). A send of 0 bytes, `EPIPE` or `ECONNRESET` is an error.
    ///
    /// Cancel safety: the buffer is moved into the operation slot while the kernel may read
    /// it; if this future is dropped mid-send the send is cancelled and the slot frees the
    /// buffer when the kernel's CQE arrives. The stream then holds an unknown prefix of
    /// `buf`: close it.
    pub fn send(&self, buf: BytesMut) -> impl Future<Output = (io::Result<()>, BytesMut)> {
        Send {
            inner: self.inner.clone(),
            buf: Some(buf),
            sent: 0,
            op: None,
            lazy_next: false,
            lazy_op: false,
        }
    }

    /// As [`TcpStream::send`], for a caller that does not need the buffer back soon (a
    /// connection's flusher, which has nothing more to send): the first attempt is a send
    /// with `MSG_DONTWAIT`, which completes while it is submitted, and whose completion
    /// does not end the executor's wait on its own; a request and its answer then cost one
    /// `io_uring_enter`, not two. If the socket is full (`EAGAIN`, or only a part taken),
    /// the rest goes as an ordinary send, which waits in the kernel for room.
    ///
    /// The caller that queues more bytes while this send is in flight must call
    /// [`TcpStream::hurry_send`], or those bytes may wait for the executor's next wake-up.
    /// A failure is reported as by [`TcpStream::send`] (when the completion is next seen);
    /// the buffer is owned by the operation slot until its completion, as there.
    pub fn send_lazy(&self, buf: BytesMut) -> impl Future<Output = (io::Result<()>, BytesMut)> {
        Send {
            inner: self.inner.clone(),
            buf: Some(buf),
            sent: 0,
            op: None,
            lazy_next: true,
            lazy_op: false,
        }
    }

    /// Someone now waits for this stream's lazy send in flight (more bytes are queued
    /// behind it): its completion ends the executor's wait again. Does nothing when no lazy
    /// send is in flight.
    pub fn hurry_send(&self) {
        if let Some(slot) = self.inner.lazy_send.get() {
            if op_future::hurry(self.inner.exec, slot) {
                current_ring::with(|ring| bump(&ring.counters.sends_hurried, 1));
            }
        }
    }

    /// `shutdown(SHUT_RDWR)`: the peer sees end of stream, and a parked reader here sees
    /// `Ok(0)`.
    pub fn shutdown(&self) {
        // SAFETY: shutdown takes no pointers; an error (not connected) is irrelevant here.
        unsafe { libc::shutdown(self.inner.fd, libc::SHUT_RDWR) };
    }
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpStream")
            .field("fd", &self.inner.fd)
            .finish()
    }
}

impl Drop for TcpStream {
    fn drop(&mut self) {
        multishot_recv::close(&self.inner);
    }
}

/// The future of [`TcpStream::send`] and [`TcpStream::send_lazy`].
struct Send {
    inner: StreamInner,
    buf: Option<BytesMut>,
    sent: usize,
    op: Option<Op>,
    /// The next attempt is lazy (the first of a `send_lazy`).
    lazy_next: bool,
    /// The operation in flight is lazy (its slot is in `inner.lazy_send`).
    lazy_op: bool,
}

impl Send {
    /// The operation in flight is over (completed or abandoned): it is no longer the
    /// stream's lazy send.
    fn end_op(&mut self) {
        if std::mem::take(&mut self.lazy_op) {
            self.inner.lazy_send.set(None);
        }
    }
}

impl Drop for Send {
    fn drop(&mut self) {
        self.end_op();
    }
}

impl Future for Send {
    type Output = (io::Result<()>, BytesMut);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            if let Some(op) = &mut this.op {
                let c = match op.poll(cx) {
                    Poll::Ready(c) => c,
                    Poll::Pending => return Poll::Pending,
                };
                this.op = None;
                let was_lazy = this.lazy_op;
                this.end_op();
                let buf = match c.hold {
                    Hold::Buf(b) => b,
                    _ => BytesMut::new(),
                };
                if was_lazy && c.res == -libc::EAGAIN {
                    // The socket was full: the rest goes as an ordinary send.
                    current_ring::with(|ring| bump(&ring.counters.lazy_sends_retried, 1));
                    this.buf = Some(buf);
                    continue;
                }
                if c.res < 0 {
                    return Poll::Ready((Err(io::Error::from_raw_os_error(-c.res)), buf));
                }
                if c.res == 0 {
                    let e = io::Error::new(io::ErrorKind::WriteZero, "send wrote 0 bytes");
                    return Poll::Ready((Err(e), buf));
                }
                this.sent += c.res as usize;
                if this.sent >= buf.len() {
                    return Poll::Ready((Ok(()), buf));
                }
                // A lazy send taken in part found the socket full too.
                current_ring::with(|ring| {
                    let c = &ring.counters;
                    bump(
                        if was_lazy {
                            &c.lazy_sends_retried
                        } else {
                            &c.partial_sends
                        },
                        1,
                    )
                });
                this.buf = Some(buf);
            }
            let Some(buf) = this.buf.take() else {
                panic!("send polled after completion");
            };
            if this.sent >= buf.len() {
                return Poll::Ready((Ok(()), buf));
            }
            if current_ring::current_id() != this.inner.exec {
                return Poll::Ready((Err(executor_gone()), buf));
            }
            let rest = &buf[this.sent..];
            let len = rest.len().min(1 << 30) as u32;
            let lazy = std::mem::take(&mut this.lazy_next);
            let flags = if lazy {
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT
            } else {
                libc::MSG_NOSIGNAL
            };
            let entry = opcode::Send::new(types::Fd(this.inner.fd), rest.as_ptr(), len)
                .flags(flags)
                .build();
            this.op = if lazy {
                // SAFETY: as below; and with MSG_DONTWAIT the send cannot wait in the kernel
                // (io_uring completes it with EAGAIN rather than polling the socket), so it
                // completes while it is submitted, as a lazy request must.
                let op = unsafe { Op::start_lazy(entry, Hold::Buf(buf)) };
                if let Some(op) = &op {
                    this.inner.lazy_send.set(Some(op.slot()));
                    this.lazy_op = true;
                    current_ring::with(|ring| bump(&ring.counters.lazy_sends, 1));
                }
                op
            } else {
                // SAFETY: the entry points into the BytesMut's heap bytes, which do not move
                // when the BytesMut is moved into the slot, and which the slot owns until the
                // CQE.
                unsafe { Op::start(entry, Hold::Buf(buf)) }
            };
        }
    }
}
