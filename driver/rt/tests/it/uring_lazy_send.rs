//! Lazy sends on doppio's io_uring runtime (`TcpStream::send_lazy`, `hurry_send`): a send
//! whose completion does not end the executor's wait on its own, so that a request and its
//! answer cost one `io_uring_enter`; what happens when the socket is full; and why whoever
//! queues bytes behind a lazy send must hurry it. Real sockets on 127.0.0.1, std threads as
//! peers, every wait bounded.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::BytesMut;
use doppio_rt::uring::{
    run, setup_flags, sleep, spawn_local, stats, timeout, yield_now, Config, SqPoll, Stats,
    TcpStream,
};

use crate::support;

use support::local;

const MESSAGE: usize = 64;

fn rt<T>(fut: impl std::future::Future<Output = T>) -> T {
    run(Config::default(), fut).expect("io_uring runtime")
}

/// Whether the executor's ring took `SUBMIT_ALL`, without which sends are never lazy.
fn lazy_sends_in_force() -> bool {
    setup_flags().is_some_and(|f| f.submit_all)
}

/// A std peer that answers every `MESSAGE` bytes it reads with `MESSAGE` bytes (a request
/// and its answer), until the client closes.
fn std_answerer() -> (SocketAddr, JoinHandle<usize>) {
    let l = std::net::TcpListener::bind(local(0)).expect("bind");
    let addr = l.local_addr().expect("addr");
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        s.set_nodelay(true).expect("nodelay");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let mut req = [0u8; MESSAGE];
        let mut answered = 0;
        while s.read_exact(&mut req).is_ok() {
            if s.write_all(&req).is_err() {
                break;
            }
            answered += 1;
        }
        answered
    });
    (addr, h)
}

/// `rounds` requests of `MESSAGE` bytes, each sent (lazily or not) and its answer read
/// before the next; the executor's counts over them.
async fn round_trips(s: &TcpStream, rounds: usize, lazy: bool) -> Stats {
    let mut out = BytesMut::with_capacity(MESSAGE);
    let mut answer = BytesMut::with_capacity(4 * MESSAGE);
    let before = stats();
    for i in 0..rounds {
        out.clear();
        out.extend_from_slice(&[i as u8; MESSAGE]);
        let (r, back) = if lazy {
            s.send_lazy(out).await
        } else {
            s.send(out).await
        };
        r.expect("send");
        out = back;
        answer.clear();
        while answer.len() < MESSAGE {
            let n = timeout(Duration::from_secs(10), s.recv(&mut answer))
                .await
                .expect("an answer within 10 s")
                .expect("recv");
            assert!(n > 0, "the peer closed early");
        }
        assert_eq!(answer.len(), MESSAGE, "one answer per request");
        assert!(
            answer.iter().all(|&b| b == i as u8),
            "the answer to request {i}"
        );
    }
    stats().since(&before)
}

#[test]
fn a_request_and_its_answer_cost_one_enter_with_a_lazy_send_and_two_without() {
    let _turn = doppio_test_support::file_turn(module_path!());
    one_enter_per_round_trip_with_a_lazy_send(Config::default());
}

#[test]
fn under_sqpoll_too_a_request_and_its_answer_cost_one_enter_with_a_lazy_send() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // The kernel's thread posts the lazy completions, before or during the wait: the wait
    // for `1 + lazy` completions still returns with the answer only.
    one_enter_per_round_trip_with_a_lazy_send(Config {
        sqpoll: Some(SqPoll {
            idle: Duration::from_millis(10),
            cpu: None,
        }),
        ..Config::default()
    });
}

fn one_enter_per_round_trip_with_a_lazy_send(config: Config) {
    const ROUNDS: usize = 5000;
    let (addr, peer) = std_answerer();
    let sqpoll = config.sqpoll.is_some();
    let (plain, lazy, in_force) = run(config, async move {
        let s = TcpStream::connect(addr, Duration::from_secs(1))
            .await
            .expect("connect");
        s.set_nodelay(true).expect("nodelay");
        // Warm up (buffers, slots), then the ordinary send, then the lazy one.
        round_trips(&s, 100, true).await;
        let plain = round_trips(&s, ROUNDS, false).await;
        let lazy = round_trips(&s, ROUNDS, true).await;
        (plain, lazy, lazy_sends_in_force())
    })
    .expect("io_uring runtime");
    assert_eq!(peer.join().expect("peer"), 100 + 2 * ROUNDS);
    let per = |st: &Stats| st.enters as f64 / ROUNDS as f64;
    eprintln!(
        "sqpoll {sqpoll}: {ROUNDS} round trips of {MESSAGE} bytes: send: {:.3} enters per round trip ({} \
         waiting, {} CQEs); send_lazy: {:.3} ({} waiting, {} CQEs, {} lazy sends, {} retried, \
         {} hurried)",
        per(&plain),
        plain.enters_waiting,
        plain.cqes,
        per(&lazy),
        lazy.enters_waiting,
        lazy.cqes,
        lazy.lazy_sends,
        lazy.lazy_sends_retried,
        lazy.sends_hurried
    );
    assert_eq!(plain.lazy_sends, 0);
    assert!(!in_force || lazy.lazy_sends == ROUNDS as u64, "{lazy:?}");
    // Counts, not times: every round trip of the ordinary send returns once with the send's
    // completion and once with the answer; the lazy one returns with the answer only (a few
    // more for signals or a full socket are tolerated). Under SQPOLL the kernel's thread may
    // post the send's completion before the executor goes to wait, which then does not: from
    // one to two enters per round trip (1.875 seen), so only the upper bound holds there.
    if sqpoll {
        assert!(per(&plain) <= 2.05, "{plain:?}");
    } else {
        assert!(per(&plain) >= 1.9, "{plain:?}");
    }
    if in_force {
        assert!(per(&lazy) <= 1.05, "{lazy:?}");
    } else {
        eprintln!("SUBMIT_ALL refused here: sends are not lazy");
    }
}

#[test]
fn a_lazy_send_into_a_full_socket_goes_on_as_an_ordinary_send() {
    let _turn = doppio_test_support::file_turn(module_path!());
    const LEN: usize = 16 << 20;
    let l = std::net::TcpListener::bind(local(0)).expect("bind");
    let addr = l.local_addr().expect("addr");
    let (go_tx, go_rx) = mpsc::channel::<()>();
    // A peer that reads nothing until told, then everything.
    let peer = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        go_rx.recv().expect("go");
        let mut got = Vec::with_capacity(LEN);
        s.read_to_end(&mut got).expect("read");
        got
    });
    let (during, after, in_force) = rt(async move {
        let s = Rc::new(
            TcpStream::connect(addr, Duration::from_secs(1))
                .await
                .expect("connect"),
        );
        let before = stats();
        let tx = s.clone();
        let sender = spawn_local(async move {
            let buf: BytesMut = (0..LEN).map(|i| (i % 251) as u8).collect();
            let (r, back) = tx.send_lazy(buf).await;
            r.expect("send");
            assert_eq!(back.len(), LEN, "the buffer comes back whole");
        });
        // The peer reads nothing: the socket fills, the lazy attempt comes back with a
        // part taken (or EAGAIN), and the rest waits in the kernel as an ordinary send.
        sleep(Duration::from_millis(200)).await;
        let during = stats().since(&before);
        go_tx.send(()).expect("go");
        timeout(Duration::from_secs(20), sender)
            .await
            .expect("the send completes once the peer reads");
        drop(s);
        (during, stats().since(&before), lazy_sends_in_force())
    });
    let got = peer.join().expect("peer");
    assert_eq!(got.len(), LEN);
    assert!(got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
    eprintln!("full socket: while stalled {during:?}; at the end {after:?}");
    if in_force {
        assert_eq!(during.lazy_sends, 1);
        assert_eq!(
            during.lazy_sends_retried, 1,
            "the lazy attempt came back at once and the rest went on as an ordinary send"
        );
    }
}

/// A peer that answers one byte only once it has read `want` bytes.
fn std_answer_after(want: usize) -> (SocketAddr, JoinHandle<()>) {
    let l = std::net::TcpListener::bind(local(0)).expect("bind");
    let addr = l.local_addr().expect("addr");
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let mut got = vec![0u8; want];
        if s.read_exact(&mut got).is_ok() {
            let _ = s.write_all(b"k");
        }
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
    });
    (addr, h)
}

/// A sender task that sends `a` then `b`, each lazily, the second only once the first's
/// completion is seen (as a connection's flusher does with its batches).
fn two_lazy_sends(s: &Rc<TcpStream>) -> doppio_rt::uring::Task<()> {
    let tx = s.clone();
    spawn_local(async move {
        for part in [&b"first batch"[..], &b"second batch"[..]] {
            let (r, _) = tx.send_lazy(BytesMut::from(part)).await;
            r.expect("send");
        }
    })
}

const BOTH: usize = b"first batch".len() + b"second batch".len();

#[test]
fn bytes_queued_behind_a_lazy_send_go_out_at_once_when_it_is_hurried() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (addr, peer) = std_answer_after(BOTH);
    let hurried = rt(async move {
        let s = Rc::new(
            TcpStream::connect(addr, Duration::from_secs(1))
                .await
                .expect("connect"),
        );
        let before = stats();
        let sender = two_lazy_sends(&s);
        // The sender runs first and starts its first send; more is queued behind it.
        yield_now().await;
        s.hurry_send();
        let mut buf = BytesMut::new();
        let n = timeout(Duration::from_secs(10), s.recv(&mut buf))
            .await
            .expect("the answer comes once both batches are out")
            .expect("recv");
        assert_eq!((n, &buf[..]), (1, &b"k"[..]));
        sender.await;
        stats().since(&before)
    });
    peer.join().expect("peer");
    eprintln!("hurried: {hurried:?}");
    if hurried.lazy_sends > 0 {
        // Whether the first send is still lazy when hurried depends on nothing else: it was
        // started in this turn and its completion cannot have been seen yet.
        assert_eq!(hurried.sends_hurried, 1, "{hurried:?}");
    }
}

#[test]
fn without_hurry_a_lazy_completion_alone_does_not_wake_the_executor() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (addr, peer) = std_answer_after(BOTH);
    let (early, in_force) = rt(async move {
        let s = Rc::new(
            TcpStream::connect(addr, Duration::from_secs(1))
                .await
                .expect("connect"),
        );
        let sender = two_lazy_sends(&s);
        yield_now().await;
        // Nobody hurries the first send: after it completes, nothing the executor waits for
        // happens (the peer answers only once it has both batches), so the loop sleeps until
        // the next timer: the answer cannot arrive before this one fires. The laziness is
        // real, and this is why a connection hurries the send it queues behind.
        let mut buf = BytesMut::new();
        let early = timeout(Duration::from_millis(300), s.recv(&mut buf)).await;
        let early = early.is_ok();
        // The timer's wake-up saw the first completion: the second batch goes, the answer
        // comes.
        let n = timeout(Duration::from_secs(10), s.recv(&mut buf))
            .await
            .expect("the answer after the timer")
            .expect("recv");
        assert_eq!(n, 1);
        sender.await;
        (early, lazy_sends_in_force())
    });
    peer.join().expect("peer");
    if in_force {
        assert!(!early, "the lazy completion woke the executor on its own");
    } else {
        eprintln!("SUBMIT_ALL refused here: sends are not lazy, nothing to show");
    }
}
