//! Helpers shared by the driver's integration tests.

// Each test binary compiles this module and uses only some of its helpers.
#![allow(dead_code)]

use std::net::SocketAddr;

use doppio::rt::Runtime;

/// The local Cassandra the tests use: `DOPPIO_CASSANDRA`, default 127.0.0.1:9042
/// (`scripts/test.sh` starts one with `scripts/cassandra.sh`).
pub fn cassandra() -> SocketAddr {
    std::env::var("DOPPIO_CASSANDRA")
        .unwrap_or_else(|_| "127.0.0.1:9042".into())
        .parse()
        .expect("DOPPIO_CASSANDRA is ADDR:PORT")
}

/// A stub server (perf/stub) in this process on `runtime`, on an ephemeral port, with these
/// TOML fault `rules` (not logged) and result `shape`: a node for the tests that need no
/// Cassandra. Stops when dropped.
pub fn stub(runtime: Runtime, rules: &str, shape: doppio_stub::Shape) -> doppio_stub::StubHandle {
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

/// One `#[test]` per runtime for each named `fn name(runtime: Runtime)`.
pub(crate) use doppio::rt::runtime_tests;

/// Runs `f` to completion on a fresh executor of `runtime` (not pinned: tests share the
/// cores); a panic inside fails the calling test.
pub fn on_runtime<T, F, Fut>(runtime: Runtime, name: &str, f: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T> + 'static,
{
    doppio::rt::run_on(runtime, &format!("{name}-{runtime}"), f)
        .unwrap_or_else(|e| panic!("[{name}] {e}"))
}

/// A keyspace name of the calling test's own (tests run in parallel and share the node).
pub fn keyspace(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("doppio_{test}_{}_{nanos}", std::process::id())
}

/// `CREATE KEYSPACE` with SimpleStrategy and one replica (the test node is alone).
pub fn create_keyspace_cql(ks: &str) -> String {
    format!(
        "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
    )
}

/// A session to `node` at consistency ONE with the given request timeout and lz4 choice.
pub async fn session_to(
    node: SocketAddr,
    compression: bool,
    timeout: std::time::Duration,
) -> doppio::Session {
    let mut c = doppio::SessionConfig::new(node);
    c.consistency = doppio::proto::consistency::Consistency::One;
    c.connection.request_timeout = timeout;
    c.handshake = doppio::handshake::HandshakeConfig {
        compression,
        ..doppio::handshake::HandshakeConfig::default()
    };
    doppio::Session::connect(c)
        .await
        .expect("connect to Cassandra")
}

/// The three-node test cluster (`scripts/cassandra-cluster.sh`): `DOPPIO_CLUSTER`, default
/// 127.0.0.21:9042 (its other nodes are .22 and .23).
pub fn cluster() -> SocketAddr {
    std::env::var("DOPPIO_CLUSTER")
        .unwrap_or_else(|_| "127.0.0.21:9042".into())
        .parse()
        .expect("DOPPIO_CLUSTER is ADDR:PORT")
}

/// Held by a test that stops, kills or freezes nodes of the three-node cluster: its two
/// runtimes' variants (and any other such test of the binary) take turns, since one would
/// otherwise find the nodes the other took away.
pub fn cluster_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `scripts/cassandra-cluster.sh ARGS` and panics with its output if it fails.
pub fn cluster_script(args: &[&str]) {
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
pub fn ring_owner(ring: &[(i64, SocketAddr)], token: i64) -> SocketAddr {
    let mut sorted = ring.to_vec();
    sorted.sort();
    sorted
        .iter()
        .find(|(t, _)| *t >= token)
        .unwrap_or(&sorted[0])
        .1
}

/// Polls `check` every 50 ms until it is true or `timeout` passes; returns how long it took.
pub async fn eventually(
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
