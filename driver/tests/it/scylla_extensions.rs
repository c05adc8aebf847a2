//! ScyllaDB's LWT mark and rate-limit error, against the stub emulating a ScyllaDB node
//! (no ScyllaDB runs here; the stub follows ScyllaDB's protocol-extensions document): the
//! driver turns both on in STARTUP when the node offers them, reads the mark of a prepared
//! conditional statement (`PreparedStatement::is_lwt`), and reads the rate-limit error as a
//! typed error of its own kind that the default retry policy never retries. Against a node
//! that offers neither (the stub as Cassandra), nothing is turned on and nothing is marked.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::num::NonZeroU16;
use std::sync::Arc;

use doppio_driver::proto::response::ErrorDetail;
use doppio_driver::proto::scylla_extensions::{RateLimitError, RateLimitedOp};
use doppio_driver::rt::Runtime;
use doppio_driver::session::DefaultRetryPolicy;
use doppio_driver::{Consistency, Error, ErrorKind, Session, SessionConfig};
use doppio_stub::{Rules, ScyllaShards, Shape, StubConfig};

use crate::support;

use support::StubNode;

const HOT: &str = r#"
[[rule]]
name = "hot partition"
when = { statement = "HOT" }
then = { rate_limit = { op = "write", rejected_by_coordinator = true } }
"#;

fn scylla_s_extensions_are_turned_on_and_read(runtime: Runtime) {
    let stub = StubNode::start(
        runtime,
        StubConfig {
            shape: Shape::default(),
            rules: Rules::parse(HOT).unwrap(),
            log_rules: false,
            scylla: Some(ScyllaShards::new(
                NonZeroU16::new(2).unwrap(),
                [127, 0, 0, 1].into(),
            )),
            ..StubConfig::default()
        },
    );
    let addr = stub.addr();
    let retries = stub.run("scylla-extensions", move || async move {
        let mut config = SessionConfig::new(addr);
        // Retries allowed: the rate-limit error must still not be retried.
        config.retry_policy = Arc::new(DefaultRetryPolicy { max_retries: 3 });
        let s = Session::connect(config).await.unwrap();
        let conn = s.view().node(0).unwrap().connection().unwrap();
        let on = conn.extensions();
        assert!(on.lwt_mask.is_some(), "{on:?}");
        assert!(on.rate_limit_code.is_some(), "{on:?}");
        // Both tablets routing versions offered: v2 alone is on (it subsumes v1).
        assert!(on.tablets_routing_v2 && !on.tablets_routing_v1, "{on:?}");

        let lwt = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?) IF NOT EXISTS")
            .await
            .unwrap();
        assert!(lwt.is_lwt());
        let plain = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        assert!(!plain.is_lwt());
        // Executed like any other statement (primary-first routing is the policy's: see
        // the load-balancing unit tests).
        s.execute_unpaged(&lwt, &(vec![1u8], vec![2u8]))
            .await
            .unwrap();

        let e = s
            .query_unpaged("UPDATE ks.t SET v = 'x' WHERE k = 'HOT'", &())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RateLimited, "{e}");
        match &e {
            Error::Server { error, .. } => assert_eq!(
                error.detail,
                ErrorDetail::RateLimit(RateLimitError {
                    op: RateLimitedOp::Write,
                    rejected_by_coordinator: true,
                })
            ),
            other => panic!("{other}"),
        }
        let stats = s.stats();
        s.close("done");
        (stats.retries, stats.errors.get(ErrorKind::RateLimited))
    });
    assert_eq!(retries, (0, 1), "(retries, rate-limited errors)");
    // The node saw the refused statement once: not retried.
    assert_eq!(stub.fired(), vec![("hot partition".into(), 1)]);
    stub.stop();
}

fn a_node_without_the_extensions_turns_nothing_on(runtime: Runtime) {
    let stub = support::stub(runtime, HOT, Shape::default());
    let addr = stub.addr();
    stub.run("no-extensions", move || async move {
        let s = Session::connect(SessionConfig::new(addr)).await.unwrap();
        let conn = s.view().node(0).unwrap().connection().unwrap();
        assert_eq!(conn.extensions(), Default::default());
        let lwt = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?) IF NOT EXISTS")
            .await
            .unwrap();
        assert!(!lwt.is_lwt());
        // As ScyllaDB answers a client that did not turn the extension on.
        let e = s
            .query_unpaged("UPDATE ks.t SET v = 'x' WHERE k = 'HOT'", &())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConfigError, "{e}");
        s.close("done");
    });
    stub.stop();
}

/// A node that offers tablets routing v2 beside v1 (as ScyllaDB does): the driver turns v2
/// on alone, and every EXECUTE ends with its tablet version block: the stub refuses one
/// without it (a PROTOCOL_ERROR), so each answer here says the byte was written, from the
/// template, on the general path (a consistency of the statement's own) and on lz4
/// connections (the general path too). A node offering v1 alone still gets v1.
fn a_node_offering_tablets_v2_gets_v2_and_every_execute_its_block(runtime: Runtime) {
    for (v2, lz4) in [(true, false), (true, true), (false, false)] {
        let mut scylla = ScyllaShards::new(NonZeroU16::new(2).unwrap(), [127, 0, 0, 1].into());
        scylla.extensions.tablets_routing_v2 = v2;
        let stub = StubNode::start(
            runtime,
            StubConfig {
                log_rules: false,
                scylla: Some(scylla),
                ..StubConfig::default()
            },
        );
        let addr = stub.addr();
        stub.run("tablets-v2-offered", move || async move {
            let s = Session::connect(SessionConfig::new(addr).with_compression(lz4))
                .await
                .unwrap();
            let conn = s.view().node(0).unwrap().connection().unwrap();
            let on = conn.extensions();
            assert_eq!(on.tablets_routing_v2, v2, "{on:?}");
            assert_eq!(on.tablets_routing_v1, !v2, "{on:?}");
            let p = s.prepare("SELECT v FROM ks.t WHERE k = ?").await.unwrap();
            let own = p.with_config(|c| c.consistency = Some(Consistency::LocalOne));
            for k in 0..20u8 {
                s.execute_unpaged(&p, &(vec![k],)).await.unwrap();
                s.execute_unpaged(&own, &(vec![k],)).await.unwrap();
            }
            s.close("done");
        });
        stub.stop();
    }
}

support::runtime_tests!(;
    and_sim:
    scylla_s_extensions_are_turned_on_and_read,
    a_node_without_the_extensions_turns_nothing_on,
    a_node_offering_tablets_v2_gets_v2_and_every_execute_its_block,
);
