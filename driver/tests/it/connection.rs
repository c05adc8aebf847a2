//! The connection layer's failure paths against small misbehaving peers (silence, hang-up,
//! garbage, an answer on a stream nobody waits on) and the wait for a stream id against one
//! that answers READY to everything: no Cassandra needed. Each peer plays a script
//! (`support::ScriptedPeer`): on a loopback socket of its own thread on glommio and
//! io_uring, in memory on the test's executor on the simulated runtime. (Against a real
//! Cassandra: `cassandra_connection.rs`.)

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

use doppio_driver::connection::{
    Connection, ConnectionConfig, ConnectionError, ProtocolFault, RequestError, StreamWait,
};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{options, PeerStep, ScriptedPeer};

/// `err` is a timeout after `timeout`, which ran out no earlier than `timeout` after `start`
/// (and not so much later that only a hang explains it: not a timing assertion on speed),
/// on the executor's clock.
fn assert_timed_out_at(err: &RequestError, start: Instant, timeout: Duration) {
    let waited = doppio_driver::rt::now() - start;
    assert!(
        matches!(err, RequestError::Timeout { after, .. } if *after == timeout),
        "{err}"
    );
    assert!(waited >= timeout, "failed early, after {waited:?}");
    assert!(
        waited < timeout + Duration::from_secs(5),
        "hung for {waited:?}"
    );
}

fn silent_node_times_requests_out_at_their_deadline_and_keeps_ids_orphaned(runtime: Runtime) {
    // Read and never answer, until the client goes away.
    let peer = ScriptedPeer::start(runtime, &[PeerStep::Drain]);
    let addr = peer.addr();
    peer.run("connection", move || async move {
        let conn = Connection::connect(addr, ConnectionConfig::default())
            .await
            .expect("connect");
        let timeout = Duration::from_millis(200);
        let start = doppio_driver::rt::now();
        let err = conn.request(Some(timeout), options).await.unwrap_err();
        assert_timed_out_at(&err, start, timeout);
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
    // Take the first bytes, then hang up without answering.
    let peer = ScriptedPeer::start(
        runtime,
        &[
            PeerStep::Read(9),
            PeerStep::Sleep(Duration::from_millis(100)),
        ],
    );
    let addr = peer.addr();
    peer.run("connection", move || async move {
        let conn = Rc::new(
            Connection::connect(addr, ConnectionConfig::default())
                .await
                .expect("connect"),
        );
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let conn = conn.clone();
                doppio_driver::rt::spawn_local(async move { conn.request(None, options).await })
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
    let peer = ScriptedPeer::start(
        runtime,
        &[
            PeerStep::Read(9),
            // A v3 response header: not the version this connection speaks.
            PeerStep::Write(&[0x83, 0, 0, 0, 0x06, 0, 0, 0, 0]),
            PeerStep::Sleep(Duration::from_millis(500)),
        ],
    );
    let addr = peer.addr();
    peer.run("connection", move || async move {
        let conn = Connection::connect(addr, ConnectionConfig::default())
            .await
            .expect("connect");
        let err = conn.request(None, options).await.unwrap_err();
        match &err {
            RequestError::Connection(ConnectionError::Protocol {
                fault: ProtocolFault::Frame(cause),
                ..
            }) => assert!(cause.to_string().contains("0x83"), "{cause}"),
            other => panic!("expected a protocol error, got {other:?}"),
        }
        println!("{err}");
    });
}

fn an_answer_on_a_stream_nobody_waits_on_closes_the_connection(runtime: Runtime) {
    let peer = ScriptedPeer::start(
        runtime,
        &[
            PeerStep::Read(9),
            PeerStep::Write(&[0x84, 0, 0x01, 0x00, 0x02, 0, 0, 0, 0]), // READY on stream 256
            PeerStep::Sleep(Duration::from_millis(500)),
        ],
    );
    let addr = peer.addr();
    peer.run("connection", move || async move {
        let conn = Connection::connect(addr, ConnectionConfig::default())
            .await
            .expect("connect");
        let err = conn.request(None, options).await.unwrap_err();
        assert!(
            matches!(
                &err,
                RequestError::Connection(ConnectionError::Protocol {
                    fault: ProtocolFault::UnknownStream { stream: 256 },
                    ..
                })
            ),
            "{err:?}"
        );
    });
}

/// A connection to `addr` with a single stream id.
async fn one_stream_id(addr: std::net::SocketAddr) -> Connection {
    let config = {
        let mut cfg = ConnectionConfig::default();
        cfg.max_streams = 1;
        cfg
    };
    Connection::connect(addr, config).await.expect("connect")
}

/// One poll of `wait`, from inside a task.
async fn poll_once(wait: &mut StreamWait) -> Poll<Result<(), RequestError>> {
    std::future::poll_fn(|cx| Poll::Ready(wait.poll_stream(cx))).await
}

fn a_stream_wait_queues_in_order_passes_its_turn_on_and_frees_an_unused_id(runtime: Runtime) {
    let peer = ScriptedPeer::start(runtime, &[PeerStep::ReadyToEverything]);
    let addr = peer.addr();
    peer.run("connection", move || async move {
        let conn = one_stream_id(addr).await;
        // The only id, held by a request whose answer nobody has taken yet.
        let mut first = conn
            .try_request(None, options)
            .unwrap()
            .expect("an id free");
        assert!(conn.try_request(None, options).unwrap().is_none());
        let mut dropped = conn.wait_for_stream(None);
        let mut second = conn.wait_for_stream(None);
        assert!(poll_once(&mut dropped).await.is_pending());
        assert!(poll_once(&mut second).await.is_pending());
        // A waiter that gives up passes its turn on to the next.
        drop(dropped);
        std::future::poll_fn(|cx| first.poll_answer(cx))
            .await
            .expect("READY");
        std::future::poll_fn(|cx| second.poll_stream(cx))
            .await
            .expect("the freed id, in turn");
        assert_eq!(conn.in_flight(), 1);
        let mut answer = second.send(options).unwrap().expect("sent on the held id");
        std::future::poll_fn(|cx| answer.poll_answer(cx))
            .await
            .expect("READY");
        assert_eq!(conn.in_flight(), 0);
        // An id acquired and never used is freed when the wait is dropped: nothing was sent.
        let mut unused = conn.wait_for_stream(None);
        assert!(poll_once(&mut unused).await.is_ready());
        assert_eq!(conn.in_flight(), 1);
        drop(unused);
        assert_eq!(conn.in_flight(), 0);
        let sent = conn.stats().requests;
        assert_eq!(sent, 2, "the dropped waits sent nothing");
        assert!(conn.try_request(None, options).unwrap().is_some());
    });
}

fn a_stream_wait_times_out_at_its_deadline_when_no_id_comes(runtime: Runtime) {
    let peer = ScriptedPeer::start(runtime, &[PeerStep::ReadyToEverything]);
    let addr = peer.addr();
    peer.run("connection", move || async move {
        let conn = one_stream_id(addr).await;
        let _holder = conn
            .try_request(None, options)
            .unwrap()
            .expect("an id free");
        let timeout = Duration::from_millis(200);
        let mut wait = conn.wait_for_stream(Some(timeout));
        let start = doppio_driver::rt::now();
        let err = std::future::poll_fn(|cx| wait.poll_stream(cx))
            .await
            .unwrap_err();
        assert_timed_out_at(&err, start, timeout);
        // A late send without an id does not overtake or send anything.
        assert!(wait.send(options).unwrap().is_none());
        assert_eq!(conn.stats().requests, 1);
    });
}

support::runtime_tests!(;
    and_sim:
    a_stream_wait_queues_in_order_passes_its_turn_on_and_frees_an_unused_id,
    a_stream_wait_times_out_at_its_deadline_when_no_id_comes,
    silent_node_times_requests_out_at_their_deadline_and_keeps_ids_orphaned,
    hang_up_fails_every_request_in_flight_and_later_ones_at_once,
    garbage_from_the_node_is_a_protocol_error_naming_what_was_wrong,
    an_answer_on_a_stream_nobody_waits_on_closes_the_connection,
);
