//! A request on doppio ([`ShardSession`], what a worker runs on, one per shard): a
//! statement's first page on the session's hot path and its further pages, a batch, a pause
//! on the fiber's kept timer.

use std::time::Instant;

use doppio_driver::rt::Sleeper;
use doppio_driver::session::PagingState;
use doppio_driver::{PreparedStatement, Session};

use super::bind::Elements;
use super::error::{request_error, rows_error};
use super::prepare::{DoppioBatch, DoppioPrepared};
use super::rows;
use crate::backend::tasks::run_fibers_as_tasks;
use crate::engine::{Answer, Args, BatchArgs, BenchSession, RequestError};

/// Where every request's first page starts.
pub(super) static FIRST_PAGE: PagingState = PagingState::start();

pub(super) struct ShardSession {
    pub(super) session: Session,
    /// Count result rows without decoding them.
    pub(super) discard_results: bool,
    /// `--waterfall N`: one request in N is timed stage by stage.
    pub(super) waterfall_every: Option<u64>,
    /// Requests until the next timed one (one shard: a `Cell`, no atomic).
    pub(super) countdown: std::cell::Cell<u64>,
}

impl ShardSession {
    /// The rows of the pages after the first, each asked for with the previous one's paging
    /// state (`state`, the first page's) once that one is consumed. Boxed by its callers:
    /// further pages are the rare path, and a single-page request's future stays as small
    /// as it was (one allocation for all the further pages).
    pub(super) async fn further_pages(
        &self,
        statement: &PreparedStatement,
        args: &Args<'_>,
        mut state: PagingState,
    ) -> Result<u64, RequestError> {
        let mut rows = 0;
        loop {
            let page = self
                .session
                .execute_single_page(statement, args, &state)
                .await
                .map_err(|e| request_error(&e))?;
            rows += rows::consume(&page, self.discard_results, args.check)
                .map_err(|e| rows_error(&e))?;
            // A reference-counted handle on the page's bytes: no copy.
            match page.next() {
                Some(next) => state = next,
                None => return Ok(rows),
            }
        }
    }
}

impl BenchSession for ShardSession {
    type Prepared = DoppioPrepared;
    type Batch = DoppioBatch;
    type Sleeper = Sleeper;

    fn sleeper(&self) -> Sleeper {
        Sleeper::new()
    }

    /// The first page on the session's hot path (the statement's settings: the run's page
    /// size), each further page asked for with the previous one's paging state once that
    /// one is consumed: page after page, as the scylla backend does.
    async fn execute(
        &self,
        prepared: &DoppioPrepared,
        args: Args<'_>,
    ) -> Result<Answer, RequestError> {
        if self.timed_now() {
            return Box::pin(self.execute_timed(prepared, args)).await;
        }
        let conditional = prepared.conditional;
        let prepared = &prepared.statement;
        let page = self
            .session
            .execute_single_page(prepared, &args, &FIRST_PAGE)
            .await
            .map_err(|e| request_error(&e))?;
        let not_applied = conditional && rows::not_applied(&page);
        let mut rows =
            rows::consume(&page, self.discard_results, args.check).map_err(|e| rows_error(&e))?;
        if let Some(state) = page.next() {
            rows += Box::pin(self.further_pages(prepared, &args, state)).await?;
        }
        Ok(Answer {
            rows,
            not_applied,
            stages: None,
        })
    }

    /// One BATCH of the elements' prepared statements and values, routed by its first
    /// statement's partition key. Each element's values are made as the frame is written:
    /// nothing is collected or allocated for them.
    async fn execute_batch(
        &self,
        batch: &DoppioBatch,
        args: BatchArgs<'_, DoppioPrepared>,
    ) -> Result<Answer, RequestError> {
        let page = self
            .session
            .batch(&batch.batch, &Elements(args))
            .await
            .map_err(|e| request_error(&e))?;
        let not_applied = batch.conditional && rows::not_applied(&page);
        let rows = rows::consume(&page, self.discard_results, None).map_err(|e| rows_error(&e))?;
        Ok(Answer {
            rows,
            not_applied,
            stages: None,
        })
    }

    /// On the fiber's kept timer: glommio allocates for every new timer, not for one
    /// re-armed.
    async fn sleep_until(&self, sleeper: &mut Sleeper, deadline: Instant) {
        sleeper.sleep_until(deadline).await;
    }

    fn tablet_misroutes(&self) -> Option<u64> {
        Some(self.session.stats().tablet_payloads)
    }

    /// This shard's per-node counters (the session's nodes of now: a node removed from the
    /// cluster is gone from them).
    fn node_requests(&self) -> Vec<(String, u64)> {
        self.session
            .nodes()
            .into_iter()
            .map(|n| (n.info.addr.to_string(), n.counters.requests))
            .collect()
    }

    async fn run_fibers<Fut: std::future::Future<Output = ()>>(&self, fibers: Vec<Fut>) {
        run_fibers_as_tasks(fibers).await;
    }
}
