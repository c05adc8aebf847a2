//! Paging against a real Cassandra: each call returns what its name says, by unprepared and
//! prepared statements.
//! - `*_unpaged` returns the whole result even when the session's page size is smaller
//!   (10,000 rows with the default page of 5,000).
//! - `*_single_page`, `*_iter` pages and `*_iter` rows agree on results of 0 rows, 1 row,
//!   exactly one page, and several pages (a full last page may be followed by an empty
//!   one: the node cannot know there is nothing left until it looks).
//! - 10,000 rows read with pages of 100 come back each exactly once, and the stream sends
//!   the request for the next page before the caller has read the current one.
//! - A stream resumes from a paging state kept as bytes.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::HashSet;

use futures_lite::StreamExt;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::{PagingState, Session, SessionConfig, Statement};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cassandra, create_keyspace_cql, keyspace, on_runtime};

const ROWS: i32 = 10_000;
const PAGE: i32 = 100;

async fn filled_table(ks: &str) -> Session {
    let mut config = SessionConfig::new(cassandra());
    config.consistency = Consistency::One;
    let s = Session::connect(config).await.unwrap();
    s.query_unpaged(&create_keyspace_cql(ks), &())
        .await
        .unwrap();
    s.use_keyspace(ks).await.unwrap();
    // Ten partitions of 1,000 clustering rows: pages cross partition boundaries.
    s.query_unpaged(
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
                s.execute_unpaged(&insert, &(i % 10, i, format!("row {i}")))
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
    let handles: Vec<_> = futures
        .into_iter()
        .map(doppio_driver::rt::spawn_local)
        .collect();
    for h in handles {
        h.await;
    }
}

fn ten_thousand_rows_in_pages_of_100_each_come_back_once(runtime: Runtime) {
    on_runtime(runtime, "paging", || async {
        let ks = keyspace("paging");
        let s = filled_table(&ks).await;
        let statement =
            Statement::new("SELECT p, c, v FROM t").with_config(|c| c.page_size = Some(PAGE));
        let select = s.prepare(&statement).await.unwrap();
        // Unpaged: all 10,000 rows in one answer, though the session's pages are of 5,000
        // and the statement's of 100.
        let whole = s.query_unpaged(&statement, &()).await.unwrap();
        assert_eq!(whole.rows_count(), ROWS as usize);
        let whole = s.execute_unpaged(&select, &()).await.unwrap();
        assert_eq!(whole.rows_count(), ROWS as usize);
        for prepared in [false, true] {
            let base = s.stats().connections.requests;
            let mut stream = if prepared {
                s.execute_iter(&select, &())
            } else {
                s.query_iter(&statement, &())
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
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

fn a_stream_resumes_from_a_saved_paging_state(runtime: Runtime) {
    on_runtime(runtime, "paging-resume", || async {
        let ks = keyspace("resume");
        let s = filled_table(&ks).await;
        let statement = Statement::new("SELECT c FROM t").with_config(|c| c.page_size = Some(PAGE));
        let mut first = s.query_iter(&statement, &());
        let page1 = first.next_page().await.unwrap().unwrap();
        // Kept as bytes, as an application would keep a cursor between requests.
        let saved = page1.next().unwrap().as_bytes().unwrap().to_vec();
        drop(first); // abandons the prefetched page 2
        let mut rest = s
            .query_iter(&statement, &())
            .resume_from(PagingState::from_bytes(saved));
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
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

/// Rows per page of the small results.
const SMALL_PAGE: i32 = 7;

/// Partitions of 0 rows, 1 row, exactly one page, and several pages (the last one short).
const SIZES: [i32; 4] = [0, 1, SMALL_PAGE, 3 * SMALL_PAGE + 2];

fn every_call_returns_what_its_name_says_for_0_1_one_page_and_many(runtime: Runtime) {
    on_runtime(runtime, "paging-sizes", || async {
        let ks = keyspace("paging_sizes");
        let mut config = SessionConfig::new(cassandra());
        config.consistency = Consistency::One;
        // A session page smaller than the largest result: the unpaged calls must ignore it.
        config.page_size = Some(SMALL_PAGE);
        let s = Session::connect(config).await.unwrap();
        s.query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap();
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged("CREATE TABLE t (n int, i int, PRIMARY KEY (n, i))", &())
            .await
            .unwrap();
        let insert = s
            .prepare("INSERT INTO t (n, i) VALUES (?, ?)")
            .await
            .unwrap();
        for n in SIZES {
            for i in 0..n {
                s.execute_unpaged(&insert, &(n, i)).await.unwrap();
            }
        }
        let cql = "SELECT i FROM t WHERE n = ?";
        let select = s.prepare(cql).await.unwrap();
        for n in SIZES {
            let want: Vec<i32> = (0..n).collect();
            let values = (n,);
            let context = |how: &str| format!("{how}, {n} rows");
            let ids = |page: &doppio_driver::QueryResult| -> Vec<i32> {
                page.typed_rows::<(i32,)>()
                    .unwrap()
                    .into_iter()
                    .map(|(i,)| i)
                    .collect()
            };

            // Unpaged: everything at once, no paging state.
            for (how, whole) in [
                (
                    "query_unpaged",
                    s.query_unpaged(cql, &values).await.unwrap(),
                ),
                (
                    "execute_unpaged",
                    s.execute_unpaged(&select, &values).await.unwrap(),
                ),
            ] {
                assert_eq!(ids(&whole), want, "{}", context(how));
                assert!(whole.paging_state().is_none(), "{}", context(how));
            }

            // Single pages, each from the one before.
            for prepared in [false, true] {
                let how = context(if prepared {
                    "execute_single_page"
                } else {
                    "query_single_page"
                });
                let (mut got, mut pages, mut from) = (Vec::new(), 0, PagingState::start());
                loop {
                    let page = if prepared {
                        s.execute_single_page(&select, &values, &from).await
                    } else {
                        s.query_single_page(cql, &values, &from).await
                    }
                    .unwrap();
                    pages += 1;
                    let rows = ids(&page);
                    assert!(rows.len() <= SMALL_PAGE as usize, "{how}: {rows:?}");
                    got.extend(rows);
                    assert_eq!(page.is_last(), page.next().is_none(), "{how}");
                    match page.next() {
                        Some(next) => from = next,
                        None => break,
                    }
                }
                assert_eq!(got, want, "{how}");
                assert_pages(pages, n, &how);
            }

            // Streams of pages and of rows.
            for prepared in [false, true] {
                let how = context(if prepared {
                    "execute_iter"
                } else {
                    "query_iter"
                });
                let stream = || {
                    if prepared {
                        s.execute_iter(&select, &values)
                    } else {
                        s.query_iter(cql, &values)
                    }
                };
                let mut pages = stream();
                let mut got = Vec::new();
                while let Some(page) = pages.next_page().await.unwrap() {
                    got.extend(ids(&page));
                }
                assert_eq!(got, want, "{how}: pages");
                assert_pages(pages.pages(), n, &how);
                let mut rows = stream().rows::<(i32,)>();
                let mut got = Vec::new();
                while let Some(row) = rows.next_row().await {
                    got.push(row.unwrap().0);
                }
                assert_eq!(got, want, "{how}: rows");
                assert!(rows.next_row().await.is_none(), "{how}: ended stays ended");
                // The same rows through the `Stream` trait.
                let streamed: Vec<i32> = stream()
                    .rows::<(i32,)>()
                    .map(|row| row.unwrap().0)
                    .collect()
                    .await;
                assert_eq!(streamed, want, "{how}: Stream");
            }
        }

        // Rows that do not read as the type asked for end the row stream with the error.
        let mut wrong = s.query_iter(cql, &(SIZES[3],)).rows::<(String,)>();
        let err = wrong.next_row().await.unwrap().unwrap_err();
        assert!(
            matches!(err, doppio_driver::Error::Deserialization(_)),
            "{err:?}"
        );
        assert!(wrong.next_row().await.is_none(), "an error ends the stream");
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

/// `pages` pages for a result of `n` rows in pages of `SMALL_PAGE`: one per started page,
/// at least one, and an empty last one allowed after a full page.
fn assert_pages(pages: u64, n: i32, how: &str) {
    let full = (n as u64).div_ceil(SMALL_PAGE as u64).max(1);
    let empty_after_full = n > 0 && n % SMALL_PAGE == 0;
    assert!(
        pages == full || (empty_after_full && pages == full + 1),
        "{how}: {pages} pages"
    );
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    every_call_returns_what_its_name_says_for_0_1_one_page_and_many,
    ten_thousand_rows_in_pages_of_100_each_come_back_once,
    a_stream_resumes_from_a_saved_paging_state,
);
