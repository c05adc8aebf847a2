//! 100,000 concurrent requests from one shard against a real Cassandra complete through
//! stream-id backpressure, each with its own answer, within a stated memory bound, on each
//! runtime. The heap is measured process-wide (the counting allocator of `main.rs`): its tests
//! hold their file's turn, so no other file's test runs meanwhile, and the two runtimes'
//! variants take turns.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::time::{Duration, Instant};

use doppio_alloc_count::{live_bytes, peak_bytes, reset_peak};
use doppio_driver::{Error, Session};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cassandra, create_keyspace_cql, keyspace, on_runtime, session_to};

async fn table_of_100(s: &Session, ks: &str) {
    s.query_unpaged(&create_keyspace_cql(ks), &())
        .await
        .unwrap();
    s.use_keyspace(ks).await.unwrap();
    s.query_unpaged("CREATE TABLE t (k int PRIMARY KEY, v text)", &())
        .await
        .unwrap();
    let insert = s
        .prepare("INSERT INTO t (k, v) VALUES (?, ?)")
        .await
        .unwrap();
    for k in 0..100i32 {
        s.execute_unpaged(&insert, &(k, format!("value {k}")))
            .await
            .unwrap();
    }
}

/// The bound on what the driver itself may hold while 100,000 requests are outstanding on
/// one connection: only `max_streams` (32,768) of them are encoded or answered at a time
/// (the rest wait for a stream id without allocating), and each in-flight one costs its
/// encoded frame (~40 bytes), its slot, and at most its answer (~70 bytes) plus the read
/// buffer (64 KiB chunks). 32,768 x 1 KiB = 32 MiB is a generous ceiling; without
/// backpressure the answers of all 100,000 would be buffered at once.
const DRIVER_MEMORY_BOUND: usize = 32 << 20;

/// The runtimes' variants of the test take turns: the heap is counted process-wide.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn a_hundred_thousand_concurrent_requests_complete_within_a_memory_bound(runtime: Runtime) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    on_runtime(runtime, "load-100k", || async {
        let ks = keyspace("load");
        let s = session_to(cassandra(), false, Duration::from_secs(60)).await;
        table_of_100(&s, &ks).await;
        let select = s.prepare("SELECT v FROM t WHERE k = ?").await.unwrap();
        const N: usize = 100_000;
        // Spawn every request first: the tasks (their futures) are allocated now, so the
        // heap measured from here on is what the driver holds while they run.
        let before_spawn = live_bytes();
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let (s, select) = (s.clone(), select.clone());
                doppio_driver::rt::spawn_local(async move {
                    let k = (i % 100) as i32;
                    let r = s.execute_unpaged(&select, &(k,)).await?;
                    let rows: Vec<(String,)> = r.typed_rows()?;
                    Ok::<_, Error>(rows.first().map(|r| r.0.clone()) == Some(format!("value {k}")))
                })
            })
            .collect();
        let baseline = reset_peak();
        let started = Instant::now();
        let mut correct = 0;
        for h in handles {
            if h.await.unwrap() {
                correct += 1;
            }
        }
        let elapsed = started.elapsed();
        let peak_over_baseline = peak_bytes().saturating_sub(baseline);
        // What stays once every task is gone: the connection's buffers at their high-water
        // capacity and its in-flight table.
        let retained = live_bytes().saturating_sub(before_spawn);
        let conn = s.node_at(s.node()).unwrap().connection().unwrap();
        let stats = conn.stats();
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        println!(
            "100,000 requests in {elapsed:?}: tasks {:.1} MiB; heap peak {:.1} MiB over them; \
             {:.1} MiB retained after; {} writes, {} reads, {} requests",
            mib(baseline - before_spawn),
            mib(peak_over_baseline),
            mib(retained),
            stats.writes,
            stats.reads,
            stats.requests
        );
        assert_eq!(correct, N, "every request got its own row back");
        assert!(
            peak_over_baseline < DRIVER_MEMORY_BOUND,
            "driver heap peaked {peak_over_baseline} bytes over the spawned tasks"
        );
        assert!(
            retained < DRIVER_MEMORY_BOUND,
            "the driver kept {retained} bytes after the run"
        );
        assert_eq!(conn.in_flight(), 0);
        // Backpressure: never more in flight than the stream-id space, which was full.
        assert_eq!(
            stats.in_flight_high_water,
            doppio_driver::connection::ConnectionConfig::default().max_streams as u64
        );
        assert!(conn.closed().is_none(), "the connection survived");
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    a_hundred_thousand_concurrent_requests_complete_within_a_memory_bound,
);
