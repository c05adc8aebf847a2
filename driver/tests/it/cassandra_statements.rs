//! Statements carry their settings to a real Cassandra 5.0, on both runtimes: a prepared
//! statement's, an unprepared statement's, a batch's and an execution profile's reach the
//! node (a consistency the single node cannot meet fails there as UNAVAILABLE, a timestamp
//! comes back as the cell's WRITETIME, a page size sizes the page), a statement's own
//! setting wins over its profile's and the profile's over the session's, and a profile's
//! retry policy is the one consulted after a failure.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::response::ErrorCode;
use doppio_driver::session::BatchType;
use doppio_driver::session::{ExecutionProfile, RetryDecision, RetryPolicy};
use doppio_driver::{Batch, Error, PagingState, Session, SessionConfig, Statement};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cassandra, create_keyspace_cql, keyspace, on_runtime};

/// Counts the failures it is asked about and never retries.
#[derive(Debug, Default)]
struct Counting(AtomicU32);

impl RetryPolicy for Counting {
    fn decide(&self, _: &Error, _: bool, _: u32) -> RetryDecision {
        self.0.fetch_add(1, Ordering::Relaxed);
        RetryDecision::Fail
    }
}

fn unavailable(result: Result<impl std::fmt::Debug, Error>, what: &str) {
    match result {
        Err(e) => assert_eq!(
            e.server_code(),
            Some(ErrorCode::Unavailable),
            "{what}: {e:?}"
        ),
        Ok(r) => panic!("{what}: THREE met on one node: {r:?}"),
    }
}

fn settings_reach_the_node_and_the_nearest_one_wins(runtime: Runtime) {
    on_runtime(runtime, "statement-settings", || async {
        let ks = keyspace("settings");
        let session_policy = Arc::new(Counting::default());
        let mut config = SessionConfig::new(cassandra());
        config.consistency = Consistency::One;
        config.retry_policy = session_policy.clone();
        let s = Session::connect(config).await.unwrap();
        s.query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap();
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged(
            "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))",
            &(),
        )
        .await
        .unwrap();

        // A prepared statement's consistency, and a clone's own.
        let insert = s
            .prepare("INSERT INTO t (k, c, v) VALUES (?, ?, ?)")
            .await
            .unwrap();
        let three = insert.with_config(|c| c.consistency = Some(Consistency::Three));
        unavailable(s.execute_unpaged(&three, &(1, 1, 1)).await, "prepared");
        s.execute_unpaged(&insert, &(1, 1, 1))
            .await
            .expect("the original keeps the session's ONE");

        // An unprepared statement's; and `prepare` keeps a statement's settings.
        let cql = "SELECT v FROM t WHERE k = 1";
        let at_three =
            Statement::new(cql).with_config(|c| c.consistency = Some(Consistency::Three));
        unavailable(s.query_unpaged(&at_three, &()).await, "unprepared");
        let prepared_three = s.prepare(&at_three).await.unwrap();
        unavailable(
            s.execute_unpaged(&prepared_three, &()).await,
            "prepared from a statement",
        );
        assert_eq!(
            s.prepare(cql).await.unwrap().config().consistency,
            None,
            "the shard's cache keeps no settings"
        );

        // A timestamp of its own becomes the cell's write time.
        let stamped = insert.with_config(|c| c.timestamp = Some(1_234_567));
        s.execute_unpaged(&stamped, &(2, 1, 20)).await.unwrap();
        let r = s
            .query_unpaged("SELECT WRITETIME(v) FROM t WHERE k = 2 AND c = 1", &())
            .await
            .unwrap();
        assert_eq!(r.typed_rows::<(i64,)>().unwrap(), vec![(1_234_567,)]);

        // A profile: its consistency, page size and retry policy, below the statement's own.
        let profile_policy = Arc::new(Counting::default());
        let profile = ExecutionProfile::builder()
            .consistency(Consistency::Three)
            .page_size(3)
            .retry_policy(profile_policy.clone())
            .build();
        for c in 0..10 {
            s.execute_unpaged(&insert, &(3, c, c)).await.unwrap();
        }
        let select = s.prepare("SELECT c FROM t WHERE k = 3").await.unwrap();
        let profiled = select.with_config(|c| c.profile = Some(profile.clone()));
        let before = session_policy.0.load(Ordering::Relaxed);
        unavailable(
            s.execute_unpaged(&profiled, &()).await,
            "the profile's THREE",
        );
        assert_eq!(
            profile_policy.0.load(Ordering::Relaxed),
            1,
            "the profile's retry policy decided"
        );
        assert_eq!(
            session_policy.0.load(Ordering::Relaxed),
            before,
            "not the session's"
        );
        let own_one = profiled.with_config(|c| c.consistency = Some(Consistency::One));
        let page = s
            .execute_single_page(&own_one, &(), &PagingState::start())
            .await
            .expect("the statement's ONE wins over the profile's THREE");
        assert_eq!(page.rows_count(), 3, "the profile's page size");
        assert!(!page.is_last());
        let all: Vec<(i32,)> = s
            .execute_unpaged(&own_one, &())
            .await
            .unwrap()
            .typed_rows()
            .unwrap();
        assert_eq!(all.len(), 10, "unpaged ignores the profile's page size");

        // A batch's settings: its consistency and its timestamp.
        let batch = Batch::new(BatchType::Logged)
            .with_prepared(&insert)
            .with_query("INSERT INTO t (k, c, v) VALUES (4, 2, 42)");
        let at_three = batch
            .clone()
            .with_config(|c| c.consistency = Some(Consistency::Three));
        unavailable(s.batch(&at_three, &((4, 1, 41), ())).await, "batch");
        let stamped = batch.with_config(|c| c.timestamp = Some(7_654_321));
        s.batch(&stamped, &((4, 1, 41), ())).await.unwrap();
        let r = s
            .query_unpaged("SELECT c, WRITETIME(v) FROM t WHERE k = 4", &())
            .await
            .unwrap();
        assert_eq!(
            r.typed_rows::<(i32, i64)>().unwrap(),
            vec![(1, 7_654_321), (2, 7_654_321)]
        );
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    settings_reach_the_node_and_the_nearest_one_wins,
);
