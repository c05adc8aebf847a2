//! The stub against real clients: the binary's command line and signals, doppio (with and
//! without lz4) and scylla-rust-driver connecting unmodified, the configured result shape,
//! and the reactions a client sees directly (errors, delays, stalls). How the driver copes
//! with the stub's faults (dropped connections, broken frames, stalls under load, retried
//! errors) is tested with the driver, in `driver/tests/it/faults.rs`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::BufRead;
use std::net::SocketAddr;
use std::num::NonZeroU16;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::config::HandshakeConfig;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::response::{ErrorCode, ErrorDetail};
use doppio_driver::proto::scylla_extensions::{RateLimitError, RateLimitedOp};
use doppio_driver::session::{Batch, BatchType, NoRetry};
use doppio_driver::{Error, Session, SessionConfig};
use doppio_stub::{Rules, ScyllaShards, Shape, Stub, StubConfig};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{on_runtime, on_scylla, spawn_binary, stub, StubProcess};

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

fn the_binary_prints_its_address_serves_and_exits_cleanly_on_sigterm(runtime: Runtime) {
    // On the runtime the test is named for (it used to start the default one on both).
    // Its stdout stays open (`_out`) until it exits: a line printed on the way out meets a reader.
    let StubProcess {
        mut child,
        addr,
        out: _out,
    } = spawn_binary(runtime, &["--cores", "0", "--rows", "2"]);
    assert_ne!(addr.port(), 0, "the real port is printed");
    on_runtime(runtime, move || async move {
        let s = session(addr, false).await;
        let r = s.query_unpaged("SELECT v FROM ks.t", &()).await.unwrap();
        assert_eq!(r.rows_count(), 2);
        s.close("done");
    });
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "exit code 0 on SIGTERM: {status:?}");
}

/// A shard pinned to a core the machine lacks: a typed error naming the core, with the
/// runtime's reason kept as its source, never a panic or a hang.
fn a_core_the_machine_lacks_is_a_typed_start_error(runtime: Runtime) {
    let Err(e) = Stub::start(StubConfig {
        runtime,
        cores: vec![100_000],
        pin: true,
        ..StubConfig::default()
    }) else {
        panic!("a stub started on core 100000")
    };
    assert!(
        matches!(e, doppio_stub::StubError::Executor { core: 100_000, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("core 100000"), "{e}");
    assert!(
        std::error::Error::source(&e).is_some(),
        "the cause is kept: {e:?}"
    );
}

fn the_binary_emulates_scylla_shards_and_prints_where_requests_landed(runtime: Runtime) {
    let StubProcess {
        child,
        mut out,
        addr,
    } = spawn_binary(runtime, &["--scylla-shards", "4"]);
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let aware: SocketAddr = line
        .strip_prefix("shard-aware port on ")
        .unwrap_or_else(|| panic!("second line: {line:?}"))
        .trim()
        .parse()
        .unwrap();
    assert_ne!(aware.port(), addr.port());
    on_runtime(runtime, move || async move {
        let s = session(addr, false).await;
        let p = s.prepare("SELECT v FROM ks.t WHERE k = ?").await.unwrap();
        for k in 0..200u64 {
            let key = k.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes().to_vec();
            s.execute_unpaged(&p, &(key,)).await.unwrap();
        }
        let sharding = s.view().node(0).and_then(|n| n.scylla_sharding());
        s.close("done");
        let sharding = sharding.expect("the driver read the emulated node's shards");
        assert_eq!(sharding.sharder.nr_shards.get(), 4);
        assert_eq!(sharding.sharder.ignore_msb, 12, "ScyllaDB's default");
        assert_eq!(sharding.shard_aware_port, Some(aware.port()));
    });
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success());
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(
        err.contains("0 at a shard not owning their token"),
        "the counts are printed: {err}"
    );
    // A shard count of 0 is refused.
    let bad = Command::new(env!("CARGO_BIN_EXE_doppio-stub"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--no-pin",
            "--scylla-shards",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

fn a_bad_rules_file_or_port_is_a_clear_error_and_exit_code_2(runtime: Runtime) {
    let dir = std::env::temp_dir().join(format!("stub-rules-{}", std::process::id()));
    std::fs::write(&dir, "[[rule]]\nthen = \"explode\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_doppio-stub"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--no-pin",
            "--runtime",
            runtime.name(),
            "--rules",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&dir);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown reaction `explode`"), "{err}");
    // A port that is taken (by a plain listener without SO_REUSEPORT).
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_doppio-stub"))
        .args(["--no-pin", "--runtime", runtime.name(), "--listen"])
        .arg(taken.local_addr().unwrap().to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
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
    on_runtime(runtime, move || async move {
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

fn scylla_rust_driver_connects_with_its_default_session_builder(runtime: Runtime) {
    let stub = stub(runtime, "", Shape::default());
    let addr = stub.addr();
    on_scylla(addr, |s| async move {
        let p = s
            .prepare("SELECT key FROM system.local WHERE key = 'local'")
            .await
            .unwrap();
        for _ in 0..10 {
            let r = s.execute_unpaged(&p, ()).await.unwrap();
            let rows = r.into_rows_result().unwrap();
            let keys: Vec<(String,)> = rows
                .rows::<(String,)>()
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(keys, vec![("local".to_owned(),)]);
        }
        let r = s.query_unpaged("SELECT v FROM ks.t", ()).await.unwrap();
        assert_eq!(r.into_rows_result().unwrap().rows_num(), 1);
    });
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
    on_runtime(runtime, move || async move {
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

/// ScyllaDB's LWT mark and rate-limit error, as scylla-rust-driver and doppio (which both
/// turn both on) see them: the extension's fields for the client that negotiated it (a
/// client that did not gets Config_error, as ScyllaDB answers: driver/tests/
/// scylla_extensions.rs).
fn scylla_s_lwt_mark_and_rate_limit_error_reach_the_client_that_asked(runtime: Runtime) {
    let stub = Stub::start(StubConfig {
        runtime,
        rules: Rules::parse(
            r#"
[[rule]]
name = "hot partition"
when = { statement = "HOT" }
then = { rate_limit = { op = "write", rejected_by_coordinator = true } }
"#,
        )
        .unwrap(),
        log_rules: false,
        scylla: Some(ScyllaShards::new(
            NonZeroU16::new(2).unwrap(),
            [127, 0, 0, 1].into(),
        )),
        ..StubConfig::default()
    })
    .unwrap();
    let addr = stub.addr();
    on_scylla(addr, |s| async move {
        let lwt = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?) IF NOT EXISTS")
            .await
            .unwrap();
        assert!(lwt.is_confirmed_lwt());
        let plain = s
            .prepare("INSERT INTO ks.t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        assert!(!plain.is_confirmed_lwt());
        let e = s
            .query_unpaged("UPDATE ks.t SET v = 'x' WHERE k = 'HOT'", ())
            .await
            .unwrap_err();
        match &e {
            scylla::errors::ExecutionError::LastAttemptError(
                scylla::errors::RequestAttemptError::DbError(
                    scylla::errors::DbError::RateLimitReached {
                        op_type,
                        rejected_by_coordinator,
                    },
                    _,
                ),
            ) => {
                assert_eq!(*op_type, scylla::errors::OperationType::Write);
                assert!(*rejected_by_coordinator);
            }
            other => panic!("{other:?}"),
        }
    });
    on_runtime(runtime, move || async move {
        let s = session(addr, false).await;
        let e = s
            .query_unpaged("UPDATE ks.t SET v = 'x' WHERE k = 'HOT'", &())
            .await
            .unwrap_err();
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
        s.close("done");
    });
    assert_eq!(stub.fired(), vec![("hot partition".into(), 2)]);
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
    on_runtime(runtime, move || async move {
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
    on_runtime(runtime, move || async move {
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
    the_binary_prints_its_address_serves_and_exits_cleanly_on_sigterm,
    a_bad_rules_file_or_port_is_a_clear_error_and_exit_code_2,
    the_binary_emulates_scylla_shards_and_prints_where_requests_landed,
    doppio_connects_and_runs_every_statement_kind_with_and_without_lz4,
    scylla_rust_driver_connects_with_its_default_session_builder,
    an_error_rule_answers_that_error_with_its_fields,
    scylla_s_lwt_mark_and_rate_limit_error_reach_the_client_that_asked,
    a_core_the_machine_lacks_is_a_typed_start_error,
    a_delayed_answer_holds_back_only_itself,
    a_stall_holds_the_connection_then_service_resumes,
);
