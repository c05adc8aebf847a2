//! `doppio cost`'s runs of scylla-rust-driver: a session on a current-thread tokio runtime
//! (the driver's tasks and the requests on one thread, as one doppio shard) against a stub
//! in another process over loopback TCP, so that a profile of this process is the driver's
//! and tokio's work alone.

use std::net::SocketAddr;

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::frame::types::Consistency;
use scylla::statement::batch::{Batch, BatchType};

use super::rows::consume;
use crate::backend::cost_scenario::{Scenario, BATCH_SIZE, INSERT, PAGE_SIZE, ROW_BYTES, SELECT};

/// Runs `requests` requests of `scenario` (none for `empty`) against the stub on `stub` and
/// returns the rows read.
pub(crate) fn run(scenario: Scenario, requests: u64, stub: SocketAddr) -> Result<u64, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("a tokio runtime: {e}"))?;
    runtime.block_on(async move {
        let one = std::num::NonZeroUsize::MIN;
        let session: Session = SessionBuilder::new()
            .known_node_addr(stub)
            .pool_size(PoolSize::PerHost(one))
            .compression(None)
            .build()
            .await
            .map_err(|e| format!("connect: {e}"))?;
        requests_of(&session, scenario, requests).await
    })
}

async fn requests_of(session: &Session, scenario: Scenario, requests: u64) -> Result<u64, String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    let mut insert = session.prepare(INSERT).await.map_err(|e| fail(&e))?;
    insert.set_consistency(Consistency::One);
    let mut select = session.prepare(SELECT).await.map_err(|e| fail(&e))?;
    select.set_consistency(Consistency::One);
    let mut paged = select.clone();
    paged.set_page_size(PAGE_SIZE);
    let mut batch = Batch::new(BatchType::Unlogged);
    batch.set_consistency(Consistency::One);
    for _ in 0..BATCH_SIZE {
        batch.append_statement(insert.clone());
    }
    let value = [7u8; ROW_BYTES];
    // Made once: doppio's entries live on the stack, and neither side should pay for the
    // caller's own container (the key bytes do not change the work).
    let batch_key = 0u64.to_be_bytes();
    let batch_values: Vec<(&[u8], &[u8])> = vec![(&batch_key[..], &value[..]); BATCH_SIZE];
    let mut rows = 0;
    for i in 0..requests {
        let key = i.to_be_bytes();
        let values = (&key[..], &value[..]);
        match scenario {
            Scenario::Empty => {}
            Scenario::Insert => {
                session
                    .execute_unpaged(&insert, values)
                    .await
                    .map_err(|e| fail(&e))?;
            }
            Scenario::Select1 | Scenario::Select100 => {
                let page = session
                    .execute_unpaged(&select, (&key[..],))
                    .await
                    .map_err(|e| fail(&e))?;
                rows += consume(page, false, None).map_err(|e| fail(&e))?;
            }
            Scenario::Paged => {
                let mut state = scylla::response::PagingState::start();
                loop {
                    let (page, next) = session
                        .execute_single_page(&paged, (&key[..],), state)
                        .await
                        .map_err(|e| fail(&e))?;
                    rows += consume(page, false, None).map_err(|e| fail(&e))?;
                    match next.into_paging_control_flow() {
                        std::ops::ControlFlow::Continue(s) => state = s,
                        std::ops::ControlFlow::Break(()) => break,
                    }
                }
            }
            Scenario::Batch64 => {
                session
                    .batch(&batch, &batch_values)
                    .await
                    .map_err(|e| fail(&e))?;
            }
        }
    }
    Ok(rows)
}
