//! The stub against real clients: the binary's command line and signals, a raw protocol
//! client (doppio-proto's parts only) on the emulated ScyllaDB shards, scylla-rust-driver
//! connecting unmodified, and the reactions a client sees directly. doppio's sessions
//! against the stub (every statement kind, error rules, delays, stalls) are tested with the
//! driver, in `driver/tests/it/stub_answers.rs`; how the driver copes with the stub's faults,
//! in `driver/tests/it/faults.rs`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::io::BufRead;
use std::net::SocketAddr;
use std::num::NonZeroU16;
use std::process::Command;

use doppio_proto::murmur3;
use doppio_proto::response::{ErrorDetail, Response};
use doppio_proto::scylla_extensions::{Extensions, RateLimitError, RateLimitedOp};
use doppio_proto::sharding::ShardingInfo;
use doppio_rt::Runtime;
use doppio_stub::{Rules, ScyllaShards, Shape, ShardAwarePort, Stub, StubConfig, StubError};

use crate::support;

use support::{on_scylla, spawn_binary, stub, terminate, RawClient, StubProcess};

fn the_binary_prints_its_address_serves_and_exits_cleanly_on_sigterm(runtime: Runtime) {
    // On the runtime the test is named for (it used to start the default one on both).
    // Its stdout stays open (`_out`) until it exits: a line printed on the way out meets a reader.
    let StubProcess {
        child,
        addr,
        out: _out,
    } = spawn_binary(runtime, &["--cores", "0", "--rows", "2"]);
    assert_ne!(addr.port(), 0, "the real port is printed");
    // A raw client: STARTUP, then a QUERY answered with the configured two rows.
    let mut c = RawClient::ready(addr);
    assert_eq!(c.query_rows("SELECT v FROM ks.t"), 2);
    drop(c);
    terminate(child);
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
    // SUPPORTED says which shard the connection landed on; every key that shard owns is
    // placed right, and one key of another shard is counted wrong.
    let mut c = RawClient::open(addr);
    let sharding = ShardingInfo::from_supported(&c.options())
        .unwrap()
        .expect("the emulated node lists its shards");
    assert_eq!(sharding.sharder.nr_shards.get(), 4);
    assert_eq!(sharding.sharder.ignore_msb, 12, "ScyllaDB's default");
    assert_eq!(sharding.shard_aware_port, Some(aware.port()));
    c.startup();
    let p = c.prepare("SELECT v FROM ks.t WHERE k = ?");
    let keys = (0..200u64).map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
    let (own, other): (Vec<[u8; 8]>, Vec<[u8; 8]>) =
        keys.partition(|key| sharding.sharder.shard_of(murmur3::token(key)) == sharding.shard);
    assert!(!own.is_empty() && !other.is_empty());
    for key in own.iter().chain(&other[..1]) {
        assert!(matches!(c.execute(&p, &[key]), Response::Result(_)));
    }
    drop(c);
    let err = terminate(child);
    assert!(
        err.contains("1 at a shard not owning their token"),
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
    // The same error as a raw client that turned the extension on decodes it: its
    // ScyllaDB fields under the code SUPPORTED named.
    let mut c = RawClient::open(addr);
    let offered = Extensions::from_supported(&c.options()).unwrap();
    assert!(offered.rate_limit_code.is_some(), "{offered:?}");
    let asked = offered.startup_options();
    let mut options = vec![("CQL_VERSION", "3.0.0")];
    options.extend(asked.iter().map(|(k, v)| (*k, v.as_str())));
    c.startup_with(&options);
    match c.query("UPDATE ks.t SET v = 'x' WHERE k = 'HOT'") {
        Response::Error(mut e) => {
            e.read_extension(&offered.accepted_in_startup(&options));
            assert_eq!(
                e.detail,
                ErrorDetail::RateLimit(RateLimitError {
                    op: RateLimitedOp::Write,
                    rejected_by_coordinator: true,
                })
            );
        }
        other => panic!("{other:?}"),
    }
    drop(c);
    assert_eq!(stub.fired(), vec![("hot partition".into(), 2)]);
}

/// The shard of a new raw connection to `addr`, as its SUPPORTED says.
fn shard_of_new_connection(addr: SocketAddr) -> (RawClient, u16) {
    let mut c = RawClient::open(addr);
    let info = ShardingInfo::from_supported(&c.options())
        .unwrap()
        .expect("sharded");
    (c, info.shard)
}

fn plain_port_connections_can_be_pinned_to_one_shard(runtime: Runtime) {
    let stub = Stub::start(StubConfig {
        runtime,
        log_rules: false,
        scylla: Some(ScyllaShards {
            shard_aware_port: ShardAwarePort::None,
            ..ScyllaShards::new(NonZeroU16::new(3).unwrap(), [127, 0, 0, 1].into())
        }),
        ..StubConfig::default()
    })
    .unwrap();
    let addr = stub.addr();
    assert!(matches!(
        stub.pin_plain_port(Some(3)),
        Err(StubError::NoSuchScyllaShard {
            shard: 3,
            shards: 3
        })
    ));
    stub.pin_plain_port(Some(1)).unwrap();
    // Held open, so that shard 1 is the most loaded: pinned, they land there anyway.
    let mut held = Vec::new();
    for _ in 0..3 {
        let (c, shard) = shard_of_new_connection(addr);
        assert_eq!(shard, 1);
        held.push(c);
    }
    stub.pin_plain_port(None).unwrap();
    let (_c, shard) = shard_of_new_connection(addr);
    assert_eq!(shard, 0, "the least loaded again");
    assert_eq!(stub.shard_counts().unwrap().connections, vec![1, 3, 0]);
    drop(held);
    stub.stop();
    // A stub that emulates no ScyllaDB node has no shard to pin to.
    let plain = Stub::start(StubConfig {
        runtime,
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap();
    assert!(matches!(
        plain.pin_plain_port(Some(0)),
        Err(StubError::NoSuchScyllaShard { shards: 0, .. })
    ));
    plain.stop();
}

support::runtime_tests!(
    plain_port_connections_can_be_pinned_to_one_shard,
    the_binary_prints_its_address_serves_and_exits_cleanly_on_sigterm,
    a_bad_rules_file_or_port_is_a_clear_error_and_exit_code_2,
    the_binary_emulates_scylla_shards_and_prints_where_requests_landed,
    scylla_rust_driver_connects_with_its_default_session_builder,
    scylla_s_lwt_mark_and_rate_limit_error_reach_the_client_that_asked,
    a_core_the_machine_lacks_is_a_typed_start_error,
);
