//! Socket descriptors: creation and option setting (setup-time syscalls) and closing.
//!
//! Sockets are created blocking (no `O_NONBLOCK`). io_uring never depends on the fd's own
//! flag: it issues every socket request non-blocking (`MSG_DONTWAIT`, `O_NONBLOCK` per
//! issue) and on `EAGAIN` arms an internal poll, so requests never park an io-wq thread on
//! a socket; a blocking fd also behaves as std expects if it is ever handed to std.
//!
//! Invariant: an fd is closed through the ring (`IORING_OP_CLOSE`) whenever an executor runs
//! on this thread. The close then queues behind every SQE already queued that names the fd,
//! so the kernel resolves those first and the fd number cannot be reused under a queued but
//! not yet submitted request. Without an executor (no ring, nothing queued) a plain
//! `close(2)` is used.

use std::io;
use std::mem;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use io_uring::{opcode, types};

use super::current_ring;
use super::op_table;
use super::sockaddr::SockAddrBuf;

/// A new TCP socket of `addr`'s family (blocking, close-on-exec).
pub(crate) fn tcp_socket(addr: &SocketAddr) -> io::Result<RawFd> {
    let domain = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: socket(2) takes no pointers; the result is checked.
    let fd = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// Sets an integer socket option.
pub(crate) fn set_int_opt(fd: RawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: passes a pointer to a live i32 and its exact size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&raw const value).cast(),
            mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The local (`peer == false`) or peer address of a socket.
pub(crate) fn sock_name(fd: RawFd, peer: bool) -> io::Result<SocketAddr> {
    let mut buf = SockAddrBuf::empty();
    let p = (&raw mut buf.storage).cast::<libc::sockaddr>();
    // SAFETY: the kernel writes at most `buf.len` bytes into the storage and updates `len`.
    let r = unsafe {
        if peer {
            libc::getpeername(fd, p, &mut buf.len)
        } else {
            libc::getsockname(fd, p, &mut buf.len)
        }
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.to_addr()
}

/// Closes `fd`: through the ring of the executor on this thread, else with `close(2)`.
pub(crate) fn close(fd: RawFd) {
    let queued = current_ring::with(|ring| {
        let entry = opcode::Close::new(types::Fd(fd))
            .build()
            .user_data(op_table::user_data(op_table::KIND_IGNORE, 0, 0));
        // SAFETY: a close SQE carries no pointer.
        unsafe { ring.push(&entry, false) };
    });
    if queued.is_none() {
        close_now(fd);
    }
}

/// Closes `fd` with `close(2)` (for fds no queued SQE names).
pub(crate) fn close_now(fd: RawFd) {
    // SAFETY: the caller owns `fd` and gives it up; no one uses the number afterwards.
    unsafe { libc::close(fd) };
}

/// Closes `fd` when dropped, unless taken.
pub(crate) struct FdGuard(pub(crate) Option<RawFd>);

impl FdGuard {
    /// Gives up ownership.
    pub(crate) fn take(&mut self) -> RawFd {
        self.0.take().unwrap_or(-1)
    }
}

impl Drop for FdGuard {
    fn drop(&mut self) {
        if let Some(fd) = self.0.take() {
            close(fd);
        }
    }
}
