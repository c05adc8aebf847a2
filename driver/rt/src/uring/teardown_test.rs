//! Teardown when the kernel does not answer within [`super::Config::teardown_wait`].
//!
//! How the kernel is made not to answer (reproduced on Linux 6.18): a thread blocks in
//! `splice(2)` from a TCP socket that has no data into a pipe. `splice` holds the pipe's
//! mutex while it waits for the socket. A read of that pipe, forced to an io-wq worker
//! (`IOSQE_ASYNC`, so it does not block the submitting thread), then sleeps in
//! `mutex_lock`, which does not wake for the signal io-wq sends to cancel: `ASYNC_CANCEL`
//! finds the request (result 0) but its CQE does not come until the splice ends. Data
//! written to the socket ends it; the read then completes and writes into its buffer.
//!
//! The tests check that teardown returns after its deadline, counts the leak, and that the
//! buffer the kernel writes after teardown was leaked, not freed: the kernel's late write
//! lands in it (read back through the leaked pointer), and none of the buffers of the same
//! size allocated after teardown (where a freed buffer would be reused) is touched.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use io_uring::{opcode, squeue, types};

use super::op_future::Op;
use super::op_table::Hold;
use super::{run, sleep, spawn_local, stats, Config, SqPoll, Stats};

/// Size of the read's buffer (and of the decoys allocated after teardown).
const LEN: usize = 4096;
/// What the peer finally sends; the late read brings it into the leaked buffer.
const MARKER: &[u8] = b"written by the kernel after teardown";

/// A pipe whose mutex a `splice` blocked on an empty socket holds.
struct StuckPipe {
    read: OwnedFd,
    /// The socket's other end: writing to it ends the splice.
    peer: Option<TcpStream>,
    splicer: Option<JoinHandle<isize>>,
}

impl StuckPipe {
    fn new() -> StuckPipe {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let peer = TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
        let (sock, _) = l.accept().expect("accept");
        let mut fds = [0i32; 2];
        // SAFETY: pipe2 writes two fds into the array we own.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
        // SAFETY: both fds were just created and are owned by nothing else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let (tid_tx, tid_rx) = mpsc::channel();
        let splicer = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            let _ = tid_tx.send(unsafe { libc::gettid() });
            // SAFETY: splice between two fds this closure owns (the socket and the pipe's
            // write end), no offsets (null: neither is seekable).
            let n = unsafe {
                libc::splice(
                    sock.as_raw_fd(),
                    std::ptr::null_mut(),
                    write.as_raw_fd(),
                    std::ptr::null_mut(),
                    LEN,
                    0,
                )
            };
            drop((sock, write));
            n
        });
        let tid = tid_rx.recv().expect("splicer started");
        // Wait until it sleeps (in the splice), then a little more.
        let stat = format!("/proc/self/task/{tid}/stat");
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let text = std::fs::read_to_string(&stat).unwrap_or_default();
            let state = text.rsplit_once(") ").and_then(|(_, r)| r.chars().next());
            if state == Some('S') {
                break;
            }
            assert!(Instant::now() < until, "the splice did not block: {text}");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(20));
        StuckPipe {
            read,
            peer: Some(peer),
            splicer: Some(splicer),
        }
    }

    /// Ends the splice with `MARKER` (which it moves into the pipe); returns what it moved.
    fn release(&mut self) -> isize {
        if let Some(mut peer) = self.peer.take() {
            let _ = peer.write_all(MARKER);
        }
        self.splicer
            .take()
            .map_or(0, |h| h.join().expect("splicer"))
    }
}

impl Drop for StuckPipe {
    fn drop(&mut self) {
        // Also on a failed assertion: the executor's thread cannot exit before the read ends.
        self.release();
    }
}

/// Byte `i` of the buffer at `addr`.
///
/// # Safety
///
/// `addr` must point to at least `i + 1` bytes that are never freed.
unsafe fn byte(addr: usize, i: usize) -> u8 {
    // SAFETY: the caller guarantees the memory is live; a volatile read, since the kernel
    // writes it outside this program's view.
    unsafe { std::ptr::read_volatile((addr as *const u8).add(i)) }
}

/// Runs an executor with `config` whose only request is the stuck read, checks how its
/// teardown ends, then lets the read complete and checks where its data landed.
fn a_read_the_kernel_does_not_end_is_leaked(config: Config) {
    let mut pipe = StuckPipe::new();
    let fd = pipe.read.as_raw_fd();
    let (tx, rx) = mpsc::channel::<(usize, Duration, Stats)>();
    let executor = std::thread::spawn(move || {
        let before = stats();
        let (addr, main_done) = run(config, async move {
            let mut buf = BytesMut::zeroed(LEN);
            let ptr = buf.as_mut_ptr();
            let entry = opcode::Read::new(types::Fd(fd), ptr, LEN as u32)
                .build()
                .flags(squeue::Flags::ASYNC);
            // SAFETY: the read writes into `buf`'s heap bytes, which its slot owns (the
            // bytes do not move with the `BytesMut`) until the CQE, or leaks at teardown.
            let op = unsafe { Op::start(entry, Hold::Buf(buf)) }.expect("an executor runs");
            spawn_local(async move {
                let mut op = op;
                std::future::poll_fn(|cx| op.poll(cx)).await;
            })
            .detach();
            // Let it reach the io-wq worker and block there.
            sleep(Duration::from_millis(50)).await;
            (ptr as usize, Instant::now())
        })
        .expect("io_uring runtime");
        let _ = tx.send((addr, main_done.elapsed(), stats().since(&before)));
    });
    let (addr, teardown, st) = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("teardown returned");
    eprintln!(
        "teardown with a read the kernel does not end ({:?} deadline, sqpoll {}): {teardown:?}, \
         {} leak(s), {} enters ({} waiting)",
        config.teardown_wait,
        config.sqpoll.is_some(),
        st.teardown_leaks,
        st.enters,
        st.enters_waiting
    );
    assert!(
        teardown >= config.teardown_wait,
        "teardown ended before its deadline: was the read cancelled? {teardown:?}"
    );
    assert!(
        teardown < config.teardown_wait + Duration::from_secs(1),
        "teardown overran its deadline: {teardown:?}"
    );
    assert_eq!(st.teardown_leaks, 1, "{st:?}");
    // Buffers of the same size, allocated after teardown: a freed read buffer would be
    // among them.
    let decoys: Vec<Vec<u8>> = (0..256).map(|_| vec![0xAA; LEN]).collect();
    // SAFETY: `addr` is the read's buffer, leaked (never freed) by the teardown above.
    assert_eq!(
        unsafe { byte(addr, 0) },
        0,
        "the read's buffer changed before the splice ended: freed and reused?"
    );
    let moved = pipe.release();
    assert_eq!(moved, MARKER.len() as isize, "the splice moved the marker");
    // The read completes now, after teardown: its data lands in the leaked buffer.
    let until = Instant::now() + Duration::from_secs(10);
    // SAFETY: as above.
    while (0..MARKER.len()).any(|i| unsafe { byte(addr, i) } != MARKER[i]) {
        assert!(Instant::now() < until, "the late read never landed");
        std::thread::sleep(Duration::from_millis(5));
    }
    for d in &decoys {
        assert!(
            d.iter().all(|&b| b == 0xAA),
            "the kernel wrote into memory reused after teardown"
        );
    }
    // Without SQPOLL the request is the executor thread's: its exit waited for it.
    let until = Instant::now() + Duration::from_secs(10);
    while !executor.is_finished() {
        assert!(Instant::now() < until, "the executor's thread did not end");
        std::thread::sleep(Duration::from_millis(5));
    }
    executor.join().expect("executor thread");
}

#[test]
fn teardown_leaks_a_read_the_kernel_does_not_end_and_returns() {
    a_read_the_kernel_does_not_end_is_leaked(Config {
        teardown_wait: Duration::from_millis(200),
        ..Config::default()
    });
}

#[test]
fn teardown_leaks_a_read_the_kernel_does_not_end_and_returns_under_sqpoll() {
    a_read_the_kernel_does_not_end_is_leaked(Config {
        teardown_wait: Duration::from_millis(200),
        sqpoll: Some(SqPoll {
            idle: Duration::from_millis(10),
            cpu: None,
        }),
        ..Config::default()
    });
}

#[test]
fn teardown_waits_the_default_second() {
    // The default deadline, once: the read is stuck for longer than it.
    a_read_the_kernel_does_not_end_is_leaked(Config::default());
}
