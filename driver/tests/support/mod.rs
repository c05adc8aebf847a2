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
