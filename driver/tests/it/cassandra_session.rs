//! The session API against a real Cassandra 5.0: handshake (with and without lz4), schema,
//! unprepared and prepared statements, typed rows, batches, errors with their fields,
//! transparent re-prepare, and LWT `[applied]`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use doppio_driver::config::HandshakeConfig;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::response::{ErrorCode, ErrorDetail, ResultBody, SchemaTarget};
use doppio_driver::proto::segment::SegmentCompression;
use doppio_driver::proto::value::CqlValue;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::session::{Batch, BatchType};
use doppio_driver::{Error, PagingState, Session, SessionConfig, Statement};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cassandra, create_keyspace_cql, keyspace};

fn on_runtime<F, Fut>(runtime: Runtime, f: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    support::on_runtime(runtime, "session-test", f)
}

async fn session(compression: bool) -> Session {
    session_in(compression, None).await
}

/// A session speaking `version` (`None`: negotiated, v5 with Cassandra 5.0).
async fn session_in(compression: bool, version: Option<ProtocolVersion>) -> Session {
    let mut config = SessionConfig::new(cassandra());
    config.consistency = Consistency::One;
    config.connections = 2;
    config.handshake = {
        let mut cfg = HandshakeConfig::default();
        cfg.compression = compression;
        cfg.protocol_version = version;
        cfg
    };
    Session::connect(config)
        .await
        .expect("connect to Cassandra")
}

async fn create_keyspace(s: &Session, ks: &str) {
    let r = s
        .query_unpaged(&create_keyspace_cql(ks), &())
        .await
        .expect("create keyspace");
    assert!(matches!(
        r.body,
        ResultBody::SchemaChange(ref c) if c.change == "CREATED" && c.target == SchemaTarget::Keyspace(ks.to_string())
    ));
}

fn round_trip_rows(runtime: Runtime, compression: bool, test: &'static str) {
    on_runtime(runtime, move || async move {
        let s = session(compression).await;
        // Cassandra has no tablets: ScyllaDB's table of them is not asked for.
        assert_eq!(s.topology().tablet_keyspaces, None);
        let ks = keyspace(test);
        create_keyspace(&s, &ks).await;
        s.use_keyspace(&ks).await.expect("use keyspace");
        s.query_unpaged(
            "CREATE TABLE kv (k int PRIMARY KEY, v text, n bigint, tags list<text>)",
            &(),
        )
        .await
        .expect("create table");
        let insert = s
            .prepare("INSERT INTO kv (k, v, n, tags) VALUES (?, ?, ?, ?)")
            .await
            .expect("prepare insert");
        assert_eq!(insert.metadata().pk_indexes, vec![0]);
        for k in 0..50i32 {
            let tags = vec![format!("t{k}")];
            s.execute_unpaged(
                &insert,
                &(k, format!("value {k}"), i64::from(k) * 1000, tags),
            )
            .await
            .expect("insert");
        }
        // The cache hands back the same statement.
        let again = s
            .prepare("INSERT INTO kv (k, v, n, tags) VALUES (?, ?, ?, ?)")
            .await
            .unwrap();
        assert_eq!(again.id(), insert.id());

        let select = s
            .prepare("SELECT k, v, n, tags FROM kv WHERE k = ?")
            .await
            .unwrap();
        let r = s.execute_unpaged(&select, &(7i32,)).await.expect("select");
        let rows: Vec<(i32, String, i64, Vec<String>)> = r.typed_rows().expect("typed rows");
        assert_eq!(
            rows,
            vec![(7, "value 7".to_string(), 7000, vec!["t7".to_string()])]
        );

        // Unprepared, with values, and dynamic values.
        let r = s
            .query_unpaged("SELECT v FROM kv WHERE k = ?", &(3i32,))
            .await
            .unwrap();
        let row = r.rows().unwrap().iter().next().unwrap().unwrap();
        assert_eq!(
            row.to_values().unwrap(),
            vec![Some(CqlValue::Text("value 3".into()))]
        );

        // Paging: 50 rows in pages of 20.
        let mut seen = 0;
        let mut state = PagingState::start();
        let mut pages = 0;
        let by_20 = Statement::new("SELECT k FROM kv").with_config(|c| c.page_size = Some(20));
        loop {
            let r = s.query_single_page(&by_20, &(), &state).await.unwrap();
            seen += r.rows_count();
            pages += 1;
            match r.next() {
                Some(next) => state = next,
                None => break,
            }
        }
        assert_eq!(seen, 50);
        assert!(pages >= 3, "{pages} pages");
        if compression {
            // Negotiated v5 with Cassandra 5.0: lz4 on the segments, none on the envelopes.
            let conn = s.node_at(s.node()).unwrap().connection().unwrap();
            assert_eq!(conn.version(), ProtocolVersion::V5);
            assert_eq!(
                conn.segments(),
                Some(SegmentCompression::Lz4),
                "lz4 was negotiated"
            );
            assert_eq!(conn.compression(), None);
        }
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

fn prepared_and_unprepared_statements_round_trip_rows(runtime: Runtime) {
    round_trip_rows(runtime, false, "plain");
}

fn the_same_works_with_lz4_compression(runtime: Runtime) {
    round_trip_rows(runtime, true, "lz4");
}

fn server_errors_arrive_typed_with_their_fields(runtime: Runtime) {
    on_runtime(runtime, || async {
        let s = session(false).await;
        let ks = keyspace("errors");
        create_keyspace(&s, &ks).await;
        let err = s.query_unpaged("SELEKT 1", &()).await.unwrap_err();
        assert_eq!(err.server_code(), Some(ErrorCode::SyntaxError), "{err}");
        let err = s
            .query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap_err();
        match &err {
            Error::Server { error, .. } => assert_eq!(
                error.detail,
                ErrorDetail::AlreadyExists {
                    keyspace: ks.clone(),
                    table: String::new()
                }
            ),
            other => panic!("{other}"),
        }
        let err = s
            .query_unpaged("SELECT * FROM no_such_ks.t", &())
            .await
            .unwrap_err();
        assert_eq!(err.server_code(), Some(ErrorCode::Invalid), "{err}");
        // A value of the wrong type is refused before anything is sent, naming the column.
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged("CREATE TABLE t (k int PRIMARY KEY, v int)", &())
            .await
            .unwrap();
        let p = s
            .prepare("INSERT INTO t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let err = s
            .execute_unpaged(&p, &(1i32, "not an int"))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Serialization(_)), "{err}");
        let msg = doppio_driver::error::Report(&err).to_string();
        assert!(
            msg.contains("column 1") && msg.contains('v') && msg.contains("int"),
            "{msg}"
        );
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

fn batches_lwt_and_re_prepare(runtime: Runtime) {
    on_runtime(runtime, || async {
        let s = session(false).await;
        let ks = keyspace("batch");
        create_keyspace(&s, &ks).await;
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged("CREATE TABLE t (k int PRIMARY KEY, v int)", &())
            .await
            .unwrap();
        let p = s
            .prepare("INSERT INTO t (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let a = (1i32, 10i32);
        let b = (2i32, 20i32);
        let c = (3i32, 30i32);
        // Prepared and unprepared statements in one batch, a set of values each.
        let batch = Batch::new(BatchType::Logged)
            .with_prepared(&p)
            .with_prepared(&p)
            .with_query("INSERT INTO t (k, v) VALUES (?, ?)");
        let err = s.batch(&batch, &(a, b)).await.unwrap_err();
        assert!(
            matches!(err, Error::Serialization(_)),
            "two sets of values for three statements: {err:?}"
        );
        s.batch(&batch, &(a, b, c)).await.unwrap();
        let r = s.query_unpaged("SELECT k, v FROM t", &()).await.unwrap();
        let mut rows: Vec<(i32, i32)> = r.typed_rows().unwrap();
        rows.sort();
        assert_eq!(rows, vec![(1, 10), (2, 20), (3, 30)]);

        // LWT: the first insert applies, the second does not.
        let lwt = "INSERT INTO t (k, v) VALUES (9, 90) IF NOT EXISTS";
        assert_eq!(
            s.query_unpaged(lwt, &()).await.unwrap().applied(),
            Some(true)
        );
        assert_eq!(
            s.query_unpaged(lwt, &()).await.unwrap().applied(),
            Some(false)
        );

        // Drop and recreate the table: the node forgets the prepared id; execute re-prepares.
        let sel = s.prepare("SELECT v FROM t WHERE k = ?").await.unwrap();
        let old_id = sel.id();
        s.query_unpaged("DROP TABLE t", &()).await.unwrap();
        s.query_unpaged("CREATE TABLE t (k int PRIMARY KEY, v int)", &())
            .await
            .unwrap();
        s.query_unpaged("INSERT INTO t (k, v) VALUES (5, 50)", &())
            .await
            .unwrap();
        let r = s
            .execute_unpaged(&sel, &(5i32,))
            .await
            .expect("re-prepared transparently");
        assert_eq!(r.typed_rows::<(i32,)>().unwrap(), vec![(50,)]);
        // Cassandra derives the id from the text and keyspace, so it may well be unchanged;
        // what matters is that the execution succeeded.
        let _ = old_id;

        // Tracing: the result carries the session id.
        let traced =
            Statement::new("SELECT v FROM t WHERE k = 5").with_config(|c| c.tracing = true);
        let r = s.query_unpaged(traced, &()).await.unwrap();
        assert!(r.tracing_id.is_some());
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

/// `Session::batch` of prepared statements: applied whole, routed by its
/// first statement (a replica of its key), healed when the node forgot a statement (the
/// table dropped and created again), and an LWT batch's `[applied]`.
fn prepared_batches_route_heal_and_apply(runtime: Runtime) {
    on_runtime(runtime, || async {
        use doppio_driver::proto::values::QueryValues;
        let s = session(false).await;
        let ks = keyspace("pbatch");
        create_keyspace(&s, &ks).await;
        s.use_keyspace(&ks).await.unwrap();
        let create = "CREATE TABLE t (p int, c int, v int, PRIMARY KEY (p, c))";
        s.query_unpaged(create, &()).await.unwrap();
        let insert = s
            .prepare("INSERT INTO t (p, c, v) VALUES (?, ?, ?)")
            .await
            .unwrap();
        let update = s
            .prepare("UPDATE t SET v = ? WHERE p = ? AND c = ?")
            .await
            .unwrap();
        // The first statement's key is bound: the batch goes to its replica.
        assert_eq!(
            s.replicas_of(&insert, &(7i32, 0i32, 0i32)),
            vec![cassandra()]
        );
        let rows: Vec<(i32, i32, i32)> = (0..20).map(|c| (7, c, c * 10)).collect();
        let bump = (999i32, 7i32, 3i32);
        // Each statement's values, of two types: as `&dyn QueryValues`.
        let values: Vec<&dyn QueryValues> = rows
            .iter()
            .map(|r| r as &dyn QueryValues)
            .chain([&bump as &dyn QueryValues])
            .collect();
        // The first `n` statements: `n - 1` inserts, and the update when `n` is 21.
        let batch_of = |kind, n: usize| {
            let mut batch = Batch::new(kind);
            for k in 0..n {
                batch.append_prepared(if k < rows.len() { &insert } else { &update });
            }
            batch
        };
        // Two batches, of 5 and of 21 statements.
        for n in [5, values.len()] {
            s.batch(&batch_of(BatchType::Unlogged, n), &values[..n])
                .await
                .unwrap();
        }
        let r = s
            .query_unpaged("SELECT c, v FROM t WHERE p = 7", &())
            .await
            .unwrap();
        let got: Vec<(i32, i32)> = r.typed_rows().unwrap();
        let want: Vec<(i32, i32)> = (0..20)
            .map(|c| (c, if c == 3 { 999 } else { c * 10 }))
            .collect();
        assert_eq!(got, want);

        // The node forgets both statements with their table: the batch is healed.
        let before = s.stats().reprepares;
        s.query_unpaged("DROP TABLE t", &()).await.unwrap();
        s.query_unpaged(create, &()).await.unwrap();
        s.batch(&batch_of(BatchType::Logged, 3), &values[..3])
            .await
            .expect("healed: re-prepared and sent again");
        assert!(
            s.stats().reprepares > before,
            "a statement was prepared again"
        );
        let r = s
            .query_unpaged("SELECT c FROM t WHERE p = 7", &())
            .await
            .unwrap();
        assert_eq!(r.typed_rows::<(i32,)>().unwrap(), vec![(0,), (1,), (2,)]);

        // A conditional batch: applied once, then not.
        let lwt = s
            .prepare("INSERT INTO t (p, c, v) VALUES (?, ?, ?) IF NOT EXISTS")
            .await
            .unwrap();
        let conditional = Batch::new(BatchType::Logged).with_prepared(&lwt);
        let values = ((8i32, 1i32, 1i32),);
        let first = s.batch(&conditional, &values).await.unwrap();
        assert_eq!(first.applied(), Some(true));
        let again = s.batch(&conditional, &values).await.unwrap();
        assert_eq!(again.applied(), Some(false));
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

/// A fake node on loopback that answers each request with `answer(opcode)` (the stream id
/// echoed), enough for a handshake: it reads 9-byte headers and bodies and writes frames.
fn fake_node(
    answer: impl Fn(u8) -> doppio_driver::proto::response::Response + Send + 'static,
) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            loop {
                let mut header = [0u8; 9];
                if conn.read_exact(&mut header).is_err() {
                    break;
                }
                let stream = i16::from_be_bytes([header[2], header[3]]);
                let len = u32::from_be_bytes([header[5], header[6], header[7], header[8]]);
                let mut body = vec![0u8; len as usize];
                if conn.read_exact(&mut body).is_err() {
                    break;
                }
                let mut out = bytes::BytesMut::new();
                doppio_driver::proto::response::encode_response(
                    &mut out,
                    stream,
                    &doppio_driver::proto::response::Envelope::default(),
                    &answer(header[4]),
                    None,
                )
                .unwrap();
                if conn.write_all(&out).is_err() {
                    break;
                }
            }
        }
    });
    addr
}

fn a_node_without_v4_or_v5_is_a_clear_error_naming_it(runtime: Runtime) {
    use doppio_driver::proto::response::{ErrorResponse, Response};
    // A node that offers only v3 and a beta v5 (which is not v5).
    let only_v3 = fake_node(|_| {
        Response::Supported(vec![(
            "PROTOCOL_VERSIONS".into(),
            vec!["3/v3".into(), "5/v5-beta".into()],
        )])
    });
    // A node that refuses v4 outright, as an older Cassandra does.
    let refuses = fake_node(|_| {
        Response::Error(Box::new(ErrorResponse {
            code: ErrorCode::ProtocolError,
            message: "Invalid or unsupported protocol version (4)".into(),
            detail: ErrorDetail::None,
        }))
    });
    on_runtime(runtime, move || async move {
        for (node, expect) in [
            (only_v3, "speaks neither v5 nor v4"),
            (refuses, "unsupported protocol version"),
        ] {
            let mut config = SessionConfig::new(node);
            config.startup_timeout = std::time::Duration::from_secs(20);
            let started = std::time::Instant::now();
            let err = Session::connect(config).await.unwrap_err();
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "fails at once, not at the connect timeout"
            );
            let text = err.to_string();
            assert!(text.contains(&node.to_string()), "names the node: {text}");
            assert!(text.contains(expect), "{text}");
        }
    });
}

fn prepared_rows_follow_the_table_when_it_changes(runtime: Runtime) {
    // v5 (negotiated): the node says METADATA_CHANGED and sends the new columns with their
    // new id. v4 (pinned): the column count no longer matches, and the statement is
    // prepared again.
    for version in [None, Some(ProtocolVersion::V4)] {
        prepared_rows_follow_the_table(runtime, version);
    }
}

fn prepared_rows_follow_the_table(runtime: Runtime, version: Option<ProtocolVersion>) {
    on_runtime(runtime, move || async move {
        let s = session_in(false, version).await;
        let conn = s.node_at(s.node()).unwrap().connection().unwrap();
        let spoken = version.unwrap_or(ProtocolVersion::V5);
        assert_eq!(conn.version(), spoken);
        assert_eq!(conn.segments().is_some(), spoken == ProtocolVersion::V5);
        let ks = keyspace("altered");
        create_keyspace(&s, &ks).await;
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged("CREATE TABLE t (k int PRIMARY KEY, a text)", &())
            .await
            .unwrap();
        s.query_unpaged("INSERT INTO t (k, a) VALUES (1, 'x')", &())
            .await
            .unwrap();
        let select = s.prepare("SELECT * FROM t WHERE k = ?").await.unwrap();
        let first_id = select.result_metadata_id();
        assert_eq!(first_id.is_some(), spoken == ProtocolVersion::V5);
        let r = s.execute_unpaged(&select, &(1i32,)).await.unwrap();
        let row = r.rows().unwrap().iter().next().unwrap().unwrap();
        assert_eq!(row.to_values().unwrap().len(), 2);
        // Rows of a prepared SELECT come without metadata (skip_metadata) and are read by
        // the prepared result columns.
        assert!(matches!(&r.body, ResultBody::Rows(rows) if rows.metadata.no_metadata));
        s.query_unpaged("ALTER TABLE t ADD b int", &())
            .await
            .unwrap();
        s.query_unpaged("UPDATE t SET b = 7 WHERE k = 1", &())
            .await
            .unwrap();
        let r = s.execute_unpaged(&select, &(1i32,)).await.unwrap();
        let rows: Vec<(i32, String, Option<i32>)> = r.typed_rows().unwrap();
        assert_eq!(rows, vec![(1, "x".to_string(), Some(7))]);
        assert_eq!(
            select.result_columns().len(),
            3,
            "the statement learned the new column"
        );
        if spoken == ProtocolVersion::V5 {
            assert_ne!(
                select.result_metadata_id(),
                first_id,
                "and the new metadata id"
            );
            // Quiet again: rows without metadata, read by the new columns.
            let r = s.execute_unpaged(&select, &(1i32,)).await.unwrap();
            assert!(matches!(&r.body, ResultBody::Rows(rows) if rows.metadata.no_metadata));
            let rows: Vec<(i32, String, Option<i32>)> = r.typed_rows().unwrap();
            assert_eq!(rows, vec![(1, "x".to_string(), Some(7))]);
        }
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

fn a_closed_session_fails_requests_with_the_reason(runtime: Runtime) {
    on_runtime(runtime, || async {
        let s = session(false).await;
        s.query_unpaged("SELECT key FROM system.local", &())
            .await
            .unwrap();
        s.close("closed by the test");
        // Before the fix this was `NoConnection("... has no open connection")`, which hid
        // why (it raced a cluster shutdown in CI).
        let err = s
            .query_unpaged("SELECT key FROM system.local", &())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Closed(r) if r == "closed by the test"),
            "{err}"
        );
        assert_eq!(
            s.stats()
                .errors
                .get(doppio_driver::error::ErrorKind::Closed),
            1
        );
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    prepared_and_unprepared_statements_round_trip_rows,
    the_same_works_with_lz4_compression,
    server_errors_arrive_typed_with_their_fields,
    batches_lwt_and_re_prepare,
    prepared_batches_route_heal_and_apply,
    prepared_rows_follow_the_table_when_it_changes,
    a_closed_session_fails_requests_with_the_reason,
);

// No Cassandra needed: these run everywhere.
mod without_cassandra {
    use super::*;
    support::runtime_tests!(a_node_without_v4_or_v5_is_a_clear_error_naming_it,);
}
