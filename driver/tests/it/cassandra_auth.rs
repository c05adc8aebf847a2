//! Authentication against a real Cassandra with PasswordAuthenticator on
//! (`scripts/cassandra-auth.sh start`: 127.0.0.11:9042, user cassandra / cassandra; the
//! address can be changed with `DOPPIO_CASSANDRA_AUTH`). `scripts/test.sh` starts it.
//!
//! The right password opens a working session; a wrong one, or none, fails at once with an
//! `Authentication` error that names the node and gives the server's reason.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use doppio_driver::auth::{AuthError, PasswordAuthenticator};
use doppio_driver::cluster::ClusterError;
use doppio_driver::config::HandshakeConfig;
use doppio_driver::error::ConnectError;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::{Cluster, Error, Session, SessionConfig};

use crate::support;

use doppio_driver::rt::Runtime;
use support::on_runtime;

/// The node with authentication (every test here is gated on it answering).
fn auth_node() -> SocketAddr {
    doppio_test_support::CASSANDRA_AUTH.addr()
}

fn config(node: SocketAddr, password: Option<&str>) -> SessionConfig {
    let mut c = SessionConfig::new(node);
    c.consistency = Consistency::One;
    c.startup_timeout = Duration::from_secs(20);
    c.handshake = HandshakeConfig::default();
    c.handshake.compression = true;
    c.handshake.authenticator =
        password.map(|p| PasswordAuthenticator::new("cassandra", p).factory());
    c
}

fn the_right_password_opens_a_working_session(runtime: Runtime) {
    let node = auth_node();
    on_runtime(runtime, "auth-ok", move || async move {
        let s = Session::connect(config(node, Some("cassandra")))
            .await
            .unwrap();
        let r = s
            .query_unpaged(
                "SELECT role, is_superuser FROM system_auth.roles WHERE role = 'cassandra'",
                &(),
            )
            .await
            .unwrap();
        let rows: Vec<(String, bool)> = r.typed_rows().unwrap();
        assert_eq!(rows, vec![("cassandra".to_string(), true)]);
    });
}

fn a_wrong_password_fails_at_once_naming_the_node_and_the_reason(runtime: Runtime) {
    let node = auth_node();
    on_runtime(runtime, "auth-wrong", move || async move {
        let started = Instant::now();
        let err = Session::connect(config(node, Some("not the password")))
            .await
            .unwrap_err();
        // Not after the 20 s connect timeout: the refusal ends the attempt.
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        match &err {
            ConnectError::Refused(Error::Authentication { node: n, error }) => {
                assert_eq!(*n, node);
                assert!(matches!(error, AuthError::Refused(_)), "{error:?}");
                let reason = error.to_string();
                assert!(
                    reason.to_lowercase().contains("bad credentials")
                        || reason.to_lowercase().contains("incorrect"),
                    "the server's reason is kept: {reason}"
                );
            }
            other => panic!("expected an authentication error, got {other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains(&node.to_string()), "{text}");
    });
}

fn no_credentials_for_a_node_that_wants_them_is_a_clear_error(runtime: Runtime) {
    let node = auth_node();
    on_runtime(runtime, "auth-none", move || async move {
        let err = Session::connect(config(node, None)).await.unwrap_err();
        assert!(
            matches!(&err, ConnectError::Refused(Error::Authentication { error: error @ AuthError::NotConfigured { .. }, .. })
                if error.to_string().contains("no credentials")),
            "{err}"
        );
    });
}

fn the_cluster_builder_passes_credentials_to_every_shard(runtime: Runtime) {
    let node = auth_node();
    let cluster = Cluster::builder()
        .session_config(
            SessionConfig::new(node)
                .with_credentials("cassandra", "cassandra")
                .with_consistency(Consistency::One),
        )
        .runtime(runtime)
        .cores(&[0, 1])
        .pin(false)
        .build()
        .unwrap();
    let out = cluster
        .run_on_shards(|s| async move {
            s.query_unpaged("SELECT key FROM system.local", &())
                .await
                .map(|r| r.rows_count())
        })
        .unwrap();
    let counts: Vec<usize> = out
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{}", doppio_driver::error::Report(&e))))
        .collect();
    assert_eq!(counts, vec![1, 1]);
    let err = Cluster::builder()
        .session_config(SessionConfig::new(node).with_credentials("cassandra", "wrong"))
        .runtime(runtime)
        .cores(&[0])
        .pin(false)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            &err,
            ClusterError::Connect {
                error: ConnectError::Refused(Error::Authentication { .. }),
                ..
            }
        ),
        "{err}"
    );
}

support::cassandra_runtime_tests!(
    CASSANDRA_AUTH;
    the_right_password_opens_a_working_session,
    a_wrong_password_fails_at_once_naming_the_node_and_the_reason,
    no_credentials_for_a_node_that_wants_them_is_a_clear_error,
    the_cluster_builder_passes_credentials_to_every_shard,
);
