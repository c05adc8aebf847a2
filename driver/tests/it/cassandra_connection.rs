//! The connection layer against a real Cassandra: pipelining, coalescing, backpressure,
//! keepalive, and the pool refilling a closed slot. (Its failure paths against small
//! misbehaving loopback peers, which need no Cassandra: `connection.rs`.)
//!
//! Cassandra comes from `scripts/cassandra.sh` (`scripts/test.sh` starts one); its address
//! from `DOPPIO_CASSANDRA` (default 127.0.0.1:9042).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::Read;
use std::rc::Rc;
use std::time::{Duration, Instant};

use doppio_driver::connection::{Connection, ConnectionConfig, ConnectionError, RequestError};
use doppio_proto::frame::Opcode;
use doppio_proto::wire::Reader;

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cassandra, misbehaving_peer, on_runtime, options};

fn pipelined_options_are_coalesced_and_each_gets_its_own_answer(runtime: Runtime) {
    on_runtime(runtime, "connection", || async {
        let conn = Connection::connect(cassandra(), ConnectionConfig::default())
            .await
            .expect("connect to Cassandra");
        const N: usize = 2000;
        let conn = Rc::new(conn);
        let tasks: Vec<_> = (0..N)
            .map(|_| {
                let conn = conn.clone();
                doppio_driver::rt::spawn_local(async move { conn.request(None, options).await })
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
    on_runtime(runtime, "connection", || async {
        let config = {
            let mut cfg = ConnectionConfig::default();
            cfg.max_streams = 4;
            cfg
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
                doppio_driver::rt::spawn_local(async move {
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

fn an_encoding_error_sends_nothing_and_frees_the_id(runtime: Runtime) {
    on_runtime(runtime, "connection", || async {
        let config = {
            let mut cfg = ConnectionConfig::default();
            cfg.max_streams = 1;
            cfg
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
    on_runtime(runtime, "connection", move || async move {
        let config = {
            let mut cfg = ConnectionConfig::default();
            cfg.keepalive = Some(Duration::from_millis(100));
            cfg
        };
        // A live node answers the probes and the connection stays open.
        let live = Connection::connect(cassandra(), config.clone())
            .await
            .expect("connect");
        doppio_driver::rt::sleep(Duration::from_millis(450)).await;
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

support::cassandra_runtime_tests!(
    CASSANDRA;
    pipelined_options_are_coalesced_and_each_gets_its_own_answer,
    stream_ids_are_bounded_and_callers_wait_for_them,
    an_encoding_error_sends_nothing_and_frees_the_id,
    keepalive_probes_an_idle_node_and_closes_a_silent_one,
);
