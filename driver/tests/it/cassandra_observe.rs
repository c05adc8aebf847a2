//! Observability against a real Cassandra 5.0: a traced request's trace read back from
//! `system_traces` (`Session::fetch_trace`), and a made-up id's typed error after a bounded
//! wait.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::time::{Duration, Instant, SystemTime};

use doppio_driver::config::LatencyConfig;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::session::{Trace, TraceWait};
use doppio_driver::{Cluster, Error, ErrorKind, Session, SessionConfig, Statement};

use crate::support;

use support::{cassandra, create_keyspace_cql, keyspace};

async fn session() -> Session {
    let mut config = SessionConfig::new(cassandra());
    config.consistency = Consistency::One;
    Session::connect(config)
        .await
        .expect("connect to Cassandra")
}

/// What every finished trace of a request to the test's node shows.
fn assert_finished(trace: &Trace, id: [u8; 16], what: &str) {
    assert_eq!(trace.id, id);
    assert_eq!(trace.coordinator, cassandra().ip(), "{what}: {trace:?}");
    assert!(trace.duration > Duration::ZERO, "{what}: {trace:?}");
    assert!(!trace.request.is_empty(), "{what}: {trace:?}");
    assert!(
        trace
            .parameters
            .get("query")
            .is_some_and(|q| q.contains(what)),
        "{what}: {:?}",
        trace.parameters
    );
    let now = SystemTime::now();
    let age = now.duration_since(trace.started_at).unwrap_or_default();
    assert!(age < Duration::from_secs(600), "{what} started {age:?} ago");
    assert!(!trace.events.is_empty(), "{what}: no events");
    for e in &trace.events {
        assert!(!e.activity.is_empty(), "{e:?}");
        assert_eq!(e.source, Some(cassandra().ip()), "{e:?}");
        let at = e.timestamp.expect("a timeuuid has a time");
        assert!(at + Duration::from_secs(1) >= trace.started_at, "{e:?}");
        assert!(e.thread.is_some(), "{e:?}");
    }
    assert!(
        trace
            .events
            .iter()
            .any(|e| e.source_elapsed > Some(Duration::ZERO)),
        "{what}: {:?}",
        trace.events
    );
    assert!(
        trace
            .events
            .windows(2)
            .all(|w| w[0].timestamp <= w[1].timestamp),
        "{what}: events in the order of their time"
    );
}

fn a_traced_select_and_insert_read_back_with_their_events(runtime: Runtime) {
    support::on_runtime(runtime, "observe-trace", move || async move {
        let s = session().await;
        let ks = keyspace("observe_trace");
        s.query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap();
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged("CREATE TABLE kv (k int PRIMARY KEY, v text)", &())
            .await
            .unwrap();
        let insert = Statement::new("INSERT INTO kv (k, v) VALUES (1, 'one')")
            .with_config(|c| c.tracing = true);
        let insert = s.query_unpaged(insert, &()).await.unwrap();
        let id = insert.tracing_id.expect("a traced request carries its id");
        let trace = s.fetch_trace(id).await.unwrap();
        assert_finished(&trace, id, "INSERT INTO kv");

        // A prepared SELECT, traced.
        let select =
            Statement::new("SELECT v FROM kv WHERE k = ?").with_config(|c| c.tracing = true);
        let select = s.prepare(select).await.unwrap();
        let r = s.execute_unpaged(&select, &(1i32,)).await.unwrap();
        assert_eq!(r.typed_rows::<(String,)>().unwrap(), [("one".into(),)]);
        let id = r.tracing_id.expect("a traced request carries its id");
        let trace = s.fetch_trace(id).await.unwrap();
        assert_finished(&trace, id, "SELECT v FROM kv");

        // Untraced requests carry no id.
        let untraced = select.with_config(|c| c.tracing = false);
        let plain = s.execute_unpaged(&untraced, &(1i32,)).await.unwrap();
        assert_eq!(plain.tracing_id, None);
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
        s.close("done");
    });
}

fn a_made_up_trace_id_is_not_found_after_a_bounded_wait(runtime: Runtime) {
    support::on_runtime(runtime, "observe-no-trace", move || async move {
        let s = session().await;
        // A version 1 id no node made (its node part is made up).
        let id = [
            0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x11, 0xef, 0x80, 0x00, 0xde, 0xad, 0xbe, 0xef,
            0x00, 0x01,
        ];
        let wait = TraceWait {
            reads: 4,
            interval: Duration::from_millis(50),
            ..TraceWait::default()
        };
        let start = Instant::now();
        let e = s.fetch_trace_with(id, wait).await.unwrap_err();
        let took = start.elapsed();
        assert!(
            matches!(
                e,
                Error::TraceUnavailable {
                    id: got,
                    found: false,
                    reads: 4
                } if got == id
            ),
            "{e:?}"
        );
        assert_eq!(e.kind(), ErrorKind::TraceUnavailable);
        assert!(
            e.to_string()
                .contains("12345678-9abc-11ef-8000-deadbeef0001"),
            "{e}"
        );
        // Three pauses of 50 ms between four reads, and no more than a few seconds in all.
        assert!(took >= Duration::from_millis(150), "{took:?}");
        assert!(took < Duration::from_secs(10), "{took:?}");
        // The default wait ends too.
        let start = Instant::now();
        let e = s.fetch_trace(id).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TraceUnavailable);
        assert!(start.elapsed() < Duration::from_secs(10));
        s.close("done");
    });
}

fn a_cluster_merges_every_shards_latency(runtime: Runtime) {
    let cluster = Cluster::builder()
        .session_config(SessionConfig::new(cassandra()).with_consistency(Consistency::One).with_latency(Some(LatencyConfig::default())))
        .runtime(runtime)
        .cores(&[0, 1])
        .pin(false) // tests share the machine's cores
        .build()
        .unwrap();
    let per_shard = cluster
        .run_on_shards_indexed(|shard, s| async move {
            for _ in 0..(10 + 5 * shard) {
                s.query_unpaged("SELECT release_version FROM system.local", &())
                    .await
                    .unwrap();
            }
            let latency = s.latency().unwrap();
            assert_eq!(latency.count(), s.stats().requests);
            latency.count()
        })
        .unwrap();
    assert!(per_shard[0] >= 10 && per_shard[1] >= 15, "{per_shard:?}");
    let merged = cluster.latency().unwrap().unwrap();
    assert_eq!(merged.count(), per_shard.iter().sum::<u64>(), "{merged:?}");
    assert!(merged.min() > Duration::ZERO && merged.max() < Duration::from_secs(10));
    assert!(merged.quantile(0.99) >= merged.quantile(0.5));
    cluster.shutdown();
    // Without a histogram the cluster has none to merge.
    let off = Cluster::builder()
        .session_config(
            SessionConfig::new(cassandra())
                .with_consistency(Consistency::One)
                .with_latency(None),
        )
        .runtime(runtime)
        .cores(&[0])
        .pin(false)
        .build()
        .unwrap();
    assert!(off.latency().unwrap().is_none());
    off.shutdown();
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    a_cluster_merges_every_shards_latency,
    a_traced_select_and_insert_read_back_with_their_events,
    a_made_up_trace_id_is_not_found_after_a_bounded_wait,
);
