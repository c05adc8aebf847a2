//! A node of the three-node cluster stops in the middle of a load and comes back: with RF 3,
//! consistency ONE and idempotent statements, no request fails (the retry policy sends the
//! ones the stopped node dropped to another node), the node is marked down within a bound,
//! receives nothing while down, and after its restart is marked up and takes its share again.
//! Then the control connection's node is killed: the control connection moves to another
//! node and still hears schema events. It stops nodes, which would disturb tests running
//! beside it: its tests hold their file's turn, so no other file's test runs meanwhile.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::config::Backoff;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::session::DefaultRetryPolicy;
use doppio_driver::{Session, SessionConfig};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cluster, cluster_script, eventually, keyspace, on_runtime};

/// Requests and errors seen in one phase of the test.
#[derive(Debug, Default, Clone, Copy)]
struct Phase {
    ok: u64,
    errors: u64,
}

/// Runs `scripts/cassandra-cluster.sh ARGS` on a thread; the flag turns true when it ends.
fn in_background(args: &'static [&'static str]) -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        cluster_script(args);
        flag.store(true, Ordering::SeqCst);
    });
    done
}

async fn until(flag: &AtomicBool, timeout: Duration) {
    let ok = eventually(timeout, || flag.load(Ordering::SeqCst)).await;
    assert!(
        ok.is_some(),
        "the cluster script did not finish in {timeout:?}"
    );
}

fn a_node_stopped_mid_load_loses_no_retryable_request_and_comes_back(runtime: Runtime) {
    let _turn = support::cluster_turn();
    on_runtime(runtime, "cluster-failover", || async {
        let mut config = SessionConfig::new(cluster());
        config.consistency = Consistency::One;
        config.startup_timeout = Duration::from_secs(30);
        config.connection.request_timeout = Duration::from_secs(12);
        config.retry_policy = Arc::new(DefaultRetryPolicy { max_retries: 5 });
        config.backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
        let s = Session::connect(config).await.unwrap();
        eventually(Duration::from_secs(10), || s.nodes().iter().all(|n| n.up))
            .await
            .unwrap();
        let ks = keyspace("failover");
        s.query_unpaged(
            &format!(
                "CREATE KEYSPACE {ks} WITH replication = \
                 {{'class': 'SimpleStrategy', 'replication_factor': 3}}"
            ),
            &(),
        )
        .await
        .unwrap();
        s.query_unpaged(
            &format!("CREATE TABLE {ks}.kv (k int PRIMARY KEY, v int)"),
            &(),
        )
        .await
        .unwrap();
        let insert = s
            .prepare(&format!("INSERT INTO {ks}.kv (k, v) VALUES (?, ?)"))
            .await
            .unwrap();
        let select = s
            .prepare(&format!("SELECT v FROM {ks}.kv WHERE k = ?"))
            .await
            .unwrap();
        let node2: SocketAddr = "127.0.0.22:9042".parse().unwrap();
        let node2_requests = || s.node_at(node2).map_or(0, |n| n.counters().requests);

        let phases = Rc::new(RefCell::new([Phase::default(); 4]));
        let phase = Rc::new(Cell::new(0usize));
        let stop = Rc::new(Cell::new(false));
        let failures: Rc<RefCell<Vec<String>>> = Rc::default();
        let next_key = Rc::new(Cell::new(0i32));
        // Idempotent writes and reads: the statements carry it.
        let insert = insert.with_config(|c| c.idempotent = true);
        let select = select.with_config(|c| c.idempotent = true);
        let mut workers = Vec::new();
        // A modest load (at most about 800 requests a second): enough to have requests in
        // flight on the node when it stops, without starving the restarting node of CPU on
        // a small machine.
        for _ in 0..8 {
            let (s, insert, select) = (s.clone(), insert.clone(), select.clone());
            let (phases, phase, stop, failures, next_key) = (
                phases.clone(),
                phase.clone(),
                stop.clone(),
                failures.clone(),
                next_key.clone(),
            );
            workers.push(doppio_driver::rt::spawn_local(async move {
                while !stop.get() {
                    doppio_driver::rt::sleep(Duration::from_millis(20)).await;
                    let k = next_key.get();
                    next_key.set(k + 1);
                    let write = s.execute_unpaged(&insert, &(k, k)).await;
                    let read = match write {
                        Ok(_) => s.execute_unpaged(&select, &(k,)).await,
                        Err(e) => Err(e),
                    };
                    let mut p = phases.borrow_mut();
                    let slot = &mut p[phase.get()];
                    match read {
                        // Written at ONE, read at ONE: another replica may not have the row
                        // yet; the read itself must succeed.
                        Ok(_) => slot.ok += 1,
                        Err(e) => {
                            slot.errors += 1;
                            failures.borrow_mut().push(e.to_string());
                        }
                    }
                }
            }));
        }
        doppio_driver::rt::sleep(Duration::from_secs(3)).await;
        assert!(node2_requests() > 0, "node 2 serves before it stops");

        // Stop node 2 (SIGTERM; Cassandra drains and closes its client connections).
        let stopping = in_background(&["stop", "2"]);
        let marked_down = eventually(Duration::from_secs(30), || {
            s.node_at(node2).is_some_and(|n| !n.is_up())
        })
        .await
        .expect("node 2 is marked down");
        until(&stopping, Duration::from_secs(60)).await;
        phase.set(1);
        let during_start = node2_requests();
        doppio_driver::rt::sleep(Duration::from_secs(3)).await;
        let during_node2 = node2_requests() - during_start;

        // Start it again.
        let restarted_at = Instant::now();
        let starting = in_background(&["start"]);
        until(&starting, Duration::from_secs(180)).await;
        let marked_up = eventually(Duration::from_secs(60), || {
            s.node_at(node2).is_some_and(|n| n.is_up())
        })
        .await
        .expect("node 2 is marked up after its restart");
        phase.set(2);
        let after_start = node2_requests();
        doppio_driver::rt::sleep(Duration::from_secs(3)).await;
        let after_node2 = node2_requests() - after_start;

        // The control connection's node is killed (SIGKILL: no goodbye): the control
        // connection moves to another node and still follows the cluster's events.
        let node1: SocketAddr = "127.0.0.21:9042".parse().unwrap();
        assert_eq!(s.control_node(), Some(node1));
        phase.set(3);
        until(&in_background(&["kill", "1"]), Duration::from_secs(30)).await;
        let control_moved = eventually(Duration::from_secs(30), || {
            s.control_node().is_some_and(|n| n != node1)
        })
        .await
        .expect("the control connection moves to another node");
        let ks2 = keyspace("failover_event");
        let other = {
            let mut c = SessionConfig::new("127.0.0.23:9042".parse().unwrap());
            c.consistency = Consistency::One;
            c.startup_timeout = Duration::from_secs(30);
            Session::connect(c).await.unwrap()
        };
        other
            .query_unpaged(
                &format!(
                    "CREATE KEYSPACE {ks2} WITH replication = \
                     {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
                ),
                &(),
            )
            .await
            .unwrap();
        other.close("done");
        let event_seen = eventually(Duration::from_secs(15), || {
            s.topology().keyspaces.contains_key(&ks2)
        })
        .await
        .expect("the moved control connection still hears schema events");
        stop.set(true);
        for w in workers {
            w.await;
        }
        until(&in_background(&["start"]), Duration::from_secs(180)).await;
        eventually(Duration::from_secs(60), || {
            s.node_at(node1).is_some_and(|n| n.is_up())
        })
        .await
        .expect("node 1 is marked up after its restart");

        let p = *phases.borrow();
        println!(
            "failover: before {:?}, during {:?} (node 2 got {during_node2}), after {:?} \
             (node 2 got {after_node2}); marked down {:?} after the stop began, up {:?} after \
             the restart script ended (restart took {:?}); node 1 killed: {:?}, control moved \
             after {control_moved:?}, schema event seen after {event_seen:?}; retries {}",
            p[0],
            p[1],
            p[2],
            marked_down,
            marked_up,
            restarted_at.elapsed() - marked_up,
            p[3],
            s.stats().retries
        );
        assert!(
            failures.borrow().is_empty(),
            "no request failed: {:?}",
            failures.borrow()
        );
        assert!(p.iter().all(|x| x.ok > 0), "load ran in every phase: {p:?}");
        assert!(
            marked_down < Duration::from_secs(10),
            "marked down within 10 s of the stop: {marked_down:?}"
        );
        assert_eq!(during_node2, 0, "nothing is sent to a node marked down");
        assert!(
            after_node2 > 0,
            "node 2 takes traffic again after its restart"
        );
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
        s.query_unpaged(&format!("DROP KEYSPACE {ks2}"), &())
            .await
            .unwrap();
        s.close("done");
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA_CLUSTER;
    a_node_stopped_mid_load_loses_no_retryable_request_and_comes_back,
);
