//! DC-aware, token-aware routing over the stub playing two data centers
//! (`doppio_stub::StubConfig::datacenters`: 5 + 5 nodes on 2 racks each, the routed keyspace
//! in NetworkTopologyStrategy with RF 3 per data center: each data center has two nodes
//! that are no replica of a token, a rack holds two of a token's replicas, and where the
//! walk meets a third node of that rack first it is skipped for the other rack's, so a
//! driver that ignored racks would miss). Only the stub's emulation is tested here: no
//! multi-DC Cassandra or ScyllaDB runs here.
//!
//! The driver, told its local data center, reads every node's data center and rack, places
//! replicas as the stub does, and sends every request with a bound partition key to a
//! replica in its local data center, at LOCAL_ONE and LOCAL_QUORUM alike; the stub counts
//! the requests each node received and those that reached a non-replica. With remote data
//! centers allowed and every node of the local one failing every handshake (a rule that
//! answers each of its requests with an error), requests go to the other data center's
//! replicas instead.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::num::{NonZeroU16, NonZeroU8};

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::session::Distance;
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{Cluster, Datacenters, NodeCounts, Rules, StubConfig};

use crate::support;

use support::{next_key, StubNode};

/// Requests per consistency level.
const REQUESTS: u64 = 600;

fn layout() -> Datacenters {
    Datacenters::parse("dc1:5,dc2:5", NonZeroU8::new(2).unwrap(), 3).unwrap()
}

fn stub(runtime: Runtime, rules: Rules) -> StubNode {
    let dcs = layout();
    let cluster = Cluster::of_datacenters(&dcs, NonZeroU16::new(8).unwrap()).unwrap();
    StubNode::start(
        runtime,
        StubConfig {
            log_rules: false,
            rules,
            routed_keyspace: Some("ks".into()),
            cluster: Some(cluster),
            datacenters: Some(dcs),
            ..StubConfig::default()
        },
    )
}

/// Waits (bounded: 30 s) until every node of `s` at `distance` has a connection open.
async fn wait_for_nodes(s: &Session, distance: Distance, count: usize) {
    let view = s.view();
    let deadline = doppio_driver::rt::now() + std::time::Duration::from_secs(30);
    loop {
        let open: Vec<usize> = (0..view.len() as u16)
            .filter(|&i| view.distance(i) == distance)
            .map(|i| view.node(i).map_or(0, |n| n.open_connections()))
            .collect();
        if open.len() == count && open.iter().all(|&n| n > 0) {
            return;
        }
        assert!(
            doppio_driver::rt::now() < deadline,
            "connections per {distance:?} node: {open:?}"
        );
        doppio_driver::rt::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// Connects through `contact` with `config`, checks the data centers and racks the driver
/// read, waits for a connection to every node it may use, and runs [`REQUESTS`] EXECUTEs
/// of a prepared INSERT with random keys at each of LOCAL_ONE and LOCAL_QUORUM.
/// `wait_for`: the distance of the nodes it waits for (5 of them).
fn run(
    stub: &StubNode,
    runtime: Runtime,
    contact: SocketAddr,
    config: SessionConfig,
    wait_for: Distance,
) {
    let expected: Vec<(SocketAddr, String, String)> = stub
        .node_counts()
        .into_iter()
        .map(|n| (n.addr, n.data_center, n.rack))
        .collect();
    let client = stub.beside(move || async move {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for consistency in [Consistency::LocalOne, Consistency::LocalQuorum] {
            let s = Session::connect(config.clone().with_consistency(consistency))
                .await
                .unwrap();
            let found: Vec<(SocketAddr, String, String)> = s
                .topology()
                .nodes
                .iter()
                .map(|n| (n.addr, n.datacenter.clone(), n.rack.clone()))
                .collect();
            assert_eq!(found, expected, "data centers and racks read via {contact}");
            assert!(s.view().replica_map("ks").is_some());
            wait_for_nodes(&s, wait_for, 5).await;
            let insert = s
                .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
                .await
                .unwrap();
            for _ in 0..REQUESTS {
                s.execute_unpaged(&insert, &(next_key(&mut x), vec![1u8]))
                    .await
                    .unwrap();
            }
            s.close("done");
        }
    });
    support::on_runtime(runtime, "stub-datacenters", client);
}

/// Every request reached a replica of its token in `dc`, none the other data center, and
/// every node of `dc` took some.
fn assert_all_at(counts: &[NodeCounts], dc: &str) {
    let by = NodeCounts::by_datacenter(counts);
    assert_eq!(by.len(), 2, "{by:?}");
    for (name, c) in &by {
        let want = if name == dc { 2 * REQUESTS } else { 0 };
        assert_eq!(c.requests, want, "{name}: {counts:#?}");
        assert_eq!(c.wrong_replica, 0, "{name}: {counts:#?}");
    }
    for n in counts.iter().filter(|n| n.data_center == dc) {
        assert!(n.requests > 0, "every node of {dc} reached: {counts:#?}");
    }
}

fn with_local_dc1_requests_reach_only_dc1_replicas(runtime: Runtime) {
    let stub = stub(runtime, Rules::default());
    let contact = stub.node_addrs()[0];
    let config = SessionConfig::new(contact).with_local_datacenter("dc1");
    run(&stub, runtime, contact, config, Distance::Local);
    assert_all_at(&stub.node_counts(), "dc1");
    stub.stop();
}

/// The local data center is the one configured, not the contact point's: the session asks
/// a node of dc1 and still routes to dc2.
fn with_local_dc2_requests_reach_only_dc2_replicas(runtime: Runtime) {
    let stub = stub(runtime, Rules::default());
    let contact = stub.node_addrs()[0];
    let config = SessionConfig::new(contact).with_local_datacenter("dc2");
    run(&stub, runtime, contact, config, Distance::Local);
    assert_all_at(&stub.node_counts(), "dc2");
    stub.stop();
}

/// Every node of dc1 (nodes 0 to 4) answers every request, the handshake's included, with
/// an error (OVERLOADED), so no connection to dc1 ever opens (the stub cannot refuse a
/// node's TCP connections: it listens for all of them); the session, local data center dc1
/// with remote ones allowed, reaches the cluster through a node of dc2 and sends every
/// request to a dc2 replica of its token.
fn with_dc1_unreachable_requests_fail_over_to_dc2_replicas(runtime: Runtime) {
    let rules: String = (0..5)
        .map(|n| {
            format!(
                "[[rule]]\nname = \"dc1 node {n} down\"\nwhen = {{ node = {n} }}\n\
                 then = {{ error = {{ code = \"overloaded\", message = \"dc1 is down\" }} }}\n"
            )
        })
        .collect();
    let stub = stub(runtime, Rules::parse(&rules).unwrap());
    let contact = stub.node_addrs()[5];
    let config = SessionConfig::new(contact)
        .with_local_datacenter("dc1")
        .with_allow_remote_datacenters(true);
    run(&stub, runtime, contact, config, Distance::Remote);
    let counts = stub.node_counts();
    assert_all_at(&counts, "dc2");
    let refused: u64 = stub.fired().iter().map(|(_, n)| n).sum();
    assert!(
        refused > 0,
        "dc1's nodes were tried and refused: {counts:#?}"
    );
    stub.stop();
}

support::runtime_tests!(;
    and_sim:
    with_local_dc1_requests_reach_only_dc1_replicas,
    with_local_dc2_requests_reach_only_dc2_replicas,
    with_dc1_unreachable_requests_fail_over_to_dc2_replicas,
);
