//! Token- and shard-aware routing over a cluster of emulated ScyllaDB nodes: the stub plays
//! three nodes of four shards each (`doppio_stub::StubConfig::cluster` with
//! `ScyllaShards`; no ScyllaDB runs here) and counts, per node, the requests that reached a
//! node that is no replica of their token, a shard that does not own it, or (for
//! lightweight transactions) a replica other than the primary one. The driver, given one
//! contact point, discovers the other nodes, opens a connection to every shard of each, and
//! sends every request with a bound partition key to one of its replicas (spread over
//! them), on the shard that owns it; a prepared statement the node marks as a lightweight
//! transaction goes to the primary replica.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::num::{NonZeroU16, NonZeroU8};

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::routing::ring::NodeIndex;
use doppio_driver::routing::topology::TopologySnapshot;
use doppio_driver::rt::Runtime;
use doppio_driver::session::load_balancing::{LoadBalancingPolicy, PolicyFactory, RoutingInfo};
use doppio_driver::session::{ClusterView, Distance};
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{Cluster, NodeCounts, StubConfig};

use crate::support;

use support::{next_key, on_runtime, scylla_cluster, wait_for_connections, StubNode};

const NODES: u8 = 3;
const SHARDS: u16 = 4;
const PLAIN: u64 = 3000;
const LWT: u64 = 1000;

fn stub(runtime: Runtime, replication_factor: u8) -> StubNode {
    StubNode::start(
        runtime,
        scylla_cluster(runtime, NODES, SHARDS, replication_factor),
    )
}

/// Connects to node 0 only, waits until the driver has a connection to every shard of
/// every node, then runs [`PLAIN`] EXECUTEs of a prepared INSERT and (when `lwt`) [`LWT`]
/// of a prepared INSERT ... IF NOT EXISTS, with random keys; returns the stub's counts
/// after each phase.
fn run(runtime: Runtime, stub: &StubNode, lwt: bool) -> (Vec<NodeCounts>, Vec<NodeCounts>) {
    let addr = stub.addr();
    let expected: Vec<SocketAddr> = stub.node_addrs().to_vec();
    // The client says when its plain phase is done, and waits for the test to read the
    // counts before the next one.
    let (done, wait_done) = std::sync::mpsc::channel::<()>();
    let (go_on, wait_go_on) = std::sync::mpsc::channel::<()>();
    let client = stub.beside(move || async move {
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        let s = Session::connect(config).await.unwrap();
        let found: Vec<SocketAddr> = s.topology().nodes.iter().map(|n| n.addr).collect();
        assert_eq!(found, expected, "every node discovered through node 0");
        // ScyllaDB's table of keyspaces in tablets is read, and lists none here:
        // the keyspace is routed by the token ring.
        assert_eq!(s.topology().tablet_keyspaces, Some(BTreeSet::new()));
        assert!(s.view().replica_map("ks").is_some());
        wait_for_connections(&s, usize::from(NODES), usize::from(SHARDS)).await;
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let plain = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        assert!(!plain.is_lwt());
        for _ in 0..PLAIN {
            s.execute_unpaged(&plain, &(next_key(&mut x), vec![1u8]))
                .await
                .unwrap();
        }
        done.send(()).unwrap();
        let _ = wait_go_on.recv();
        if lwt {
            let cas = s
                .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?) IF NOT EXISTS")
                .await
                .unwrap();
            assert!(cas.is_lwt(), "the node marks it a lightweight transaction");
            for _ in 0..LWT {
                s.execute_unpaged(&cas, &(next_key(&mut x), vec![1u8]))
                    .await
                    .unwrap();
            }
        }
        s.close("done");
    });
    std::thread::scope(|scope| {
        let client = scope.spawn(move || on_runtime(runtime, "stub-cluster", client));
        if wait_done.recv().is_err() {
            // The client failed before its plain phase ended: its panic is the test's.
            std::panic::resume_unwind(client.join().unwrap_err());
        }
        let after_plain = stub.node_counts();
        go_on.send(()).unwrap();
        client.join().unwrap();
        (after_plain, stub.node_counts())
    })
}

fn assert_routed(counts: &[NodeCounts], requests: u64) {
    assert_eq!(counts.len(), usize::from(NODES));
    assert_eq!(
        counts.iter().map(|n| n.requests).sum::<u64>(),
        requests,
        "{counts:#?}"
    );
    for n in counts {
        assert_eq!(n.wrong_replica, 0, "{n:#?}");
        let shards = n.shards.as_ref().unwrap();
        assert_eq!(shards.wrong_shard, 0, "{n:#?}");
        assert!(n.requests > 0, "every node reached: {counts:#?}");
        assert!(
            shards.requests.iter().all(|&r| r > 0),
            "every shard of every node reached: {n:#?}"
        );
    }
}

fn requests_reach_a_replica_on_its_owning_shard_and_lwts_their_primary(runtime: Runtime) {
    let stub = stub(runtime, 3);
    let (plain, all) = run(runtime, &stub, true);
    assert_routed(&plain, PLAIN);
    // Spread over the replicas (all three nodes are replicas of every token): most plain
    // requests reach a replica that is not the primary.
    let not_primary: u64 = plain.iter().map(|n| n.not_primary).sum();
    assert!(not_primary > PLAIN / 3, "{plain:#?}");
    assert_routed(&all, PLAIN + LWT);
    for n in &all {
        assert_eq!(n.lwt_not_primary, 0, "{n:#?}");
        assert!(
            n.lwt_requests > 0,
            "every node is some token's primary: {all:#?}"
        );
    }
    assert_eq!(all.iter().map(|n| n.lwt_requests).sum::<u64>(), LWT);
    stub.stop();
}

fn with_fewer_replicas_than_nodes_no_request_reaches_a_non_replica(runtime: Runtime) {
    let stub = stub(runtime, 2);
    let (plain, _) = run(runtime, &stub, false);
    assert_routed(&plain, PLAIN);
    stub.stop();
}

/// [`NODES`] plain nodes (no emulated ScyllaDB shards), RF 3, 8 tokens each, with `rules`.
fn three_nodes_with(runtime: Runtime, rules: doppio_stub::Rules) -> StubNode {
    StubNode::start(
        runtime,
        StubConfig {
            log_rules: false,
            rules,
            cluster: Some(Cluster {
                nodes: NonZeroU8::new(NODES).unwrap(),
                replication_factor: NonZeroU8::new(3).unwrap(),
                vnodes: NonZeroU16::new(8).unwrap(),
            }),
            ..StubConfig::default()
        },
    )
}

/// A request a node refused (OVERLOADED: not applied) goes to another node, never to the
/// node that refused it: node 1 of three refuses every request of one statement, and with
/// two retries allowed every request succeeds, each retry landing elsewhere; a session that
/// knows only node 1 (a one-node plan) returns the refusal at once rather than ask again.
fn a_refused_request_is_retried_on_another_node_never_on_the_one_that_refused_it(runtime: Runtime) {
    let rules = doppio_stub::Rules::parse(
        "[[rule]]\nname = \"node 1 sheds\"\nwhen = { node = 1, statement = \"'shed'\" }\n\
         then = { error = { code = \"overloaded\", message = \"shedding\" } }\n",
    )
    .unwrap();
    let stub = three_nodes_with(runtime, rules);
    let addr = stub.addr();
    let node1 = stub.node_addrs()[1];
    let (retries, refused) = stub.run("stub-cluster-retry", move || async move {
        let mut config = SessionConfig::new(addr);
        config.retry_policy =
            std::sync::Arc::new(doppio_driver::session::DefaultRetryPolicy { max_retries: 2 });
        let s = Session::connect(config).await.unwrap();
        wait_for_connections(&s, usize::from(NODES), 1).await;
        for _ in 0..30 {
            s.query_unpaged("SELECT v FROM ks.t WHERE k = 'shed'", &())
                .await
                .unwrap();
        }
        let retries = s.stats().retries;
        s.close("done");
        // Only node 1: the refusal comes back, not retried.
        let mut only = SessionConfig::new(node1);
        only.retry_policy =
            std::sync::Arc::new(doppio_driver::session::DefaultRetryPolicy { max_retries: 2 });
        only.load_balancing = PolicyFactory(std::sync::Arc::new(move || {
            std::rc::Rc::new(OnlyNode(node1)) as std::rc::Rc<dyn LoadBalancingPolicy>
        }));
        let s = Session::connect(only).await.unwrap();
        let e = s
            .query_unpaged("SELECT v FROM ks.t WHERE k = 'shed'", &())
            .await
            .unwrap_err();
        assert!(e.to_string().contains("shedding"), "{e}");
        assert_eq!(s.stats().retries, 0, "not asked again");
        s.close("done");
        // The one-node session's request was refused once too.
        (retries, 1u64)
    });
    let fired = stub.fired();
    let n = fired
        .iter()
        .find(|(r, _)| r == "node 1 sheds")
        .map_or(0, |x| x.1);
    // Round-robin over three nodes: about a third reached node 1 first; each was refused
    // there once and retried elsewhere (a retry back to node 1 would have fired again).
    assert!(retries >= 5, "{retries} retries");
    assert_eq!(
        n,
        retries + refused,
        "each refused once, then sent elsewhere"
    );
    stub.stop();
}

/// A peer that closes every connection at its first request, without a byte (as a node that
/// is shutting down does, and as a TLS-only port does to a plaintext client), does not end
/// `connect` when the contact point answers: the session connects and serves from the other
/// nodes. The other nodes' answers are slowed so that the peer's failure comes first;
/// before the fix, `connect` failed with "the node speaks TLS on this port".
fn a_peer_closing_at_its_first_request_does_not_end_connect(runtime: Runtime) {
    let rules = doppio_stub::Rules::parse(
        "[[rule]]\nwhen = { node = 1, opcode = \"OPTIONS\" }\nthen = \"drop\"\n\
         [[rule]]\nwhen = { opcode = \"OPTIONS\" }\n\
         then = { delay = { fixed = \"300ms\" } }\n",
    )
    .unwrap();
    let stub = three_nodes_with(runtime, rules);
    let addr = stub.addr();
    let node1 = stub.node_addrs()[1];
    let up = stub.run("stub-cluster-closing-peer", move || async move {
        let s = Session::connect(SessionConfig::new(addr))
            .await
            .expect("the contact point answers: connect succeeds");
        for _ in 0..30 {
            s.query_unpaged("SELECT v FROM ks.t WHERE k = 'a'", &())
                .await
                .expect("served by nodes 0 and 2");
        }
        let view = s.view();
        let up = || -> Vec<(SocketAddr, bool)> {
            (0..view.len() as u16)
                .filter_map(|i| view.node(i))
                .map(|n| (n.addr(), n.is_up()))
                .collect()
        };
        // Both answering nodes come up (their first answers took 300 ms).
        let deadline = doppio_driver::rt::now() + std::time::Duration::from_secs(10);
        while up().iter().filter(|n| n.1).count() < 2 && doppio_driver::rt::now() < deadline {
            doppio_driver::rt::sleep(std::time::Duration::from_millis(5)).await;
        }
        let up = up();
        s.close("done");
        up
    });
    assert_eq!(up.len(), usize::from(NODES), "{up:?}");
    for (a, is_up) in up {
        assert_eq!(is_up, a != node1, "only node 1 is down: {a}");
    }
    stub.stop();
}

/// Sends every request to the node at one address, and knows no other: a one-node plan.
#[derive(Debug)]
struct OnlyNode(SocketAddr);

impl LoadBalancingPolicy for OnlyNode {
    fn distances(&self, topology: &TopologySnapshot) -> Vec<Distance> {
        topology
            .nodes
            .iter()
            .map(|n| {
                if n.addr == self.0 {
                    Distance::Local
                } else {
                    Distance::Ignored
                }
            })
            .collect()
    }

    fn pick(&self, view: &ClusterView, _: &RoutingInfo<'_>) -> Option<NodeIndex> {
        view.local_nodes().first().copied()
    }

    fn plan(&self, view: &ClusterView, routing: &RoutingInfo<'_>, out: &mut Vec<NodeIndex>) {
        out.clear();
        out.extend(self.pick(view, routing));
    }
}

support::runtime_tests!(;
    and_sim:
    a_refused_request_is_retried_on_another_node_never_on_the_one_that_refused_it,
    a_peer_closing_at_its_first_request_does_not_end_connect,
    requests_reach_a_replica_on_its_owning_shard_and_lwts_their_primary,
    with_fewer_replicas_than_nodes_no_request_reaches_a_non_replica,
);
