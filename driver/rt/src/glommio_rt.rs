//! The glommio adapter: the only file of the driver that names the glommio crate.
//!
//! glommio's own types are used as they are (tasks, timers, executors); its `TcpStream` is
//! wrapped so that it offers the same three operations as the io_uring runtime's stream:
//! receive into a `BytesMut`, send a whole `BytesMut`, shut down.
//!
//! Invariant: nothing here holds a `RefCell` borrow across an await (every borrow lives
//! inside one `poll`).

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::BytesMut;
use futures_lite::{AsyncRead, AsyncWrite};

pub use glommio::timer::Timer;
pub use glommio::{ExecutorJoinHandle, ScopedTask, Task};

/// Spawns `future` on the current glommio executor.
pub fn spawn_local<T: 'static>(future: impl Future<Output = T> + 'static) -> Task<T> {
    glommio::spawn_local(future)
}

/// Spawns a future that may borrow from its caller.
///
/// # Safety
/// As [`glommio::spawn_scoped_local`]: the task must be awaited or dropped before what it
/// borrows goes away, and never leaked.
pub unsafe fn spawn_scoped_local<'a, T>(future: impl Future<Output = T> + 'a) -> ScopedTask<'a, T> {
    // SAFETY: the caller upholds glommio's contract, which is ours verbatim.
    unsafe { glommio::spawn_scoped_local(future) }
}

/// Starts a glommio executor on a new thread, pinned to `core` when given, running `f`.
pub fn spawn_executor<T, F, Fut>(
    name: &str,
    core: Option<usize>,
    spin_before_park: Option<Duration>,
    f: F,
) -> io::Result<ExecutorJoinHandle<T>>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    let placement = match core {
        Some(c) => glommio::Placement::Fixed(c),
        None => glommio::Placement::Unbound,
    };
    // io_memory: glommio registers (pins) this much memory per executor for DMA file I/O,
    // 10 MiB by default; sockets never use it, so the minimum (64 KiB) keeps 10 MiB per
    // executor out of the client's resident set.
    let mut builder = glommio::LocalExecutorBuilder::new(placement)
        .name(name)
        .io_memory(64 << 10);
    if let Some(spin) = spin_before_park {
        builder = builder.spin_before_park(spin);
    }
    builder
        .spawn(f)
        .map_err(|e| io::Error::other(e.to_string()))
}

/// Joins an executor thread started by [`spawn_executor`].
pub fn join<T: Send + 'static>(handle: ExecutorJoinHandle<T>) -> std::thread::Result<T> {
    handle.join().map_err(|e| Box::new(e.to_string()) as _)
}

/// A glommio TCP stream with the runtime-neutral operations.
pub struct TcpStream {
    stream: RefCell<glommio::net::TcpStream>,
    /// Where `recv` lands before it is appended to the caller's buffer: zeroed once, so no
    /// window of the caller's buffer has to be zeroed before every `recv`.
    scratch: RefCell<Vec<u8>>,
    fd: RawFd,
}

impl TcpStream {
    /// Connects within `timeout`; `read_chunk` bounds the bytes taken per `recv`.
    pub async fn connect(
        addr: SocketAddr,
        timeout: Duration,
        read_chunk: usize,
    ) -> io::Result<Self> {
        let stream = glommio::net::TcpStream::connect_timeout(addr, timeout)
            .await
            .map_err(io::Error::from)?;
        Ok(Self::from_glommio(stream, read_chunk))
    }

    /// Connects the socket `sock` (already bound to its local port) within `timeout`.
    /// glommio 0.9 has no connect of a socket made elsewhere, so the connect blocks on
    /// glommio's helper thread (once per connection, never on the request path) and the
    /// connected socket is then handed to glommio.
    pub(crate) async fn connect_bound(
        sock: std::os::fd::OwnedFd,
        addr: SocketAddr,
        timeout: Duration,
        read_chunk: usize,
    ) -> io::Result<Self> {
        let sock = glommio::executor()
            .spawn_blocking(move || {
                crate::source_port::blocking_connect(&sock, &addr, timeout).map(|()| sock)
            })
            .await?;
        let fd = std::os::fd::IntoRawFd::into_raw_fd(sock);
        // SAFETY: `fd` is a connected TCP socket whose ownership was just released by its
        // `OwnedFd`, so the glommio stream becomes its only owner (exercised by the
        // shard-aware connection tests on glommio).
        let stream =
            unsafe { <glommio::net::TcpStream as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        Ok(Self::from_glommio(stream, read_chunk))
    }

    fn from_glommio(stream: glommio::net::TcpStream, read_chunk: usize) -> Self {
        let fd = stream.as_raw_fd();
        Self {
            stream: RefCell::new(stream),
            scratch: RefCell::new(vec![0u8; read_chunk.max(1024)]),
            fd,
        }
    }

    /// Sets `TCP_NODELAY`.
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        self.stream
            .borrow()
            .set_nodelay(on)
            .map_err(io::Error::from)
    }

    /// Ends both directions: a parked `recv` returns, later sends fail; the descriptor is
    /// closed when the stream is dropped.
    pub fn shutdown(&self) {
        // SAFETY: `fd` belongs to the live stream (it is closed only by its drop); shutdown
        // does not close it, it only ends both directions.
        unsafe {
            libc::shutdown(self.fd, libc::SHUT_RDWR);
        }
    }

    /// Receives what is available (one `recv`) and appends it to `buf`; `Ok(0)` at EOF.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut BytesMut) -> Poll<io::Result<usize>> {
        let mut scratch = self.scratch.borrow_mut();
        let mut stream = self.stream.borrow_mut();
        match Pin::new(&mut *stream).poll_read(cx, &mut scratch) {
            Poll::Ready(Ok(n)) => {
                buf.extend_from_slice(&scratch[..n]);
                Poll::Ready(Ok(n))
            }
            other => other,
        }
    }

    /// Writes all of `buf` and hands it back, with the number of `send` calls it took.
    pub async fn send(&self, buf: BytesMut) -> (io::Result<u64>, BytesMut) {
        let mut written = 0;
        let mut calls = 0u64;
        while written < buf.len() {
            let result = poll_fn(|cx| {
                let mut stream = self.stream.borrow_mut();
                Pin::new(&mut *stream).poll_write(cx, &buf[written..])
            })
            .await;
            match result {
                Ok(0) => {
                    let e = io::Error::new(io::ErrorKind::WriteZero, "the peer took no data");
                    return (Err(e), buf);
                }
                Ok(n) => {
                    written += n;
                    calls += 1;
                }
                Err(e) => return (Err(e), buf),
            }
        }
        (Ok(calls), buf)
    }
}

/// A glommio TCP listener (`SO_REUSEPORT` always on, as glommio binds it).
pub struct TcpListener {
    listener: glommio::net::TcpListener,
    read_chunk: usize,
}

impl TcpListener {
    /// Binds and listens on `addr`.
    pub fn bind(addr: SocketAddr, read_chunk: usize) -> io::Result<Self> {
        let listener = glommio::net::TcpListener::bind(addr).map_err(io::Error::from)?;
        Ok(Self {
            listener,
            read_chunk,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr().map_err(io::Error::from)
    }

    /// Accepts the next connection.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let stream = self.listener.accept().await.map_err(io::Error::from)?;
        let peer = stream.peer_addr().map_err(io::Error::from)?;
        Ok((TcpStream::from_glommio(stream, self.read_chunk), peer))
    }
}
