//! [`TcpListener`]: a listening socket whose accepts go through the ring
//! (`IORING_OP_ACCEPT`).
//!
//! Invariant: the address buffer an accept writes is owned by its operation slot until the
//! CQE; an accept whose future was dropped but which completed anyway has its new fd closed
//! by the executor.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use io_uring::{opcode, types};

use super::current_ring;
use super::multishot_recv::{executor_gone, StreamInner};
use super::op_future::Op;
use super::op_table::Hold;
use super::sockaddr::SockAddrBuf;
use super::socket::{self, FdGuard};
use super::stream::TcpStream;

/// A listening TCP socket. It may be bound on any thread and moved (it is only an fd);
/// `accept` runs on the io_uring executor of the thread that awaits it.
#[derive(Debug)]
pub struct TcpListener {
    fd: RawFd,
}

impl TcpListener {
    /// Binds `addr` with `SO_REUSEADDR` (and `SO_REUSEPORT` if `reuse_port`) and listens
    /// with a backlog of 1024. Needs no executor.
    pub fn bind(addr: SocketAddr, reuse_port: bool) -> io::Result<TcpListener> {
        let mut guard = FdGuard(Some(socket::tcp_socket(&addr)?));
        let fd = guard.0.unwrap_or(-1);
        socket::set_int_opt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
        if reuse_port {
            socket::set_int_opt(fd, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)?;
        }
        let sa = SockAddrBuf::from_addr(&addr);
        // SAFETY: passes a valid address of `sa.len` bytes.
        if unsafe { libc::bind(fd, sa.as_ptr(), sa.len) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: listen takes no pointers.
        if unsafe { libc::listen(fd, 1024) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(TcpListener { fd: guard.take() })
    }

    /// The address it listens on (with the port the kernel chose for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        socket::sock_name(self.fd, false)
    }

    /// Accepts a connection through the ring.
    ///
    /// # Panics
    ///
    /// If no io_uring executor runs on this thread.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let mut sa = Box::new(SockAddrBuf::empty());
        let entry = opcode::Accept::new(
            types::Fd(self.fd),
            (&raw mut sa.storage).cast(),
            &raw mut sa.len,
        )
        .flags(libc::SOCK_CLOEXEC)
        .build();
        // SAFETY: the entry points into the boxed address buffer, which the slot owns (Hold)
        // until the CQE arrives.
        let op = unsafe {
            Op::start(
                entry,
                Hold::Addr {
                    addr: sa,
                    accept: true,
                },
            )
        };
        let Some(mut op) = op else {
            panic!("doppio_rt::uring::TcpListener::accept called outside an io_uring executor");
        };
        let c = poll_fn(|cx| op.poll(cx)).await;
        if c.res < 0 {
            return Err(io::Error::from_raw_os_error(-c.res));
        }
        let new_fd = c.res;
        let peer = match &c.hold {
            Hold::Addr { addr, .. } => addr.to_addr(),
            _ => Err(executor_gone()),
        };
        let stream =
            current_ring::with(|ring| TcpStream::from_accepted(StreamInner::open(ring, new_fd)));
        match (stream, peer) {
            (Some(s), Ok(peer)) => Ok((s, peer)),
            (Some(s), Err(e)) => {
                drop(s);
                Err(e)
            }
            (None, _) => {
                socket::close_now(new_fd);
                Err(executor_gone())
            }
        }
    }
}

impl Drop for TcpListener {
    fn drop(&mut self) {
        socket::close(self.fd);
    }
}
