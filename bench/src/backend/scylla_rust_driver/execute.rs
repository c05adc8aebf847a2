//! A request on scylla-rust-driver ([`TokioSession`], what a worker runs on): a statement
//! executed page after page, a batch, a pause on tokio's timer.

use std::sync::Arc;
use std::time::Instant;

use scylla::client::session::Session;
use scylla::response::{PagingState, PagingStateResponse};

use super::bind::ElementValues;
use super::error::{request_error, rows_error};
use super::prepare::{ScyllaBatch, ScyllaPrepared};
use super::rows;
use crate::engine::{Answer, Args, BatchArgs, BenchSession, RequestError};

pub(super) struct TokioSession {
    pub(super) session: Arc<Session>,
    /// Count result rows without decoding them.
    pub(super) discard_results: bool,
}

impl BenchSession for TokioSession {
    type Prepared = ScyllaPrepared;
    type Batch = ScyllaBatch;
    /// tokio's timer entries live in the sleep future itself: nothing to keep.
    type Sleeper = ();

    fn sleeper(&self) {}

    /// Page after page with the paging state of the one before (the prepared statement
    /// carries the run's page size), each consumed before the next is asked for, as the
    /// doppio backend does.
    async fn execute(
        &self,
        prepared: &ScyllaPrepared,
        args: Args<'_>,
    ) -> Result<Answer, RequestError> {
        let mut state = PagingState::start();
        let mut answer = Answer::default();
        let mut first = true;
        loop {
            let (page, next) = self
                .session
                .execute_single_page(&prepared.statement, args, state)
                .await
                .map_err(|e| request_error(&e))?;
            if first && prepared.conditional {
                answer.not_applied = rows::not_applied(&page);
            }
            first = false;
            answer.rows += rows::consume(page, self.discard_results, args.check)
                .map_err(|e| rows_error(&e))?;
            match next {
                PagingStateResponse::HasMorePages { state: more } => state = more,
                PagingStateResponse::NoMorePages => return Ok(answer),
            }
        }
    }

    /// The phase's `Batch` with this iteration's values (scylla-rust-driver routes it by
    /// its first statement's token, as doppio does). The values are handed over as an
    /// iterator-like object ([`ElementValues`]): nothing of ours is allocated per batch, but
    /// scylla-rust-driver's batch path allocates more than its EXECUTE path (measured on
    /// Cassandra with the `alloc-count` feature: 14 allocations per unlogged batch of 10
    /// rows, against 11 per single-row EXECUTE); its API offers no way around that.
    async fn execute_batch(
        &self,
        batch: &ScyllaBatch,
        args: BatchArgs<'_, ScyllaPrepared>,
    ) -> Result<Answer, RequestError> {
        let page = self
            .session
            .batch(&batch.batch, ElementValues { args })
            .await
            .map_err(|e| request_error(&e))?;
        let not_applied = batch.conditional && rows::not_applied(&page);
        let rows = rows::consume(page, self.discard_results, None).map_err(|e| rows_error(&e))?;
        Ok(Answer {
            rows,
            not_applied,
            stages: None,
        })
    }

    async fn sleep_until(&self, _: &mut (), deadline: Instant) {
        tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)).await;
    }
}
