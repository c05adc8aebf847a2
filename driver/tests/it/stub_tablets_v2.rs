//! ScyllaDB's tablets routing v2 against the stub (3 nodes of 4 shards, RF 3, [`TABLETS`]
//! tablets): the driver turns v2 on when offered and ends every EXECUTE with its tablet's
//! version block, so a tablet whose replicas change is learned from the node's answers even
//! while every request still reaches one of its replicas.
//!
//! The stub's migration here keeps every tablet's replicas, node and shard, and changes
//! their order only (`TabletMigration::Reorder`: a new primary): a request of the old order
//! still reaches a replica on its shard, so under v1 nothing is ever misrouted and the
//! driver keeps the old order; under v2 the tablet's version changed, and the block of some
//! request among the next sixteen of the tablet probes a changed nibble, which brings the
//! new order back. What must hold, per tablet: under v2 the new order known within 16
//! requests of it after the migration, under v1 not after 16; no request at a wrong node or
//! shard after the warm-up; in steady state (warm, before the migration) no payload at all
//! per 1,000 requests on either version.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::num::{NonZeroU16, NonZeroU32};
use std::sync::mpsc;
use std::time::Duration;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{PreparedStatement, Session, SessionConfig};
use doppio_stub::tablets::TabletLayout;
use doppio_stub::{NodeCounts, StubConfig, TabletMigration, Tablets};

use crate::support;

use support::{next_key, on_runtime, scylla_cluster, wait_for_connections, StubNode};

const NODES: u8 = 3;
const SHARDS: u16 = 4;
const TABLETS: u32 = 24;
const MIGRATE_AFTER: Duration = Duration::from_secs(4);
/// Requests of one tablet within which v2 notices any change of its version.
const PROBES: usize = 16;
/// Requests of the steady-state phase.
const STEADY: usize = 1000;

fn tablets() -> Tablets {
    Tablets {
        count: NonZeroU32::new(TABLETS).unwrap(),
        migrate_after: Some(MIGRATE_AFTER),
        migration: TabletMigration::Reorder,
    }
}

fn layout() -> TabletLayout {
    TabletLayout {
        tablets: tablets(),
        nodes: NODES,
        replication: 3,
        shards: NonZeroU16::new(SHARDS).unwrap(),
    }
}

/// (wrong replica, wrong shard) summed over the stub's nodes.
fn misplaced(counts: &[NodeCounts]) -> (u64, u64) {
    counts.iter().fold((0, 0), |(r, s), n| {
        (
            r + n.wrong_replica,
            s + n.shards.as_ref().map_or(0, |c| c.wrong_shard),
        )
    })
}

/// The replicas of tablet `k` in `epoch` as the driver reports them: node addresses, in
/// order.
fn order(addrs: &[SocketAddr], k: u32, epoch: u32) -> Vec<SocketAddr> {
    let l = layout();
    (0..3)
        .map(|j| addrs[usize::from(l.replica(k, j, epoch).0)])
        .collect()
}

/// What the client reports: payloads in the steady phase, then per tablet the request
/// (1-based) after which the new order was known, if within [`PROBES`].
#[derive(Debug)]
struct Report {
    steady_payloads: u64,
    warm_before_migration: bool,
    learned_after: Vec<Option<usize>>,
}

fn a_v2_driver_learns_reordered_replicas_within_16_requests_of_a_tablet(runtime: Runtime) {
    let report = reorder(runtime, true);
    // Every tablet's new order known within 16 requests of it (the block of each nibble
    // once), though none of them was misrouted.
    assert!(
        report.learned_after.iter().all(|l| l.is_some()),
        "{:?}",
        report.learned_after
    );
}

fn a_v1_driver_does_not_notice_reordered_replicas(runtime: Runtime) {
    let report = reorder(runtime, false);
    assert!(
        report.learned_after.iter().all(|l| l.is_none()),
        "{:?}",
        report.learned_after
    );
}

fn reorder(runtime: Runtime, v2: bool) -> Report {
    let mut config = StubConfig {
        tablets: Some(tablets()),
        ..scylla_cluster(runtime, NODES, SHARDS, 3)
    };
    if let Some(scylla) = config.scylla.as_mut() {
        scylla.extensions.tablets_routing_v2 = v2;
    }
    let stub = StubNode::start(runtime, config);
    let addr = stub.addr();
    let addrs: Vec<SocketAddr> = stub.node_counts().iter().map(|n| n.addr).collect();
    let (said, heard) = mpsc::channel::<()>();
    let (go_on, wait_go_on) = mpsc::channel::<()>();
    let body = stub.beside(move || async move {
        let started = doppio_driver::rt::now();
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        let s = Session::connect(config).await.unwrap();
        wait_for_connections(&s, usize::from(NODES), usize::from(SHARDS)).await;
        let conn = s.node_at(s.node()).unwrap().connection().unwrap();
        assert_eq!(conn.extensions().tablets_routing_v2, v2);
        let p = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let keys = one_key_per_tablet(&s, &p);
        // Warm-up: each tablet's replicas learned (bounded).
        for (k, key) in keys.iter().enumerate() {
            let k = k as u32;
            let mut n = 0;
            while s.replicas_of(&p, &(key.clone(), vec![1u8])) != order(&addrs, k, 0) {
                s.execute_unpaged(&p, &(key.clone(), vec![1u8]))
                    .await
                    .unwrap();
                n += 1;
                assert!(n < 64, "tablet {k} not learned warming up");
            }
        }
        // Steady state: requests over every tablet, no payload expected.
        let before = s.stats().tablet_payloads;
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..STEADY {
            s.execute_unpaged(&p, &(next_key(&mut x), vec![1u8]))
                .await
                .unwrap();
        }
        let steady_payloads = s.stats().tablet_payloads - before;
        let warm_before_migration = doppio_driver::rt::now() - started < MIGRATE_AFTER;
        // The migration (in the stub's clock, which started before `started`).
        let wait = MIGRATE_AFTER.saturating_sub(doppio_driver::rt::now() - started);
        doppio_driver::rt::sleep(wait + Duration::from_millis(50)).await;
        // The test reads the stub's counts before the relearning.
        said.send(()).unwrap();
        wait_go_on.recv().unwrap();
        let mut learned_after = Vec::new();
        for (k, key) in keys.iter().enumerate() {
            let new = order(&addrs, k as u32, 1);
            let mut learned = None;
            for i in 1..=PROBES {
                s.execute_unpaged(&p, &(key.clone(), vec![1u8]))
                    .await
                    .unwrap();
                if s.replicas_of(&p, &(key.clone(), vec![1u8])) == new {
                    learned = Some(i);
                    break;
                }
            }
            learned_after.push(learned);
        }
        s.close("done");
        Report {
            steady_payloads,
            warm_before_migration,
            learned_after,
        }
    });
    std::thread::scope(|scope| {
        let client = scope.spawn(move || on_runtime(runtime, "stub-tablets-v2", body));
        if heard.recv().is_err() {
            std::panic::resume_unwind(client.join().unwrap_err());
        }
        let before = misplaced(&stub.node_counts());
        go_on.send(()).unwrap();
        let report = client.join().unwrap();
        let after = misplaced(&stub.node_counts());
        let version = if v2 { "v2" } else { "v1" };
        eprintln!(
            "tablets routing {version}: {} payloads per {STEADY} steady requests; after the \
             reorder, new order known after {:?} requests of each tablet",
            report.steady_payloads, report.learned_after
        );
        // After the warm-up every request reached a replica on its shard.
        assert_eq!(before, after, "no misroute after the warm-up");
        if report.warm_before_migration {
            assert_eq!(report.steady_payloads, 0, "steady state: no payload");
        }
        stub.stop();
        report
    })
}

/// One key of each tablet, in tablet order (random keys until every tablet has one).
fn one_key_per_tablet(s: &Session, p: &PreparedStatement) -> Vec<Vec<u8>> {
    let l = layout();
    let mut keys: Vec<Option<Vec<u8>>> = vec![None; TABLETS as usize];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while keys.iter().any(Option::is_none) {
        let key = next_key(&mut x);
        let token = s.token_of(p, &(key.clone(), vec![1u8])).unwrap();
        let k = l.tablet_of(token) as usize;
        keys[k].get_or_insert(key);
    }
    keys.into_iter().map(Option::unwrap).collect()
}

support::runtime_tests!(;
    and_sim:
    a_v2_driver_learns_reordered_replicas_within_16_requests_of_a_tablet,
    a_v1_driver_does_not_notice_reordered_replicas,
);
