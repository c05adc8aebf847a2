//! ScyllaDB's tablets (no ScyllaDB runs here: the stub emulates them from the protocol
//! extension's description): the stub plays three nodes of four shards each, replication
//! factor 3, its table split into [`TABLETS`] tablets spread over every node and shard, and
//! moves every tablet once, [`MIGRATE_AFTER`] after it started. A request that reaches a
//! node or shard holding no replica of its tablet is served, counted, and its answer
//! carries the tablet's routing; the driver (one shard) learns it and sends that tablet's
//! later requests to its replicas, each on its shard.
//!
//! What must hold: the keyspace is read as one in tablets (`system_schema.scylla_keyspaces`),
//! so it has no ring replicas; while it warms up, at most one misroute per tablet; once warm, none (and
//! no request at a wrong node or shard); after the migration, at most one more per moved
//! tablet, then none again; lightweight transactions at their tablet's primary replica; the
//! session's count of payloads equal to the stub's; the same on lz4 connections.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::BTreeSet;
use std::num::NonZeroU32;
use std::time::Duration;

use doppio_driver::proto::compression::Compression;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{PreparedStatement, Session, SessionConfig};
use doppio_stub::{NodeCounts, StubConfig, Tablets};

use crate::support;

use support::{next_key, on_runtime, scylla_cluster, wait_for_connections, StubNode};

const NODES: u8 = 3;
const SHARDS: u16 = 4;
const TABLETS: u32 = 24;
const MIGRATE_AFTER: Duration = Duration::from_secs(3);
/// Requests per phase: enough that every tablet is reached (random keys, 24 tablets).
const PHASE: u64 = 1500;

fn stub(runtime: Runtime) -> StubNode {
    StubNode::start(
        runtime,
        StubConfig {
            tablets: Some(Tablets {
                count: NonZeroU32::new(TABLETS).unwrap(),
                migrate_after: Some(MIGRATE_AFTER),
                migration: doppio_stub::TabletMigration::Move,
            }),
            ..scylla_cluster(runtime, NODES, SHARDS, 3)
        },
    )
}

/// The stub's counts summed over its nodes: (requests, tablet payloads, wrong replica,
/// wrong shard, LWT requests, LWT not at the primary).
fn totals(counts: &[NodeCounts]) -> [u64; 6] {
    let mut t = [0; 6];
    for n in counts {
        t[0] += n.requests;
        t[1] += n.tablet_payloads;
        t[2] += n.wrong_replica;
        t[3] += n.shards.as_ref().map_or(0, |s| s.wrong_shard);
        t[4] += n.lwt_requests;
        t[5] += n.lwt_not_primary;
    }
    t
}

fn delta(after: [u64; 6], before: [u64; 6]) -> [u64; 6] {
    let mut d = [0; 6];
    for i in 0..6 {
        d[i] = after[i] - before[i];
    }
    d
}

async fn phase(s: &Session, plain: &PreparedStatement, cas: &PreparedStatement, x: &mut u64) {
    for i in 0..PHASE {
        let st = if i % 5 == 0 { cas } else { plain };
        s.execute_unpaged(st, &(next_key(x), vec![1u8]))
            .await
            .unwrap();
    }
}

fn tablets_are_learned_from_misroutes_and_relearned_after_a_migration(runtime: Runtime) {
    learn_and_relearn(runtime, false);
}

/// The same on lz4 connections: the payload travels inside the compressed body.
fn the_same_on_lz4_connections(runtime: Runtime) {
    learn_and_relearn(runtime, true);
}

fn learn_and_relearn(runtime: Runtime, compression: bool) {
    // Before the stub's clock started (on the simulated runtime, whose virtual clock starts
    // from the real one when the client's executor starts, before the stub's too).
    let before_start = std::time::Instant::now();
    let stub = stub(runtime);
    let addr = stub.addr();
    // The client runs a phase, then says what it saw and when (since `before_start`, on
    // its executor's clock), and waits for the test to read the stub's counts.
    let (said, heard) = std::sync::mpsc::channel::<(u64, usize, Duration)>();
    let (go_on, wait_go_on) = std::sync::mpsc::channel::<()>();
    let body = stub.beside(move || async move {
        // No earlier than the stub's clock started (on its own threads before this
        // executor, or served on this one just before).
        let started = doppio_driver::rt::now();
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        config.handshake.compression = compression;
        let s = Session::connect(config).await.unwrap();
        wait_for_connections(&s, usize::from(NODES), usize::from(SHARDS)).await;
        let conn = s.node_at(s.node()).unwrap().connection().unwrap();
        // ScyllaDB speaks v4: lz4 compresses the whole body, payload included.
        let lz4 = compression.then_some(Compression::Lz4);
        assert_eq!(conn.compression(), lz4, "lz4 as asked");
        // The keyspace is in tablets (`system_schema.scylla_keyspaces`): no ring
        // replicas, a key of an unknown tablet goes to any node.
        assert_eq!(
            s.topology().tablet_keyspaces,
            Some(BTreeSet::from(["ks".to_owned()]))
        );
        assert!(s.view().replica_map("ks").is_none());
        let plain = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let cas = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?) IF NOT EXISTS")
            .await
            .unwrap();
        assert!(cas.is_lwt());
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let probe = (next_key(&mut 7), vec![1u8]);
        assert!(
            s.replicas_of(&plain, &probe).is_empty(),
            "no tablet known yet, and no ring replicas in a keyspace in tablets"
        );
        // Warm-up, warm, (the test waits for the migration), relearn, warm again.
        for k in 0..4 {
            phase(&s, &plain, &cas, &mut x).await;
            let at = doppio_driver::rt::now().saturating_duration_since(before_start);
            said.send((s.stats().tablet_payloads, plain.known_tablets(), at))
                .unwrap();
            if wait_go_on.recv().is_err() {
                break;
            }
            if k == 1 {
                // Until the migration, in the stub's clock (which started before
                // `started`).
                let wait = MIGRATE_AFTER.saturating_sub(doppio_driver::rt::now() - started);
                doppio_driver::rt::sleep(wait + Duration::from_millis(50)).await;
            }
        }
        assert_eq!(
            cas.known_tablets(),
            plain.known_tablets(),
            "one table of tablets per table, shared by its statements"
        );
        assert_eq!(s.stats().tablet_payloads_unreadable, 0);
        assert_eq!(
            s.replicas_of(&plain, &probe).len(),
            3,
            "the replicas of the probe's tablet, once it is known"
        );
        s.close("done");
    });
    std::thread::scope(|scope| {
        let client = scope.spawn(move || on_runtime(runtime, "stub-tablets", body));
        let mut seen = Vec::new();
        let mut last = [0; 6];
        for k in 0..4 {
            let Ok((payloads, known, at)) = heard.recv() else {
                std::panic::resume_unwind(client.join().unwrap_err());
            };
            let now = totals(&stub.node_counts());
            let d = delta(now, last);
            last = now;
            // The session counted every payload the stub sent.
            assert_eq!(payloads, now[1], "phase {k}: {:#?}", stub.node_counts());
            seen.push((d, known, at));
            let _ = go_on.send(());
        }
        client.join().unwrap();
        let counts = stub.node_counts();
        let label = format!("per phase (delta, tablets known, at): {seen:#?}\n{counts:#?}");
        // [requests, payloads, wrong replica, wrong shard, LWTs, LWTs not at the primary]
        for (k, (d, known, at)) in seen.iter().enumerate() {
            eprintln!("phase {k}: {d:?}, {known} tablets known, {at:.1?} after the start");
        }
        for (d, known, _) in &seen {
            assert_eq!(d[0], PHASE, "every request counted: {label}");
            assert_eq!(d[4], PHASE / 5, "{label}");
            assert!(*known <= TABLETS as usize, "{label}");
        }
        let (warming, warm, relearn, warm_again) = (seen[0], seen[1], seen[2], seen[3]);
        // Warm-up: at most one misroute per tablet, and every tablet learned.
        assert!(warming.0[1] > 0, "the ring misroutes some: {label}");
        assert!(warming.0[1] <= u64::from(TABLETS), "{label}");
        assert_eq!(warming.1, TABLETS as usize, "{label}");
        // Warm (before the migration, unless this machine was too slow to finish the
        // phase in time): no misroute at all, LWTs at their primary.
        if warm.2 < MIGRATE_AFTER {
            assert_eq!(warm.0[1..4], [0, 0, 0], "{label}");
            assert_eq!(warm.0[5], 0, "{label}");
        }
        // After the migration every tablet moved: relearned at most once each.
        assert!(relearn.0[1] > 0, "{label}");
        assert!(
            warm.0[1] + relearn.0[1] <= u64::from(TABLETS),
            "at most one misroute per moved tablet: {label}"
        );
        // Then none again.
        assert_eq!(warm_again.0[1..4], [0, 0, 0], "{label}");
        assert_eq!(
            warm_again.0[5], 0,
            "LWTs at their tablet's primary: {label}"
        );
    });
    stub.stop();
}

support::runtime_tests!(;
    and_sim:
    tablets_are_learned_from_misroutes_and_relearned_after_a_migration,
    the_same_on_lz4_connections,
);
