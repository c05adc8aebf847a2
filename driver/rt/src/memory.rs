//! In-process connections: both ends on the current thread, bytes handed over in memory, no
//! socket and no kernel round trip.
//!
//! For measuring what a driver costs without the kernel's share (the request-path
//! micro-benchmarks run a session against a stub served this way on its own executor) and for
//! tests. Nothing uses them unless a listener is bound with [`TcpListener::bind_memory`]:
//! from then until it is dropped, a [`TcpStream::connect`] on this thread to its address
//! gets an in-memory stream whose other end that listener accepts.
//!
//! Semantics follow a TCP stream's as the rest of the crate uses it: a send appends the
//! whole buffer to the other end's receive queue and wakes its reader (it never waits: the
//! queue is unbounded, so the peer's own backpressure is what bounds it); a receive appends
//! everything queued to the caller's buffer (one copy, as glommio's `recv` and the io_uring
//! runtime's provided buffers make one); a shutdown or a drop of either end is an EOF for the
//! reader of each direction, after the bytes already queued, and later sends fail.
//!
//! On a simulation ([`crate::sim`]) with network delays configured, each send arrives after
//! its own delay drawn from the seed: its bytes wait in the queue, unseen by the reader,
//! until virtual time reaches their arrival (never before the bytes sent earlier, as on TCP).
//!
//! Invariant: one thread. The queues are `Rc<RefCell<_>>`, borrowed only inside one call,
//! never across an await; no atomic, no lock, and after warm-up no allocation per send.
//!
//! [`TcpListener::bind_memory`]: crate::TcpListener::bind_memory
//! [`TcpStream::connect`]: crate::TcpStream::connect

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use bytes::{Buf, BytesMut};

/// One direction of a connection: what was sent and not yet received.
#[derive(Default)]
struct Pipe {
    queued: BytesMut,
    /// Sends still on their way (a simulation's delays only): when each arrives and how many
    /// bytes of `queued` it ends at, in order of arrival. Bytes past the first entry's end
    /// are not yet readable.
    in_transit: VecDeque<(Instant, usize)>,
    /// The reader parked on an empty queue.
    reader: Option<Waker>,
    /// No more bytes will come (after those queued).
    closed: bool,
}

impl Pipe {
    /// Bytes at the front of the queue that have arrived (all of them off a simulation),
    /// after dropping the in-transit entries whose time has come.
    fn arrived(&mut self) -> usize {
        if self.in_transit.is_empty() {
            return self.queued.len();
        }
        let now = crate::now();
        let mut arrived = 0;
        while let Some(&(at, end)) = self.in_transit.front() {
            if at > now {
                break;
            }
            arrived = end;
            self.in_transit.pop_front();
        }
        if self.in_transit.is_empty() {
            self.queued.len()
        } else {
            arrived
        }
    }

    /// Takes `n` bytes from the front of the queue, shifting the in-transit ends.
    fn consume(&mut self, n: usize) {
        self.queued.advance(n);
        for (_, end) in &mut self.in_transit {
            *end -= n;
        }
    }
}

impl Pipe {
    fn close(&mut self) {
        self.closed = true;
        if let Some(w) = self.reader.take() {
            w.wake();
        }
    }
}

/// One end of an in-memory connection (`!Send`).
pub struct MemoryStream {
    /// What the other end sent us.
    rx: Rc<RefCell<Pipe>>,
    /// What we send the other end.
    tx: Rc<RefCell<Pipe>>,
}

impl std::fmt::Debug for MemoryStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStream")
            .field("queued_in", &self.rx.borrow().queued.len())
            .field("queued_out", &self.tx.borrow().queued.len())
            .finish()
    }
}

impl MemoryStream {
    /// A connected pair of ends.
    pub fn pair() -> (MemoryStream, MemoryStream) {
        let (a, b) = (
            Rc::new(RefCell::new(Pipe::default())),
            Rc::new(RefCell::new(Pipe::default())),
        );
        (
            MemoryStream {
                rx: a.clone(),
                tx: b.clone(),
            },
            MemoryStream { rx: b, tx: a },
        )
    }

    /// Appends everything the other end has sent to `buf`: `Ok(n)` with `n > 0`, or `Ok(0)`
    /// once it has shut down or gone (after every byte it sent). One reader at a time.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut BytesMut) -> Poll<io::Result<usize>> {
        let mut rx = self.rx.borrow_mut();
        let n = rx.arrived();
        if n > 0 {
            buf.extend_from_slice(&rx.queued[..n]);
            rx.consume(n);
            return Poll::Ready(Ok(n));
        }
        if rx.closed && rx.queued.is_empty() {
            return Poll::Ready(Ok(0));
        }
        match &rx.reader {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => rx.reader = Some(cx.waker().clone()),
        }
        if let Some(&(at, _)) = rx.in_transit.front() {
            // Bytes on their way: woken when the first of them arrive.
            crate::sim::wake_at(at, cx.waker().clone());
        }
        Poll::Pending
    }

    /// Queues all of `buf` for the other end and wakes its reader; fails with `BrokenPipe`
    /// once either end has shut down or the other has gone.
    pub fn send(&self, buf: &[u8]) -> io::Result<()> {
        let mut tx = self.tx.borrow_mut();
        if tx.closed {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the in-memory connection is closed",
            ));
        }
        let delay = crate::sim::net_delay();
        if delay.is_none() && tx.in_transit.is_empty() {
            tx.queued.extend_from_slice(buf);
            if let Some(w) = tx.reader.take() {
                w.wake();
            }
            return Ok(());
        }
        let now = crate::now();
        if tx.in_transit.is_empty() && !tx.queued.is_empty() {
            // What is queued has arrived: an entry says so, as every byte after it waits.
            let end = tx.queued.len();
            tx.in_transit.push_back((now, end));
        }
        tx.queued.extend_from_slice(buf);
        // Arrives after its delay, and not before what was sent earlier.
        let earliest = now + delay.unwrap_or_default();
        let at = tx
            .in_transit
            .back()
            .map_or(earliest, |&(last, _)| last.max(earliest));
        let end = tx.queued.len();
        tx.in_transit.push_back((at, end));
        if let Some(w) = tx.reader.take() {
            crate::sim::wake_at(at, w);
        }
        Ok(())
    }

    /// Ends both directions: each reader gets EOF after what is queued, sends fail.
    pub fn shutdown(&self) {
        self.rx.borrow_mut().close();
        self.tx.borrow_mut().close();
    }
}

impl Drop for MemoryStream {
    fn drop(&mut self) {
        // As closing a socket: the peer reads EOF and its sends fail.
        self.shutdown();
    }
}

/// A listener's queue of connections not yet accepted.
struct Backlog {
    addr: SocketAddr,
    pending: RefCell<VecDeque<(MemoryStream, SocketAddr)>>,
    acceptor: RefCell<Option<Waker>>,
    /// Fake client ports, so that accepted peers have distinct addresses.
    next_port: Cell<u16>,
}

thread_local! {
    /// The in-memory listeners bound on this thread, by address (a handful at most).
    static LISTENERS: RefCell<Vec<Rc<Backlog>>> = const { RefCell::new(Vec::new()) };
}

/// Accepts in-memory connections to its address on this thread until dropped.
pub struct MemoryListener {
    backlog: Rc<Backlog>,
}

impl std::fmt::Debug for MemoryListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryListener")
            .field("addr", &self.backlog.addr)
            .finish()
    }
}

impl MemoryListener {
    /// Listens on `addr` (any address: no socket is bound; connects on this thread to it
    /// come here instead of to the network). `AddrInUse` if a listener of this thread has
    /// it already.
    pub fn bind(addr: SocketAddr) -> io::Result<Self> {
        LISTENERS.with(|l| {
            let mut l = l.borrow_mut();
            if l.iter().any(|b| b.addr == addr) {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("an in-memory listener is bound to {addr} already"),
                ));
            }
            let backlog = Rc::new(Backlog {
                addr,
                pending: RefCell::new(VecDeque::new()),
                acceptor: RefCell::new(None),
                next_port: Cell::new(40000),
            });
            l.push(backlog.clone());
            Ok(Self { backlog })
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.backlog.addr
    }

    /// The next connection, and a made-up address of its client.
    pub async fn accept(&self) -> io::Result<(MemoryStream, SocketAddr)> {
        poll_fn(|cx| {
            if let Some(accepted) = self.backlog.pending.borrow_mut().pop_front() {
                return Poll::Ready(Ok(accepted));
            }
            *self.backlog.acceptor.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}

impl Drop for MemoryListener {
    fn drop(&mut self) {
        let addr = self.backlog.addr;
        // `try_with`: the thread may be ending (its thread-locals going away).
        let _ = LISTENERS.try_with(|l| l.borrow_mut().retain(|b| b.addr != addr));
    }
}

/// Connects to the in-memory listener of this thread on `addr`, if there is one (else
/// `None`: the caller goes to the network). The listener sees the client's address on
/// `local_port` when one is given (a connect from a chosen source port, as ScyllaDB's
/// shard-aware port reads it), else on a made-up port of its own.
pub(crate) fn connect(addr: SocketAddr, local_port: Option<u16>) -> Option<MemoryStream> {
    let backlog = LISTENERS.with(|l| l.borrow().iter().find(|b| b.addr == addr).cloned())?;
    let (client, server) = MemoryStream::pair();
    let port = local_port.unwrap_or_else(|| {
        let port = backlog.next_port.get();
        backlog.next_port.set(port.wrapping_add(1).max(1024));
        port
    });
    let peer = SocketAddr::new(addr.ip(), port);
    backlog.pending.borrow_mut().push_back((server, peer));
    if let Some(w) = backlog.acceptor.borrow_mut().take() {
        w.wake();
    }
    Some(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() -> Context<'static> {
        Context::from_waker(Waker::noop())
    }

    #[test]
    fn bytes_cross_both_ways_in_order_and_eof_follows_them() {
        let (a, b) = MemoryStream::pair();
        let mut cx = noop();
        let mut buf = BytesMut::new();
        assert!(b.poll_recv(&mut cx, &mut buf).is_pending());
        a.send(b"hello ").unwrap();
        a.send(b"world").unwrap();
        assert!(matches!(
            b.poll_recv(&mut cx, &mut buf),
            Poll::Ready(Ok(11))
        ));
        assert_eq!(&buf[..], b"hello world");
        b.send(b"back").unwrap();
        let mut back = BytesMut::new();
        assert!(matches!(
            a.poll_recv(&mut cx, &mut back),
            Poll::Ready(Ok(4))
        ));
        assert_eq!(&back[..], b"back");
        // Bytes queued before the end are still read, then EOF; sends to it fail.
        a.send(b"last").unwrap();
        drop(a);
        buf.clear();
        assert!(matches!(b.poll_recv(&mut cx, &mut buf), Poll::Ready(Ok(4))));
        assert!(matches!(b.poll_recv(&mut cx, &mut buf), Poll::Ready(Ok(0))));
        assert_eq!(b.send(b"x").unwrap_err().kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn a_send_wakes_the_parked_reader_and_shutdown_wakes_it_to_eof() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        struct Count(AtomicUsize);
        impl std::task::Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let (a, b) = MemoryStream::pair();
        let mut buf = BytesMut::new();
        assert!(b.poll_recv(&mut cx, &mut buf).is_pending());
        a.send(b"1").unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(matches!(b.poll_recv(&mut cx, &mut buf), Poll::Ready(Ok(1))));
        assert!(b.poll_recv(&mut cx, &mut buf).is_pending());
        b.shutdown();
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
        assert!(matches!(b.poll_recv(&mut cx, &mut buf), Poll::Ready(Ok(0))));
        assert!(a.send(b"2").is_err());
    }

    #[test]
    fn connects_reach_the_listener_of_their_address_until_it_is_dropped() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let other: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let listener = MemoryListener::bind(addr).unwrap();
        assert_eq!(
            MemoryListener::bind(addr).unwrap_err().kind(),
            io::ErrorKind::AddrInUse
        );
        assert!(connect(other, None).is_none());
        let client = connect(addr, None).unwrap();
        let (server, peer) = {
            let mut accept = std::pin::pin!(listener.accept());
            let Poll::Ready(Ok(accepted)) = accept.as_mut().poll(&mut noop()) else {
                panic!("the connection waits in the backlog");
            };
            accepted
        };
        assert_eq!(peer.ip(), addr.ip());
        client.send(b"ping").unwrap();
        let mut buf = BytesMut::new();
        assert!(matches!(
            server.poll_recv(&mut noop(), &mut buf),
            Poll::Ready(Ok(4))
        ));
        drop(listener);
        assert!(
            connect(addr, None).is_none(),
            "no listener, no in-memory connect"
        );
        assert!(
            MemoryListener::bind(addr).is_ok(),
            "the address is free again"
        );
    }

    /// A connect from a chosen source port reaches the listener with that port as its
    /// client's (ScyllaDB's shard-aware port assigns the shard from it); without one, each
    /// client gets a port of its own. (Before, the chosen port was dropped: a stub emulating
    /// ScyllaDB's shards in memory put shard-aware connections on arbitrary shards.)
    #[test]
    fn a_connect_from_a_chosen_port_is_accepted_from_that_port() {
        let addr: SocketAddr = "10.0.0.1:19042".parse().unwrap();
        let listener = MemoryListener::bind(addr).unwrap();
        let _chosen = connect(addr, Some(50_003)).unwrap();
        let _any = connect(addr, None).unwrap();
        let _other = connect(addr, None).unwrap();
        let mut peers = Vec::new();
        for _ in 0..3 {
            let mut accept = std::pin::pin!(listener.accept());
            let Poll::Ready(Ok((_, peer))) = accept.as_mut().poll(&mut noop()) else {
                panic!("the connection waits in the backlog");
            };
            peers.push(peer.port());
        }
        assert_eq!(peers[0], 50_003);
        assert_ne!(peers[1], peers[2]);
    }

    use std::future::Future;
}
