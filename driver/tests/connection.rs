//! The connection layer against a real Cassandra (pipelining, coalescing, backpressure) and
//! against small misbehaving loopback peers (silence, hang-up, garbage) for its failure paths.
//!
//! Cassandra comes from `scripts/cassandra.sh` (`scripts/test.sh` starts one); its address
//! from `DOPPIO_CASSANDRA` (default 127.0.0.1:9042).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use doppio::connection::{Connection, ConnectionConfig, ConnectionError, RequestError};
use doppio_proto::frame::{Direction, Flags, FrameHeader, Opcode};
use doppio_proto::wire::Reader;

mod support;

use doppio::rt::Runtime;
use support::cassandra;

fn on_runtime<F, Fut>(runtime: Runtime, f: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    support::on_runtime(runtime, "connection-test", f)
}

fn options(buf: &mut BytesMut, stream: i16) -> Result<(), doppio_proto::ProtoError> {
    FrameHeader {
        direction: Direction::Request,
        flags: Flags::NONE,
        stream,
        opcode: Opcode::Options,
        length: 0,
    }
    .write_to(buf);
    Ok(())
}

fn pipelined_options_are_coalesced_and_each_gets_its_own_answer(runtime: Runtime) {
    on_runtime(runtime, || async {
        let conn = Connection::connect(cassandra(), ConnectionConfig::default())
            .await
            .expect("connect to Cassandra");
        const N: usize = 2000;
        let conn = Rc::new(conn);
        let tasks: Vec<_> = (0..N)
            .map(|_| {
                let conn = conn.clone();
                doppio::rt::spawn_local(async move { conn.request(None, options).await })
            })
            .collect();
        for t in tasks {
            let frame = t.await.expect("OPTIONS answered");
            assert_eq!(frame.header.opcode, Opcode::Supported);
            let mut r = Reader::new(&frame.body);
            let supported = r.read_string_multimap("SUPPORTED").unwrap();
            assert!(supported.iter().any(|(k, _)| *k == "CQL_VERSION"));
        }
        let stats = conn.stats();
        assert_eq!(stats.requests, N as u64);
        assert_eq!(stats.frames_read, N as u64);
        assert_eq!(conn.in_flight(), 0);
        // 2000 requests queued in one executor turn cannot need 2000 sends.
        assert!(
            stats.flushes < N as u64 / 10,
            "frames were not coalesced: {stats:?}"
        );
        assert!(
            stats.reads < N as u64,
            "answers were not read in batches: {stats:?}"
        );
        println!("{N} OPTIONS: {stats:?}");
    });
}

fn stream_ids_are_bounded_and_callers_wait_for_them(runtime: Runtime) {
    on_runtime(runtime, || async {
        let config = ConnectionConfig {
            max_streams: 4,
            ..ConnectionConfig::default()
        };
        let conn = Rc::new(
            Connection::connect(cassandra(), config)
                .await
                .expect("connect"),
        );
        let peak = Rc::new(std::cell::Cell::new(0usize));
        let tasks: Vec<_> = (0..200)
            .map(|_| {
                let conn = conn.clone();
                let peak = peak.clone();
                doppio::rt::spawn_local(async move {
                    let fut = conn.request(None, options);
                    peak.set(peak.get().max(conn.in_flight()));
                    fut.await
                })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.expect("answered").header.opcode, Opcode::Supported);
            peak.set(peak.get().max(conn.in_flight()));
        }
        assert!(
            peak.get() <= 4,
            "more than 4 requests in flight: {}",
            peak.get()
        );
        assert_eq!(conn.stats().requests, 200);
    });
}

/// A peer that accepts one connection and then does `behave` with it, on a plain thread.
fn misbehaving_peer(behave: fn(std::net::TcpStream)) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            behave(stream);
        }
    });
    addr
}

fn silent_node_times_requests_out_at_their_deadline_and_keeps_ids_orphaned(runtime: Runtime) {
    let addr = misbehaving_peer(|mut s| {
        // Read and never answer, until the client goes away.
        let mut sink = [0u8; 1024];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    });
    on_runtime(runtime, move || async move {
        let conn = Connection::connect(addr, ConnectionConfig::default())
            .await
            .expect("connect");
        let timeout = Duration::from_millis(200);
        let start = Instant::now();
        let err = conn.request(Some(timeout), options).await.unwrap_err();
        let waited = start.elapsed();
        assert!(
            matches!(err, RequestError::Timeout { after, .. } if after == timeout),
            "{err}"
        );
        assert!(waited >= timeout, "failed early, after {waited:?}");
        // Not a timing assertion on speed: a generous bound that only a hang would break.
        assert!(
            waited < timeout + Duration::from_secs(5),
            "hung for {waited:?}"
        );
        assert_eq!(
            conn.orphans(),
            1,
            "the id stays reserved for the late answer"
        );
        assert_eq!(conn.stats().timeouts, 1);
        assert!(
            conn.closed().is_none(),
            "a timeout alone does not close the connection"
        );
    });
}

fn hang_up_fails_every_request_in_flight_and_later_ones_at_once(runtime: Runtime) {
    let addr = misbehaving_peer(|mut s| {
        // Take the first bytes, then hang up without answering.
        let mut first = [0u8; 9];
        let _ = s.read_exact(&mut first);
        std::thread::sleep(Duration::from_millis(100));
    });
    on_runtime(runtime, move || async move {
        let conn = Rc::new(
            Connection::connect(addr, ConnectionConfig::default())
                .await
                .expect("connect"),
        );
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let conn = conn.clone();
                doppio::rt::spawn_local(async move { conn.request(None, options).await })
            })
            .collect();
        for t in tasks {
            match t.await {
                Err(RequestError::Connection(ConnectionError::Broken { addr: a, .. })) => {
                    assert_eq!(a, addr)
                }
                other => panic!("expected a broken connection, got {other:?}"),
            }
        }
        assert_eq!(conn.in_flight(), 0);
        assert!(matches!(
            conn.request(None, options).await,
            Err(RequestError::Connection(ConnectionError::Broken { .. }))
        ));
    });
}

fn garbage_from_the_node_is_a_protocol_error_naming_what_was_wrong(runtime: Runtime) {
    let addr = misbehaving_peer(|mut s| {
        let mut first = [0u8; 9];
        let _ = s.read_exact(&mut first);
        // A v3 response header: not the version this connection speaks.
        let _ = s.write_all(&[0x83, 0, 0, 0, 0x06, 0, 0, 0, 0]);
        std::thread::sleep(Duration::from_millis(500));
    });
    on_runtime(runtime, move || async move {
        let conn = Connection::connect(addr, ConnectionConfig::default())
            .await
            .expect("connect");
        let err = conn.request(None, options).await.unwrap_err();
        match &err {
            RequestError::Connection(ConnectionError::Protocol { detail, .. }) => {
                assert!(detail.contains("0x83"), "{detail}")
            }
            other => panic!("expected a protocol error, got {other:?}"),
        }
        println!("{err}");
    });
}

fn an_answer_on_a_stream_nobody_waits_on_closes_the_connection(runtime: Runtime) {
    let addr = misbehaving_peer(|mut s| {
        let mut first = [0u8; 9];
        let _ = s.read_exact(&mut first);
        let _ = s.write_all(&[0x84, 0, 0x01, 0x00, 0x02, 0, 0, 0, 0]); // READY on stream 256
        std::thread::sleep(Duration::from_millis(500));
    });
    on_runtime(runtime, move || async move {
        let conn = Connection::connect(addr, ConnectionConfig::default())
            .await
            .expect("connect");
        let err = conn.request(None, options).await.unwrap_err();
        assert!(
            matches!(&err, RequestError::Connection(ConnectionError::Protocol { detail, .. }) if detail.contains("stream 256")),
            "{err:?}"
        );
    });
}

fn an_encoding_error_sends_nothing_and_frees_the_id(runtime: Runtime) {
    on_runtime(runtime, || async {
        let config = ConnectionConfig {
            max_streams: 1,
            ..ConnectionConfig::default()
        };
        let conn = Connection::connect(cassandra(), config)
            .await
            .expect("connect");
        let err = conn
            .request(None, |buf, _| {
                buf.extend_from_slice(b"partial");
                Err(doppio_proto::ProtoError::UnknownOpcode(0x42))
            })
            .await
            .unwrap_err();
        assert!(matches!(err, RequestError::Encode(_)));
        // The only id is free again and the half-written bytes never reached the node.
        let frame = conn.request(None, options).await.expect("answered");
        assert_eq!(frame.header.opcode, Opcode::Supported);
        assert_eq!(conn.stats().bytes_written, 9);
    });
}

fn keepalive_probes_an_idle_node_and_closes_a_silent_one(runtime: Runtime) {
    let silent = misbehaving_peer(|mut s| {
        let mut sink = [0u8; 1024];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    });
    on_runtime(runtime, move || async move {
        let config = ConnectionConfig {
            keepalive: Some(Duration::from_millis(100)),
            ..ConnectionConfig::default()
        };
        // A live node answers the probes and the connection stays open.
        let live = Connection::connect(cassandra(), config.clone())
            .await
            .expect("connect");
        doppio::rt::sleep(Duration::from_millis(450)).await;
        assert!(live.stats().keepalives >= 2, "{:?}", live.stats());
        assert!(live.closed().is_none(), "{:?}", live.closed());
        // A silent node is given up on after one unanswered probe.
        let conn = Connection::connect(silent, config).await.expect("connect");
        let start = Instant::now();
        let err = conn.next_event().await.unwrap_err();
        assert!(
            matches!(&err, ConnectionError::Closed { reason, .. } if reason.contains("keepalive")),
            "{err}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "took {:?}",
            start.elapsed()
        );
    });
}

fn pool_replaces_a_closed_connection_in_the_background(runtime: Runtime) {
    use doppio::pool::{Backoff, ConnectFn, NodePool};
    on_runtime(runtime, || async {
        let connect: ConnectFn = Rc::new(|addr| {
            Box::pin(async move { Connection::connect(addr, ConnectionConfig::default()).await })
        });
        let pool = NodePool::start(cassandra(), 2, connect, Backoff::default());
        pool.wait_ready(Duration::from_secs(10))
            .await
            .expect("a connection opens");
        while pool.open_count() < 2 {
            doppio::rt::sleep(Duration::from_millis(5)).await;
        }
        let victim = pool.pick().expect("an open connection");
        victim.close("test closes it");
        // The other connection still serves requests while the slot refills.
        let conn = pool.pick().expect("the survivor");
        assert!(conn.closed().is_none());
        conn.request(None, options).await.expect("answered");
        let start = Instant::now();
        while pool.open_count() < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "slot not refilled: {pool:?}"
            );
            doppio::rt::sleep(Duration::from_millis(5)).await;
        }
        let stats = pool.stats();
        assert_eq!(stats.opened, 3);
        assert_eq!(stats.closed, 1);
        pool.close("test over");
        assert_eq!(pool.open_count(), 0);
    });
}

fn pool_to_a_dead_node_backs_off_and_reports_why(runtime: Runtime) {
    use doppio::pool::{Backoff, ConnectFn, NodePool};
    // A port that was just free: connecting is refused.
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    on_runtime(runtime, move || async move {
        let connect: ConnectFn = Rc::new(|addr| {
            Box::pin(async move { Connection::connect(addr, ConnectionConfig::default()).await })
        });
        let backoff = Backoff {
            base: Duration::from_millis(20),
            cap: Duration::from_millis(100),
        };
        let pool = NodePool::start(dead, 1, connect, backoff);
        let err = pool
            .wait_ready(Duration::from_millis(600))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ConnectionError::Connect { addr, .. } if addr == dead),
            "{err}"
        );
        assert!(pool.pick().is_none());
        let attempts = pool.stats().failed_attempts;
        // Backoff, not a busy loop: at most one attempt per few ms on average, at least 2.
        assert!(
            (2..=200).contains(&attempts),
            "{attempts} attempts in 600 ms"
        );
        pool.close("test over");
    });
}

support::runtime_tests!(
    pipelined_options_are_coalesced_and_each_gets_its_own_answer,
    stream_ids_are_bounded_and_callers_wait_for_them,
    silent_node_times_requests_out_at_their_deadline_and_keeps_ids_orphaned,
    hang_up_fails_every_request_in_flight_and_later_ones_at_once,
    garbage_from_the_node_is_a_protocol_error_naming_what_was_wrong,
    an_answer_on_a_stream_nobody_waits_on_closes_the_connection,
    an_encoding_error_sends_nothing_and_frees_the_id,
    keepalive_probes_an_idle_node_and_closes_a_silent_one,
    pool_replaces_a_closed_connection_in_the_background,
    pool_to_a_dead_node_backs_off_and_reports_why,
);
