//! Speculative execution on the real three-node cluster: node 2 is frozen (SIGSTOP) for a
//! few seconds; idempotent reads (RF 3, consistency ONE) whose first node is node 2 are also
//! sent to the next replica after the speculative delay and answered from there, while the
//! same reads without speculative execution wait out their timeout. It freezes a node, which
//! would disturb tests running beside it: its tests hold their file's turn, so no other
//! file's test runs meanwhile.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::session::{NoRetry, SpeculativeExecution};
use doppio_driver::{Error, Session, SessionConfig, Statement};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cluster, eventually, keyspace, on_runtime};

/// Sends `signal` to node `n` of the test cluster (its pid file is in .cassandra-cluster).
fn signal_node(n: u32, signal: &str) {
    let state = std::env::var("DOPPIO_CLUSTER_STATE")
        .unwrap_or_else(|_| format!("{}/../.cassandra-cluster", env!("CARGO_MANIFEST_DIR")));
    let pid = std::fs::read_to_string(format!("{state}/node{n}/pid"))
        .expect("the cluster's node pid file (scripts/cassandra-cluster.sh start)");
    let ok = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid.trim().to_owned()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{signal} {pid}");
}

/// Resumes node 2 even if the test fails half-way.
struct Thaw;

impl Drop for Thaw {
    fn drop(&mut self) {
        signal_node(2, "CONT");
    }
}

fn config(speculative: Option<SpeculativeExecution>) -> SessionConfig {
    let mut c = SessionConfig::new(cluster());
    c.consistency = Consistency::One;
    c.startup_timeout = Duration::from_secs(30);
    c.connection.request_timeout = Duration::from_millis(1500);
    c.retry_policy = Arc::new(NoRetry);
    c.speculative = speculative;
    // Keepalive would close the frozen node's connections; the test wants them open.
    c.connection.keepalive = None;
    c
}

fn a_frozen_replica_is_bypassed_after_the_speculative_delay(runtime: Runtime) {
    let _turn = support::cluster_turn();
    on_runtime(runtime, "cluster-speculative", || async {
        let spec = SpeculativeExecution::new(Duration::from_millis(100), 1);
        let fast = Session::connect(config(Some(spec))).await.unwrap();
        let plain = Session::connect(config(None)).await.unwrap();
        for s in [&fast, &plain] {
            eventually(Duration::from_secs(10), || s.nodes().iter().all(|n| n.up))
                .await
                .unwrap();
        }
        let ks = keyspace("speculative");
        fast.query_unpaged(
            &format!(
                "CREATE KEYSPACE {ks} WITH replication = \
                 {{'class': 'SimpleStrategy', 'replication_factor': 3}}"
            ),
            &(),
        )
        .await
        .unwrap();
        // The node that takes the speculative execution coordinates the read, and at
        // consistency ONE it may hand the read to node 2 itself (its dynamic snitch has not
        // yet seen node 2 freeze): then it answers only after its own speculative retry,
        // whose default ('99p') knows nothing of a new table and waited beyond the driver's
        // 1.5 s once on a loaded CI machine. A fixed 50 ms bounds that server-side wait, and
        // the driver's speculative execution is still what bypasses the frozen node (the
        // control run below, sent to node 2 itself, still times out).
        fast.query_unpaged(
            &format!(
                "CREATE TABLE {ks}.kv (k int PRIMARY KEY, v int) WITH speculative_retry = '50ms'"
            ),
            &(),
        )
        .await
        .unwrap();
        let cql = format!("SELECT v FROM {ks}.kv WHERE k = ?");
        // Written at ALL, every replica holding every row before node 2 freezes: a write at
        // ONE is acknowledged by one replica, and a read at ONE on another that had not
        // applied it yet (or dropped it under load) finds no row (a full run on 2026-11-29
        // read none for k = 21).
        let insert_cql = format!("INSERT INTO {ks}.kv (k, v) VALUES (?, ?)");
        let insert =
            Statement::new(&insert_cql).with_config(|c| c.consistency = Some(Consistency::All));
        let insert = fast.prepare(&insert).await.unwrap();
        for k in 0..30i32 {
            fast.execute_unpaged(&insert, &(k, k)).await.unwrap();
        }
        // Idempotent reads: the statements carry it.
        let idempotent = Statement::new(&cql).with_config(|c| c.idempotent = true);
        let read_fast = fast.prepare(&idempotent).await.unwrap();
        let read_plain = plain.prepare(&idempotent).await.unwrap();
        let node2: SocketAddr = "127.0.0.22:9042".parse().unwrap();

        signal_node(2, "STOP");
        let thaw = Thaw;
        // The first reads after the freeze meet the servers' transition, not the driver's:
        // a coordinator that has not yet seen node 2 stall may hand them to node 2 and wait
        // out its own retry, on a loaded 2-core machine beyond the 1.5 s timeout (a CI-like
        // run saw the first two reads after the freeze late so, on two coordinators). A few
        // reads, whatever their outcome, let the other coordinators see it first.
        for k in 0..3i32 {
            let _ = fast.execute_unpaged(&read_fast, &(k,)).await;
        }
        let before = fast.node_at(node2).unwrap().counters().requests;
        // Reads rotate over the three replicas: about a third start on node 2.
        // Reads answered later than 1 s, or not at all. Two are tolerated: on a loaded 2-core
        // machine the other replicas' JVMs stall now and then too (seen in CI runs: the
        // first read after the freeze, speculatively sent to node 3, unanswered there for
        // 1.5 s; and, in a full local run on 2026-11-28, reads 0 and 4 of the 30, both sent
        // on to node 3 and unanswered there), while the control run below shows what the
        // frozen node costs without speculative execution (13 to 17 of 30 reads time out),
        // and the late reads must stay a small part of that.
        let mut late = Vec::new();
        let mut slowest = Duration::ZERO;
        for k in 0..30i32 {
            let started = Instant::now();
            let r = fast.execute_unpaged(&read_fast, &(k,)).await;
            let took = started.elapsed();
            match r {
                Ok(r) => {
                    let rows: Vec<(i32,)> = r.typed_rows().unwrap();
                    assert_eq!(rows, vec![(k,)]);
                    if took >= Duration::from_millis(1000) {
                        late.push(format!("read {k} answered after {took:?}"));
                    } else {
                        slowest = slowest.max(took);
                    }
                }
                Err(e) => late.push(format!(
                    "read {k} failed after {took:?}: {e}; nodes {:?}",
                    fast.nodes()
                )),
            }
        }
        let tried_node2 = fast.node_at(node2).unwrap().counters().requests - before;
        // The same reads without speculative execution: those that start on node 2 time out.
        let mut timeouts = 0;
        for k in 0..30i32 {
            match plain.execute_unpaged(&read_plain, &(k,)).await {
                Ok(_) => {}
                Err(Error::Timeout { node, .. }) if node == node2 => timeouts += 1,
                Err(e) => panic!("unexpected error: {e}"),
            }
        }
        drop(thaw);
        println!(
            "speculative: 30 reads with node 2 frozen, {tried_node2} started on node 2, \
             slowest answered within 1 s {slowest:?}; without speculative execution {timeouts} \
             of 30 timed out"
        );
        assert!(tried_node2 > 0, "some reads started on the frozen node");
        assert!(
            late.len() <= 2,
            "every read but two at most answered well before the 1.5 s timeout: {late:?}"
        );
        if !late.is_empty() {
            println!("tolerated: {late:?}");
        }
        assert!(
            timeouts >= 5,
            "the control run shows the frozen node's cost: {timeouts} of 30 timed out"
        );
        assert!(
            late.len() * 3 <= timeouts,
            "speculative execution saves most of what the frozen node costs: {} late against \
             {timeouts} timeouts without it",
            late.len()
        );
        fast.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
        fast.close("done");
        plain.close("done");
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA_CLUSTER;
    a_frozen_replica_is_bypassed_after_the_speculative_delay,
);
