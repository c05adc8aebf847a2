//! Helpers shared by the driver's integration tests.

// Each test binary compiles this module and uses only some of its helpers.
#![allow(dead_code)]

use std::net::SocketAddr;

use glommio::LocalExecutorBuilder;

/// The local Cassandra the tests use: `DOPPIO_CASSANDRA`, default 127.0.0.1:9042
/// (`scripts/test.sh` starts one with `scripts/cassandra.sh`).
pub fn cassandra() -> SocketAddr {
    std::env::var("DOPPIO_CASSANDRA")
        .unwrap_or_else(|_| "127.0.0.1:9042".into())
        .parse()
        .expect("DOPPIO_CASSANDRA is ADDR:PORT")
}

/// Runs `f` to completion on a fresh glommio executor (not pinned: tests share the cores);
/// a panic inside fails the calling test.
pub fn on_glommio<F, Fut>(name: &str, f: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    LocalExecutorBuilder::default()
        .name(name)
        .spawn(f)
        .expect("start a glommio executor")
        .join()
        .expect("the test's executor panicked");
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
