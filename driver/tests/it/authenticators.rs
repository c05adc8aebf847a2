//! Which server authenticators get the password: the stub playing a node that requires
//! authentication (`StubConfig::authenticator`, which names the class in AUTHENTICATE and
//! accepts any credentials). A known SASL PLAIN authenticator gets the credentials and the
//! session works; an unknown one gets none, and the connection fails with an
//! `Authentication` error naming the class and never the password. Every runtime (on the
//! simulated one the stub is served in memory on the test's executor).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::time::Duration;

use doppio_driver::auth::PasswordAuthenticator;
use doppio_driver::config::HandshakeConfig;
use doppio_driver::error::ConnectError;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::{Error, Session, SessionConfig};

use crate::support;

use support::StubNode;

const SECRET: &str = "never-printed-7f3a";

fn stub_asking_for(runtime: Runtime, class: &str) -> StubNode {
    StubNode::start(
        runtime,
        doppio_stub::StubConfig {
            log_rules: false,
            authenticator: Some(class.to_owned()),
            ..doppio_stub::StubConfig::default()
        },
    )
}

fn config(node: std::net::SocketAddr) -> SessionConfig {
    let mut c = SessionConfig::new(node);
    c.consistency = Consistency::One;
    c.startup_timeout = Duration::from_secs(10);
    c.handshake = {
        let mut cfg = HandshakeConfig::default();
        cfg.authenticator = Some(PasswordAuthenticator::new("cassandra", SECRET).factory());
        cfg
    };
    c
}

fn a_known_plain_authenticator_gets_the_credentials(runtime: Runtime) {
    let stub = stub_asking_for(runtime, "org.apache.cassandra.auth.PasswordAuthenticator");
    let addr = stub.addr();
    stub.run("auth-known", move || async move {
        let session = Session::connect(config(addr)).await.unwrap();
        session.query_unpaged("SELECT v FROM t", &()).await.unwrap();
        session.close("done");
    });
}

fn an_unknown_authenticator_gets_no_password_and_an_error_naming_it(runtime: Runtime) {
    let stub = stub_asking_for(runtime, "com.example.KerberosAuthenticator");
    let addr = stub.addr();
    let text = stub.run("auth-unknown", move || async move {
        let err = Session::connect(config(addr)).await.unwrap_err();
        let text = doppio_driver::error::Report(&err).to_string();
        assert!(
            matches!(err, ConnectError::Refused(Error::Authentication { .. })),
            "an authentication error: {text}"
        );
        (text, format!("{err:?}"))
    });
    eprintln!("{}", text.0);
    assert!(
        text.0.contains("com.example.KerberosAuthenticator"),
        "{}",
        text.0
    );
    assert!(
        text.0.contains(&addr.to_string()),
        "names the node: {}",
        text.0
    );
    assert!(
        !text.0.contains(SECRET) && !text.1.contains(SECRET),
        "{text:?}"
    );
}

support::runtime_tests!(;
    and_sim:
    a_known_plain_authenticator_gets_the_credentials,
    an_unknown_authenticator_gets_no_password_and_an_error_naming_it,
);
