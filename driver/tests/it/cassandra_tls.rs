//! TLS against a real Cassandra whose native port speaks TLS only
//! (`scripts/cassandra-tls.sh start`: 127.0.0.41:9042, `DOPPIO_CASSANDRA_TLS`; its CA in
//! `DOPPIO_CASSANDRA_TLS_CA`, default `.cassandra-tls/tls/ca.pem`). `scripts/test.sh` starts
//! it.
//!
//! With the node's CA, a session and a cluster connect and query; with another CA, a
//! plaintext session against the TLS port, and a TLS session against the plaintext node
//! (`DOPPIO_CASSANDRA`), connect fails at once with a typed `Tls` error naming the node and
//! the kind of failure. Every connect runs under a generous timeout that fails the test on a
//! hang (no timing is asserted).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::time::Duration;

use doppio_driver::config::TlsConfig;
use doppio_driver::connection::ConnectionError;
use doppio_driver::error::ConnectError;
use doppio_driver::error::TlsFailure;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{Cluster, Error, ErrorKind, Session, SessionConfig};
use doppio_test_support::{cassandra_tls_ca, CASSANDRA, CASSANDRA_TLS};

use crate::support;
use support::pki;

use support::on_runtime;

/// Far longer than any of these connects takes; reaching it means a hang.
const HANG: Duration = Duration::from_secs(60);

fn tls_node() -> SocketAddr {
    CASSANDRA_TLS.addr()
}

fn node_tls() -> TlsConfig {
    TlsConfig::from_ca_file(cassandra_tls_ca()).unwrap_or_else(|e| {
        panic!(
            "{}: {} (made by scripts/cassandra-tls.sh start)",
            doppio_driver::error::Report(&e),
            cassandra_tls_ca().display()
        )
    })
}

fn config(node: SocketAddr, tls: Option<TlsConfig>) -> SessionConfig {
    let mut c = SessionConfig::new(node);
    c.consistency = Consistency::One;
    c.startup_timeout = Duration::from_secs(20);
    c.connection.connect_timeout = Duration::from_secs(20);
    c.connection.tls = tls;
    c
}

/// Connects; a failure is returned as the error that ended the connect (TLS failures are
/// `ConnectError::Refused`: checked here).
async fn connect(config: SessionConfig) -> Result<Session, Error> {
    doppio_driver::rt::timeout(HANG, Session::connect(config))
        .await
        .unwrap_or_else(|_| panic!("connect hung for {HANG:?}"))
        .map_err(|e| {
            if e.cause().kind() == doppio_driver::ErrorKind::Tls {
                assert!(matches!(e, ConnectError::Refused(_)), "{e:?}");
            }
            e.into()
        })
}

fn assert_tls(err: &Error, node: SocketAddr, want: TlsFailure) {
    assert_eq!(err.kind(), ErrorKind::Tls, "{err}");
    match err {
        Error::ConnectionBroken(c @ ConnectionError::Tls { addr, failure, .. }) => {
            assert_eq!(*addr, node, "{c}");
            assert_eq!(*failure, want, "{c}");
        }
        other => panic!("expected a TLS error, got {other:?}"),
    }
}

fn a_session_connects_and_queries_over_tls(runtime: Runtime) {
    let node = tls_node();
    on_runtime(runtime, "tls-query", move || async move {
        let mut c = config(node, Some(node_tls()));
        // Compressed and not: lz4 bodies (v4) or segments (v5) inside TLS records.
        for compression in [false, true] {
            c.handshake.compression = compression;
            let s = connect(c.clone()).await.unwrap();
            let r = s
                .query_unpaged("SELECT release_version FROM system.local", &())
                .await
                .unwrap();
            let rows: Vec<(String,)> = r.typed_rows().unwrap();
            assert_eq!(rows.len(), 1);
            assert!(rows[0].0.starts_with("5."), "{rows:?}");
            // Many requests in flight at once: batches of frames per TLS record and reads
            // that end inside a record.
            let p = s
                .prepare("SELECT key, cluster_name FROM system.local WHERE key = ?")
                .await
                .unwrap();
            let mut pending = Vec::new();
            for _ in 0..200 {
                pending.push(s.execute_unpaged(&p, &("local",)));
            }
            for f in pending {
                assert_eq!(f.await.unwrap().rows_count(), 1);
            }
            let stats = s.stats();
            assert!(stats.connections.bytes_read > 0, "{stats:?}");
        }
    });
}

fn a_cluster_of_two_shards_connects_over_tls(runtime: Runtime) {
    let node = tls_node();
    let cluster = Cluster::builder()
        .session_config(
            SessionConfig::new(node)
                .with_tls(node_tls())
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
}

fn a_node_certificate_of_another_ca_is_refused(runtime: Runtime) {
    let node = tls_node();
    on_runtime(runtime, "tls-wrong-ca", move || async move {
        let other = pki::Pki::new("cassandra-other-ca");
        let tls = TlsConfig::from_ca_file(other.ca_file()).unwrap();
        let err = connect(config(node, Some(tls))).await.unwrap_err();
        assert_tls(&err, node, TlsFailure::UnknownCa);
        assert!(err.to_string().contains(&node.to_string()), "{err}");
    });
}

fn a_plaintext_session_against_the_tls_port_is_a_clear_error(runtime: Runtime) {
    let node = tls_node();
    on_runtime(runtime, "tls-plaintext", move || async move {
        let err = connect(config(node, None)).await.unwrap_err();
        assert_tls(&err, node, TlsFailure::NodeRequiresTls);
        assert!(err.to_string().contains("TLS"), "{err}");
    });
}

fn a_tls_session_against_a_plaintext_port_is_a_clear_error(runtime: Runtime) {
    // The plaintext node is the ordinary test node.
    let Some(plain) = CASSANDRA.answering() else {
        return;
    };
    on_runtime(runtime, "tls-to-plain", move || async move {
        let err = connect(config(plain, Some(node_tls()))).await.unwrap_err();
        assert_tls(&err, plain, TlsFailure::NotTls);
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA_TLS;
    a_session_connects_and_queries_over_tls,
    a_cluster_of_two_shards_connects_over_tls,
    a_node_certificate_of_another_ca_is_refused,
    a_plaintext_session_against_the_tls_port_is_a_clear_error,
    a_tls_session_against_a_plaintext_port_is_a_clear_error,
);
