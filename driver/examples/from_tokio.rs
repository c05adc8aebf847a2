//! A tokio application using doppio through the door: `SendSession`, `Send + Sync + Clone`,
//! whose requests tokio tasks await while the sessions stay on their shards.
//!
//! ```sh
//! cargo run -p doppio-driver --example from_tokio -- [NODE] [glommio|uring]
//! ```
//! The cluster is built (and shut down) outside the tokio runtime: both block their caller.
//! Each request crosses to a shard and its answer back; values go in owned, results come
//! out owned (`OwnedResult`). docs/MIGRATING.md shows the same program on scylla-rust-driver.

use std::net::SocketAddr;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::Runtime;
use doppio_driver::SessionConfig;
use doppio_driver::{Cluster, SendSession};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let node: SocketAddr = args.next().as_deref().unwrap_or("127.0.0.1:9042").parse()?;
    let runtime: Runtime = args.next().as_deref().unwrap_or("glommio").parse()?;
    for (k, v) in run(node, runtime)? {
        println!("{k} {v}");
    }
    Ok(())
}

/// Inserts 100 rows from 100 tokio tasks and reads them back, sorted by key.
pub(crate) fn run(node: SocketAddr, runtime: Runtime) -> Result<Vec<(i32, String)>, BoxError> {
    // Blocks until every shard is connected: before the tokio runtime starts.
    let cluster = Cluster::builder()
        .session_config(SessionConfig::new(node).with_consistency(Consistency::One))
        .runtime(runtime)
        .cores(&[0, 1])
        .pin(false)
        .build()?;
    let door = SendSession::new(&cluster);
    let rows = tokio::runtime::Runtime::new()?.block_on(async {
        door.query_unpaged(
            "CREATE KEYSPACE IF NOT EXISTS doppio_examples WITH replication = \
             {'class': 'SimpleStrategy', 'replication_factor': 1}",
            (),
        )
        .await?;
        door.query_unpaged(
            "CREATE TABLE IF NOT EXISTS doppio_examples.from_tokio (k int PRIMARY KEY, v text)",
            (),
        )
        .await?;
        let insert = door
            .prepare("INSERT INTO doppio_examples.from_tokio (k, v) VALUES (?, ?)")
            .await?;
        let tasks: Vec<_> = (0..100)
            .map(|k| {
                let (door, insert) = (door.clone(), insert.clone());
                tokio::spawn(
                    async move { door.execute_unpaged(&insert, (k, format!("v{k}"))).await },
                )
            })
            .collect();
        for t in tasks {
            t.await??;
        }
        let rows = door
            .query_unpaged("SELECT k, v FROM doppio_examples.from_tokio", ())
            .await?;
        let mut rows = rows.typed_rows::<(i32, String)>()?;
        rows.sort();
        Ok::<_, BoxError>(rows)
    })?;
    cluster.shutdown(); // blocks: outside the runtime
    Ok(rows)
}
