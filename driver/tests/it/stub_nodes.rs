//! The stub playing a cluster, as doppio reads it (moved here from the stub's own tests so
//! that the stub does not dev-depend on the driver): every node describes the same cluster
//! (its own row in `system.local`, the others in `system.peers_v2`, which doppio reads, and
//! in `system.peers`, which scylla-rust-driver reads) whichever node a driver asks, and each
//! node counts the EXECUTEs that reached it against the replicas of their token, exactly.
//! Routing by those replicas is tested in `stub_cluster.rs`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::num::{NonZeroU16, NonZeroU8};
use std::rc::Rc;
use std::sync::Arc;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::murmur3;
use doppio_driver::routing::ring::NodeIndex;
use doppio_driver::routing::topology::{NodeInfo, Replication, TopologySnapshot};
use doppio_driver::rt::Runtime;
use doppio_driver::session::load_balancing::{LoadBalancingPolicy, PolicyFactory, RoutingInfo};
use doppio_driver::session::{ClusterView, Distance};
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{Cluster, Ring, Stub, StubConfig, StubHandle};

use crate::support;

use support::on_runtime;

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
    on_runtime(runtime, "stub-nodes", move || async move {
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
        on_runtime(runtime, "stub-nodes", move || async move {
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

/// Runs `f` with a scylla-rust-driver session to `addr` (its default builder) on a
/// current-thread tokio runtime.
fn on_scylla<F, Fut>(addr: SocketAddr, f: F)
where
    F: FnOnce(scylla::client::session::Session) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let s = scylla::client::session_builder::SessionBuilder::new()
            .known_node_addr(addr)
            .build()
            .await
            .unwrap();
        f(s).await;
    });
}

support::runtime_tests!(
    every_node_describes_the_same_cluster,
    each_node_counts_requests_against_the_replicas_of_their_token,
);
