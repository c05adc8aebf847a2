//! `--waterfall`'s timed requests on doppio: one request in N timed stage by stage through
//! the driver, its stages made from the driver's stamps.

use super::error::{request_error, rows_error};
use super::execute::{ShardSession, FIRST_PAGE};
use super::prepare::DoppioPrepared;
use super::rows;
use crate::engine::{Answer, Args, RequestError};

impl ShardSession {
    /// Whether this request is the one in `--waterfall` N to time.
    #[inline]
    pub(super) fn timed_now(&self) -> bool {
        let Some(every) = self.waterfall_every else {
            return false;
        };
        let left = self.countdown.get();
        if left <= 1 {
            self.countdown.set(every);
            true
        } else {
            self.countdown.set(left - 1);
            false
        }
    }

    /// A request timed stage by stage (`--waterfall`): its first page's way through the
    /// driver (`doppio_driver::stages`), its rows read as
    /// [`BenchSession::execute`](crate::engine::BenchSession::execute) reads them. The
    /// driver's thread is armed for the first poll only: the request takes the arm when it
    /// is queued then (the common case); one that waits for a stream id first is not timed.
    /// A result of several pages is not timed either (its stages would not be one
    /// request's). Boxed by its caller: one allocation per timed request.
    pub(super) async fn execute_timed(
        &self,
        prepared: &DoppioPrepared,
        args: Args<'_>,
    ) -> Result<Answer, RequestError> {
        use doppio_driver::stages;
        use std::future::Future;
        let conditional = prepared.conditional;
        let statement = &prepared.statement;
        let call = stages::now();
        let token = stages::arm();
        let mut request =
            std::pin::pin!(self
                .session
                .execute_single_page(statement, &args, &FIRST_PAGE));
        let mut first = true;
        let page = std::future::poll_fn(|cx| {
            let polled = request.as_mut().poll(cx);
            if std::mem::take(&mut first) {
                stages::disarm(token);
            }
            polled
        })
        .await;
        let returned = stages::now();
        let page = page.map_err(|e| request_error(&e))?;
        let stamps = stages::take(token);
        let not_applied = conditional && rows::not_applied(&page);
        let mut rows =
            rows::consume(&page, self.discard_results, args.check).map_err(|e| rows_error(&e))?;
        let Some(state) = page.next() else {
            return Ok(Answer {
                rows,
                not_applied,
                stages: stamps
                    .and_then(|s| driver_stages(call, &s, returned))
                    .map(Box::new),
            });
        };
        // Further pages, untimed.
        rows += Box::pin(self.further_pages(statement, &args, state)).await?;
        Ok(Answer {
            rows,
            not_applied,
            stages: None,
        })
    }
}

/// A timed request's stages from the driver's stamps and the call's own times (`None` when
/// a stamp is missing: its batch was handed over too long before its answer).
fn driver_stages(
    call: u64,
    s: &doppio_driver::stages::Stamps,
    returned: u64,
) -> Option<crate::engine::waterfall::DriverStages> {
    let points = [
        call,
        s.queued,
        s.flushed,
        s.read,
        s.completed,
        s.polled,
        returned,
    ];
    if points.contains(&0) {
        return None;
    }
    let d = |k: usize| points[k + 1].saturating_sub(points[k]);
    Some(crate::engine::waterfall::DriverStages {
        queue: d(0),
        flush: d(1),
        wire: d(2),
        frame: d(3),
        wake: d(4),
        decode: d(5),
    })
}
