//! A connection that lands on another ScyllaDB shard than its pool slot aimed at is replaced
//! in the background, within a bound. The stub emulates a node of two shards with no
//! shard-aware port, so every connection goes through the plain port, where the node picks
//! the shard; the test pins the node's choice (`StubHandle::pin_plain_port`) to shard 1, so
//! that slot 0's connection lands there. It keeps serving while the slot tries again; once
//! the node puts new connections on shard 0, a try lands there and takes the slot, and the
//! replaced connection closes after its requests in flight are answered (EXECUTEs are
//! answered 20 ms late here, so some always are): no request fails. Pinned for good, the
//! tries stop at their bound (8) and the connection is kept. The pool's counters
//! (`PoolStats::wrong_shard*`) say what happened.
//!
//! The test body runs on the client's executor; the stub is steered from the test's thread,
//! the body waiting (blocked) for each step to be done, so that nothing moves meanwhile.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::cell::Cell;
use std::num::NonZeroU16;
use std::rc::Rc;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use doppio_driver::config::Backoff;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::session::view::Node;
use doppio_driver::session::PoolStats;
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{Rules, ScyllaShards, ShardAwarePort, StubConfig};

use crate::support;

use support::{next_key, on_runtime, StubNode};

/// Background tries per wrong-shard connection (the pool's bound, docs/DRIVER.md).
const TRIES: u64 = 8;

/// A stub emulating a node of two shards without a shard-aware port, whose plain-port
/// connections all go to shard 1 until the test says otherwise; EXECUTEs of `ks.t` are
/// answered 20 ms late.
fn stub(runtime: Runtime) -> StubNode {
    let rules = Rules::parse(
        "[[rule]]\nname = \"slow\"\n\
         when = { opcode = \"EXECUTE\", statement = \"INTO ks.t\" }\n\
         then = { delay = { fixed = \"20ms\" } }\n",
    )
    .unwrap();
    let node = StubNode::start(
        runtime,
        StubConfig {
            rules,
            log_rules: false,
            scylla: Some(ScyllaShards {
                shard_aware_port: ShardAwarePort::None,
                ..ScyllaShards::new(NonZeroU16::new(2).unwrap(), [127, 0, 0, 1].into())
            }),
            ..StubConfig::default()
        },
    );
    node.pin_plain_port(Some(1)).unwrap();
    node
}

/// A session to `addr` whose pools reconnect, and try again for a shard, after delays of
/// full jitter up to `base` doubling to `cap`.
fn session_config(addr: std::net::SocketAddr, base_ms: u64, cap_ms: u64) -> SessionConfig {
    let mut config = SessionConfig::new(addr);
    config.consistency = Consistency::One;
    config.backoff = Backoff::new(
        Duration::from_millis(base_ms),
        Duration::from_millis(cap_ms),
    );
    config
}

/// Waits (a bounded wait for background work, not a timing assertion) until `done` holds
/// for the node's pool counters, and returns them.
async fn wait_for(node: &Node, what: &str, done: impl Fn(&PoolStats) -> bool) -> PoolStats {
    let deadline = doppio_driver::rt::now() + Duration::from_secs(30);
    loop {
        let stats = node.pool_stats();
        if done(&stats) {
            return stats;
        }
        assert!(
            doppio_driver::rt::now() < deadline,
            "{what}: {stats:?}, {} open",
            node.open_connections()
        );
        doppio_driver::rt::sleep(Duration::from_millis(5)).await;
    }
}

/// Asks the test's thread to do a step on the stub and waits (blocking the executor, so
/// that nothing runs meanwhile) until it is done.
fn step(ask: &Sender<&'static str>, done: &Receiver<()>, what: &'static str) {
    ask.send(what).unwrap();
    done.recv().unwrap();
}

fn a_connection_on_another_shard_is_replaced_in_the_background_losing_no_request(runtime: Runtime) {
    let stub = stub(runtime);
    let addr = stub.addr();
    let (ask, asked) = channel::<&'static str>();
    let (done, wait_done) = channel::<()>();
    let body = stub.beside(move || async move {
        // Tries 50 ms apart at first, up to 200 ms: the 8 take about 0.7 s, time enough to
        // see one land elsewhere before the node is steered.
        let s = Session::connect(session_config(addr, 50, 200))
            .await
            .unwrap();
        let node = s.view().node(0).unwrap().clone();
        // Requests all along, from 8 fibers, half of them for shard 0's tokens (which go to
        // any connection while shard 0 has none), each answered 20 ms late.
        let p = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let stop = Rc::new(Cell::new(false));
        let answered = Rc::new(Cell::new(0u64));
        let fibers: Vec<_> = (0..8u64)
            .map(|f| {
                let (s, p) = (s.clone(), p.clone());
                let (stop, answered) = (stop.clone(), answered.clone());
                doppio_driver::rt::spawn_local(async move {
                    let mut x = 0x2545_f491_4f6c_dd1d ^ f;
                    let mut failed = Vec::new();
                    while !stop.get() {
                        match s.execute_unpaged(&p, &(next_key(&mut x), vec![1u8])).await {
                            Ok(_) => answered.set(answered.get() + 1),
                            Err(e) => failed.push(e.to_string()),
                        }
                    }
                    failed
                })
            })
            .collect();
        // Slot 0's connection (the first, opened before the shards were known) and slot 1's
        // both landed on shard 1: slot 0's serves, and its tries land on shard 1 again.
        wait_for(&node, "slot 0 trying again", |s| {
            s.wrong_shard == 1 && s.wrong_shard_attempts >= 1
        })
        .await;
        while answered.get() < 16 {
            doppio_driver::rt::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(node.open_connections(), 2);
        let before = node.pool_stats();
        assert_eq!(before.wrong_shard_replaced, 0, "{before:?}");
        assert_eq!(before.wrong_shard_kept, 0, "still trying: {before:?}");

        // The node now puts new connections on shard 0: slot 0's next try lands there.
        step(&ask, &wait_done, "pin shard 0");
        let swapped = wait_for(&node, "the try on shard 0 replacing the connection", |s| {
            s.wrong_shard_replaced == 1
        })
        .await;
        // The replaced connection closes once its requests have been answered.
        let after = wait_for(&node, "the replaced connection closing", |s| s.closed == 1).await;
        doppio_driver::rt::sleep(Duration::from_millis(100)).await;
        stop.set(true);
        let mut failed = Vec::new();
        for fiber in fibers {
            failed.extend(fiber.await);
        }
        assert!(
            failed.is_empty(),
            "{} failed: {:?}",
            failed.len(),
            failed.first()
        );
        let ok = answered.get();
        assert_eq!(node.open_connections(), 2);
        // The first connection, the one on slot 1, and the replacement.
        assert_eq!(after.opened, 3, "{after:?}");
        assert_eq!(after.wrong_shard, 1, "{after:?}");
        assert_eq!(after.wrong_shard_kept, 0, "{after:?}");
        assert!(
            swapped.wrong_shard_attempts > before.wrong_shard_attempts,
            "{swapped:?}"
        );
        assert!(after.wrong_shard_attempts <= TRIES, "{after:?}");
        // Every shard has its own connection now: the stub counts no request at a shard
        // that does not own its token from here on.
        step(&ask, &wait_done, "count");
        let mut x = 7;
        for _ in 0..200 {
            s.execute_unpaged(&p, &(next_key(&mut x), vec![1u8]))
                .await
                .unwrap();
        }
        step(&ask, &wait_done, "count again");
        s.close("done");
        ok
    });
    let client = std::thread::spawn(move || on_runtime(runtime, "wrong-shard", body));
    let mut wrong = Vec::new();
    while let Ok(what) = asked.recv() {
        match what {
            "pin shard 0" => stub.pin_plain_port(Some(0)).unwrap(),
            _ => wrong.push(stub.shard_counts().unwrap().wrong_shard),
        }
        done.send(()).unwrap();
    }
    let answered = client.join().unwrap();
    let counts = stub.shard_counts().unwrap();
    assert_eq!(wrong.len(), 2);
    assert!(
        wrong[0] > 0,
        "shard 0's tokens reached shard 1 first: {counts:?}"
    );
    assert_eq!(wrong[1], wrong[0], "then none did: {counts:?}");
    assert!(counts.connections[0] >= 1, "{counts:?}");
    assert!(counts.requests.iter().sum::<u64>() >= answered + 200);
    stub.stop();
}

fn tries_for_an_unreachable_shard_stop_at_their_bound_and_the_connection_is_kept(runtime: Runtime) {
    let stub = stub(runtime);
    let addr = stub.addr();
    stub.run("wrong-shard-kept", move || async move {
        // Tries 10 ms apart at first, up to 40 ms.
        let s = Session::connect(session_config(addr, 10, 40))
            .await
            .unwrap();
        let node = s.view().node(0).unwrap().clone();
        let kept = wait_for(&node, "the tries running out", |s| s.wrong_shard_kept == 1).await;
        assert_eq!(kept.wrong_shard, 1, "{kept:?}");
        assert_eq!(kept.wrong_shard_attempts, TRIES, "{kept:?}");
        assert_eq!(kept.wrong_shard_replaced, 0, "{kept:?}");
        // Tries that landed elsewhere were closed at once: only the slots' own count.
        assert_eq!(kept.opened, 2, "{kept:?}");
        assert_eq!(node.open_connections(), 2);
        // The bound holds: no try after the last.
        doppio_driver::rt::sleep(Duration::from_millis(500)).await;
        assert_eq!(node.pool_stats(), kept);
        // Both connections serve, on shard 1.
        let p = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let mut x = 11;
        for _ in 0..100 {
            s.execute_unpaged(&p, &(next_key(&mut x), vec![1u8]))
                .await
                .unwrap();
        }
        let by_shard = node.requests_by_scylla_shard();
        assert_eq!(by_shard[0], 0, "{by_shard:?}");
        s.close("done");
    });
    let counts = stub.shard_counts().unwrap();
    assert_eq!(counts.connections[0], 0, "{counts:?}");
    // The control connection, the two slots' and the tries.
    assert_eq!(counts.connections[1], 1 + 2 + TRIES, "{counts:?}");
    stub.stop();
}

support::runtime_tests!(;
    and_sim:
    a_connection_on_another_shard_is_replaced_in_the_background_losing_no_request,
    tries_for_an_unreachable_shard_stop_at_their_bound_and_the_connection_is_kept,
);
