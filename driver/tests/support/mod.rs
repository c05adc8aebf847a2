//! Helpers shared by the driver's integration tests.
//!
//! Files named `cassandra_*.rs` hold the tests that need a real Cassandra; every such test
//! is gated by [`cassandra_runtime_tests!`] (or, outside that macro, by
//! `doppio_test_support::Node::answering` at its start): it runs when its node answers, and is skipped with a message outside CI
//! or fails in CI when it does not (`doppio-test-support`). Every other file runs with no
//! Cassandra: the loopback stub ([`stub`]) or small misbehaving peers stand in for nodes.

// Each test binary compiles this module and uses only some of its helpers.
#![allow(dead_code)]

use std::net::SocketAddr;

use doppio::rt::Runtime;

use doppio_test_support::{CASSANDRA, CASSANDRA_CLUSTER};

/// The local Cassandra the tests use: `DOPPIO_CASSANDRA`, default 127.0.0.1:9042
/// (`scripts/test.sh` starts one with `scripts/cassandra.sh`).
pub(crate) fn cassandra() -> SocketAddr {
    CASSANDRA.addr()
}

/// A stub server (perf/stub) in this process on `runtime`, on an ephemeral port, with these
/// TOML fault `rules` (not logged) and result `shape`: a node for the tests that need no
/// Cassandra. Stops when dropped.
pub(crate) fn stub(
    runtime: Runtime,
    rules: &str,
    shape: doppio_stub::Shape,
) -> doppio_stub::StubHandle {
    let rules = doppio_stub::Rules::parse(rules).unwrap_or_else(|e| panic!("stub rules: {e}"));
    doppio_stub::Stub::start(doppio_stub::StubConfig {
        runtime,
        shape,
        rules,
        log_rules: false,
        ..doppio_stub::StubConfig::default()
    })
    .unwrap_or_else(|e| panic!("start the stub: {e}"))
}

/// One `#[test]` per runtime for each named `fn name(runtime: Runtime)` (and one on the
/// simulated runtime for each name after `and_sim:`).
#[allow(unused_imports)] // a binary of Cassandra tests only may not use it
pub(crate) use doppio::rt::runtime_tests;

/// [`runtime_tests!`] for tests that need the Cassandra `node` (the name of a
/// `doppio_test_support::Node`: `CASSANDRA`, `CASSANDRA_AUTH`, `CASSANDRA_CLUSTER`): one `#[test]`
/// per runtime for each named `fn name(runtime: Runtime)`, which runs it if the node
/// answers, and otherwise skips (outside CI, with a message) or fails (in CI).
#[allow(unused_macros)] // binaries without Cassandra tests
macro_rules! cassandra_runtime_tests {
    ($node:ident; $($name:ident),* $(,)?) => {
        crate::support::cassandra_runtime_tests!(@on glommio, Glommio, $node; $($name),*);
        crate::support::cassandra_runtime_tests!(@on uring, Uring, $node; $($name),*);
    };
    (@on $module:ident, $runtime:ident, $node:ident; $($name:ident),*) => {
        mod $module {
            $(#[test]
            fn $name() {
                if doppio_test_support::$node.answering().is_some() {
                    super::$name(doppio::rt::Runtime::$runtime)
                }
            })*
        }
    };
}
#[allow(unused_imports)] // binaries without Cassandra tests
pub(crate) use cassandra_runtime_tests;

/// Runs `f` to completion on a fresh executor of `runtime` (not pinned: tests share the
/// cores); a panic inside fails the calling test.
pub(crate) fn on_runtime<T, F, Fut>(runtime: Runtime, name: &str, f: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T> + 'static,
{
    doppio::rt::run_on(runtime, &format!("{name}-{runtime}"), f)
        .unwrap_or_else(|e| panic!("[{name}] {e}"))
}

/// A keyspace name of the calling test's own (tests run in parallel and share the node).
pub(crate) fn keyspace(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("doppio_{test}_{}_{nanos}", std::process::id())
}

/// `CREATE KEYSPACE` with SimpleStrategy and one replica (the test node is alone).
pub(crate) fn create_keyspace_cql(ks: &str) -> String {
    format!(
        "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
    )
}

/// A session to `node` at consistency ONE with the given request timeout and lz4 choice.
pub(crate) async fn session_to(
    node: SocketAddr,
    compression: bool,
    timeout: std::time::Duration,
) -> doppio::Session {
    let mut c = doppio::SessionConfig::new(node);
    c.consistency = doppio::proto::consistency::Consistency::One;
    c.connection.request_timeout = timeout;
    c.handshake = doppio::HandshakeConfig {
        compression,
        ..doppio::HandshakeConfig::default()
    };
    doppio::Session::connect(c)
        .await
        .expect("connect to Cassandra")
}

/// The three-node test cluster (`scripts/cassandra-cluster.sh`): `DOPPIO_CLUSTER`, default
/// 127.0.0.21:9042 (its other nodes are .22 and .23).
pub(crate) fn cluster() -> SocketAddr {
    CASSANDRA_CLUSTER.addr()
}

/// Held by a test that stops, kills or freezes nodes of the three-node cluster: its two
/// runtimes' variants (and any other such test of the binary) take turns, since one would
/// otherwise find the nodes the other took away.
pub(crate) fn cluster_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `scripts/cassandra-cluster.sh ARGS` and panics with its output if it fails.
pub(crate) fn cluster_script(args: &[&str]) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scripts")
        .join("cassandra-cluster.sh");
    let out = std::process::Command::new(&script)
        .args(args)
        .output()
        .expect("run scripts/cassandra-cluster.sh");
    assert!(
        out.status.success(),
        "cassandra-cluster.sh {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The owner of `token` on a ring of `(token, node)` pairs: the node of the first ring
/// token at or after it, wrapping around (written apart from the driver's own ring, to
/// check it).
pub(crate) fn ring_owner(ring: &[(i64, SocketAddr)], token: i64) -> SocketAddr {
    let mut sorted = ring.to_vec();
    sorted.sort();
    sorted
        .iter()
        .find(|(t, _)| *t >= token)
        .unwrap_or(&sorted[0])
        .1
}

/// Polls `check` every 50 ms until it is true or `timeout` passes; returns how long it took.
pub(crate) async fn eventually(
    timeout: std::time::Duration,
    mut check: impl FnMut() -> bool,
) -> Option<std::time::Duration> {
    let start = std::time::Instant::now();
    while start.elapsed() < timeout {
        if check() {
            return Some(start.elapsed());
        }
        doppio::rt::sleep(std::time::Duration::from_millis(50)).await;
    }
    None
}

/// An OPTIONS request frame on `stream`, written into `buf` (a request body for
/// `Connection::request` that any node answers).
pub(crate) fn options(
    buf: &mut bytes::BytesMut,
    stream: i16,
) -> Result<(), doppio::proto::ProtoError> {
    use doppio::proto::frame::Flags;
    use doppio::proto::request::{encode_request, Options};
    encode_request(buf, stream, Flags::NONE, &Options)
}

/// A peer that accepts one connection and then does `behave` with it, on a plain thread.
pub(crate) fn misbehaving_peer(behave: fn(std::net::TcpStream)) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            behave(stream);
        }
    });
    addr
}

/// The stub playing `nodes` emulated ScyllaDB nodes of `shards` shards each (replication
/// factor `rf`, 8 tokens per node) with keyspace `ks` routed, on `runtime`: the base the
/// cluster tests add their own settings to (`..scylla_cluster(...)`).
pub(crate) fn scylla_cluster(
    runtime: Runtime,
    nodes: u8,
    shards: u16,
    rf: u8,
) -> doppio_stub::StubConfig {
    let nonzero = |n: u16| std::num::NonZeroU16::new(n).expect("not zero");
    let nonzero8 = |n: u8| std::num::NonZeroU8::new(n).expect("not zero");
    doppio_stub::StubConfig {
        runtime,
        log_rules: false,
        routed_keyspace: Some("ks".into()),
        scylla: Some(doppio_stub::ScyllaShards::new(
            nonzero(shards),
            [127, 0, 0, 1].into(),
        )),
        cluster: Some(doppio_stub::Cluster {
            nodes: nonzero8(nodes),
            replication_factor: nonzero8(rf),
            vnodes: nonzero(8),
        }),
        ..doppio_stub::StubConfig::default()
    }
}

/// Waits (bounded: 30 s) until `s` has `nodes` nodes, each with at least `per_node` open
/// connections: the pools grow to one connection per ScyllaDB shard once their first
/// connection reported the shards, in the background (a wait, not a timing assertion).
pub(crate) async fn wait_for_connections(s: &doppio::Session, nodes: usize, per_node: usize) {
    let view = s.view();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let open: Vec<usize> = (0..view.len() as u16)
            .map(|i| view.node(i).map_or(0, |n| n.open_connections()))
            .collect();
        if open.len() == nodes && open.iter().all(|&n| n >= per_node) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "connections per node: {open:?}"
        );
        doppio::rt::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// The next random key of 1 to 8 bytes (xorshift of `x`).
pub(crate) fn next_key(x: &mut u64) -> Vec<u8> {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    x.to_be_bytes()[..(1 + (*x % 8) as usize)].to_vec()
}
