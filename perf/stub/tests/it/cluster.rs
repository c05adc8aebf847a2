//! The stub playing a cluster of several nodes (`StubConfig::cluster`): a taken node address
//! is a typed error, the binary plays a cluster and prints each node's counts against the
//! replicas of the keys a raw client (doppio-proto's parts only) sent (over data centers
//! and racks too, `--datacenters`), and scylla-rust-driver
//! meets the emulated ScyllaDB nodes, shards and tablets. What doppio reads of the cluster,
//! and where it sends requests, is tested with the driver (`driver/tests/it/stub_nodes.rs`,
//! `stub_cluster.rs`, `stub_tablets.rs`).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::BufRead;
use std::net::SocketAddr;
use std::num::{NonZeroU16, NonZeroU8};
use std::process::Command;

use doppio_proto::murmur3;
use doppio_proto::response::Response;
use doppio_rt::Runtime;
use doppio_stub::{Cluster, Stub, StubConfig, StubError};

use crate::support;

use support::{on_scylla, spawn_binary, terminate, RawClient, StubProcess};

const KEYSPACE: &str = "ks";

fn cluster(nodes: u8, replication_factor: u8, vnodes: u16) -> Cluster {
    Cluster {
        nodes: NonZeroU8::new(nodes).unwrap(),
        replication_factor: NonZeroU8::new(replication_factor).unwrap(),
        vnodes: NonZeroU16::new(vnodes).unwrap(),
    }
}

/// A node taken down closes its connections (within the watcher's tick) and closes new ones
/// as soon as they are accepted, until it is brought up; only a cluster's nodes can be.
fn a_node_taken_down_closes_its_connections_until_it_is_brought_up(runtime: Runtime) {
    use std::io::Read;
    let stub = Stub::start(StubConfig {
        runtime,
        cluster: Some(cluster(3, 1, 1)),
        ..StubConfig::default()
    })
    .unwrap();
    let node1 = stub.node_addrs()[1];
    let control = stub.control();
    let mut open = std::net::TcpStream::connect(node1).unwrap();
    open.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    control.take_down(1).unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(
        open.read(&mut byte).unwrap(),
        0,
        "its connection was closed"
    );
    let mut late = std::net::TcpStream::connect(node1).unwrap();
    late.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    assert_eq!(
        late.read(&mut byte).unwrap(),
        0,
        "a new one is closed at once"
    );
    control.bring_up(1).unwrap();
    let mut c = RawClient::ready(node1);
    assert_eq!(
        c.query_rows("SELECT v FROM ks.t"),
        1,
        "up again, it answers"
    );
    for bad in [3, 200] {
        let e = control.take_down(bad).unwrap_err();
        assert!(matches!(e, StubError::NoSuchNode { nodes: 3, .. }), "{e}");
    }
    drop(stub);
    let single = Stub::start(StubConfig {
        runtime,
        ..StubConfig::default()
    })
    .unwrap();
    let e = single.control().take_down(0).unwrap_err();
    assert!(e.to_string().contains("a cluster of two or more"), "{e}");
}

fn a_taken_node_address_is_a_typed_error(runtime: Runtime) {
    // Node 1's address with node 0's port free: a plain listener holds 127.0.0.2:p.
    let (taken, port) = loop {
        let zero = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = zero.local_addr().unwrap().port();
        drop(zero);
        if let Ok(l) = std::net::TcpListener::bind(("127.0.0.2", port)) {
            break (l, port);
        }
    };
    let e = Stub::start(StubConfig {
        runtime,
        log_rules: false,
        listen: SocketAddr::from(([127, 0, 0, 1], port)),
        cluster: Some(cluster(3, 3, 2)),
        ..StubConfig::default()
    })
    .unwrap_err();
    match &e {
        StubError::NodeBind { node, addr, .. } => {
            assert_eq!(
                (*node, *addr),
                (1, SocketAddr::from(([127, 0, 0, 2], port)))
            );
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("cannot listen"), "{e}");
    drop(taken);
    // An IPv6 address has no consecutive neighbours here.
    let e = Stub::start(StubConfig {
        runtime,
        listen: "[::1]:0".parse().unwrap(),
        cluster: Some(cluster(2, 1, 1)),
        ..StubConfig::default()
    })
    .unwrap_err();
    assert!(matches!(e, StubError::Cluster(_)), "{e}");
}

fn the_binary_plays_a_cluster_and_prints_each_node_s_counts(runtime: Runtime) {
    let StubProcess {
        child,
        mut out,
        addr,
    } = spawn_binary(
        runtime,
        &[
            "--nodes",
            "3",
            "--replication-factor",
            "2",
            "--routed-keyspace",
            KEYSPACE,
        ],
    );
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port = addr.port();
    assert_eq!(
        line.trim(),
        format!(
            "cluster of 3 nodes on 127.0.0.1:{port}, 127.0.0.2:{port}, 127.0.0.3:{port} \
             (replication factor 2)"
        )
    );
    // Each node gets the keys it is a replica of, and one key it is not.
    let ring = cluster(3, 2, doppio_stub::cluster::DEFAULT_VNODES).ring();
    for i in 0..3u8 {
        let node = SocketAddr::from(([127, 0, 0, 1 + i], port));
        let mut c = RawClient::ready(node);
        let p = c.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)");
        let replica = |key: &[u8; 8]| ring.replicas(murmur3::token(key)).contains(&i);
        let keys = (0..100u64).map(u64::to_be_bytes);
        let (own, other): (Vec<[u8; 8]>, Vec<[u8; 8]>) = keys.partition(replica);
        assert!(!own.is_empty() && !other.is_empty());
        for key in own.iter().chain(&other[..1]) {
            assert!(matches!(c.execute(&p, &[key, &[0]]), Response::Result(_)));
        }
    }
    let err = terminate(child);
    for i in 1..=3 {
        let says = format!("node 127.0.0.{i}:{port}: ");
        let line = err
            .lines()
            .find(|l| l.contains(&says))
            .unwrap_or_else(|| panic!("node {i}'s counts: {err}"));
        assert!(line.contains(", 1 at a node not their replica"), "{line}");
    }
    // Zero nodes: one line saying so, exit code 2.
    let bad = Command::new(env!("CARGO_BIN_EXE_doppio-stub"))
        .args(["--listen", "127.0.0.1:0", "--no-pin", "--nodes", "0"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(
        err.trim(),
        "doppio-stub: --nodes 0: a cluster has at least one node"
    );
}

/// The binary with `--datacenters`: it prints the layout, checks each EXECUTE against the
/// replicas NetworkTopologyStrategy places (the same as `Ring::with_datacenters`), and on
/// exit names each node's data center and rack and sums the requests per data center; a
/// replication factor above a data center's nodes is refused in one line.
fn the_binary_plays_data_centers_and_prints_their_counts(runtime: Runtime) {
    let StubProcess {
        child,
        mut out,
        addr,
    } = spawn_binary(
        runtime,
        &[
            "--datacenters",
            "dc1:2,dc2:3",
            "--racks",
            "2",
            "--replication-factor",
            "1",
            "--routed-keyspace",
            KEYSPACE,
        ],
    );
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port = addr.port();
    let nodes: Vec<String> = (1..=5).map(|i| format!("127.0.0.{i}:{port}")).collect();
    assert_eq!(
        line.trim(),
        format!(
            "cluster of 5 nodes on {} (NetworkTopologyStrategy: dc1 2 nodes rf 1, dc2 3 nodes \
             rf 1; 2 racks per data center)",
            nodes.join(", ")
        )
    );
    let layout =
        doppio_stub::Datacenters::parse("dc1:2,dc2:3", NonZeroU8::new(2).unwrap(), 1).unwrap();
    let ring = doppio_stub::Ring::with_datacenters(&layout, doppio_stub::cluster::DEFAULT_VNODES);
    // Node 0 (dc1, 127.0.0.1) gets 20 keys it is a replica of and 2 it is not; node 3 (dc2,
    // 127.0.0.4) 5 and 1.
    for (i, own_n, other_n) in [(0u8, 20, 2), (3, 5, 1)] {
        let node = SocketAddr::from(([127, 0, 0, 1 + i], port));
        let mut c = RawClient::ready(node);
        let p = c.prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)");
        let replica = |key: &[u8; 8]| ring.replicas(murmur3::token(key)).contains(&i);
        let keys = (0..200u64).map(u64::to_be_bytes);
        let (own, other): (Vec<[u8; 8]>, Vec<[u8; 8]>) = keys.partition(replica);
        for key in own[..own_n].iter().chain(&other[..other_n]) {
            assert!(matches!(c.execute(&p, &[key, &[0]]), Response::Result(_)));
        }
    }
    let err = terminate(child);
    for (node, place) in [
        (1, "in data center dc1, rack rack1"),
        (2, "in data center dc1, rack rack2"),
        (3, "in data center dc2, rack rack1"),
        (4, "in data center dc2, rack rack2"),
        (5, "in data center dc2, rack rack1"),
        (6, ""),
    ] {
        let says = format!("node 127.0.0.{node}:{port}: ");
        let line = err.lines().find(|l| l.contains(&says));
        match line {
            Some(l) => assert!(!place.is_empty() && l.ends_with(place), "{l}"),
            None => assert!(place.is_empty(), "node {node}'s counts: {err}"),
        }
    }
    for (dc, requests, wrong) in [("dc1", 22, 2), ("dc2", 6, 1)] {
        let says = format!(
            "doppio-stub: data center {dc}: {requests} requests, {wrong} at a node not their \
             replica"
        );
        assert!(err.lines().any(|l| l == says), "{says}: {err}");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_doppio-stub"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--no-pin",
            "--datacenters",
            "dc1:3,dc2:2",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr).trim(),
        "doppio-stub: --datacenters dc1:3,dc2:2: replication factor 3 in data center dc2, \
         which has only 2 nodes"
    );
}

/// scylla-rust-driver (its default session: token- and shard-aware) against 3 emulated
/// ScyllaDB nodes of 4 shards, RF 2: where its plain and conditional INSERTs with random
/// keys land. The stub runs on `runtime`; the client on tokio.
fn where_scylla_rust_driver_sends_requests_over_the_cluster(runtime: Runtime) {
    let stub = Stub::start(StubConfig {
        runtime,
        log_rules: false,
        routed_keyspace: Some(KEYSPACE.into()),
        scylla: Some(doppio_stub::ScyllaShards::new(
            NonZeroU16::new(4).unwrap(),
            [127, 0, 0, 1].into(),
        )),
        cluster: Some(cluster(3, 2, 8)),
        ..StubConfig::default()
    })
    .unwrap();
    const PLAIN: u64 = 2000;
    const LWT: u64 = 500;
    // Borrowed by the client's future below, read again after it.
    let stub = &stub;
    on_scylla(stub.addr(), |s| async move {
        // Its pools open in the background: wait (bounded) until every shard of every
        // node has a connection, as ScyllaDB would have them by then.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !stub.node_counts().iter().all(|n| {
            n.shards
                .as_ref()
                .is_some_and(|c| c.connections.iter().all(|&k| k > 0))
        }) {
            assert!(
                std::time::Instant::now() < deadline,
                "{:#?}",
                stub.node_counts()
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let plain = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let cas = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?) IF NOT EXISTS")
            .await
            .unwrap();
        assert!(cas.is_confirmed_lwt());
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut key = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_be_bytes()[..(1 + (x % 8) as usize)].to_vec()
        };
        for _ in 0..PLAIN {
            s.execute_unpaged(&plain, (key(), vec![1u8])).await.unwrap();
        }
        for _ in 0..LWT {
            s.execute_unpaged(&cas, (key(), vec![1u8])).await.unwrap();
        }
    });
    let counts = stub.node_counts();
    let sum = |f: fn(&doppio_stub::NodeCounts) -> u64| counts.iter().map(f).sum::<u64>();
    println!(
        "scylla-rust-driver over 3 nodes x 4 shards, RF 2: {} requests, {} wrong_replica, {} \
         wrong_shard, {} not at the primary; {} LWTs, {} not at the primary",
        sum(|n| n.requests),
        sum(|n| n.wrong_replica),
        sum(|n| n.shards.as_ref().map_or(0, |c| c.wrong_shard)),
        sum(|n| n.not_primary),
        sum(|n| n.lwt_requests),
        sum(|n| n.lwt_not_primary),
    );
    assert_eq!(sum(|n| n.requests), PLAIN + LWT, "{counts:#?}");
    assert_eq!(sum(|n| n.lwt_requests), LWT, "{counts:#?}");
    // Token-aware, shard-aware, and LWTs to their primary replica, as doppio.
    assert_eq!(sum(|n| n.wrong_replica), 0, "{counts:#?}");
    assert_eq!(
        sum(|n| n.shards.as_ref().map_or(0, |c| c.wrong_shard)),
        0,
        "{counts:#?}"
    );
    assert_eq!(sum(|n| n.lwt_not_primary), 0, "{counts:#?}");
    assert!(counts.iter().all(|n| n.requests > 0), "{counts:#?}");
}

/// scylla-rust-driver against the same tablets doppio's `driver/tests/it/stub_tablets.rs`
/// meets (3 nodes x 4 shards, RF 3, 24 tablets): the misroutes (answers carrying their
/// tablet's routing) of two phases of random-key INSERTs, the first warming up, recorded
/// beside doppio's (at most one per tablet while warming up, none once warm).
fn scylla_rust_driver_s_misroutes_on_tablets(runtime: Runtime) {
    let stub = Stub::start(StubConfig {
        runtime,
        log_rules: false,
        routed_keyspace: Some(KEYSPACE.into()),
        scylla: Some(doppio_stub::ScyllaShards::new(
            NonZeroU16::new(4).unwrap(),
            [127, 0, 0, 1].into(),
        )),
        cluster: Some(cluster(3, 3, 8)),
        tablets: Some(doppio_stub::Tablets {
            count: std::num::NonZeroU32::new(24).unwrap(),
            migrate_after: None,
            migration: doppio_stub::TabletMigration::Move,
        }),
        ..StubConfig::default()
    })
    .unwrap();
    const PHASE: u64 = 1500;
    let stub = &stub;
    let payloads = || {
        stub.node_counts()
            .iter()
            .map(|n| n.tablet_payloads)
            .sum::<u64>()
    };
    let phases = std::cell::RefCell::new(Vec::new());
    let out = &phases;
    on_scylla(stub.addr(), |s| async move {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !stub.node_counts().iter().all(|n| {
            n.shards
                .as_ref()
                .is_some_and(|c| c.connections.iter().all(|&k| k > 0))
        }) {
            assert!(std::time::Instant::now() < deadline);
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let plain = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut key = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_be_bytes()[..(1 + (x % 8) as usize)].to_vec()
        };
        for _ in 0..2 {
            let before = payloads();
            for _ in 0..PHASE {
                s.execute_unpaged(&plain, (key(), vec![1u8])).await.unwrap();
            }
            out.borrow_mut().push(payloads() - before);
        }
    });
    let phases = phases.into_inner();
    let counts = stub.node_counts();
    println!(
        "scylla-rust-driver on 24 tablets over 3 nodes x 4 shards, RF 3: misroutes per \
         {PHASE} requests: warming up {}, warm {}",
        phases[0], phases[1]
    );
    assert_eq!(
        counts.iter().map(|n| n.requests).sum::<u64>(),
        2 * PHASE,
        "{counts:#?}"
    );
    // It turns tablets routing on and learns from the payloads: warm, it misroutes no more
    // than while warming up.
    assert!(phases[0] > 0, "the stub sent payloads: {counts:#?}");
    assert!(phases[1] <= phases[0], "{phases:?}");
}

support::runtime_tests!(
    scylla_rust_driver_s_misroutes_on_tablets,
    where_scylla_rust_driver_sends_requests_over_the_cluster,
    a_taken_node_address_is_a_typed_error,
    a_node_taken_down_closes_its_connections_until_it_is_brought_up,
    the_binary_plays_a_cluster_and_prints_each_node_s_counts,
    the_binary_plays_data_centers_and_prints_their_counts,
);
