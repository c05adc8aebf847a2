//! Paging against a real Cassandra: 10,000 rows read with pages of 100 come back each exactly
//! once, by unprepared and prepared statements, and the stream sends the request for the
//! next page before the caller has read the current one.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::HashSet;

use doppio::proto::consistency::Consistency;
use doppio::{Session, SessionConfig, StatementOptions};

mod support;

use doppio::rt::Runtime;
use support::{cassandra, create_keyspace_cql, keyspace, on_runtime};

const ROWS: i32 = 10_000;
const PAGE: i32 = 100;

async fn filled_table(ks: &str) -> Session {
    let mut config = SessionConfig::new(cassandra());
    config.consistency = Consistency::One;
    let s = Session::connect(config).await.unwrap();
    s.query(&create_keyspace_cql(ks), &()).await.unwrap();
    s.use_keyspace(ks).await.unwrap();
    // Ten partitions of 1,000 clustering rows: pages cross partition boundaries.
    s.query(
        "CREATE TABLE t (p int, c int, v text, PRIMARY KEY (p, c))",
        &(),
    )
    .await
    .unwrap();
    let insert = s
        .prepare("INSERT INTO t (p, c, v) VALUES (?, ?, ?)")
        .await
        .unwrap();
    // 200 inserts in flight at a time.
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(200) {
        let writes = chunk.iter().map(|&i| {
            let (s, insert) = (s.clone(), insert.clone());
            async move {
                s.execute(&insert, &(i % 10, i, format!("row {i}")))
                    .await
                    .unwrap();
            }
        });
        join_all(writes.collect()).await;
    }
    s
}

/// Awaits every future (they run concurrently on the current executor).
async fn join_all<F: std::future::Future<Output = ()> + 'static>(futures: Vec<F>) {
    let handles: Vec<_> = futures.into_iter().map(doppio::rt::spawn_local).collect();
    for h in handles {
        h.await;
    }
}

fn ten_thousand_rows_in_pages_of_100_each_come_back_once(runtime: Runtime) {
    on_runtime(runtime, "paging", || async {
        let ks = keyspace("paging");
        let s = filled_table(&ks).await;
        let options = StatementOptions {
            page_size: Some(PAGE),
            ..StatementOptions::default()
        };
        let select = s.prepare("SELECT p, c, v FROM t").await.unwrap();
        for prepared in [false, true] {
            let base = s.stats().connections.requests;
            let mut stream = if prepared {
                s.execute_pages(&select, &(), options)
            } else {
                s.query_pages("SELECT p, c, v FROM t", &(), options)
            };
            let mut seen = HashSet::new();
            let mut largest_page = 0;
            loop {
                let Some(page) = stream.next_page().await.unwrap() else {
                    break;
                };
                if page.paging_state().is_some() {
                    // The next page's request left before we read this one: with k pages
                    // returned, k + 1 requests were sent.
                    assert_eq!(
                        s.stats().connections.requests - base,
                        stream.pages() + 1,
                        "page {} prefetched the next",
                        stream.pages()
                    );
                }
                let rows: Vec<(i32, i32, String)> = page.typed_rows().unwrap();
                largest_page = largest_page.max(rows.len());
                for (p, c, v) in rows {
                    assert_eq!(p, c % 10);
                    assert_eq!(v, format!("row {c}"));
                    assert!(
                        seen.insert(c),
                        "row {c} came back twice (prepared: {prepared})"
                    );
                }
            }
            assert_eq!(seen.len(), ROWS as usize, "prepared: {prepared}");
            assert_eq!(largest_page, PAGE as usize);
            // 100 full pages, plus possibly an empty last one (the node cannot know there is
            // nothing left until it looks).
            assert!((100..=101).contains(&stream.pages()), "{}", stream.pages());
            assert!(
                stream.next_page().await.unwrap().is_none(),
                "ended stays ended"
            );
        }
        s.query(&format!("DROP KEYSPACE {ks}"), &()).await.unwrap();
    });
}

fn a_stream_resumes_from_a_saved_paging_state(runtime: Runtime) {
    on_runtime(runtime, "paging-resume", || async {
        let ks = keyspace("resume");
        let s = filled_table(&ks).await;
        let options = StatementOptions {
            page_size: Some(PAGE),
            ..StatementOptions::default()
        };
        let mut first = s.query_pages("SELECT c FROM t", &(), options);
        let page1 = first.next_page().await.unwrap().unwrap();
        let state = page1.paging_state().unwrap().clone();
        drop(first); // abandons the prefetched page 2
        let mut rest = s.query_pages(
            "SELECT c FROM t",
            &(),
            StatementOptions {
                paging_state: Some(&state),
                ..options
            },
        );
        let mut seen: HashSet<i32> = page1
            .typed_rows::<(i32,)>()
            .unwrap()
            .into_iter()
            .map(|r| r.0)
            .collect();
        while let Some(page) = rest.next_page().await.unwrap() {
            for (c,) in page.typed_rows::<(i32,)>().unwrap() {
                assert!(seen.insert(c), "row {c} twice");
            }
        }
        assert_eq!(seen.len(), ROWS as usize);
        s.query(&format!("DROP KEYSPACE {ks}"), &()).await.unwrap();
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    ten_thousand_rows_in_pages_of_100_each_come_back_once,
    a_stream_resumes_from_a_saved_paging_state,
);
