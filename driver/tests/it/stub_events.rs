//! Events from the cluster stub, as doppio follows them: the stub plays three nodes; a test
//! takes node 2 down (its connections close, new ones are closed at once, and the other
//! nodes' registered connections are told `STATUS_CHANGE DOWN`) and brings it back (`UP`),
//! and pushes schema and topology changes. The driver's control connection (on node 0)
//! registered for all three kinds.
//!
//! - A node taken down is avoided: every request succeeds on the two others (replicas of
//!   every token at RF 3), none reaches it; brought back, it is connected again at once on `UP`, though the session's
//!   reconnect backoff is an hour (without the event it would wait for its next attempt).
//! - `SCHEMA_CHANGE` of a keyspace makes the control connection read the keyspaces again,
//!   and `TOPOLOGY_CHANGE` the peers (the stub counts those reads with a rule that only
//!   counts).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::num::{NonZeroU16, NonZeroU8};
use std::time::Duration;

use doppio_driver::config::Backoff;
use doppio_driver::proto::response::{Event, SchemaChange, SchemaTarget};
use doppio_driver::rt::Runtime;
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{Cluster, ClusterControl, StubConfig};

use crate::support;

use support::{next_key, wait_for_connections, StubNode};

const NODES: u8 = 3;

/// Counts the control connection's reads of the keyspaces and of the peers (a rule that
/// fires and changes nothing: a delay of zero).
const COUNTING: &str = "[[rule]]\nname = \"keyspaces read\"\n\
    when = { statement = \"system_schema.keyspaces\" }\nthen = { delay = { fixed = \"0ms\" } }\n\
    [[rule]]\nname = \"peers read\"\nwhen = { statement = \"system.peers\" }\n\
    then = { delay = { fixed = \"0ms\" } }\n";

fn start(runtime: Runtime) -> StubNode {
    StubNode::start(
        runtime,
        StubConfig {
            log_rules: false,
            rules: doppio_stub::Rules::parse(COUNTING).unwrap(),
            routed_keyspace: Some("ks".into()),
            cluster: Some(Cluster {
                nodes: NonZeroU8::new(NODES).unwrap(),
                replication_factor: NonZeroU8::new(3).unwrap(),
                vnodes: NonZeroU16::new(8).unwrap(),
            }),
            ..StubConfig::default()
        },
    )
}

/// Which nodes of `s` are up, by address.
fn up(s: &Session) -> Vec<(SocketAddr, bool)> {
    let view = s.view();
    (0..view.len() as u16)
        .filter_map(|i| view.node(i))
        .map(|n| (n.addr(), n.is_up()))
        .collect()
}

/// Waits (at most a minute) until `done` holds.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = doppio_driver::rt::now() + Duration::from_secs(60);
    while !done() {
        assert!(doppio_driver::rt::now() < deadline, "never: {what}");
        doppio_driver::rt::sleep(Duration::from_millis(5)).await;
    }
}

/// How often the rule `name` fired.
fn fired(control: &ClusterControl, name: &str) -> u64 {
    control
        .fired()
        .into_iter()
        .find(|(n, _)| n == name)
        .map_or(0, |(_, count)| count)
}

/// The EXECUTEs with a partition key that reached node `node`.
fn node_requests(control: &ClusterControl, node: usize) -> u64 {
    control.node_counts()[node].requests
}

fn a_node_taken_down_is_avoided_and_followed_back_up_at_once(runtime: Runtime) {
    let stub = start(runtime);
    let addr = stub.addr();
    let node2 = stub.node_addrs()[2];
    let control: ClusterControl = stub.control();
    let counts = stub.control();
    let (before, during) = stub.run("stub-events-status", move || async move {
        let mut config = SessionConfig::new(addr);
        // So long that only the UP event can bring node 2 back within the test.
        config.backoff = Backoff::new(Duration::from_secs(3600), Duration::from_secs(3600));
        let s = Session::connect(config).await.unwrap();
        wait_for_connections(&s, usize::from(NODES), 1).await;
        control.take_down(2).unwrap();
        until("node 2 seen down", || {
            up(&s).iter().any(|&(a, is_up)| a == node2 && !is_up)
        })
        .await;
        let insert = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let before = node_requests(&counts, 2);
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..300 {
            s.execute_unpaged(&insert, &(next_key(&mut x), vec![1u8]))
                .await
                .expect("nodes 0 and 1, replicas of every token (RF 3), serve");
        }
        let during = node_requests(&counts, 2) - before;
        let came_back = doppio_driver::rt::now();
        control.bring_up(2).unwrap();
        until("node 2 up again after UP", || up(&s).iter().all(|n| n.1)).await;
        let took = doppio_driver::rt::now() - came_back;
        assert!(
            took < Duration::from_secs(60),
            "reconnected on the event, not the hour-long backoff: {took:?}"
        );
        s.close("done");
        (before, during)
    });
    assert_eq!(
        during, 0,
        "no request reached node 2 while it was down ({before} before)"
    );
    stub.stop();
}

fn schema_and_topology_changes_make_the_control_connection_read_again(runtime: Runtime) {
    let stub = start(runtime);
    let addr = stub.addr();
    let control = stub.control();
    let node1 = stub.node_addrs()[1];
    stub.run("stub-events-schema", move || async move {
        let s = Session::connect(SessionConfig::new(addr)).await.unwrap();
        let keyspaces = fired(&control, "keyspaces read");
        control.push_event(Event::SchemaChange(SchemaChange {
            change: "CREATED".into(),
            target: SchemaTarget::Keyspace("ks2".into()),
        }));
        until("the keyspaces read again", || {
            fired(&control, "keyspaces read") > keyspaces
        })
        .await;
        let peers = fired(&control, "peers read");
        control.push_event(Event::TopologyChange {
            change: "NEW_NODE".into(),
            node: node1,
        });
        until("the peers read again", || {
            fired(&control, "peers read") > peers
        })
        .await;
        s.close("done");
    });
    stub.stop();
}

support::runtime_tests!(;
    and_sim:
    a_node_taken_down_is_avoided_and_followed_back_up_at_once,
    schema_and_topology_changes_make_the_control_connection_read_again,
);
