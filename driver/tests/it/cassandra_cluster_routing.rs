//! Cluster awareness on a real three-node Cassandra (`scripts/cassandra-cluster.sh`: nodes
//! 127.0.0.21-23, one token each, racks rack1, rack1, rack2): the topology the driver reads,
//! prepared requests landing only on the node that owns their key (RF 1, checked against
//! Cassandra's own `token()` and ring), a keyspace created and altered while the driver runs,
//! and the replicas the driver computes equal to the nodes Cassandra itself contacts for a
//! read at consistency ALL (SimpleStrategy and NetworkTopologyStrategy across racks).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::value::CqlValue;
use doppio_driver::session::{Batch, BatchType};
use doppio_driver::{Cluster, Session, SessionConfig, Statement};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cluster, eventually, keyspace, on_runtime, ring_owner};

fn config() -> SessionConfig {
    let mut c = SessionConfig::new(cluster());
    c.consistency = Consistency::One;
    c.startup_timeout = Duration::from_secs(30);
    c.connection.request_timeout = Duration::from_secs(30);
    c
}

fn builder(runtime: Runtime) -> doppio_driver::ClusterBuilder {
    Cluster::builder()
        .session_config(
            SessionConfig::new(cluster())
                .with_consistency(Consistency::One)
                .with_request_timeout(Duration::from_secs(30))
                .with_connect_timeout(Duration::from_secs(30))
                .with_startup_timeout(Duration::from_secs(30)),
        )
        .runtime(runtime)
        .cores(&[0, 1])
        .pin(false)
}

/// The ring as Cassandra reports it: each node's tokens from its own system.local (the
/// unprepared queries go round-robin, so a few of them reach every node).
async fn cassandra_ring(s: &Session) -> Vec<(i64, SocketAddr)> {
    let port = cluster().port();
    let mut by_node: HashMap<SocketAddr, Vec<String>> = HashMap::new();
    for _ in 0..30 {
        let local = s
            .query_unpaged("SELECT rpc_address, tokens FROM system.local", &())
            .await
            .unwrap();
        let rows: Vec<(IpAddr, Vec<String>)> = local.typed_rows().unwrap();
        for (ip, tokens) in rows {
            assert_eq!(
                ip,
                local.node.ip(),
                "system.local describes its coordinator"
            );
            by_node.insert(SocketAddr::new(ip, port), tokens);
        }
        if by_node.len() == 3 {
            break;
        }
    }
    assert_eq!(by_node.len(), 3, "system.local of every node");
    by_node
        .into_iter()
        .flat_map(|(node, tokens)| tokens.into_iter().map(move |t| (t.parse().unwrap(), node)))
        .collect()
}

fn the_driver_sees_every_node_with_its_data_center_and_rack(runtime: Runtime) {
    on_runtime(runtime, "cluster-topology", || async {
        let s = Session::connect(config()).await.unwrap();
        let nodes = s.nodes();
        let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.info.addr).collect();
        let expected: Vec<SocketAddr> = ["127.0.0.21:9042", "127.0.0.22:9042", "127.0.0.23:9042"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(addrs, expected);
        let racks: Vec<&str> = nodes.iter().map(|n| n.info.rack.as_str()).collect();
        assert_eq!(racks, ["rack1", "rack1", "rack2"]);
        assert!(nodes.iter().all(|n| n.info.datacenter == "datacenter1"));
        assert!(nodes.iter().all(|n| n.info.tokens.len() == 1));
        // Connections open to every node in the background.
        let all_up = eventually(Duration::from_secs(10), || s.nodes().iter().all(|n| n.up)).await;
        assert!(all_up.is_some(), "{:?}", s.nodes());
        assert_eq!(s.control_node(), Some(cluster()));
        s.close("done");
    });
}

/// Runs `keys` prepared writes and reads of an RF=1 table from every shard of `c` and checks
/// that each landed on the key's owner: per node, requests equal the keys it owns.
/// With `batched`, each INSERT goes as a one-statement unlogged batch
/// (`Session::batch_prepared`), routed by its first statement's key like an EXECUTE.
fn every_request_lands_on_its_owner(c: &Cluster, ks: &str, keys: i32, batched: bool) {
    let ks_owned = ks.to_owned();
    let per_shard = c
        .run_on_shards_indexed(move |shard, s| {
            let ks = ks_owned.clone();
            async move {
                let insert = s
                    .prepare(&format!("INSERT INTO {ks}.kv (k, v) VALUES (?, ?)"))
                    .await
                    .unwrap();
                let select = s
                    .prepare(&format!("SELECT v FROM {ks}.kv WHERE k = ?"))
                    .await
                    .unwrap();
                let before: HashMap<SocketAddr, u64> = s
                    .nodes()
                    .iter()
                    .map(|n| (n.info.addr, n.counters.requests))
                    .collect();
                // Shard 0 takes the even keys, shard 1 the odd ones.
                let mine: Vec<i32> = (0..keys).filter(|k| (*k as usize) % 2 == shard).collect();
                for &k in &mine {
                    let values = (k, format!("value {k}"));
                    if batched {
                        let batch = Batch::new(BatchType::Unlogged).with_prepared(&insert);
                        s.batch(&batch, &(&values,)).await.unwrap();
                    } else {
                        s.execute_unpaged(&insert, &values).await.unwrap();
                    }
                    let rows: Vec<(String,)> = s
                        .execute_unpaged(&select, &(k,))
                        .await
                        .unwrap()
                        .typed_rows()
                        .unwrap();
                    assert_eq!(rows, vec![(format!("value {k}"),)]);
                }
                let after: HashMap<SocketAddr, u64> = s
                    .nodes()
                    .iter()
                    .map(|n| (n.info.addr, n.counters.requests - before[&n.info.addr]))
                    .collect();
                (mine, after)
            }
        })
        .unwrap();
    // What Cassandra says: the token of every key, and the ring.
    let ks_owned = ks.to_owned();
    let owners = c
        .run_on_shards_indexed(move |shard, s| {
            let ks = ks_owned.clone();
            async move {
                if shard != 0 {
                    return HashMap::new();
                }
                let ring = cassandra_ring(&s).await;
                let mut owner_of = HashMap::new();
                let scan = format!("SELECT k, token(k) FROM {ks}.kv");
                let mut pages = s.query_iter(&scan, &());
                while let Some(page) = pages.next_page().await.unwrap() {
                    let rows: Vec<(i32, i64)> = page.typed_rows().unwrap();
                    for (k, t) in rows {
                        owner_of.insert(k, ring_owner(&ring, t));
                    }
                }
                owner_of
            }
        })
        .unwrap()
        .remove(0);
    assert_eq!(owners.len(), keys as usize);
    let mut expected: HashMap<SocketAddr, u64> = HashMap::new();
    let mut landed: HashMap<SocketAddr, u64> = HashMap::new();
    for (mine, counts) in &per_shard {
        for k in mine {
            // One INSERT and one SELECT per key.
            *expected.entry(owners[k]).or_default() += 2;
        }
        for (node, n) in counts {
            *landed.entry(*node).or_default() += n;
        }
    }
    landed.retain(|_, n| *n > 0);
    assert_eq!(landed, expected, "requests per node vs keys owned x 2");
    assert_eq!(expected.len(), 3, "the keys spread over all three nodes");
}

fn with_rf_1_every_prepared_request_goes_to_the_owner_of_its_key(runtime: Runtime) {
    rf_1_requests_land_on_their_owners(runtime, "owner", false);
}

fn with_rf_1_every_prepared_batch_goes_to_the_owner_of_its_first_key(runtime: Runtime) {
    rf_1_requests_land_on_their_owners(runtime, "bowner", true);
}

/// A keyspace of RF 1 (`name`), then [`every_request_lands_on_its_owner`].
fn rf_1_requests_land_on_their_owners(runtime: Runtime, name: &str, batched: bool) {
    let c = builder(runtime).build().unwrap();
    let ks = keyspace(name);
    let create = ks.clone();
    c.run_on_shards_indexed(move |shard, s| {
        let ks = create.clone();
        async move {
            if shard == 0 {
                s.query_unpaged(
                    &format!(
                        "CREATE KEYSPACE {ks} WITH replication = \
                         {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
                    ),
                    &(),
                )
                .await
                .unwrap();
                s.query_unpaged(
                    &format!("CREATE TABLE {ks}.kv (k int PRIMARY KEY, v text)"),
                    &(),
                )
                .await
                .unwrap();
            }
        }
    })
    .unwrap();
    // Shard 1 learns the keyspace from the control connection's event.
    let wait = ks.clone();
    let seen = c
        .run_on_shards(move |s| {
            let ks = wait.clone();
            async move {
                eventually(Duration::from_secs(10), || {
                    s.topology().keyspaces.contains_key(&ks)
                })
                .await
            }
        })
        .unwrap();
    assert!(
        seen.iter().all(Option::is_some),
        "every shard knows the keyspace: {seen:?}"
    );
    every_request_lands_on_its_owner(&c, &ks, 600, batched);
    c.shutdown();
}

fn a_keyspace_created_and_altered_while_the_driver_runs_is_routed_by_its_replication(
    runtime: Runtime,
) {
    let c = builder(runtime).build().unwrap();
    let ks = keyspace("later");
    // Created by another client: the driver hears of it only through events.
    on_runtime(runtime, "cluster-ddl", {
        let ks = ks.clone();
        move || async move {
            let other = Session::connect(config()).await.unwrap();
            other
                .query_unpaged(
                    &format!(
                        "CREATE KEYSPACE {ks} WITH replication = \
                         {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
                    ),
                    &(),
                )
                .await
                .unwrap();
            other
                .query_unpaged(
                    &format!("CREATE TABLE {ks}.kv (k int PRIMARY KEY, v text)"),
                    &(),
                )
                .await
                .unwrap();
            other.close("done");
        }
    });
    let wait = ks.clone();
    let seen = c
        .run_on_shards(move |s| {
            let ks = wait.clone();
            async move {
                eventually(Duration::from_secs(10), || {
                    s.topology().keyspaces.contains_key(&ks)
                })
                .await
            }
        })
        .unwrap();
    assert!(seen.iter().all(Option::is_some), "{seen:?}");
    every_request_lands_on_its_owner(&c, &ks, 300, false);
    // Altered to two replicas: each shard's replicas follow.
    on_runtime(runtime, "cluster-alter", {
        let ks = ks.clone();
        move || async move {
            let other = Session::connect(config()).await.unwrap();
            other
                .query_unpaged(
                    &format!(
                        "ALTER KEYSPACE {ks} WITH replication = \
                         {{'class': 'SimpleStrategy', 'replication_factor': 2}}"
                    ),
                    &(),
                )
                .await
                .unwrap();
            other.close("done");
        }
    });
    let check = ks.clone();
    let replicas = c
        .run_on_shards(move |s| {
            let ks = check.clone();
            async move {
                let select = s
                    .prepare(&format!("SELECT v FROM {ks}.kv WHERE k = ?"))
                    .await
                    .unwrap();
                eventually(Duration::from_secs(10), || {
                    s.replicas_of(&select, &(1i32,)).len() == 2
                })
                .await
            }
        })
        .unwrap();
    assert!(replicas.iter().all(Option::is_some), "{replicas:?}");
    c.shutdown();
}

/// The nodes that took part in a traced request: its coordinator and every node that
/// logged a trace event. Trace rows are written in the background; this waits for the
/// session to be complete and its events to stop growing.
async fn traced_nodes(s: &Session, tracing_id: [u8; 16]) -> (IpAddr, BTreeSet<IpAddr>) {
    let all =
        |cql: &str| Statement::new(cql).with_config(|c| c.consistency = Some(Consistency::All));
    let id = CqlValue::Uuid(tracing_id);
    let mut last = (None, BTreeSet::new());
    let mut stable = 0;
    for _ in 0..100 {
        doppio_driver::rt::sleep(Duration::from_millis(100)).await;
        let session = s
            .query_unpaged(
                all(
                    "SELECT coordinator, duration FROM system_traces.sessions WHERE session_id = ?",
                ),
                &(id.clone(),),
            )
            .await
            .unwrap();
        let rows: Vec<(Option<IpAddr>, Option<i32>)> = session.typed_rows().unwrap();
        let Some((Some(coordinator), Some(_done))) = rows.first().copied() else {
            continue;
        };
        let events = s
            .query_unpaged(
                all("SELECT source FROM system_traces.events WHERE session_id = ?"),
                &(id.clone(),),
            )
            .await
            .unwrap();
        let sources: BTreeSet<IpAddr> = events
            .typed_rows::<(IpAddr,)>()
            .unwrap()
            .into_iter()
            .map(|r| r.0)
            .collect();
        if last.0 == Some(coordinator) && last.1 == sources {
            stable += 1;
            if stable >= 3 {
                return (coordinator, sources);
            }
        } else {
            stable = 0;
            last = (Some(coordinator), sources);
        }
    }
    panic!("the trace of the request did not settle: {last:?}");
}

fn the_replicas_the_driver_computes_are_the_nodes_cassandra_contacts(runtime: Runtime) {
    on_runtime(runtime, "cluster-replicas", || async {
        let s = Session::connect(config()).await.unwrap();
        eventually(Duration::from_secs(10), || s.nodes().iter().all(|n| n.up)).await;
        let simple = keyspace("simple2");
        let nts = keyspace("nts2");
        for (ks, replication) in [
            (
                &simple,
                "'class': 'SimpleStrategy', 'replication_factor': 2",
            ),
            (&nts, "'class': 'NetworkTopologyStrategy', 'datacenter1': 2"),
        ] {
            s.query_unpaged(
                &format!("CREATE KEYSPACE {ks} WITH replication = {{{replication}}}"),
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
        }
        let rack2: IpAddr = "127.0.0.23".parse().unwrap();
        for ks in [&simple, &nts] {
            let insert = s
                .prepare(&format!("INSERT INTO {ks}.kv (k, v) VALUES (?, ?)"))
                .await
                .unwrap();
            let select = s
                .prepare(&format!("SELECT v FROM {ks}.kv WHERE k = ?"))
                .await
                .unwrap();
            for k in 0..8i32 {
                s.execute_unpaged(&insert, &(k, k)).await.unwrap();
                let replicas: BTreeSet<IpAddr> = s
                    .replicas_of(&select, &(k,))
                    .iter()
                    .map(SocketAddr::ip)
                    .collect();
                assert_eq!(replicas.len(), 2, "{ks} key {k}");
                if ks == &nts {
                    // Two racks, two replicas: one per rack, so rack2's only node always.
                    assert!(replicas.contains(&rack2), "{ks} key {k}: {replicas:?}");
                }
                let traced = select.with_config(|c| {
                    c.consistency = Some(Consistency::All);
                    c.tracing = true;
                });
                let r = s.execute_unpaged(&traced, &(k,)).await.unwrap();
                assert!(replicas.contains(&r.node.ip()), "sent to a replica");
                let (coordinator, nodes) = traced_nodes(&s, r.tracing_id.unwrap()).await;
                assert_eq!(coordinator, r.node.ip());
                assert_eq!(
                    nodes, replicas,
                    "{ks} key {k}: Cassandra contacted {nodes:?}"
                );
            }
            s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
                .await
                .unwrap();
        }
        s.close("done");
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA_CLUSTER;
    the_driver_sees_every_node_with_its_data_center_and_rack,
    with_rf_1_every_prepared_request_goes_to_the_owner_of_its_key,
    with_rf_1_every_prepared_batch_goes_to_the_owner_of_its_first_key,
    a_keyspace_created_and_altered_while_the_driver_runs_is_routed_by_its_replication,
    the_replicas_the_driver_computes_are_the_nodes_cassandra_contacts,
);
