//! The runnable examples of `driver/examples/`, run against the local Cassandra on both
//! runtimes: each example's `run` is called as its `main` calls it, and what it returns is
//! checked, so the code the README shows is code that works. The TLS example runs against
//! the TLS-only node (`scripts/cassandra-tls.sh`).

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use doppio_driver::rt::Runtime;
use doppio_test_support::{cassandra_tls_ca, CASSANDRA_TLS};

use crate::support;

use support::cassandra;

#[allow(dead_code)] // its `main` is the example's, not called here
#[path = "../../examples/connect_and_query.rs"]
mod connect_and_query;

#[allow(dead_code)]
#[path = "../../examples/prepared_and_paging.rs"]
mod prepared_and_paging;

#[allow(dead_code)]
#[path = "../../examples/cluster_of_shards.rs"]
mod cluster_of_shards;

#[allow(dead_code)]
#[path = "../../examples/tls.rs"]
mod tls;

#[allow(dead_code)]
#[path = "../../examples/from_tokio.rs"]
mod from_tokio;

fn connect_and_query_reads_back_its_row(runtime: Runtime) {
    let (version, rows) = connect_and_query::run(cassandra(), runtime).unwrap();
    assert!(version.starts_with("5."), "{version}");
    assert_eq!(
        rows,
        vec![connect_and_query::Row {
            k: 1,
            v: "one".to_owned()
        }]
    );
}

fn prepared_and_paging_reads_every_row_in_pages(runtime: Runtime) {
    let read = prepared_and_paging::run(cassandra(), runtime).unwrap();
    let rows = prepared_and_paging::ROWS;
    assert_eq!(read.rows, rows as usize, "{read:?}");
    // Pages of 100 rows: ten full ones, and the node may answer an eleventh, empty one.
    assert!((10..=11).contains(&read.pages), "{read:?}");
    let sum: f64 = (0..rows).map(|at| f64::from(at) * 0.5).sum();
    assert_eq!(read.sum, sum, "{read:?}");
    assert_eq!(read.reading_at_10, Some(5.0), "{read:?}");
}

fn cluster_of_shards_writes_from_every_shard(runtime: Runtime) {
    let cores = [0, 1];
    let shards = cluster_of_shards::run(cassandra(), runtime, &cores).unwrap();
    assert_eq!(shards.len(), cores.len());
    for (i, shard) in shards.iter().enumerate() {
        assert_eq!((shard.shard, shard.core), (i, cores[i]), "{shard:?}");
        let writes = cluster_of_shards::WRITES_PER_SHARD as u64;
        // Its writes, its PREPARE and shard 0's schema statements; nothing failed.
        assert!(shard.stats.requests > writes, "{shard:?}");
        assert_eq!(shard.stats.errors.total(), 0, "{shard:?}");
    }
}

fn tls_connects_with_the_nodes_ca(runtime: Runtime) {
    if CASSANDRA_TLS.answering().is_none() {
        return; // skipped (outside CI) or failed (in CI) by `answering`, with its message
    }
    let version = tls::run(CASSANDRA_TLS.addr(), &cassandra_tls_ca(), runtime).unwrap();
    assert!(version.starts_with("5."), "{version}");
}

fn from_tokio_reads_back_what_its_tasks_wrote(runtime: Runtime) {
    let rows = from_tokio::run(cassandra(), runtime).unwrap();
    assert_eq!(rows.len(), 100);
    assert_eq!(rows[7], (7, "v7".to_owned()));
}

support::cassandra_runtime_tests!(CASSANDRA;
    from_tokio_reads_back_what_its_tasks_wrote,
    connect_and_query_reads_back_its_row,
    prepared_and_paging_reads_every_row_in_pages,
    cluster_of_shards_writes_from_every_shard,
    tls_connects_with_the_nodes_ca,
);
