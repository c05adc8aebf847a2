//! The `Cluster` entry point against a real Cassandra: shards with their own sessions,
//! contact-point fallback, a clear error for an unreachable cluster, and graceful shutdown
//! (running work is given the grace period, then fails with a clear reason; nothing hangs).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::cluster::ClusterError;
use doppio_driver::error::ConnectError;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::SessionConfig;
use doppio_driver::{Cluster, Error};

use crate::support;

use doppio_driver::rt::Runtime;
use support::cassandra;

fn builder(runtime: Runtime) -> doppio_driver::ClusterBuilder {
    Cluster::builder()
        .runtime(runtime)
        .cores(&[0, 1])
        .pin(false) // tests share the machine's cores
}

fn the_cluster_handle_is_send_and_sync(_runtime: Runtime) {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Cluster>();
    assert_send_sync::<ClusterError>();
}

fn every_shard_has_its_own_connected_session(runtime: Runtime) {
    let cluster = builder(runtime)
        .session_config(
            SessionConfig::new(cassandra())
                .with_connections(2)
                .with_compression(true)
                .with_consistency(Consistency::One),
        )
        .build()
        .unwrap();
    assert_eq!(cluster.shards(), 2);
    let out = cluster
        .run_on_shards(|session| async move {
            let r = session
                .query_unpaged("SELECT release_version FROM system.local", &())
                .await?;
            let version: Vec<(String,)> = r.typed_rows()?;
            let thread = std::thread::current().name().unwrap_or_default().to_owned();
            Ok::<_, Error>((
                version[0].0.clone(),
                thread,
                session.node_at(session.node()).unwrap().open_connections(),
            ))
        })
        .unwrap();
    assert_eq!(out.len(), 2);
    for (shard, r) in out.iter().enumerate() {
        let (version, thread, open) = r.as_ref().unwrap();
        assert!(version.starts_with("5."), "{version}");
        // glommio appends its executor id to the name; doppio's own runtime does not.
        let name = format!("doppio-shard-{shard}");
        assert!(
            *thread == name || thread.starts_with(&format!("{name}-")),
            "{thread}"
        );
        assert!(*open >= 1);
    }
    assert!(cluster.shutdown().is_empty());
    let refused = cluster.run_on_shards(|_| async {}).unwrap_err();
    assert!(matches!(refused, ClusterError::Runtime(_)), "{refused}");
}

fn a_dead_contact_point_is_skipped_for_a_live_one(runtime: Runtime) {
    // Port 1 on loopback: connection refused at once.
    let dead: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let cluster = builder(runtime)
        .session_config(
            SessionConfig::new(dead)
                .with_contact_points([cassandra()])
                .with_connect_timeout(Duration::from_secs(2))
                .with_consistency(Consistency::One),
        )
        .build()
        .unwrap();
    let nodes = cluster
        .run_on_shards(|session| async move { session.node() })
        .unwrap();
    assert_eq!(nodes, vec![cassandra(), cassandra()]);
}

fn an_unreachable_cluster_is_a_clear_error_within_the_startup_timeout(runtime: Runtime) {
    let dead: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let started = Instant::now();
    let err = builder(runtime)
        .session_config(
            SessionConfig::new(dead)
                .with_startup_timeout(Duration::from_millis(500))
                .with_consistency(Consistency::One),
        )
        .build()
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    match &err {
        ClusterError::Connect { error, .. } => {
            assert!(
                matches!(error, ConnectError::Unreachable(Error::NoConnection(_))),
                "{error}"
            );
            assert!(error.to_string().contains("127.0.0.1:1"), "{error}");
        }
        other => panic!("expected a connect error, got {other}"),
    }
}

/// Where io_uring cannot be set up as asked, `build` fails at once with one sentence that
/// names io_uring, the cause and the glommio fallback (here a buffer count the kernel cannot
/// take: a ring size must be a power of two), never a panic or a hang.
#[test]
fn an_unusable_io_uring_is_one_clear_error_naming_the_glommio_fallback() {
    let _turn = doppio_test_support::file_turn(module_path!());
    let started = Instant::now();
    let err = builder(Runtime::Uring)
        .session_config(SessionConfig::new(cassandra()).with_consistency(Consistency::One))
        .uring_config(doppio_driver::rt::uring::Config {
            buffers: 3,
            ..doppio_driver::rt::uring::Config::default()
        })
        .build()
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "no hang");
    assert!(matches!(err, ClusterError::Runtime(_)), "{err}");
    let text = err.to_string();
    eprintln!("{text}");
    for part in [
        "io_uring is not usable here",
        "power of two",
        "glommio",
        "shard 0",
    ] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
    assert_eq!(text.lines().count(), 1, "one sentence: {text}");
}

fn shutdown_gives_running_work_its_grace_then_fails_it_clearly(runtime: Runtime) {
    let cluster = Arc::new(
        builder(runtime)
            .session_config(SessionConfig::new(cassandra()).with_consistency(Consistency::One))
            .cores(&[0])
            .shutdown_grace(Duration::from_millis(300))
            .build()
            .unwrap(),
    );
    let runner = {
        let cluster = cluster.clone();
        std::thread::spawn(move || {
            cluster.run_on_shards(|session| async move {
                // Work that never ends by itself: requests until one fails.
                let mut done = 0u64;
                loop {
                    match session
                        .query_unpaged("SELECT key FROM system.local", &())
                        .await
                    {
                        Ok(_) => done += 1,
                        Err(e) => return (done, e),
                    }
                }
            })
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    assert!(cluster.shutdown().is_empty());
    let elapsed = started.elapsed();
    let results = runner.join().unwrap().unwrap();
    let (done, error) = &results[0];
    assert!(*done > 0, "the work ran before shutdown");
    let text = error.to_string();
    assert!(
        text.contains("shutting down"),
        "the failure says why: {text}"
    );
    assert!(
        elapsed >= Duration::from_millis(300),
        "the grace period was given: {elapsed:?}"
    );
    assert!(elapsed < Duration::from_secs(10), "no hang: {elapsed:?}");
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    every_shard_has_its_own_connected_session,
    a_dead_contact_point_is_skipped_for_a_live_one,
    shutdown_gives_running_work_its_grace_then_fails_it_clearly,
);

// No Cassandra needed: these run everywhere.
mod without_cassandra {
    use super::*;
    support::runtime_tests!(
        the_cluster_handle_is_send_and_sync,
        an_unreachable_cluster_is_a_clear_error_within_the_startup_timeout,
    );
}
