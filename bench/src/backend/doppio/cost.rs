//! `doppio cost`'s runs of doppio: a session on the simulated runtime (`doppio_driver::rt::sim`)
//! against the stub served in memory on the same thread as the simulation's peer, so that a
//! profile tells the driver's instructions and allocations (polls of the client's tasks)
//! from the stub's (polls of the peer's) and from the simulated executor's own. No socket,
//! no io_uring: Valgrind runs it.

use std::net::SocketAddr;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::rt::{sim, TcpListener};
use doppio_driver::session::{Batch, BatchType};
use doppio_driver::{Session, SessionConfig};
use doppio_stub::{Shape, Stub, StubConfig};

use super::rows::consume;
use crate::backend::cost_scenario::{Scenario, BATCH_SIZE, INSERT, PAGE_SIZE, ROW_BYTES, SELECT};

/// Runs `requests` requests of `scenario` (none for `empty`) and returns the rows read.
pub(crate) fn run(scenario: Scenario, requests: u64) -> Result<u64, String> {
    sim::run(sim::Config::seeded(1), async move {
        let addr: SocketAddr = "10.0.0.1:9042".parse().map_err(|e| format!("{e}"))?;
        let listener = TcpListener::bind_memory(addr).map_err(|e| e.to_string())?;
        let stub_config = StubConfig {
            log_rules: false,
            shape: Shape {
                rows: scenario.rows(),
                row_bytes: ROW_BYTES,
                ..Shape::default()
            },
            ..StubConfig::default()
        };
        let _stub = sim::as_peer(|| Stub::serve_local(listener, &stub_config))
            .map_err(|e| format!("the in-memory stub: {e}"))?;
        let mut config = SessionConfig::new(addr);
        config.consistency = Consistency::One;
        config.handshake.protocol_version = Some(ProtocolVersion::V4);
        config.page_size = Some(0); // unpaged, as scylla's execute_unpaged
        let session = Session::connect(config)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let rows = requests_of(&session, scenario, requests).await;
        session.close("done");
        rows
    })
    .map_err(|e| e.to_string())?
}

async fn requests_of(session: &Session, scenario: Scenario, requests: u64) -> Result<u64, String> {
    let fail = |e: doppio_driver::Error| e.to_string();
    let insert = session.prepare(INSERT).await.map_err(fail)?;
    let select = session.prepare(SELECT).await.map_err(fail)?;
    let paged = select.with_config(|c| c.page_size = Some(PAGE_SIZE));
    let mut batch = Batch::new(BatchType::Unlogged);
    for _ in 0..BATCH_SIZE {
        batch.append_prepared(&insert);
    }
    let value = [7u8; ROW_BYTES];
    let mut rows = 0;
    for i in 0..requests {
        let key = i.to_be_bytes();
        let values = (&key[..], &value[..]);
        match scenario {
            Scenario::Empty => {}
            Scenario::Insert => {
                session
                    .execute_unpaged(&insert, &values)
                    .await
                    .map_err(fail)?;
            }
            Scenario::Select1 | Scenario::Select100 => {
                let page = session
                    .execute_unpaged(&select, &(&key[..],))
                    .await
                    .map_err(fail)?;
                rows += consume(&page, false, None).map_err(|e| e.to_string())?;
            }
            Scenario::Paged => {
                let key = (&key[..],);
                let mut pages = session.execute_iter(&paged, &key);
                while let Some(page) = pages.next_page().await.map_err(fail)? {
                    rows += consume(&page, false, None).map_err(|e| e.to_string())?;
                }
            }
            Scenario::Batch64 => {
                session
                    .batch(&batch, &[values; BATCH_SIZE])
                    .await
                    .map_err(fail)?;
            }
        }
    }
    Ok(rows)
}
