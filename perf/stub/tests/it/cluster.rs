//! The stub playing a cluster of several nodes (`StubConfig::cluster`): every node describes
//! the same cluster (its own row in `system.local`, the others in `system.peers_v2`, which
//! doppio reads, and in `system.peers`, which scylla-rust-driver reads) whichever node a
//! driver asks, and each node counts the EXECUTEs that reached it against the replicas of
//! their token, exactly. The driver routing requests by those replicas is tested with the
//! driver, in `driver/tests/it/stub_cluster.rs`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::BufRead;
use std::net::SocketAddr;
use std::num::{NonZeroU16, NonZeroU8};
use std::process::Command;
use std::rc::Rc;
use std::sync::Arc;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::murmur3;
use doppio_driver::routing::ring::NodeIndex;
use doppio_driver::routing::topology::{NodeInfo, Replication, TopologySnapshot};
use doppio_driver::session::load_balancing::{LoadBalancingPolicy, PolicyFactory, RoutingInfo};
use doppio_driver::session::{ClusterView, Distance};
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{Cluster, Ring, Stub, StubConfig, StubError, StubHandle};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{on_runtime, on_scylla, spawn_binary, StubProcess};

const KEYSPACE: &str = "ks";

fn cluster(nodes: u8, replication_factor: u8, vnodes: u16) -> Cluster {
    Cluster {
        nodes: NonZeroU8::new(nodes).unwrap(),
        replication_factor: NonZeroU8::new(replication_factor).unwrap(),
        vnodes: NonZeroU16::new(vnodes).unwrap(),
    }
}

fn start(runtime: Runtime, c: Cluster) -> StubHandle {
    Stub::start(StubConfig {
        runtime,
        log_rules: false,
        routed_keyspace: Some(KEYSPACE.into()),
        cluster: Some(c),
        ..StubConfig::default()
    })
    .unwrap()
}

/// The topology doppio reads through a control connection to `addr`.
fn topology_from(runtime: Runtime, addr: SocketAddr) -> Arc<TopologySnapshot> {
    let (tx, rx) = std::sync::mpsc::channel();
    on_runtime(runtime, move || async move {
        let s = Session::connect(SessionConfig::new(addr)).await.unwrap();
        tx.send(s.topology()).unwrap();
        s.close("done");
    });
    rx.recv().unwrap()
}

fn every_node_describes_the_same_cluster(runtime: Runtime) {
    let c = cluster(3, 2, 4);
    let stub = start(runtime, c);
    let addrs = stub.node_addrs().to_vec();
    assert_eq!(addrs.len(), 3);
    let port = addrs[0].port();
    for (i, a) in addrs.iter().enumerate() {
        assert_eq!(*a, SocketAddr::from(([127, 0, 0, 1 + i as u8], port)));
    }
    let ring = c.ring();
    let mut seen: Vec<Vec<NodeInfo>> = Vec::new();
    for &addr in &addrs {
        let t = topology_from(runtime, addr);
        assert_eq!(t.source, Some(addr));
        let found: Vec<SocketAddr> = t.nodes.iter().map(|n| n.addr).collect();
        assert_eq!(found, addrs, "asked {addr}");
        for (i, n) in t.nodes.iter().enumerate() {
            assert_eq!(n.tokens, ring.tokens_of(i as u8), "node {i} asked {addr}");
            assert_eq!(n.host_id, Some(doppio_stub::cluster::host_id(i as u8)));
            assert_eq!(
                (n.datacenter.as_str(), n.rack.as_str()),
                ("datacenter1", "rack1")
            );
        }
        assert_eq!(
            t.keyspaces.get(KEYSPACE),
            Some(&Replication::Simple { rf: 2 })
        );
        assert!(t.murmur3());
        seen.push(t.nodes.clone());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:#?}");
    let mut tokens: Vec<i64> = seen[0].iter().flat_map(|n| n.tokens.clone()).collect();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), 3 * 4, "every token owned once");
    // scylla-rust-driver reads `system.peers`: it finds the same nodes, and places tokens on
    // the same replicas as the stub's ring.
    for &contact in &addrs {
        scylla_replicas_agree(contact, &addrs, &ring);
    }
}

fn scylla_replicas_agree(contact: SocketAddr, addrs: &[SocketAddr], ring: &Ring) {
    on_scylla(contact, |s| async move {
        let state = s.get_cluster_state();
        let mut found: Vec<SocketAddr> = state
            .get_nodes_info()
            .iter()
            .map(|n| SocketAddr::new(n.address.ip(), n.address.port()))
            .collect();
        found.sort();
        assert_eq!(found, addrs, "scylla-rust-driver through {contact}");
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let token = x as i64;
            let theirs: Vec<SocketAddr> = state
                .get_token_endpoints(KEYSPACE, "t", scylla::routing::Token::new(token))
                .iter()
                .map(|(n, _)| SocketAddr::new(n.address.ip(), n.address.port()))
                .collect();
            let ours: Vec<SocketAddr> = ring
                .replicas(token)
                .iter()
                .map(|&i| addrs[usize::from(i)])
                .collect();
            assert_eq!(theirs, ours, "token {token} through {contact}");
        }
    });
}

/// Sends every request to the node at one address (and opens connections to it only),
/// whatever the statement's replicas: a client that routes nothing, so that the stub's
/// counts can be predicted exactly.
#[derive(Debug)]
struct OneNode(SocketAddr);

impl LoadBalancingPolicy for OneNode {
    fn distances(&self, topology: &TopologySnapshot) -> Vec<Distance> {
        let at = |n: &NodeInfo| {
            if n.addr == self.0 {
                Distance::Local
            } else {
                Distance::Ignored
            }
        };
        topology.nodes.iter().map(at).collect()
    }

    fn pick(&self, view: &ClusterView, _: &RoutingInfo<'_>) -> Option<NodeIndex> {
        view.local_nodes().first().copied()
    }

    fn plan(&self, view: &ClusterView, routing: &RoutingInfo<'_>, out: &mut Vec<NodeIndex>) {
        out.clear();
        out.extend(self.pick(view, routing));
    }
}

fn each_node_counts_requests_against_the_replicas_of_their_token(runtime: Runtime) {
    let c = cluster(4, 2, 3);
    let stub = start(runtime, c);
    let addrs = stub.node_addrs().to_vec();
    let ring = c.ring();
    // Each node gets the same keys, plain and conditional; some keys are its own.
    let keys: Vec<Vec<u8>> = (0..300u64)
        .map(|k| k.wrapping_mul(0x2545_f491_4f6c_dd1d).to_be_bytes().to_vec())
        .collect();
    for &addr in &addrs {
        let keys = keys.clone();
        on_runtime(runtime, move || async move {
            let mut config = SessionConfig::new(addr);
            config.consistency = Consistency::One;
            config.load_balancing = PolicyFactory(Arc::new(move || {
                Rc::new(OneNode(addr)) as Rc<dyn LoadBalancingPolicy>
            }));
            let s = Session::connect(config).await.unwrap();
            let plain = s
                .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
                .await
                .unwrap();
            let lwt = s
                .prepare("UPDATE ks.t SET v = ? WHERE k = ? IF EXISTS")
                .await
                .unwrap();
            for key in &keys {
                s.execute_unpaged(&plain, &(key.clone(), vec![1u8]))
                    .await
                    .unwrap();
                s.execute_unpaged(&lwt, &(key.clone(), vec![1u8]))
                    .await
                    .unwrap();
            }
            // Not counted: no bound key, or a statement outside any EXECUTE.
            let local = s
                .prepare("SELECT key FROM system.local WHERE key = 'local'")
                .await
                .unwrap();
            s.execute_unpaged(&local, &()).await.unwrap();
            s.query_unpaged("INSERT INTO ks.t (k, v) VALUES (0x01, 0x01)", &())
                .await
                .unwrap();
            s.close("done");
        });
    }
    let counts = stub.node_counts();
    assert_eq!(counts.len(), 4);
    for (i, n) in counts.iter().enumerate() {
        let node = i as u8;
        let replicas = |k: &[u8]| ring.replicas(murmur3::token(k));
        let wrong = keys.iter().filter(|k| !replicas(k).contains(&node)).count() as u64;
        let not_primary = keys.iter().filter(|k| replicas(k)[0] != node).count() as u64;
        assert_eq!(n.addr, addrs[i]);
        assert_eq!(n.requests, 2 * keys.len() as u64, "{n:?}");
        assert_eq!(n.lwt_requests, keys.len() as u64, "{n:?}");
        assert_eq!(n.wrong_replica, 2 * wrong, "{n:?}");
        assert_eq!(n.not_primary, 2 * not_primary, "{n:?}");
        assert_eq!(n.lwt_not_primary, not_primary, "{n:?}");
        assert!(0 < wrong && wrong < keys.len() as u64, "{n:?}");
        assert!(n.connections >= 1, "{n:?}");
        assert!(n.shards.is_none());
    }
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
    on_runtime(runtime, move || async move {
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        let s = Session::connect(config).await.unwrap();
        assert_eq!(s.topology().nodes.len(), 3);
        // Until the pools of the other nodes are open, requests go to the nodes that have
        // one (a bounded wait for the background connects, not a timing assertion).
        let view = s.view();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while (0..3).any(|i| view.node(i).is_none_or(|n| n.open_connections() == 0)) {
            assert!(
                std::time::Instant::now() < deadline,
                "connections to every node"
            );
            doppio_driver::rt::sleep(std::time::Duration::from_millis(5)).await;
        }
        let p = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        for k in 0..100u64 {
            s.execute_unpaged(&p, &(k.to_be_bytes().to_vec(), vec![0u8]))
                .await
                .unwrap();
        }
        s.close("done");
    });
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success());
    let err = String::from_utf8_lossy(&done.stderr);
    for i in 1..=3 {
        let says = format!("node 127.0.0.{i}:{port}: ");
        let line = err
            .lines()
            .find(|l| l.contains(&says))
            .unwrap_or_else(|| panic!("node {i}'s counts: {err}"));
        assert!(line.contains(", 0 at a node not their replica"), "{line}");
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
    every_node_describes_the_same_cluster,
    each_node_counts_requests_against_the_replicas_of_their_token,
    a_taken_node_address_is_a_typed_error,
    the_binary_plays_a_cluster_and_prints_each_node_s_counts,
);
