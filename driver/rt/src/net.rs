//! TCP on the current thread's runtime: the three operations a connection needs (receive
//! into a buffer, send a whole buffer, shut down) and a listener for servers (the stub).
//! A stream or listener may also be an in-memory one ([`crate::memory`]): a connect to the
//! address of an in-memory listener bound on this thread goes there, not to the network.

use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::BytesMut;

use super::memory::{self, MemoryListener, MemoryStream};
use super::runtime::Runtime;
use super::{glommio_rt, uring};

/// A connected TCP stream. `!Send`: it belongs to the executor that opened it.
pub struct TcpStream(StreamInner);

enum StreamInner {
    Glommio(glommio_rt::TcpStream),
    Uring(uring::TcpStream),
    Memory(MemoryStream),
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpStream")
            .field("runtime", &self.runtime())
            .finish()
    }
}

impl TcpStream {
    /// Connects to `addr` within `timeout`, on the current thread's runtime. `read_chunk`
    /// bounds the bytes one receive takes on glommio (the io_uring runtime receives into its
    /// provided buffers instead).
    pub async fn connect(
        addr: SocketAddr,
        timeout: Duration,
        read_chunk: usize,
    ) -> io::Result<Self> {
        Self::connect_from(addr, None, timeout, read_chunk).await
    }

    /// As [`TcpStream::connect`], from local port `local_port` when given (bound before the
    /// connect; a port in use fails with `AddrInUse`, or `AddrNotAvailable` when the same
    /// four-tuple is still in use). An in-memory listener of this thread on `addr` takes the
    /// connection instead of the network (it sees the client on `local_port`, if given).
    pub async fn connect_from(
        addr: SocketAddr,
        local_port: Option<u16>,
        timeout: Duration,
        read_chunk: usize,
    ) -> io::Result<Self> {
        if let Some(s) = memory::connect(addr, local_port) {
            return Ok(Self(StreamInner::Memory(s)));
        }
        Ok(Self(match Runtime::current() {
            Runtime::Glommio => StreamInner::Glommio(match local_port {
                None => glommio_rt::TcpStream::connect(addr, timeout, read_chunk).await?,
                Some(port) => {
                    let sock = crate::source_port::bound_socket(&addr, port)?;
                    glommio_rt::TcpStream::connect_bound(sock, addr, timeout, read_chunk).await?
                }
            }),
            Runtime::Uring => StreamInner::Uring(match local_port {
                None => uring::TcpStream::connect(addr, timeout).await?,
                Some(port) => {
                    let sock = crate::source_port::bound_socket(&addr, port)?;
                    uring::TcpStream::connect_bound(sock, addr, timeout).await?
                }
            }),
            Runtime::Sim => return Err(no_sockets_in_a_simulation(addr)),
        }))
    }

    /// The runtime the stream belongs to (an in-memory stream: the current thread's).
    pub fn runtime(&self) -> Runtime {
        match self.0 {
            StreamInner::Glommio(_) => Runtime::Glommio,
            StreamInner::Uring(_) => Runtime::Uring,
            StreamInner::Memory(_) => Runtime::current(),
        }
    }

    /// Sets `TCP_NODELAY` (nothing to set on an in-memory stream).
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        match &self.0 {
            StreamInner::Glommio(s) => s.set_nodelay(on),
            StreamInner::Uring(s) => s.set_nodelay(on),
            StreamInner::Memory(_) => Ok(()),
        }
    }

    /// Appends whatever has arrived to `buf`: `Ok(n)` with `n > 0` bytes, `Ok(0)` once the
    /// peer has closed (after all earlier bytes), or the socket's error. One reader at a
    /// time.
    #[inline]
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut BytesMut) -> Poll<io::Result<usize>> {
        match &self.0 {
            StreamInner::Glommio(s) => s.poll_recv(cx, buf),
            StreamInner::Uring(s) => s.poll_recv(cx, buf),
            StreamInner::Memory(s) => s.poll_recv(cx, buf),
        }
    }

    /// Sends all of `buf` and hands it back (its capacity is the caller's to reuse), with
    /// the number of send operations it took (more than one only after partial sends). The
    /// io_uring runtime keeps the buffer alive until the kernel is done with it even if this
    /// future is dropped.
    pub async fn send(&self, buf: BytesMut) -> (io::Result<u64>, BytesMut) {
        match &self.0 {
            StreamInner::Glommio(s) => s.send(buf).await,
            StreamInner::Uring(s) => {
                // Partial sends are resubmitted inside the runtime: one operation counted.
                let (result, buf) = s.send(buf).await;
                (result.map(|()| 1), buf)
            }
            StreamInner::Memory(s) => (s.send(&buf).map(|()| 1), buf),
        }
    }

    /// As [`TcpStream::send`], for a caller that will not need the buffer back until it has
    /// more to send (a connection's flusher). On the io_uring runtime the send's completion
    /// then ends no wait of the executor on its own, so a request and its answer cost one
    /// `io_uring_enter`; whoever queues more bytes for this stream while the send is in
    /// flight calls [`TcpStream::hurry_send`]. On glommio it is [`TcpStream::send`].
    pub async fn send_lazy(&self, buf: BytesMut) -> (io::Result<u64>, BytesMut) {
        match &self.0 {
            StreamInner::Glommio(s) => s.send(buf).await,
            StreamInner::Uring(s) => {
                let (result, buf) = s.send_lazy(buf).await;
                (result.map(|()| 1), buf)
            }
            StreamInner::Memory(s) => (s.send(&buf).map(|()| 1), buf),
        }
    }

    /// More bytes wait behind this stream's [`TcpStream::send_lazy`] in flight: its
    /// completion matters now. Does nothing when none is in flight, on glommio and in
    /// memory (whose sends complete at once).
    #[inline]
    pub fn hurry_send(&self) {
        match &self.0 {
            StreamInner::Glommio(_) | StreamInner::Memory(_) => {}
            StreamInner::Uring(s) => s.hurry_send(),
        }
    }

    /// The answers its owner awaits on this stream (requests sent, not yet answered) went
    /// from `before` to `now`: a hint for the io_uring runtime's batched wait
    /// ([`uring::answers_awaited`]); nothing on glommio and in memory. Call it when the
    /// count changes, not per request.
    #[inline]
    pub fn answers_awaited(&self, before: usize, now: usize) {
        if let StreamInner::Uring(_) = &self.0 {
            uring::answers_awaited(before, now);
        }
    }

    /// Ends both directions: a parked receive returns, later sends fail. The descriptor is
    /// closed when the stream is dropped.
    pub fn shutdown(&self) {
        match &self.0 {
            StreamInner::Glommio(s) => s.shutdown(),
            StreamInner::Uring(s) => s.shutdown(),
            StreamInner::Memory(s) => s.shutdown(),
        }
    }
}

/// A listening TCP socket (`SO_REUSEPORT`, so that one listener per executor can share an
/// address).
pub struct TcpListener(ListenerInner);

enum ListenerInner {
    Glommio(glommio_rt::TcpListener),
    Uring(uring::TcpListener),
    Memory(MemoryListener),
}

impl std::fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpListener").finish_non_exhaustive()
    }
}

impl TcpListener {
    /// Binds `addr` on the current thread's runtime; accepted streams receive up to
    /// `read_chunk` bytes per receive on glommio.
    pub fn bind(addr: SocketAddr, read_chunk: usize) -> io::Result<Self> {
        Ok(Self(match Runtime::current() {
            Runtime::Glommio => {
                ListenerInner::Glommio(glommio_rt::TcpListener::bind(addr, read_chunk)?)
            }
            Runtime::Uring => ListenerInner::Uring(uring::TcpListener::bind(addr, true)?),
            Runtime::Sim => return Err(no_sockets_in_a_simulation(addr)),
        }))
    }

    /// An in-memory listener on `addr` ([`crate::memory`]): until it is dropped, connects
    /// made on this thread to `addr` come here, with no socket and no kernel in between.
    /// `AddrInUse` if this thread has one on `addr` already.
    pub fn bind_memory(addr: SocketAddr) -> io::Result<Self> {
        Ok(Self(ListenerInner::Memory(MemoryListener::bind(addr)?)))
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match &self.0 {
            ListenerInner::Glommio(l) => l.local_addr(),
            ListenerInner::Uring(l) => l.local_addr(),
            ListenerInner::Memory(l) => Ok(l.local_addr()),
        }
    }

    /// Accepts the next connection.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        Ok(match &self.0 {
            ListenerInner::Glommio(l) => {
                let (s, peer) = l.accept().await?;
                (TcpStream(StreamInner::Glommio(s)), peer)
            }
            ListenerInner::Uring(l) => {
                let (s, peer) = l.accept().await?;
                (TcpStream(StreamInner::Uring(s)), peer)
            }
            ListenerInner::Memory(l) => {
                let (s, peer) = l.accept().await?;
                (TcpStream(StreamInner::Memory(s)), peer)
            }
        })
    }
}

/// The error of a socket asked for on a simulation, which has none: only its in-memory
/// listeners take connections.
fn no_sockets_in_a_simulation(addr: SocketAddr) -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionRefused,
        format!(
            "{addr}: a simulation has no sockets; only an in-memory listener \
             (TcpListener::bind_memory) on its thread takes connections"
        ),
    )
}
