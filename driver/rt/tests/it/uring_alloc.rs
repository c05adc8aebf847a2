//! Zero allocations per turn and per request in steady state: a counting global allocator
//! (per-thread counters) watches the executor thread while a request/answer ping-pong runs
//! over loopback with both ends on the executor, reusing its buffers, and a request
//! deadline timer is armed and dropped per round trip.

use std::time::Duration;

use bytes::BytesMut;
use doppio_alloc_count::thread_allocations as allocs;
use doppio_rt::uring::{run, spawn_local, stats, timeout, Config, SqPoll, TcpStream};

use crate::support;

// Per-thread counts (the counting allocator is installed by `main.rs`): the executor runs on
// this test's thread, so tests running beside it do not count.
const MSG: usize = 100;

/// Receives exactly `MSG` bytes into `buf` (cleared first); false at end of stream.
async fn recv_msg(s: &TcpStream, buf: &mut BytesMut) -> bool {
    buf.clear();
    while buf.len() < MSG {
        if s.recv(buf).await.expect("recv") == 0 {
            return false;
        }
    }
    true
}

/// One request and its answer, with the request's buffers handed back for reuse.
async fn round_trip(c: &TcpStream, out: BytesMut, inb: &mut BytesMut, i: u32) -> BytesMut {
    let mut out = out;
    out.clear();
    out.extend_from_slice(&[i as u8; MSG]);
    let (r, out) = c.send(out).await;
    r.expect("send");
    assert!(recv_msg(c, inb).await, "early end of stream");
    assert_eq!(inb[MSG - 1], (i as u8).wrapping_add(1));
    out
}

#[test]
fn steady_state_ping_pong_with_timers_allocates_nothing() {
    let _turn = doppio_test_support::file_turn(module_path!());
    ping_pong_with_timers_allocates_nothing(Config::default());
}

#[test]
fn steady_state_ping_pong_with_timers_allocates_nothing_under_sqpoll() {
    let _turn = doppio_test_support::file_turn(module_path!());
    ping_pong_with_timers_allocates_nothing(Config {
        sqpoll: Some(SqPoll {
            idle: Duration::from_millis(10),
            cpu: None,
        }),
        ..Config::default()
    });
}

fn ping_pong_with_timers_allocates_nothing(config: Config) {
    let (warm, measured, st) = run(config, async {
        let (c, s) = support::pair().await;
        // The answering side: echo each request with its last byte incremented.
        let server = spawn_local(async move {
            let mut inb = BytesMut::with_capacity(4096);
            let mut out = BytesMut::with_capacity(4096);
            while recv_msg(&s, &mut inb).await {
                out.clear();
                out.extend_from_slice(&inb[..MSG]);
                out[MSG - 1] = out[MSG - 1].wrapping_add(1);
                let (r, b) = s.send(out).await;
                r.expect("send");
                out = b;
            }
        });
        let mut out = BytesMut::with_capacity(4096);
        let mut inb = BytesMut::with_capacity(4096);
        let deadline = Duration::from_secs(5);
        let a0 = allocs();
        for i in 0..1000 {
            out = timeout(deadline, round_trip(&c, out, &mut inb, i))
                .await
                .expect("answer within the deadline");
        }
        let warm = allocs() - a0;
        let before = stats();
        let a1 = allocs();
        for i in 0..10_000 {
            // A request deadline: a Timer armed (registered on first poll) and dropped per
            // round trip.
            out = timeout(deadline, round_trip(&c, out, &mut inb, i))
                .await
                .expect("answer within the deadline");
        }
        let measured = allocs() - a1;
        let st = stats().since(&before);
        drop(c);
        server.await;
        (warm, measured, st)
    })
    .expect("io_uring runtime");
    eprintln!(
        "allocations (sqpoll {}): {warm} during 1000 warm-up round trips, {measured} during \
         10,000 measured round trips ({} turns, {} enters, {} task polls, {} timers armed)",
        config.sqpoll.is_some(),
        st.turns,
        st.enters,
        st.tasks_polled,
        st.timers_armed
    );
    assert!(
        st.timers_armed >= 10_000,
        "every round trip armed its deadline timer"
    );
    assert_eq!(measured, 0, "allocations in steady state");
}
