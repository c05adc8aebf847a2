//! ScyllaDB shard awareness against the stub emulating a ScyllaDB node
//! (`doppio_stub::ScyllaShards`: no ScyllaDB runs here): the driver reads the node's
//! `SCYLLA_*` options, opens a connection to each of its shards through the shard-aware port
//! (choosing source ports the node maps to each shard), and sends every request with a
//! bound partition key to the connection of the shard that owns its token: the stub counts
//! no request at a wrong shard, for random keys. When the shard-aware port cannot be reached
//! the driver falls back to the plain port, where the node balances connections over its
//! shards, and still routes by shard.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::num::NonZeroU16;
use std::time::Duration;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{MemoryStub, ScyllaShards, Shape, ShardAwarePort, StubConfig};

use crate::support;

use support::{on_runtime, StubNode};

const SHARDS: u16 = 4;
const REQUESTS: u64 = 2000;

fn stub(runtime: Runtime, shard_aware_port: ShardAwarePort) -> StubNode {
    StubNode::start(
        runtime,
        StubConfig {
            shape: Shape::default(),
            log_rules: false,
            scylla: Some(ScyllaShards {
                shards: NonZeroU16::new(SHARDS).unwrap(),
                ignore_msb: 12,
                shard_aware_port,
                extensions: doppio_stub::scylla::SCYLLA_EXTENSIONS,
            }),
            ..StubConfig::default()
        },
    )
}

/// Connects to `addr`, waits for a connection to each of the node's shards, runs
/// [`REQUESTS`] EXECUTEs with random blob keys, and returns what the driver says of the
/// node: its sharding and the requests per shard.
fn run_random_keys(stub: &StubNode) -> (doppio_driver::routing::sharding::ShardingInfo, Vec<u64>) {
    let addr = stub.addr();
    stub.run("scylla-shards", move || async move {
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        let s = Session::connect(config).await.unwrap();
        let view = s.view();
        let node = view.node(0).unwrap().clone();
        // The pool grows to one connection per shard once the first one reported them
        // (a bounded wait for the background connects, not a timing assertion).
        let deadline = doppio_driver::rt::now() + Duration::from_secs(20);
        while node.open_connections() < usize::from(SHARDS) {
            assert!(
                doppio_driver::rt::now() < deadline,
                "connections: {}",
                node.open_connections()
            );
            doppio_driver::rt::sleep(Duration::from_millis(5)).await;
        }
        // Connections through the shard-aware port name the node, as its errors do.
        assert_eq!(node.connection().unwrap().addr(), addr);
        let p = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..REQUESTS {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x.to_be_bytes()[..(1 + (x % 8) as usize)].to_vec();
            s.execute_unpaged(&p, &(key, vec![1u8])).await.unwrap();
        }
        let info = node
            .scylla_sharding()
            .expect("the node reported its shards");
        let by_shard = node.requests_by_scylla_shard();
        s.close("done");
        (info, by_shard)
    })
}

fn every_request_lands_on_the_shard_that_owns_its_token(runtime: Runtime) {
    let stub = stub(
        runtime,
        ShardAwarePort::Listen("127.0.0.1:0".parse().unwrap()),
    );
    let aware = stub.shard_aware_addr().expect("a shard-aware port");
    let (info, by_shard) = run_random_keys(&stub);
    assert_eq!(info.sharder.nr_shards.get(), SHARDS);
    assert_eq!(info.sharder.ignore_msb, 12);
    assert_eq!(info.shard_aware_port, Some(aware.port()));
    let counts = stub.shard_counts().unwrap();
    assert_eq!(counts.wrong_shard, 0, "{counts:?}");
    assert_eq!(counts.requests.iter().sum::<u64>(), REQUESTS, "{counts:?}");
    assert!(
        counts.requests.iter().all(|&n| n > 0),
        "every shard reached: {counts:?}"
    );
    // The driver's own count per shard agrees (it also counts each connection's handshake).
    assert_eq!(by_shard.len(), usize::from(SHARDS));
    for (shard, (&driver, &stub)) in by_shard.iter().zip(&counts.requests).enumerate() {
        assert!(
            driver >= stub,
            "shard {shard}: driver {driver} < stub {stub}"
        );
    }
    stub.stop();
}

fn an_unreachable_shard_aware_port_falls_back_to_the_plain_port(runtime: Runtime) {
    // A port nothing listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let stub = stub(runtime, ShardAwarePort::Unreachable(dead));
    assert!(stub.shard_aware_addr().is_none());
    let (info, _) = run_random_keys(&stub);
    assert_eq!(info.shard_aware_port, Some(dead));
    let counts = stub.shard_counts().unwrap();
    assert_eq!(counts.requests.iter().sum::<u64>(), REQUESTS, "{counts:?}");
    // The node balanced the plain-port connections over its shards, and the driver used
    // each for the tokens its shard owns.
    assert!(counts.connections.iter().all(|&n| n > 0), "{counts:?}");
    assert_eq!(counts.wrong_shard, 0, "{counts:?}");
    stub.stop();
}

/// The shard-aware port does not answer at first, then comes back: connections opened
/// after `shard_aware_retry` go through it again (before, the pool gave it up for its
/// life). Here a second stub plays the port's return: it listens on the advertised port,
/// and every connection it accepts came through that port (the driver knows no other
/// address of it). On the simulated runtime the second stub is served in memory by the
/// client's executor when the test says the port is back.
fn the_shard_aware_port_is_used_again_once_it_is_back(runtime: Runtime) {
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap();
    let node = stub(runtime, ShardAwarePort::Unreachable(dead.port()));
    let addr = node.addr();
    let (fallbacks_tx, fallbacks_rx) = std::sync::mpsc::channel::<u64>();
    // The port is back: with, on the simulated runtime, the stub to serve on it.
    let (back_tx, back_rx) = std::sync::mpsc::channel::<Option<MemoryStub>>();
    let body = node.beside(move || async move {
        let mut config = SessionConfig::new(addr);
        config.shard_aware_retry = Duration::from_millis(200);
        let s = Session::connect(config).await.unwrap();
        let view = s.view();
        let node = view.node(0).unwrap().clone();
        let deadline = doppio_driver::rt::now() + Duration::from_secs(20);
        while node.open_connections() < usize::from(SHARDS) {
            assert!(doppio_driver::rt::now() < deadline);
            doppio_driver::rt::sleep(Duration::from_millis(5)).await;
        }
        fallbacks_tx
            .send(node.pool_stats().shard_aware_fallbacks)
            .unwrap();
        // The port is back; once the retry time has passed, connections that close are
        // replaced through it.
        if let Some(back) = back_rx.recv().unwrap() {
            doppio_driver::rt::sim::as_peer(|| back.serve()).unwrap();
        }
        doppio_driver::rt::sleep(Duration::from_millis(300)).await;
        for _ in 0..SHARDS {
            let c = node.connection().unwrap();
            c.close("the test closes it");
            let deadline = doppio_driver::rt::now() + Duration::from_secs(20);
            while node.open_connections() < usize::from(SHARDS) {
                assert!(doppio_driver::rt::now() < deadline);
                doppio_driver::rt::sleep(Duration::from_millis(5)).await;
            }
        }
        let stats = node.pool_stats();
        s.close("done");
        stats
    });
    let client = std::thread::spawn(move || on_runtime(runtime, "shard-aware-back", body));
    let fallbacks = fallbacks_rx.recv().unwrap();
    assert!(fallbacks > 0, "the dead port made the connects fall back");
    let back = StubNode::start(
        runtime,
        StubConfig {
            // In memory, its shard-aware listener is on its own address: the node's, on
            // another plain port than the node's. (On loopback TCP, any free port.)
            listen: if runtime == Runtime::Sim {
                SocketAddr::new(addr.ip(), addr.port() + 1)
            } else {
                StubConfig::default().listen
            },
            log_rules: false,
            scylla: Some(ScyllaShards {
                shards: NonZeroU16::new(SHARDS).unwrap(),
                ignore_msb: 12,
                shard_aware_port: ShardAwarePort::Listen(dead),
                extensions: doppio_stub::scylla::SCYLLA_EXTENSIONS,
            }),
            ..StubConfig::default()
        },
    );
    back_tx.send(back.memory()).unwrap();
    let stats = client.join().unwrap();
    let through_port = back.connections();
    assert!(
        through_port > 0,
        "no connection came through the returned port: {stats:?}"
    );
    // Those that did landed on the shard they were aimed at: no new fallback.
    assert_eq!(stats.shard_aware_fallbacks, fallbacks, "{stats:?}");
    back.stop();
    node.stop();
}

support::runtime_tests!(;
    and_sim:
    every_request_lands_on_the_shard_that_owns_its_token,
    an_unreachable_shard_aware_port_falls_back_to_the_plain_port,
    the_shard_aware_port_is_used_again_once_it_is_back,
);
