//! A `Cluster`: one pinned executor (a shard) per core, each with its own connections,
//! routing tables and statement cache, and user code running on every shard.
//!
//! ```sh
//! cargo run -p doppio-driver --example cluster_of_shards -- [NODE] [glommio|uring]
//! ```
//! The closure given to `run_on_shards` runs once on each shard with that shard's `Session`
//! (`!Send`: it never leaves its core); what each returns comes back in shard order. Nothing
//! on the request path crosses cores.

use std::net::SocketAddr;
use std::time::Duration;

use doppio_driver::rt::Runtime;
use doppio_driver::session::SessionStats;
use doppio_driver::SessionConfig;
use doppio_driver::{Cluster, Error};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let node: SocketAddr = args.next().as_deref().unwrap_or("127.0.0.1:9042").parse()?;
    let runtime: Runtime = args.next().as_deref().unwrap_or("glommio").parse()?;
    let cores: Vec<usize> = (0..std::thread::available_parallelism()?.get().min(2)).collect();
    for shard in run(node, runtime, &cores)? {
        println!(
            "shard {} on core {}: {} requests, {} errors, {} writes to the socket",
            shard.shard,
            shard.core,
            shard.stats.requests,
            shard.stats.errors.total(),
            shard.stats.connections.flushes,
        );
    }
    Ok(())
}

/// Rows each shard writes.
pub(crate) const WRITES_PER_SHARD: i32 = 500;

/// What one shard did.
#[derive(Debug)]
pub(crate) struct ShardReport {
    /// The shard's index.
    pub(crate) shard: usize,
    /// The core it ran on.
    pub(crate) core: usize,
    /// Its session's counters when it was done.
    pub(crate) stats: SessionStats,
}

/// Starts a shard on each of `cores`, has each write its own keys, and returns what each did.
pub(crate) fn run(
    node: SocketAddr,
    runtime: Runtime,
    cores: &[usize],
) -> Result<Vec<ShardReport>, Box<dyn std::error::Error>> {
    let cluster = Cluster::builder()
        .session_config(SessionConfig::new(node).with_connections(1).with_compression(true).with_request_timeout(Duration::from_secs(5)))
        .runtime(runtime)
        .cores(cores) // one shard per core
        .pin(false) // pinning is the default; off here so the example shares the machine kindly // lz4 when the node offers it
        .build()?;

    // The schema once, from one shard.
    cluster
        .run_on_shards_indexed(|shard, session| async move {
            if shard == 0 {
                session
                    .query_unpaged(
                        "CREATE KEYSPACE IF NOT EXISTS doppio_examples WITH replication = \
                         {'class': 'SimpleStrategy', 'replication_factor': 1}",
                        &(),
                    )
                    .await?;
                session
                    .query_unpaged(
                        "CREATE TABLE IF NOT EXISTS doppio_examples.by_shard \
                         (k int PRIMARY KEY, shard int)",
                        &(),
                    )
                    .await?;
            }
            Ok::<_, Error>(())
        })?
        .into_iter()
        .collect::<Result<Vec<()>, Error>>()?;

    // Every shard writes its own keys through its own connections.
    let per_shard = cluster.run_on_shards_indexed(|shard, session| async move {
        let insert = session
            .prepare("INSERT INTO doppio_examples.by_shard (k, shard) VALUES (?, ?)")
            .await?;
        let shard = shard as i32;
        for i in 0..WRITES_PER_SHARD {
            session
                .execute_unpaged(&insert, &(i * 64 + shard, shard))
                .await?;
        }
        Ok::<_, Error>(session.stats())
    })?;
    // Running work gets the grace period, then fails with a clear reason.
    cluster.shutdown();

    let mut reports = Vec::new();
    for (shard, stats) in per_shard.into_iter().enumerate() {
        reports.push(ShardReport {
            shard,
            core: cores[shard],
            stats: stats?,
        });
    }
    Ok(reports)
}
