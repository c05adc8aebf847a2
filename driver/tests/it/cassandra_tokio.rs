//! The door for tokio applications against a real Cassandra, on both shard runtimes: a
//! tokio multi-thread runtime's tasks send many concurrent requests through a
//! [`SendSession`] (unprepared and prepared, with owned values), read a result page by page,
//! get a server's error back typed, see the cluster shut down under queued requests (each
//! fails with `ShardGone`, none hangs), and drop the handle (the shards' drainers end).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_driver::config::DoorConfig;
use doppio_driver::door::DoorError;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::SessionConfig;
use doppio_driver::{Cluster, Error, PagingState, SendSession, Statement};

use crate::support;

use support::{cassandra, create_keyspace_cql, keyspace};

fn cluster(runtime: Runtime) -> Cluster {
    Cluster::builder()
        .session_config(SessionConfig::new(cassandra()).with_consistency(Consistency::One))
        .runtime(runtime)
        .cores(&[0, 1])
        .pin(false) // tests share the machine's cores
        .shutdown_grace(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// A tokio runtime of two worker threads, as a service would run (built by hand: the
/// workspace's tokio has no macros).
fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap()
}

/// A fresh keyspace with `t (p int, c int, v text, PRIMARY KEY (p, c))`.
async fn table(door: &SendSession, test: &str) -> String {
    let ks = keyspace(test);
    door.query_unpaged(create_keyspace_cql(&ks), ())
        .await
        .unwrap();
    door.query_unpaged(
        format!("CREATE TABLE {ks}.t (p int, c int, v text, PRIMARY KEY (p, c))"),
        (),
    )
    .await
    .unwrap();
    ks
}

async fn drop_keyspace(door: &SendSession, ks: &str) {
    door.query_unpaged(format!("DROP KEYSPACE {ks}"), ())
        .await
        .unwrap();
}

fn many_tasks_send_prepared_and_unprepared_requests(runtime: Runtime) {
    let cluster = cluster(runtime);
    let door = SendSession::new(&cluster);
    assert_eq!(door.shards(), 2);
    tokio_runtime().block_on(async {
        let ks = table(&door, "door_many").await;
        let insert = door
            .prepare(format!("INSERT INTO {ks}.t (p, c, v) VALUES (?, ?, ?)"))
            .await
            .unwrap();
        assert_eq!(insert.metadata().columns.len(), 3);
        let select = door
            .prepare(format!("SELECT c, v FROM {ks}.t WHERE p = ? AND c = ?"))
            .await
            .unwrap();
        // 64 tasks of 20 requests each, spread over tokio's workers and the two shards.
        let tasks: Vec<_> = (0..64)
            .map(|task| {
                let (door, insert, select) = (door.clone(), insert.clone(), select.clone());
                tokio::spawn(async move {
                    let mut threads = std::collections::HashSet::new();
                    for i in 0..10 {
                        let c = task * 100 + i;
                        door.execute_unpaged(&insert, (task, c, format!("v{c}")))
                            .await
                            .unwrap();
                        let row = door.execute_unpaged(&select, (task, c)).await.unwrap();
                        let rows: Vec<(i32, String)> = row.typed_rows().unwrap();
                        assert_eq!(rows, vec![(c, format!("v{c}"))]);
                        let version = door
                            .query_unpaged("SELECT release_version FROM system.local", ())
                            .await
                            .unwrap();
                        threads.insert(version.node);
                        threads.insert(row.node);
                    }
                    threads.len()
                })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.unwrap(), 1, "one node answers everything");
        }
        let count = door
            .query_unpaged(format!("SELECT COUNT(*) FROM {ks}.t"), ())
            .await
            .unwrap();
        assert_eq!(count.typed_rows::<(i64,)>().unwrap(), vec![(640,)]);
        // Both shards ran requests: each knows the prepared statements (a second prepare
        // of the same CQL on a shard is answered from its cache).
        let on_each = door
            .run(|session| async move { session.stats().requests })
            .await
            .unwrap();
        assert!(on_each > 0);
        drop_keyspace(&door, &ks).await;
    });
    assert!(cluster.shutdown().is_empty());
}

fn a_result_is_read_page_by_page(runtime: Runtime) {
    let cluster = cluster(runtime);
    let door = SendSession::new(&cluster);
    tokio_runtime().block_on(async {
        let ks = table(&door, "door_pages").await;
        let insert = door
            .prepare(format!("INSERT INTO {ks}.t (p, c, v) VALUES (?, ?, ?)"))
            .await
            .unwrap();
        for c in 0..25 {
            door.execute_unpaged(&insert, (7, c, format!("r{c}")))
                .await
                .unwrap();
        }
        // Prepared, pages of 10: 10 + 10 + 5 (each page from whichever shard is next).
        let select = door
            .prepare(
                Statement::new(format!("SELECT c FROM {ks}.t WHERE p = ?"))
                    .with_config(|c| c.page_size = Some(10)),
            )
            .await
            .unwrap();
        let mut from = PagingState::start();
        let mut seen = Vec::new();
        let mut pages = 0;
        loop {
            let page = door.execute_single_page(&select, (7,), from).await.unwrap();
            pages += 1;
            seen.extend(
                page.typed_rows::<(i32,)>()
                    .unwrap()
                    .into_iter()
                    .map(|r| r.0),
            );
            match page.next() {
                Some(next) => from = next,
                None => break,
            }
        }
        assert_eq!(seen, (0..25).collect::<Vec<_>>());
        assert!(pages >= 3, "{pages} pages");
        // Unprepared, pages of 20.
        let statement = Statement::new(format!("SELECT c, v FROM {ks}.t WHERE p = 7"))
            .with_config(|c| c.page_size = Some(20));
        let first = door
            .query_single_page(statement.clone(), (), PagingState::start())
            .await
            .unwrap();
        assert_eq!(first.rows_count(), 20);
        let second = door
            .query_single_page(statement, (), first.next().unwrap())
            .await
            .unwrap();
        assert_eq!(second.rows_count(), 5);
        drop_keyspace(&door, &ks).await;
    });
    assert!(cluster.shutdown().is_empty());
}

fn a_servers_error_comes_back_typed(runtime: Runtime) {
    let cluster = cluster(runtime);
    let door = SendSession::new(&cluster);
    tokio_runtime().block_on(async {
        let err = door
            .query_unpaged("SELECT * FROM no_such_keyspace.t", ())
            .await
            .unwrap_err();
        assert!(
            matches!(err, DoorError::Request(Error::Server { .. })),
            "{err:?}"
        );
        let err = door.prepare("SELEKT nothing").await.unwrap_err();
        assert!(
            matches!(err, DoorError::Request(Error::Server { .. })),
            "{err:?}"
        );
        // A value of the wrong type fails on the shard before anything is sent.
        let select = door
            .prepare("SELECT release_version FROM system.local WHERE key = ?")
            .await
            .unwrap();
        let err = door.execute_unpaged(&select, (42,)).await.unwrap_err();
        assert!(matches!(err, DoorError::Request(_)), "{err:?}");
        // The door still works after errors.
        door.query_unpaged("SELECT release_version FROM system.local", ())
            .await
            .unwrap();
    });
    assert!(cluster.shutdown().is_empty());
}

fn the_cluster_shuts_down_under_queued_requests(runtime: Runtime) {
    let cluster = Arc::new(cluster(runtime));
    // One request at a time per shard, two waiting: the rest wait for room.
    let mut config = DoorConfig::default();
    config.queue_capacity = 2;
    config.max_in_flight = 1;
    let door = SendSession::with_config(&cluster, config);
    let rt = tokio_runtime();
    let started = Instant::now();
    rt.block_on(async {
        // Each shard busy with a request that takes 300 ms (a sleep on the shard).
        let slow: Vec<_> = (0..2)
            .map(|_| {
                let door = door.clone();
                tokio::spawn(async move {
                    door.run(|_session| async {
                        doppio_driver::rt::sleep(Duration::from_millis(300)).await;
                        "slept"
                    })
                    .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        // 40 more: 4 fit in the lanes, 36 wait for room.
        let queued: Vec<_> = (0..40)
            .map(|_| {
                let door = door.clone();
                tokio::spawn(async move {
                    door.query_unpaged("SELECT release_version FROM system.local", ())
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let stopper = {
            let cluster = cluster.clone();
            tokio::task::spawn_blocking(move || cluster.shutdown())
        };
        // The running ones finish within the grace period.
        for s in slow {
            assert_eq!(s.await.unwrap().unwrap(), "slept");
        }
        let mut gone = 0;
        for q in queued {
            match q.await.unwrap() {
                Ok(_) => {}
                Err(DoorError::ShardGone { .. }) => gone += 1,
                Err(e) => panic!("unexpected error: {e:?}"),
            }
        }
        assert!(gone > 0, "queued requests fail with ShardGone");
        assert!(stopper.await.unwrap().is_empty());
        // After shutdown: refused at once.
        let err = door
            .query_unpaged("SELECT release_version FROM system.local", ())
            .await
            .unwrap_err();
        assert!(matches!(err, DoorError::ShardGone { .. }), "{err:?}");
        let late = SendSession::new(&cluster);
        let err = late.run(|_| async {}).await.unwrap_err();
        assert!(matches!(err, DoorError::ShardGone { .. }), "{err:?}");
    });
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "nothing waited for the grace period: {:?}",
        started.elapsed()
    );
}

fn dropping_the_handle_ends_the_shards_drainers(runtime: Runtime) {
    let cluster = cluster(runtime);
    let rt = tokio_runtime();
    {
        let door = SendSession::new(&cluster);
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let door = door.clone();
                rt.spawn(async move {
                    door.query_unpaged("SELECT release_version FROM system.local", ())
                        .await
                })
            })
            .collect();
        drop(door); // the tasks' clones keep the door open until they end
        rt.block_on(async {
            for t in tasks {
                t.await.unwrap().unwrap();
            }
        });
    }
    // Every clone is gone: the drainers ended, so the cluster keeps working and shuts down
    // without waiting for them (the grace period is 10 s).
    let out = cluster
        .run_on_shards(|session| async move {
            session
                .query_unpaged("SELECT release_version FROM system.local", &())
                .await
                .map(|r| r.rows_count())
        })
        .unwrap();
    assert!(out.iter().all(|r| matches!(r, Ok(1))), "{out:?}");
    let started = Instant::now();
    assert!(cluster.shutdown().is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "shutdown waited for a drainer: {:?}",
        started.elapsed()
    );
}

fn a_batch_runs_through_the_door_on_a_shards_session(runtime: Runtime) {
    let cluster = cluster(runtime);
    let door = SendSession::new(&cluster);
    tokio_runtime().block_on(async {
        let ks = table(&door, "door_batch").await;
        let ks2 = ks.clone();
        door.run(move |session| async move {
            let insert = session
                .prepare(format!("INSERT INTO {ks2}.t (p, c, v) VALUES (?, ?, ?)"))
                .await?;
            let mut batch = doppio_driver::Batch::new(doppio_driver::session::BatchType::Unlogged);
            batch.append_prepared(&insert);
            batch.append_prepared(&insert);
            session
                .batch(&batch, &((1, 1, "a"), (1, 2, "b")))
                .await
                .map(|_| ())
        })
        .await
        .unwrap()
        .unwrap();
        let rows = door
            .query_unpaged(format!("SELECT v FROM {ks}.t WHERE p = 1"), ())
            .await
            .unwrap();
        assert_eq!(
            rows.typed_rows::<(String,)>().unwrap(),
            vec![("a".to_owned(),), ("b".to_owned(),)]
        );
        drop_keyspace(&door, &ks).await;
    });
    assert!(cluster.shutdown().is_empty());
}

support::cassandra_runtime_tests!(CASSANDRA;
    many_tasks_send_prepared_and_unprepared_requests,
    a_result_is_read_page_by_page,
    a_servers_error_comes_back_typed,
    the_cluster_shuts_down_under_queued_requests,
    dropping_the_handle_ends_the_shards_drainers,
    a_batch_runs_through_the_door_on_a_shards_session,
);
