//! TLS failures that need no Cassandra, on both real runtimes: a small rustls server on a thread
//! serves certificates this test makes (rcgen), so that the node's certificate can be
//! expired, carry the wrong name, chain to an unknown CA, or the server can require a client
//! certificate; a listener that never answers stands for a node that never completes the
//! handshake. Each failure must be a typed `Tls` error naming its kind, returned promptly:
//! every connect runs under a generous timeout that fails the test on a hang (no timing is
//! asserted). A session against the stub serving TLS, and the typed errors of bad files,
//! also run on the simulated runtime (the stub in memory on the test's executor).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::time::Duration;

use doppio_driver::config::TlsConfig;
use doppio_driver::connection::{Connection, ConnectionConfig, ConnectionError};
use doppio_driver::error::ConnectError;
use doppio_driver::error::TlsFailure;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{Error, ErrorKind, Session, SessionConfig};

use crate::support;
use support::pki;

use pki::{tls_server, Pki, Validity};
use support::{on_runtime, StubNode};

/// Far longer than any of these connects takes; reaching it means a hang.
const HANG: Duration = Duration::from_secs(60);

fn session_config(node: SocketAddr, tls: TlsConfig) -> SessionConfig {
    let mut c = SessionConfig::new(node);
    c.consistency = Consistency::One;
    c.startup_timeout = Duration::from_secs(20);
    c.connection.connect_timeout = Duration::from_secs(20);
    c.connection.tls = Some(tls);
    c
}

/// Connects a session that must fail, and returns its error (a hang fails the test).
async fn failed_connect(config: SessionConfig) -> Error {
    match doppio_driver::rt::timeout(HANG, Session::connect(config)).await {
        Ok(Ok(_)) => panic!("the session connected"),
        Ok(Err(e)) => {
            // A TLS failure is the node refusing these settings for good.
            assert!(matches!(e, ConnectError::Refused(_)), "{e:?}");
            e.into()
        }
        Err(_) => panic!("connect hung for {HANG:?}"),
    }
}

fn assert_tls(err: &Error, node: SocketAddr, want: TlsFailure) {
    assert_eq!(err.kind(), ErrorKind::Tls, "{err}");
    match err {
        Error::ConnectionBroken(c @ ConnectionError::Tls { addr, failure, .. }) => {
            assert_eq!(*addr, node, "{c}");
            assert_eq!(*failure, want, "{c}");
            assert_eq!(c.tls_failure(), Some(want));
        }
        other => panic!("expected a TLS error, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains(&node.to_string()),
        "the node is named: {text}"
    );
}

fn an_expired_node_certificate_is_refused(runtime: Runtime) {
    on_runtime(runtime, "tls-expired", || async {
        let pki = Pki::new("expired");
        let leaf = pki.leaf("node", &["127.0.0.1"], Validity::Expired);
        let (node, seen) = tls_server(&leaf, None, 1);
        let tls = TlsConfig::from_ca_file(pki.ca_file()).unwrap();
        let err = failed_connect(session_config(node, tls)).await;
        assert_tls(&err, node, TlsFailure::Expired);
        assert!(!seen.recv().unwrap().handshake_done);
    });
}

fn a_node_certificate_for_another_name_is_refused_unless_that_name_is_set(runtime: Runtime) {
    on_runtime(runtime, "tls-name", || async {
        let pki = Pki::new("name");
        let leaf = pki.leaf("node", &["db.example.invalid"], Validity::Current);
        let (node, seen) = tls_server(&leaf, None, 2);
        let tls = TlsConfig::from_ca_file(pki.ca_file()).unwrap();
        let err = failed_connect(session_config(node, tls.clone())).await;
        assert_tls(&err, node, TlsFailure::NameMismatch);
        assert!(!seen.recv().unwrap().handshake_done);
        // The same certificate passes when the name it carries is the one expected.
        let named = tls.with_server_name("db.example.invalid").unwrap();
        let config = {
            let mut cfg = ConnectionConfig::default();
            cfg.tls = Some(named);
            cfg
        };
        let conn = doppio_driver::rt::timeout(HANG, Connection::connect(node, config))
            .await
            .expect("no hang")
            .unwrap();
        assert!(seen.recv().unwrap().handshake_done);
        conn.close("done");
    });
}

fn a_node_certificate_of_an_unknown_ca_is_refused(runtime: Runtime) {
    on_runtime(runtime, "tls-ca", || async {
        let theirs = Pki::new("theirs");
        let ours = Pki::new("ours");
        let leaf = theirs.leaf("node", &["127.0.0.1"], Validity::Current);
        let (node, _seen) = tls_server(&leaf, None, 1);
        let tls = TlsConfig::from_ca_file(ours.ca_file()).unwrap();
        let err = failed_connect(session_config(node, tls)).await;
        assert_tls(&err, node, TlsFailure::UnknownCa);
    });
}

fn a_node_that_never_answers_the_handshake_times_out(runtime: Runtime) {
    on_runtime(runtime, "tls-silent", || async {
        let pki = Pki::new("silent");
        let node = pki::silent_server();
        let tls = TlsConfig::from_ca_file(pki.ca_file()).unwrap();
        let config = {
            let mut cfg = ConnectionConfig::default();
            cfg.tls = Some(tls);
            cfg.connect_timeout = Duration::from_millis(500);
            cfg
        };
        let err = doppio_driver::rt::timeout(HANG, Connection::connect(node, config))
            .await
            .expect("no hang")
            .unwrap_err();
        assert_eq!(err.tls_failure(), Some(TlsFailure::TimedOut), "{err}");
        assert_eq!(err.addr(), node);
    });
}

fn a_client_certificate_is_shown_and_its_absence_refused(runtime: Runtime) {
    on_runtime(runtime, "tls-client", || async {
        let pki = Pki::new("client");
        let leaf = pki.leaf("node", &["127.0.0.1"], Validity::Current);
        let client = pki.leaf("client", &["doppio-client"], Validity::Current);
        let (node, seen) = tls_server(&leaf, Some(&pki), 2);
        let tls = TlsConfig::from_ca_file(pki.ca_file()).unwrap();
        let with_cert = tls
            .clone()
            .with_client_cert(&client.cert_file, &client.key_file)
            .unwrap();
        assert!(with_cert.has_client_cert());
        let config = {
            let mut cfg = ConnectionConfig::default();
            cfg.tls = Some(with_cert);
            cfg
        };
        let conn = doppio_driver::rt::timeout(HANG, Connection::connect(node, config))
            .await
            .expect("no hang")
            .unwrap();
        let shown = seen.recv().unwrap();
        assert!(shown.handshake_done && shown.client_cert, "{shown:?}");
        conn.close("done");
        // Without one, the server refuses (in TLS 1.3 after the client's last flight: the
        // session's first request meets the alert).
        let err = failed_connect(session_config(node, tls)).await;
        assert_tls(&err, node, TlsFailure::Refused);
    });
}

fn a_plaintext_session_meeting_a_tls_alert_is_a_clear_error(runtime: Runtime) {
    on_runtime(runtime, "tls-plaintext-alert", || async {
        // rustls answers the plaintext OPTIONS with an alert record: the driver recognises
        // TLS in the first bytes.
        let pki = Pki::new("alert");
        let leaf = pki.leaf("node", &["127.0.0.1"], Validity::Current);
        let (node, _seen) = tls_server(&leaf, None, 1);
        let mut config = session_config(node, TlsConfig::from_ca_file(pki.ca_file()).unwrap());
        config.connection.tls = None;
        let err = failed_connect(config).await;
        assert_tls(&err, node, TlsFailure::NodeRequiresTls);
        assert!(
            err.to_string()
                .contains("answered a plaintext request with TLS"),
            "{err}"
        );
    });
}

fn a_session_queries_the_stub_serving_tls(runtime: Runtime) {
    let pki = Pki::new("stub");
    // The stub's address: loopback TCP, or in memory on the simulated runtime.
    let ip = match runtime {
        Runtime::Sim => support::SIM_NODE.ip().to_string(),
        _ => "127.0.0.1".to_owned(),
    };
    let leaf = pki.leaf("stub", &[&ip], Validity::Current);
    let tls = doppio_stub::tls::server_config(&leaf.cert_file, &leaf.key_file).unwrap();
    let stub = StubNode::start(
        runtime,
        doppio_stub::StubConfig {
            log_rules: false,
            tls: Some(tls),
            ..doppio_stub::StubConfig::default()
        },
    );
    let (addr, ca_file) = (stub.addr(), pki.ca_file());
    stub.run("tls-stub", move || async move {
        let config = session_config(addr, TlsConfig::from_ca_file(&ca_file).unwrap());
        let s = doppio_driver::rt::timeout(HANG, Session::connect(config))
            .await
            .expect("no hang")
            .unwrap();
        let p = s.prepare("SELECT v FROM ks.t WHERE k = ?").await.unwrap();
        let keys: Vec<(Vec<u8>,)> = (0..100u8).map(|i| (vec![i],)).collect();
        let pending: Vec<_> = keys.iter().map(|k| s.execute_unpaged(&p, k)).collect();
        for f in pending {
            assert_eq!(f.await.unwrap().rows_count(), 1);
        }
        assert!(s.stats().connections.bytes_read > 0);
        // A plaintext session against it: the stub's rustls answers with an alert.
        let mut plain = session_config(addr, TlsConfig::from_ca_file(&ca_file).unwrap());
        plain.connection.tls = None;
        let err = failed_connect(plain).await;
        assert_tls(&err, addr, TlsFailure::NodeRequiresTls);
    });
    stub.stop();
}

fn bad_tls_files_are_typed_errors(runtime: Runtime) {
    on_runtime(runtime, "tls-files", || async {
        let pki = Pki::new("files");
        let leaf = pki.leaf("client", &["doppio-client"], Validity::Current);
        let tls = TlsConfig::from_ca_file(pki.ca_file()).unwrap();
        // A key file that holds a certificate, not a key.
        let err = tls
            .clone()
            .with_client_cert(&leaf.cert_file, &leaf.cert_file)
            .unwrap_err();
        assert!(
            matches!(err, doppio_driver::error::TlsConfigError::Pem { .. }),
            "{err}"
        );
        let err = tls.with_server_name("not a name!").unwrap_err();
        assert!(
            matches!(err, doppio_driver::error::TlsConfigError::ServerName { .. }),
            "{err}"
        );
        let err = TlsConfig::from_ca_file(pki.dir().join("missing.pem")).unwrap_err();
        assert!(err.to_string().contains("missing.pem"), "{err}");
    });
}

// The rustls servers of `pki::tls_server` and `pki::silent_server` are plain threads on
// loopback sockets: those tests stay on the two real runtimes. The stub serves TLS in memory
// on the simulated one; the file errors need no peer.
support::runtime_tests!(
    an_expired_node_certificate_is_refused,
    a_node_certificate_for_another_name_is_refused_unless_that_name_is_set,
    a_node_certificate_of_an_unknown_ca_is_refused,
    a_node_that_never_answers_the_handshake_times_out,
    a_client_certificate_is_shown_and_its_absence_refused,
    a_plaintext_session_meeting_a_tls_alert_is_a_clear_error;
    and_sim:
    a_session_queries_the_stub_serving_tls,
    bad_tls_files_are_typed_errors,
);
