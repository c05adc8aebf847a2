//! One session to one node: create a table, write a row from a struct, read it back into
//! one.
//!
//! ```sh
//! cargo run -p doppio-driver --example connect_and_query -- [NODE] [glommio|uring]
//! ```
//! NODE defaults to 127.0.0.1:9042 (`scripts/cassandra.sh start`), the runtime to glommio.
//! A `Session` alone runs on any glommio or doppio-rt executor; `run_on` starts one on a new
//! thread and returns what the future returned.

use std::net::SocketAddr;

use doppio_driver::rt::{run_on, Runtime};
use doppio_driver::{FromRow, SerializeRow, Session, SessionConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let node: SocketAddr = args.next().as_deref().unwrap_or("127.0.0.1:9042").parse()?;
    let runtime: Runtime = args.next().as_deref().unwrap_or("glommio").parse()?;
    let (version, rows) = run(node, runtime)?;
    println!("{node} runs Cassandra {version} ({runtime} runtime)");
    for Row { k, v } in rows {
        println!("k = {k}, v = {v}");
    }
    Ok(())
}

/// A row of the example's table: read by column name, bound by bind-marker name.
#[derive(Debug, Clone, PartialEq, FromRow, SerializeRow)]
pub(crate) struct Row {
    /// The key.
    pub(crate) k: i32,
    /// Its text.
    pub(crate) v: String,
}

/// The node's release version and the rows read back.
pub(crate) fn run(
    node: SocketAddr,
    runtime: Runtime,
) -> Result<(String, Vec<Row>), Box<dyn std::error::Error>> {
    let out = run_on(runtime, "example", move || async move {
        let session = Session::connect(SessionConfig::new(node)).await?;
        let version: Vec<(String,)> = session
            .query_unpaged("SELECT release_version FROM system.local", &())
            .await?
            .typed_rows()?;
        session
            .query_unpaged(
                "CREATE KEYSPACE IF NOT EXISTS doppio_examples WITH replication = \
                 {'class': 'SimpleStrategy', 'replication_factor': 1}",
                &(),
            )
            .await?;
        session.use_keyspace("doppio_examples").await?;
        session
            .query_unpaged(
                "CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text)",
                &(),
            )
            .await?;
        // A struct binds to a prepared statement's markers by name, each value checked
        // against its column's type before anything is sent.
        let insert = session
            .prepare("INSERT INTO kv (k, v) VALUES (?, ?)")
            .await?;
        let row = Row {
            k: 1,
            v: "one".to_owned(),
        };
        session.execute_unpaged(&insert, &row).await?;
        // Rows read into structs by column name; unprepared statements take values too.
        let rows: Vec<Row> = session
            .query_unpaged("SELECT k, v FROM kv WHERE k = ?", &(1i32,))
            .await?
            .typed_rows()?;
        let version = version.into_iter().next().map(|(v,)| v).unwrap_or_default();
        Ok::<_, doppio_driver::Error>((version, rows))
    })??; // the outer `?`: the executor could not start; the inner one: the driver's error
    Ok(out)
}
