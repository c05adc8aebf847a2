//! Socket-level tests of doppio's io_uring runtime (`doppio_rt::uring`): real sockets on
//! 127.0.0.1, std threads as peers, every wait bounded.

use std::cell::Cell;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use doppio_rt::uring::{
    run, setup_flags, sleep, spawn_local, stats, timeout, Config, SqPoll, Stats, TcpListener,
    TcpStream, UringError,
};

use crate::support;

use support::{local, pair};

const MIB: usize = 1 << 20;

/// The byte at stream offset `i` of the test pattern.
fn pattern(i: usize) -> u8 {
    ((i % 251) ^ (i >> 12)) as u8
}

fn rt<T>(config: Config, fut: impl std::future::Future<Output = T>) -> T {
    run(config, fut).expect("io_uring runtime")
}

/// A std listener on a free loopback port.
fn std_listener() -> (std::net::TcpListener, SocketAddr) {
    let l = std::net::TcpListener::bind(local(0)).expect("bind");
    let a = l.local_addr().expect("addr");
    (l, a)
}

/// A std echo server for one connection; returns the bytes it echoed.
fn std_echo_server() -> (SocketAddr, JoinHandle<usize>) {
    let (l, addr) = std_listener();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let mut buf = vec![0u8; 256 * 1024];
        let mut total = 0;
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return total,
                Ok(n) => {
                    if s.write_all(&buf[..n]).is_err() {
                        return total;
                    }
                    total += n;
                }
            }
        }
    });
    (addr, h)
}

/// A std peer that writes `len` pattern bytes and closes.
fn std_writer(len: usize) -> (SocketAddr, JoinHandle<()>) {
    let (l, addr) = std_listener();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        let data: Vec<u8> = (0..len).map(pattern).collect();
        let _ = s.write_all(&data);
    });
    (addr, h)
}

/// Receives until end of stream, checking the pattern; returns the byte count.
async fn recv_pattern_to_eof(s: &TcpStream) -> usize {
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let mut got = 0;
    loop {
        buf.clear();
        let n = timeout(Duration::from_secs(10), s.recv(&mut buf))
            .await
            .expect("data within 10 s")
            .expect("recv");
        if n == 0 {
            return got;
        }
        assert_eq!(n, buf.len());
        for (k, b) in buf.iter().enumerate() {
            assert_eq!(*b, pattern(got + k), "byte {} out of order", got + k);
        }
        got += n;
    }
}

#[test]
fn echo_16_mib_in_order_through_a_tiny_buffer_ring() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (addr, server) = std_echo_server();
    let config = Config {
        buffers: 4,
        buffer_size: 4096,
        ..Config::default()
    };
    let st = rt(config, async move {
        let before = stats();
        let s = Rc::new(
            TcpStream::connect(addr, Duration::from_secs(1))
                .await
                .expect("connect"),
        );
        let tx = s.clone();
        let sender = spawn_local(async move {
            let mut buf = BytesMut::with_capacity(MIB);
            for c in 0..16 {
                buf.clear();
                buf.extend((0..MIB).map(|j| pattern(c * MIB + j)));
                let (r, b) = tx.send(buf).await;
                r.expect("send");
                assert_eq!(b.len(), MIB, "send hands the buffer back as it was");
                buf = b;
            }
        });
        let mut got = 0;
        let mut buf = BytesMut::with_capacity(MIB);
        while got < 16 * MIB {
            buf.clear();
            let n = timeout(Duration::from_secs(20), s.recv(&mut buf))
                .await
                .expect("echo within 20 s")
                .expect("recv");
            assert!(n > 0, "early end of stream at {got}");
            for (k, b) in buf.iter().enumerate() {
                assert_eq!(*b, pattern(got + k), "byte {} out of order", got + k);
            }
            got += n;
        }
        sender.await;
        stats().since(&before)
    });
    assert_eq!(server.join().expect("server"), 16 * MIB);
    eprintln!(
        "16 MiB echo, 4 x 4 KiB buffers: {} ENOBUFS ends, {} re-arms, {} partial sends, \
         {} turns, {} enters",
        st.recv_enobufs, st.recv_rearms, st.partial_sends, st.turns, st.enters
    );
    assert!(
        st.recv_rearms >= 1,
        "the multishot receive was never re-armed"
    );
    assert!(st.recv_enobufs >= 1, "the tiny ring never ran dry");
}

#[test]
fn peer_close_mid_stream_gives_the_data_then_eof() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (addr, peer) = std_writer(300_000);
    rt(Config::default(), async move {
        let s = TcpStream::connect(addr, Duration::from_secs(1))
            .await
            .expect("connect");
        assert_eq!(recv_pattern_to_eof(&s).await, 300_000);
        // End of stream stays end of stream.
        let mut buf = BytesMut::new();
        assert_eq!(s.recv(&mut buf).await.expect("eof"), 0);
    });
    peer.join().expect("peer");
}

#[test]
fn connect_to_a_closed_port_is_refused() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (l, addr) = std_listener();
    drop(l);
    rt(Config::default(), async move {
        let e = TcpStream::connect(addr, Duration::from_secs(1))
            .await
            .expect_err("refused");
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
    });
}

#[test]
fn connect_times_out_against_a_full_backlog() {
    let _turn = doppio_test_support::file_turn(module_path!());
    use std::os::fd::AsRawFd;
    let (l, addr) = std_listener();
    // SAFETY: listen(2) on a socket we own, to shrink its backlog to 0 (one queued
    // connection fills it; further SYNs are dropped, so a connect hangs).
    assert_eq!(unsafe { libc::listen(l.as_raw_fd(), 0) }, 0);
    let mut fillers = Vec::new();
    for _ in 0..4 {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(s) => fillers.push(s),
            Err(_) => break, // the queue is full
        }
    }
    rt(Config::default(), async move {
        let start = Instant::now();
        let e = TcpStream::connect(addr, Duration::from_millis(150))
            .await
            .expect_err("timed out");
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(150) && took < Duration::from_secs(1));
        // The cancelled connect's slot and socket are released; the executor goes on.
        sleep(Duration::from_millis(10)).await;
    });
    drop(fillers);
}

#[test]
fn listener_accepts_and_shutdown_wakes_a_parked_reader() {
    let _turn = doppio_test_support::file_turn(module_path!());
    rt(Config::default(), async {
        let l = TcpListener::bind(local(0), true).expect("bind");
        let addr = l.local_addr().expect("addr");
        let l = Rc::new(l);
        let acc = spawn_local({
            let l = l.clone();
            async move { l.accept().await.expect("accept") }
        });
        let c = TcpStream::connect(addr, Duration::from_secs(1))
            .await
            .expect("connect");
        let (s, peer) = acc.await;
        assert_eq!(peer, c.local_addr().expect("local"));
        assert_eq!(s.peer_addr().expect("peer"), peer);
        c.set_nodelay(true).expect("nodelay");
        let (r, _) = c.send(BytesMut::from(&b"hello"[..])).await;
        r.expect("send");
        let mut buf = BytesMut::new();
        while buf.len() < 5 {
            s.recv(&mut buf).await.expect("recv");
        }
        assert_eq!(&buf[..], b"hello");
        // A reader parked on `c` sees end of stream when `c` is shut down.
        let c = Rc::new(c);
        let reader = spawn_local({
            let c = c.clone();
            async move {
                let mut b = BytesMut::new();
                c.recv(&mut b).await
            }
        });
        sleep(Duration::from_millis(10)).await;
        c.shutdown();
        let n = timeout(Duration::from_secs(2), reader)
            .await
            .expect("woken")
            .expect("eof");
        assert_eq!(n, 0);
    });
}

#[test]
fn dropping_a_send_mid_way_keeps_the_buffer_until_the_kernel_is_done() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (l, addr) = std_listener();
    let (go, wait) = mpsc::channel::<()>();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        wait.recv().expect("go");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return got,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    });
    rt(Config::default(), async move {
        let s = TcpStream::connect(addr, Duration::from_secs(1))
            .await
            .expect("connect");
        let mut big = BytesMut::with_capacity(64 * MIB);
        big.extend((0..64 * MIB).map(pattern));
        // The peer does not read: the send cannot finish; drop it while the kernel holds
        // the buffer.
        let r = timeout(Duration::from_millis(100), s.send(big)).await;
        assert!(r.is_err(), "a 64 MiB send finished without a reader");
        // Reuse freed memory hard: if the buffer had been freed under the kernel, these
        // bytes would reach the peer.
        let junk: Vec<Vec<u8>> = (0..16).map(|_| vec![0xEE; 4 * MIB]).collect();
        go.send(()).expect("go");
        sleep(Duration::from_millis(100)).await;
        drop(junk);
        drop(s);
        sleep(Duration::from_millis(10)).await;
    });
    let got = peer.join().expect("peer");
    eprintln!(
        "peer received {} bytes of the dropped 64 MiB send",
        got.len()
    );
    assert!(got.len() < 64 * MIB);
    for (i, b) in got.iter().enumerate() {
        assert_eq!(*b, pattern(i), "byte {i} is not the send buffer's");
    }
}

#[test]
fn dropping_a_stream_with_data_arriving_returns_its_buffers() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // A peer that writes until the connection breaks.
    let (l, addr) = std_listener();
    let flood = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        let chunk = vec![0x5Au8; 64 * 1024];
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if s.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    let (addr2, writer) = std_writer(2 * MIB);
    let config = Config {
        buffers: 8,
        buffer_size: 4096,
        ..Config::default()
    };
    rt(config, async move {
        let s = TcpStream::connect(addr, Duration::from_secs(1))
            .await
            .expect("connect");
        let mut buf = BytesMut::new();
        s.recv(&mut buf).await.expect("some data");
        sleep(Duration::from_millis(5)).await; // let buffers fill and queue up
        drop(s);
        sleep(Duration::from_millis(20)).await; // CQEs of the dropped stream arrive
                                                // With 8 buffers, a leak would starve this stream.
        let s2 = TcpStream::connect(addr2, Duration::from_secs(1))
            .await
            .expect("connect");
        assert_eq!(recv_pattern_to_eof(&s2).await, 2 * MIB);
    });
    flood.join().expect("flood");
    writer.join().expect("writer");
}

const MSG: usize = 64;

/// Receives exactly `MSG` bytes into `buf` (cleared first).
async fn recv_msg(s: &TcpStream, buf: &mut BytesMut) {
    buf.clear();
    while buf.len() < MSG {
        let n = s.recv(buf).await.expect("recv");
        assert!(n > 0, "early end of stream");
    }
}

/// Runs `rounds` request/answer round trips of `MSG` bytes between the two ends of a
/// loopback pair, both on this executor; returns the counters of the round trips alone.
async fn ping_pong(rounds: u32) -> Stats {
    let (c, s) = pair().await;
    let server = spawn_local(async move {
        let mut inb = BytesMut::with_capacity(4096);
        let mut out = BytesMut::with_capacity(4096);
        loop {
            inb.clear();
            while inb.len() < MSG {
                if s.recv(&mut inb).await.expect("recv") == 0 {
                    return;
                }
            }
            out.clear();
            out.extend_from_slice(&inb[..MSG]);
            let (r, b) = s.send(out).await;
            r.expect("send");
            out = b;
        }
    });
    let mut out = BytesMut::with_capacity(4096);
    let mut inb = BytesMut::with_capacity(4096);
    let before = stats();
    for i in 0..rounds {
        out.clear();
        out.extend_from_slice(&[i as u8; MSG]);
        let (r, b) = c.send(out).await;
        r.expect("send");
        out = b;
        recv_msg(&c, &mut inb).await;
        assert_eq!(inb[0], i as u8);
    }
    let st = stats().since(&before);
    drop(c);
    server.await;
    st
}

#[test]
fn one_enter_per_turn_busy_and_idle() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (busy, idle, flags) = rt(Config::default(), async {
        let busy = ping_pong(10_000).await;
        // Let the closes of the pair settle, then measure one idle sleep.
        sleep(Duration::from_millis(20)).await;
        let before = stats();
        sleep(Duration::from_millis(200)).await;
        let idle = stats().since(&before);
        (busy, idle, setup_flags())
    });
    let flags = flags.expect("flags recorded");
    eprintln!("setup flags accepted: {flags}");
    eprintln!(
        "busy (10k ping-pong round trips): {} turns, {} enters ({:.3} per turn, {:.2} per \
         round trip), {} waiting, {} SQEs, {} CQEs, {} task polls",
        busy.turns,
        busy.enters,
        busy.enters as f64 / busy.turns as f64,
        busy.enters as f64 / 10_000.0,
        busy.enters_waiting,
        busy.sqes_submitted,
        busy.cqes,
        busy.tasks_polled
    );
    eprintln!(
        "idle (one 200 ms sleep): {} turns, {} enters ({} waiting)",
        idle.turns, idle.enters, idle.enters_waiting
    );
    assert!(busy.enters <= busy.turns, "{busy:?}");
    assert!(idle.enters <= idle.turns, "{idle:?}");
    assert!(idle.enters <= 2, "an idle executor spun: {idle:?}");
}

/// `perf stat` counting one thread's `io_uring_enter` calls with the kernel's tracepoint.
struct PerfEnters {
    child: std::process::Child,
    out: std::path::PathBuf,
}

impl PerfEnters {
    /// Starts counting for thread `tid`, if perf is installed; `None` otherwise.
    fn start(tid: i32) -> Option<PerfEnters> {
        let out = std::env::temp_dir().join(format!("uring-perf-{}-{tid}.csv", std::process::id()));
        let child = std::process::Command::new("perf")
            .args([
                "stat",
                "-x,",
                "-e",
                "syscalls:sys_enter_io_uring_enter",
                "--tid",
            ])
            .arg(tid.to_string())
            .arg("-o")
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
        Some(PerfEnters { child, out })
    }

    /// Stops perf and returns its count, if it could count.
    fn stop(mut self) -> Option<u64> {
        // SAFETY: kill(2) with our own child's pid and SIGINT (perf then writes its count).
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        self.child.wait().ok()?;
        let text = std::fs::read_to_string(&self.out).ok()?;
        let _ = std::fs::remove_file(&self.out);
        text.lines()
            .find(|l| l.contains("sys_enter_io_uring_enter"))
            .and_then(|l| l.split(',').next())
            .and_then(|n| n.trim().parse().ok())
    }
}

#[test]
fn kernel_tracepoint_agrees_when_perf_is_available() {
    let _turn = doppio_test_support::file_turn(module_path!());
    rt(Config::default(), async {
        // SAFETY: gettid(2) has no preconditions.
        let tid = unsafe { libc::gettid() };
        let window = stats();
        let Some(perf) = PerfEnters::start(tid) else {
            eprintln!("perf is not installed: kernel-side count skipped");
            return;
        };
        // Give perf time to attach before the measured work.
        sleep(Duration::from_millis(500)).await;
        let busy = ping_pong(10_000).await;
        let counted = perf.stop();
        let window = stats().since(&window);
        match counted {
            None => eprintln!("perf could not count the tracepoint here: skipped"),
            Some(kernel) => {
                eprintln!(
                    "kernel tracepoint: {kernel} io_uring_enter calls by the executor thread \
                     while perf was attached; the executor counted {} enters in {} turns over \
                     a window enclosing it ({} enters in the 10k round trips)",
                    window.enters, window.turns, busy.enters
                );
                assert!(
                    kernel <= window.enters,
                    "the executor under-counts its enters"
                );
                assert!(kernel <= window.turns, "more than one enter per turn");
            }
        }
    });
}

#[test]
fn setup_failures_are_typed_errors() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let bad = [
        Config {
            ring_entries: 0,
            ..Config::default()
        },
        Config {
            ring_entries: 1 << 20,
            ..Config::default()
        },
        Config {
            buffers: 3,
            ..Config::default()
        },
        Config {
            buffers: 0,
            ..Config::default()
        },
        Config {
            buffer_size: 0,
            ..Config::default()
        },
        Config {
            poll_budget: 0,
            ..Config::default()
        },
    ];
    for config in bad {
        let ran = Cell::new(false);
        let r = run(config, async { ran.set(true) });
        let e: UringError = r.expect_err("refused");
        let text = e.to_string();
        eprintln!("{config:?}: {text}");
        assert!(text.starts_with("io_uring is not usable here: "), "{text}");
        assert!(text.ends_with("use the glommio runtime instead"), "{text}");
        assert!(!ran.get());
    }
    // A good config still works on the same thread afterwards.
    assert_eq!(run(Config::default(), async { 1 }).expect("runs"), 1);
}

#[test]
fn is_running_tells_inside_from_outside() {
    let _turn = doppio_test_support::file_turn(module_path!());
    assert!(!doppio_rt::uring::is_running());
    rt(Config::default(), async {
        assert!(doppio_rt::uring::is_running());
    });
    assert!(!doppio_rt::uring::is_running());
}

#[test]
fn a_task_that_stays_ready_does_not_starve_io() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (st, spins) = rt(Config::default(), async {
        let stop = Rc::new(Cell::new(false));
        let spins = Rc::new(Cell::new(0u64));
        let spinner = spawn_local({
            let (stop, spins) = (stop.clone(), spins.clone());
            async move {
                while !stop.get() {
                    spins.set(spins.get() + 1);
                    doppio_rt::uring::yield_now().await;
                }
            }
        });
        let st = ping_pong(1000).await;
        stop.set(true);
        spinner.await;
        (st, spins.get())
    });
    eprintln!(
        "1000 round trips beside a task that is always ready: {} turns, {} enters ({} \
         waiting), {} spins",
        st.turns, st.enters, st.enters_waiting, spins
    );
    assert!(st.enters <= st.turns, "{st:?}");
    // The executor never slept: every enter submitted or fetched without waiting.
    assert_eq!(st.enters_waiting, 0, "{st:?}");
}

#[test]
fn the_poll_budget_bounds_polls_per_turn() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let config = Config {
        poll_budget: 10,
        ..Config::default()
    };
    let st = rt(config, async {
        let before = stats();
        let tasks: Vec<_> = (0..100)
            .map(|_| spawn_local(doppio_rt::uring::yield_now()))
            .collect();
        for t in tasks {
            t.await;
        }
        stats().since(&before)
    });
    // The window opens mid-turn: the turn it opens in counts its polls but not itself.
    assert!(st.tasks_polled <= (st.turns + 1) * 10, "{st:?}");
    assert!(st.turns >= 20, "{st:?}");
}

#[test]
fn a_one_entry_ring_queues_what_does_not_fit() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // SQ of 1 entry, CQ of 4: most pushes find the SQ full (the backlog carries them to
    // later turns) and completions overflow the CQ (the kernel keeps them; the executor
    // flushes them).
    let config = Config {
        ring_entries: 1,
        ..Config::default()
    };
    let st = rt(config, async {
        let before = stats();
        let tasks: Vec<_> = (0..8).map(|_| spawn_local(ping_pong(300))).collect();
        for t in tasks {
            let st = timeout(Duration::from_secs(10), t).await.expect("progress");
            assert!(st.cqes > 0);
        }
        stats().since(&before)
    });
    eprintln!(
        "8 x 300 round trips through a 1-entry SQ: {} turns, {} enters, {} SQEs, {} CQEs",
        st.turns, st.enters, st.sqes_submitted, st.cqes
    );
    assert!(st.enters <= st.turns, "{st:?}");
}

#[test]
fn teardown_cancels_what_is_in_flight_and_returns_promptly() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // A peer that neither reads nor writes until we are gone.
    let (l, addr) = std_listener();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    });
    let start = Instant::now();
    rt(Config::default(), async move {
        let s = Rc::new(
            TcpStream::connect(addr, Duration::from_secs(1))
                .await
                .expect("connect"),
        );
        let big = BytesMut::zeroed(64 * MIB);
        let tx = s.clone();
        spawn_local(async move {
            let _ = tx.send(big).await; // stuck: the peer does not read
        })
        .detach();
        let rx = s.clone();
        spawn_local(async move {
            let mut b = BytesMut::new();
            let _ = rx.recv(&mut b).await; // parked: the peer does not write
        })
        .detach();
        spawn_local(sleep(Duration::from_secs(3600))).detach();
        sleep(Duration::from_millis(50)).await;
    });
    let took = start.elapsed();
    eprintln!("teardown with a stuck send, a parked receive and a long timer: {took:?}");
    assert!(took < Duration::from_millis(900), "{took:?}");
    peer.join().expect("peer");
}

#[test]
fn a_stream_that_outlives_its_executor_reports_errors() {
    let _turn = doppio_test_support::file_turn(module_path!());
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let (addr, peer) = std_writer(10);
    let s = rt(Config::default(), async move {
        TcpStream::connect(addr, Duration::from_secs(1))
            .await
            .expect("connect")
    });
    let mut cx = Context::from_waker(Waker::noop());
    let mut buf = BytesMut::new();
    match s.poll_recv(&mut cx, &mut buf) {
        Poll::Ready(Err(_)) => {}
        other => panic!("expected an error, got {other:?}"),
    }
    let mut send = std::pin::pin!(s.send(BytesMut::from(&b"x"[..])));
    match send.as_mut().poll(&mut cx) {
        Poll::Ready((Err(_), b)) => assert_eq!(&b[..], b"x"),
        _ => panic!("expected an error"),
    }
    drop(s);
    peer.join().expect("peer");
}

#[test]
fn a_starved_stream_waits_for_buffers_without_spinning() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (addr_a, writer_a) = std_writer(256 * 1024);
    let (addr_b, writer_b) = std_writer(256 * 1024);
    // Two buffers for two streams: while A's reader stalls, A holds both and B's receive
    // ends with ENOBUFS holding none.
    let config = Config {
        buffers: 2,
        buffer_size: 4096,
        ..Config::default()
    };
    let stall = rt(config, async move {
        let a = TcpStream::connect(addr_a, Duration::from_secs(1))
            .await
            .expect("connect");
        let b = Rc::new(
            TcpStream::connect(addr_b, Duration::from_secs(1))
                .await
                .expect("connect"),
        );
        let reader_b = spawn_local({
            let b = b.clone();
            async move { recv_pattern_to_eof(&b).await }
        });
        sleep(Duration::from_millis(20)).await;
        let before = stats();
        sleep(Duration::from_millis(100)).await; // A's reader stalls
        let stall = stats().since(&before);
        assert_eq!(recv_pattern_to_eof(&a).await, 256 * 1024);
        assert_eq!(reader_b.await, 256 * 1024);
        stall
    });
    eprintln!(
        "100 ms with the ring empty: {} turns, {} enters, {} ENOBUFS ends",
        stall.turns, stall.enters, stall.recv_enobufs
    );
    assert!(stall.turns <= 5, "the starved receive spun: {stall:?}");
    writer_a.join().expect("writer");
    writer_b.join().expect("writer");
}

/// SQPOLL with `idle` and no pinning.
fn sqpoll(idle_ms: u64) -> Config {
    Config {
        sqpoll: Some(SqPoll {
            idle: Duration::from_millis(idle_ms),
            cpu: None,
        }),
        ..Config::default()
    }
}

#[test]
fn sqpoll_submits_without_entering_and_enters_only_to_wait_or_wake() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (busy, idle, woken, flags) = rt(sqpoll(50), async {
        let busy = ping_pong(10_000).await;
        sleep(Duration::from_millis(20)).await;
        let before = stats();
        sleep(Duration::from_millis(200)).await;
        let idle = stats().since(&before);
        // Past the 50 ms idle time the kernel's thread sleeps: the next submissions (the
        // connect and accept of a new pair, then the round trips) must wake it.
        let before = stats();
        let _ = ping_pong(100).await;
        let woken = stats().since(&before);
        (busy, idle, woken, setup_flags())
    });
    let flags = flags.expect("flags recorded");
    eprintln!("SQPOLL setup flags accepted: {flags}");
    for (what, st) in [
        ("busy (10k round trips)", &busy),
        ("after sleeping", &woken),
    ] {
        eprintln!(
            "SQPOLL {what}: {} turns, {} enters ({} waiting, {} waking the SQ thread, {} for a \
             CQ overflow), {} SQEs handed over, {} CQEs",
            st.turns,
            st.enters,
            st.enters_waiting,
            st.enters_sq_wakeup,
            st.enters_cq_overflow,
            st.sqes_submitted,
            st.cqes
        );
    }
    assert!(flags.sqpoll && flags.single_issuer, "{flags}");
    assert!(!flags.defer_taskrun && !flags.taskrun_flag && !flags.coop_taskrun);
    for st in [&busy, &idle, &woken] {
        assert!(st.enters <= st.turns, "{st:?}");
        // Every enter waited, woke the thread or flushed an overflow: none only submitted.
        assert!(
            st.enters <= st.enters_waiting + st.enters_sq_wakeup + st.enters_cq_overflow,
            "{st:?}"
        );
    }
    // Each round trip's two sends went through the queue without a syscall of their own.
    assert!(busy.sqes_submitted >= 20_000, "{busy:?}");
    assert!(idle.enters <= 2, "an idle executor spun: {idle:?}");
    assert!(
        woken.enters_sq_wakeup >= 1,
        "the sleeping thread was never woken: {woken:?}"
    );
}

#[test]
fn sqpoll_thread_is_this_process_s_and_pinned_where_asked() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let config = Config {
        sqpoll: Some(SqPoll {
            idle: Duration::from_millis(10),
            cpu: Some(0),
        }),
        ..Config::default()
    };
    // SAFETY: gettid(2) has no preconditions.
    let me = unsafe { libc::gettid() };
    let (threads, flags) = rt(config, async {
        let _ = ping_pong(100).await;
        (sq_threads(), setup_flags())
    });
    let flags = flags.expect("flags recorded");
    assert!(flags.sqpoll && flags.sq_aff, "{flags}");
    // The kernel names it after the thread that built the ring.
    let ours: Vec<_> = threads
        .iter()
        .filter(|(_, comm)| *comm == format!("iou-sqp-{me}"))
        .collect();
    assert_eq!(ours.len(), 1, "one iou-sqp-{me} thread in {threads:?}");
    let pinned = ours.iter().any(|(tid, _)| {
        // SAFETY: an all-zero cpu_set_t is valid; sched_getaffinity writes into it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: a live, correctly sized set; `tid` is a thread of this process (if it
        // ended since, the call fails and we skip it).
        let rc = unsafe {
            libc::sched_getaffinity(*tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set)
        };
        // SAFETY: CPU_ISSET and CPU_COUNT read the set we own.
        rc == 0 && unsafe { libc::CPU_ISSET(0, &set) && libc::CPU_COUNT(&set) == 1 }
    });
    assert!(
        pinned,
        "the SQ thread is not pinned to CPU 0 alone: {ours:?}"
    );
}

/// The SQ polling threads of this process: (tid, comm).
fn sq_threads() -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task")
        .expect("/proc")
        .flatten()
    {
        let Some(tid) = t.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.starts_with("iou-sqp-") {
            out.push((tid, comm.trim().to_owned()));
        }
    }
    out
}

#[test]
fn sqpoll_refusals_are_typed_errors() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let ms = Duration::from_millis;
    let bad = [
        (ms(0), None),
        (Duration::from_micros(1500), None),
        (SqPoll::MAX_IDLE + ms(1), None),
        (ms(10), Some(1_000_000)),
        // A CPU number that this machine does not have online.
        (ms(10), Some(1000)),
    ];
    for (idle, cpu) in bad {
        let config = Config {
            sqpoll: Some(SqPoll { idle, cpu }),
            ..Config::default()
        };
        let ran = Cell::new(false);
        let e: UringError = run(config, async { ran.set(true) }).expect_err("refused");
        let text = e.to_string();
        eprintln!("SQPOLL idle {idle:?} cpu {cpu:?}: {text}");
        assert!(text.starts_with("io_uring is not usable here: "), "{text}");
        assert!(!ran.get());
    }
}

#[test]
fn sqpoll_with_a_one_entry_ring_queues_what_does_not_fit_and_flushes_overflows() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // As `a_one_entry_ring_queues_what_does_not_fit`, with the kernel's thread taking the
    // SQ: the backlog waits for it, and the CQ (4 entries) overflows, which only an enter
    // flushes.
    let config = Config {
        ring_entries: 1,
        ..sqpoll(10)
    };
    let st = rt(config, async {
        let before = stats();
        let tasks: Vec<_> = (0..8).map(|_| spawn_local(ping_pong(300))).collect();
        for t in tasks {
            let st = timeout(Duration::from_secs(10), t).await.expect("progress");
            assert!(st.cqes > 0);
        }
        stats().since(&before)
    });
    eprintln!(
        "SQPOLL, 8 x 300 round trips through a 1-entry SQ: {} turns, {} enters ({} waiting, \
         {} waking the SQ thread, {} for a CQ overflow), {} SQEs, {} CQEs",
        st.turns,
        st.enters,
        st.enters_waiting,
        st.enters_sq_wakeup,
        st.enters_cq_overflow,
        st.sqes_submitted,
        st.cqes
    );
    assert!(st.enters <= st.turns, "{st:?}");
    assert!(
        st.enters <= st.enters_waiting + st.enters_sq_wakeup + st.enters_cq_overflow,
        "{st:?}"
    );
}
