//! How doppio's io_uring runtime waits when it has nothing to run: the timer slack (timers
//! never fire before their deadline; those due within the slack of the first fire in one
//! wake-up), the batched wait over the answers a connection awaits (the kernel's minimum
//! wait where it has one, and the user-space fallback, which costs one more wait when
//! nothing arrives within the batch wait), and the count of wake-ups by cause. Real sockets
//! on 127.0.0.1 with std threads as peers; every wait bounded. The counts asserted are of
//! wake-ups, never of time.

use std::io::Write;
use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use doppio_rt::uring::{
    run, setup_flags, spawn_local, stats, timeout, Config, Stats, TcpStream, Timer,
};

use crate::support;

use support::local;

/// `n` timers due 100 us apart, each spawned at once: each one's deadline and the time it
/// fired.
async fn fire_spread_timers(n: u64) -> Vec<(Instant, Instant)> {
    let start = Instant::now() + Duration::from_millis(2);
    let tasks: Vec<_> = (0..n)
        .map(|k| {
            let deadline = start + Duration::from_micros(100 * k);
            spawn_local(async move {
                Timer::at(deadline).await;
                (deadline, Instant::now())
            })
        })
        .collect();
    let mut fired = Vec::with_capacity(tasks.len());
    for t in tasks {
        fired.push(t.await);
    }
    fired
}

#[test]
fn a_timer_never_fires_before_its_deadline_with_or_without_slack() {
    let _turn = doppio_test_support::file_turn(module_path!());
    for slack in [
        Duration::ZERO,
        Duration::from_micros(50),
        Duration::from_millis(5),
    ] {
        let config = Config {
            timer_slack: slack,
            ..Config::default()
        };
        let fired = run(config, fire_spread_timers(20)).expect("runtime");
        assert_eq!(fired.len(), 20);
        for (deadline, at) in fired {
            assert!(
                at >= deadline,
                "slack {slack:?}: fired {:?} early",
                deadline - at
            );
        }
    }
}

/// Twenty timers over 2 ms with a slack of 5 ms: the first wait lasts until the first
/// deadline plus the slack, by which time all are due: they fire in one or two wake-ups
/// (where each would cost one without slack, but a loaded machine may merge those too, so
/// only the slack's side is asserted).
#[test]
fn timers_due_within_the_slack_fire_in_one_wake_up() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let config = Config {
        timer_slack: Duration::from_millis(5),
        ..Config::default()
    };
    // Armed all at once: spawned, each awaiting its own deadline.
    let counts = run(config, async {
        let before = stats();
        let start = Instant::now() + Duration::from_millis(1);
        let tasks: Vec<_> = (0..20u64)
            .map(|k| spawn_local(Timer::at(start + Duration::from_micros(100 * k))))
            .collect();
        for t in tasks {
            t.await;
        }
        stats().since(&before)
    })
    .expect("runtime");
    eprintln!("{counts:?}");
    assert_eq!(counts.timers_fired, 20);
    assert!(
        counts.wakes_timer <= 2,
        "20 timers within the slack took {} timer wake-ups",
        counts.wakes_timer
    );
    assert_eq!(
        counts.wakes_completion + counts.wakes_remote + counts.wakes_timer + counts.wakes_empty,
        counts.enters_waiting,
        "every wait has one cause"
    );
}

/// A std peer that writes `messages` of 16 bytes, `gap` apart, after `delay`, then waits for
/// the client to close.
fn trickler(delay: Duration, messages: usize, gap: Duration) -> (SocketAddr, JoinHandle<()>) {
    let l = std::net::TcpListener::bind(local(0)).expect("bind");
    let addr = l.local_addr().expect("addr");
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        s.set_nodelay(true).expect("nodelay");
        std::thread::sleep(delay);
        for _ in 0..messages {
            if s.write_all(&[7u8; 16]).is_err() {
                return;
            }
            std::thread::sleep(gap);
        }
        let mut rest = [0u8; 1];
        let _ = std::io::Read::read(&mut s, &mut rest);
    });
    (addr, h)
}

/// Connects to a trickler, says `awaited` answers are awaited, reads `expect` messages;
/// the executor's counts over the reads.
fn read_trickle(config: Config, peer: SocketAddr, awaited: usize, expect: usize) -> Stats {
    run(config, async move {
        let s = TcpStream::connect(peer, Duration::from_secs(5))
            .await
            .expect("connect");
        let before = stats();
        doppio_rt::uring::answers_awaited(0, awaited);
        let mut buf = BytesMut::with_capacity(4096);
        while buf.len() < 16 * expect {
            let n = timeout(Duration::from_secs(10), s.recv(&mut buf))
                .await
                .expect("data within 10 s")
                .expect("recv");
            assert!(n > 0, "the peer closed early");
        }
        doppio_rt::uring::answers_awaited(awaited, 0);
        let counts = stats().since(&before);
        s.shutdown();
        counts
    })
    .expect("runtime")
}

/// Twenty answers 100 us apart (2 ms in all): with a batch wait of 4 ms the executor wakes
/// for them in a few waits, whether the kernel's minimum wait or the user-space fallback
/// serves it.
#[test]
fn trickling_answers_are_served_several_per_wake_up_with_a_batch_wait() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let kernel = setup_flags_now().min_timeout;
    eprintln!("the kernel has IORING_FEAT_MIN_TIMEOUT: {kernel}");
    for kernel_min_wait in [true, false] {
        let (peer, h) = trickler(Duration::from_millis(20), 20, Duration::from_micros(100));
        let config = Config {
            batch_wait: Duration::from_millis(4),
            kernel_min_wait,
            ..Config::default()
        };
        let c = read_trickle(config, peer, 20, 20);
        h.join().expect("peer");
        eprintln!("kernel_min_wait {kernel_min_wait}: {c:?}");
        assert!(
            c.wakes_completion <= 4,
            "kernel_min_wait {kernel_min_wait}: 20 answers took {} completion wake-ups",
            c.wakes_completion
        );
    }
}

/// One answer, 30 ms late, while two are awaited, with a batch wait of 2 ms: the kernel's
/// minimum wait waits once (past the batch wait it returns at the first completion); the
/// fallback's first wait runs out empty, and a plain wait follows. The fallback is what
/// a kernel without the feature gets.
#[test]
fn the_fallback_waits_twice_where_the_kernel_waits_once() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let run_one = |kernel_min_wait: bool| {
        let (peer, h) = trickler(Duration::from_millis(30), 1, Duration::ZERO);
        let config = Config {
            batch_wait: Duration::from_millis(2),
            kernel_min_wait,
            ..Config::default()
        };
        let c = read_trickle(config, peer, 2, 1);
        h.join().expect("peer");
        eprintln!("kernel_min_wait {kernel_min_wait}: {c:?}");
        c
    };
    let fallback = run_one(false);
    assert_eq!(fallback.wakes_completion, 1, "{fallback:?}");
    assert!(
        fallback.wakes_empty >= 1,
        "the fallback's first wait ran out before the answer: {fallback:?}"
    );
    if setup_flags_now().min_timeout {
        let kernel = run_one(true);
        assert_eq!(kernel.wakes_completion, 1, "{kernel:?}");
        assert_eq!(
            kernel.wakes_empty, 0,
            "the kernel's minimum wait ran on to the answer: {kernel:?}"
        );
    } else {
        eprintln!("this kernel has no minimum wait: only the fallback was tested");
    }
}

/// A std peer that answers every 16 x `burst` bytes it reads with 16 x `burst` bytes in one
/// write (a node answering a whole batch of requests at once), until the client closes.
fn burst_answerer(burst: usize) -> (SocketAddr, JoinHandle<()>) {
    let l = std::net::TcpListener::bind(local(0)).expect("bind");
    let addr = l.local_addr().expect("addr");
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        s.set_nodelay(true).expect("nodelay");
        let mut req = vec![0u8; 16 * burst];
        while std::io::Read::read_exact(&mut s, &mut req).is_ok() {
            if s.write_all(&req).is_err() {
                return;
            }
        }
    });
    (addr, h)
}

/// A closed loop of 60 rounds of 20 requests whose answers come in one write each round,
/// told to the runtime as a connection tells it (20 awaited after the send, 0 after the
/// read), with a batch wait of 5 ms: the runtime learns that a completion brings 20 answers
/// and stops waiting for more than one after a few rounds (a wait for twenty completions
/// would run out its 5 ms on every round).
#[test]
fn answers_that_come_in_one_completion_are_not_waited_for_in_batches() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (peer, h) = burst_answerer(20);
    let config = Config {
        batch_wait: Duration::from_millis(5),
        ..Config::default()
    };
    let counts = run(config, async move {
        let s = TcpStream::connect(peer, Duration::from_secs(5))
            .await
            .expect("connect");
        let before = stats();
        let mut out = BytesMut::with_capacity(16 * 20);
        let mut buf = BytesMut::with_capacity(4096);
        for _ in 0..60 {
            out.clear();
            out.extend_from_slice(&[1u8; 16 * 20]);
            let (r, back) = s.send(out).await;
            r.expect("send");
            out = back;
            doppio_rt::uring::answers_awaited(0, 20);
            buf.clear();
            while buf.len() < 16 * 20 {
                let n = timeout(Duration::from_secs(10), s.recv(&mut buf))
                    .await
                    .expect("answers within 10 s")
                    .expect("recv");
                assert!(n > 0, "the peer closed early");
            }
            doppio_rt::uring::answers_awaited(20, 0);
        }
        let counts = stats().since(&before);
        s.shutdown();
        counts
    })
    .expect("runtime");
    h.join().expect("peer");
    eprintln!("{counts:?}");
    assert!(
        counts.waits_batched <= 12,
        "{} of 60 rounds waited for a batch: {counts:?}",
        counts.waits_batched
    );
}

/// The setup flags of a ring made here and now.
fn setup_flags_now() -> doppio_rt::uring::SetupFlags {
    run(Config::default(), async { setup_flags() })
        .expect("runtime")
        .expect("a ring ran")
}
