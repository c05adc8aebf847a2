//! The connection layer's failure paths against small misbehaving loopback peers (silence,
//! hang-up, garbage, a refused port): no Cassandra needed. (Against a real Cassandra:
//! `cassandra_connection.rs`.)

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::{Read, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

use doppio::connection::{Connection, ConnectionConfig, ConnectionError, RequestError};

mod support;

use doppio::rt::Runtime;
use support::{misbehaving_peer, on_runtime, options};

fn silent_node_times_requests_out_at_their_deadline_and_keeps_ids_orphaned(runtime: Runtime) {
    let addr = misbehaving_peer(|mut s| {
        // Read and never answer, until the client goes away.
        let mut sink = [0u8; 1024];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    });
    on_runtime(runtime, "connection", move || async move {
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
    on_runtime(runtime, "connection", move || async move {
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
    on_runtime(runtime, "connection", move || async move {
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
    on_runtime(runtime, "connection", move || async move {
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

support::runtime_tests!(
    silent_node_times_requests_out_at_their_deadline_and_keeps_ids_orphaned,
    hang_up_fails_every_request_in_flight_and_later_ones_at_once,
    garbage_from_the_node_is_a_protocol_error_naming_what_was_wrong,
    an_answer_on_a_stream_nobody_waits_on_closes_the_connection,
);
