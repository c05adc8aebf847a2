//! Prepared statements and paging: write 1,000 rows with a prepared INSERT, read them back
//! as a stream of rows across pages, and give statements settings of their own
//! (consistency, page size, timeout).
//!
//! ```sh
//! cargo run -p doppio-driver --example prepared_and_paging -- [NODE] [glommio|uring]
//! ```
//! A prepared statement is parsed once by the node; its EXECUTEs are encoded from a template,
//! and one whose partition key is bound goes to a replica of that key. Each call's name says
//! what it returns: `execute_unpaged` the whole result, `execute_single_page` one page and
//! where the next starts, `execute_iter` every page, asking for page N+1 while the caller
//! reads page N.

use std::net::SocketAddr;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::rt::{run_on, Runtime};
use doppio_driver::{Session, SessionConfig, Statement};

/// Rows written to the one partition.
pub(crate) const ROWS: i32 = 1000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let node: SocketAddr = args.next().as_deref().unwrap_or("127.0.0.1:9042").parse()?;
    let runtime: Runtime = args.next().as_deref().unwrap_or("glommio").parse()?;
    let read = run(node, runtime)?;
    let at_10 = read
        .reading_at_10
        .map_or_else(|| "no row".to_owned(), |r| r.to_string());
    println!(
        "{} rows in {} pages, readings sum to {}; reading at 10 = {at_10}",
        read.rows, read.pages, read.sum
    );
    Ok(())
}

/// What the example read back.
#[derive(Debug)]
pub(crate) struct ReadBack {
    /// Pages asked for (the last one may be empty).
    pub(crate) pages: u64,
    /// Rows of the partition read through the pages.
    pub(crate) rows: usize,
    /// The sum of their readings.
    pub(crate) sum: f64,
    /// The reading of one row read by its full primary key (`None`: no such row).
    pub(crate) reading_at_10: Option<f64>,
}

/// Writes the partition, reads it back page by page and reads one row.
pub(crate) fn run(
    node: SocketAddr,
    runtime: Runtime,
) -> Result<ReadBack, Box<dyn std::error::Error>> {
    let read = run_on(runtime, "example", move || async move {
        let session = Session::connect(SessionConfig::new(node)).await?;
        session
            .query_unpaged(
                "CREATE KEYSPACE IF NOT EXISTS doppio_examples WITH replication = \
                 {'class': 'SimpleStrategy', 'replication_factor': 1}",
                &(),
            )
            .await?;
        session
            .query_unpaged(
                "CREATE TABLE IF NOT EXISTS doppio_examples.series \
                 (sensor int, at int, reading double, PRIMARY KEY (sensor, at))",
                &(),
            )
            .await?;

        let insert = session
            .prepare("INSERT INTO doppio_examples.series (sensor, at, reading) VALUES (?, ?, ?)")
            .await?;
        for at in 0..ROWS {
            // The values' types are checked against the prepared columns before sending.
            session
                .execute_unpaged(&insert, &(7i32, at, f64::from(at) * 0.5))
                .await?;
        }

        // Every row of the partition, 100 per page, at consistency ONE: the statement
        // carries its settings to every execution.
        let select =
            Statement::new("SELECT at, reading FROM doppio_examples.series WHERE sensor = ?")
                .with_config(|c| {
                    c.page_size = Some(100);
                    c.consistency = Some(Consistency::One);
                });
        let select = session.prepare(select).await?;
        let mut stream = session.execute_iter(&select, &(7i32,)).rows::<(i32, f64)>();
        let (mut rows, mut sum) = (0usize, 0f64);
        while let Some(row) = stream.next_row().await {
            let (_at, reading) = row?;
            rows += 1;
            sum += reading;
        }

        // One row, with a timeout of its own.
        let one_row = session
            .prepare("SELECT reading FROM doppio_examples.series WHERE sensor = ? AND at = ?")
            .await?
            .with_config(|c| c.timeout = Some(std::time::Duration::from_secs(2)));
        let one: Vec<(f64,)> = session
            .execute_unpaged(&one_row, &(7i32, 10i32))
            .await?
            .typed_rows()?;
        Ok::<_, doppio_driver::Error>(ReadBack {
            pages: stream.pages(),
            rows,
            sum,
            reading_at_10: one.first().map(|(reading,)| *reading),
        })
    })??;
    Ok(read)
}
