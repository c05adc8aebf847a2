//! The stub's answers as doppio receives them (moved here from the stub's own tests, which
//! test the stub with raw frames and scylla-rust-driver, so that the stub does not
//! dev-depend on the driver): every statement kind with and without lz4, an error rule's
//! fields, a delayed answer holding back only itself, a stall then service again. How the
//! driver copes with the stub's faults is in `faults.rs`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::config::HandshakeConfig;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::response::{ErrorCode, ErrorDetail};
use doppio_driver::rt::Runtime;
use doppio_driver::session::{Batch, BatchType, NoRetry};
use doppio_driver::{Error, Session, SessionConfig};
use doppio_stub::{Rules, Shape, Stub, StubConfig, StubHandle};

use crate::support;

use support::on_runtime;

/// A stub on `runtime`, on an ephemeral port with these TOML `rules` and result `shape`,
/// rules not logged.
fn stub(runtime: Runtime, rules: &str, shape: Shape) -> StubHandle {
    Stub::start(StubConfig {
        runtime,
        shape,
        rules: Rules::parse(rules).unwrap(),
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap()
}

async fn session(addr: SocketAddr, lz4: bool) -> Session {
    let mut c = SessionConfig::new(addr);
    c.consistency = Consistency::One;
    c.retry_policy = Arc::new(NoRetry);
    c.connection.request_timeout = Duration::from_secs(5);
    c.handshake = {
        let mut cfg = HandshakeConfig::default();
        cfg.compression = lz4;
        cfg
    };
    Session::connect(c).await.unwrap()
}

fn doppio_connects_and_runs_every_statement_kind_with_and_without_lz4(runtime: Runtime) {
    let stub = stub(
        runtime,
        "",
        Shape {
            rows: 3,
            row_bytes: 100,
            ..Shape::default()
        },
    );
    let addr = stub.addr();
    on_runtime(runtime, "stub-answers", move || async move {
        for lz4 in [false, true] {
            let s = session(addr, lz4).await;
            assert_eq!(s.nodes().len(), 1, "the stub is a one-node cluster");
            s.use_keyspace("ks").await.unwrap();
            let r = s.query_unpaged("SELECT v FROM t", &()).await.unwrap();
            let rows: Vec<(Vec<u8>,)> = r.typed_rows().unwrap();
            assert_eq!(rows.len(), 3);
            assert!(rows.iter().all(|r| r.0.len() == 100));
            let p = s.prepare("SELECT v FROM t WHERE k = ?").await.unwrap();
            assert_eq!(p.metadata().columns.len(), 1);
            for _ in 0..100 {
                let r = s.execute_unpaged(&p, &(vec![1u8, 2],)).await.unwrap();
                assert_eq!(r.rows_count(), 3);
                let rows: Vec<(Vec<u8>,)> = r.typed_rows().unwrap();
                assert_eq!(rows[0].0.len(), 100);
            }
            let insert = s
                .prepare("INSERT INTO t (k, v) VALUES (?, ?)")
                .await
                .unwrap();
            let r = s
                .execute_unpaged(&insert, &(vec![1u8], vec![2u8]))
                .await
                .unwrap();
            assert_eq!(r.rows_count(), 0);
            let values: (Vec<u8>, Vec<u8>) = (vec![1], vec![2]);
            let batch = Batch::new(BatchType::Logged).with_prepared(&insert);
            s.batch(&batch, &(values,)).await.unwrap();
            // The empty workload's statement: a one-row read of system.local.
            let empty = s
                .prepare("SELECT key FROM system.local WHERE key = 'local'")
                .await
                .unwrap();
            let r = s.execute_unpaged(&empty, &()).await.unwrap();
            let rows: Vec<(String,)> = r.typed_rows().unwrap();
            assert_eq!(rows, vec![("local".to_owned(),)]);
            s.close("done");
        }
    });
    assert!(stub.connections() >= 4);
}

fn an_error_rule_answers_that_error_with_its_fields(runtime: Runtime) {
    let stub = stub(
        runtime,
        r#"
[[rule]]
name = "overloaded"
when = { statement = "OVERLOAD" }
then = { error = { code = "overloaded", message = "busy now" } }

[[rule]]
name = "read timeout"
when = { opcode = "EXECUTE", statement = "SLOWREAD" }
then = { error = { code = "read_timeout" } }
"#,
        Shape::default(),
    );
    let addr = stub.addr();
    on_runtime(runtime, "stub-answers", move || async move {
        let s = session(addr, false).await;
        let e = s
            .query_unpaged("SELECT v FROM t WHERE OVERLOAD", &())
            .await
            .unwrap_err();
        match &e {
            Error::Server { error, .. } => {
                assert_eq!(error.code, ErrorCode::Overloaded);
                assert_eq!(error.message, "busy now");
            }
            other => panic!("{other}"),
        }
        let p = s
            .prepare("SELECT v FROM t WHERE SLOWREAD = ?")
            .await
            .unwrap();
        let e = s.execute_unpaged(&p, &(vec![0u8],)).await.unwrap_err();
        match &e {
            Error::Server { error, .. } => {
                assert_eq!(error.code, ErrorCode::ReadTimeout);
                assert!(matches!(
                    error.detail,
                    ErrorDetail::ReadTimeout { block_for: 1, .. }
                ));
            }
            other => panic!("{other}"),
        }
        // Other statements are untouched.
        s.query_unpaged("SELECT v FROM t", &()).await.unwrap();
        s.close("done");
    });
    let fired = stub.fired();
    assert_eq!(fired[0], ("overloaded".into(), 1));
    assert_eq!(fired[1], ("read timeout".into(), 1));
}

fn a_delayed_answer_holds_back_only_itself(runtime: Runtime) {
    let stub = stub(
        runtime,
        r#"
[[rule]]
when = { statement = "DELAYME" }
then = { delay = { fixed = "300ms" } }
"#,
        Shape::default(),
    );
    let addr = stub.addr();
    on_runtime(runtime, "stub-answers", move || async move {
        let s = session(addr, false).await;
        let started = Instant::now();
        let slow = {
            let s = s.clone();
            doppio_driver::rt::spawn_local(async move {
                s.query_unpaged("SELECT v FROM t WHERE DELAYME", &())
                    .await
                    .unwrap();
                started.elapsed()
            })
        };
        // Sent after the delayed one, on the same connection: answered at once.
        doppio_driver::rt::sleep(Duration::from_millis(20)).await;
        let t = Instant::now();
        s.query_unpaged("SELECT v FROM t", &()).await.unwrap();
        let fast = t.elapsed();
        let slow = slow.await;
        assert!(slow >= Duration::from_millis(300), "{slow:?}");
        assert!(fast < Duration::from_millis(200), "{fast:?}");
        s.close("done");
    });
}

fn a_stall_holds_the_connection_then_service_resumes(runtime: Runtime) {
    let stub = stub(
        runtime,
        r#"
[[rule]]
when = { statement = "STALL" }
then = { stall = "500ms" }
"#,
        Shape::default(),
    );
    let addr = stub.addr();
    on_runtime(runtime, "stub-answers", move || async move {
        let s = session(addr, false).await;
        let t = Instant::now();
        s.query_unpaged("SELECT v FROM t WHERE STALL", &())
            .await
            .unwrap();
        assert!(
            t.elapsed() >= Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
        let t = Instant::now();
        s.query_unpaged("SELECT v FROM t", &()).await.unwrap();
        assert!(
            t.elapsed() < Duration::from_millis(300),
            "{:?}",
            t.elapsed()
        );
        s.close("done");
    });
}

support::runtime_tests!(
    doppio_connects_and_runs_every_statement_kind_with_and_without_lz4,
    an_error_rule_answers_that_error_with_its_fields,
    a_delayed_answer_holds_back_only_itself,
    a_stall_holds_the_connection_then_service_resumes,
);
