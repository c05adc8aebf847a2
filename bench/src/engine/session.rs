//! What a backend offers a worker ([`BenchSession`]): executing a prepared statement with
//! one iteration's arguments ([`Args`]), a BATCH of them ([`BatchArgs`]), sleeping on its
//! runtime's timer, and running the worker's fibers.

use std::future::Future;
use std::time::Instant;

use super::plan::PlanStatement;
use super::request::{Answer, RequestError};
use super::validate::RowCheck;
use crate::workload::BoundArgs;

/// What a backend offers a worker: executing a prepared statement with generated arguments,
/// a BATCH of them, and sleeping on its runtime's timer.
pub trait BenchSession {
    /// A prepared statement of this backend.
    type Prepared;
    /// A batch of prepared statements of this backend, built once per phase.
    type Batch;

    /// Executes `prepared` with the arguments of iteration `args.iteration`: every page of
    /// its result, each consumed as the run asks (every row decoded, or only counted).
    /// Returns the rows of all its pages (and, for a conditional statement, whether it was
    /// applied).
    fn execute(
        &self,
        prepared: &Self::Prepared,
        args: Args<'_>,
    ) -> impl Future<Output = Result<Answer, RequestError>>;

    /// Sends `batch` as one BATCH request with the arguments `args` gives each of its
    /// elements.
    fn execute_batch(
        &self,
        batch: &Self::Batch,
        args: BatchArgs<'_, Self::Prepared>,
    ) -> impl Future<Output = Result<Answer, RequestError>>;

    /// What a fiber keeps for its pauses (with a rate), made once per fiber by
    /// [`BenchSession::sleeper`]: a runtime whose timers cost an allocation each keeps one
    /// there and re-arms it, so that pacing allocates nothing per request.
    type Sleeper;

    /// A fiber's sleeper (once per fiber and phase, never per request).
    fn sleeper(&self) -> Self::Sleeper;

    /// Sleeps until `deadline` on the backend's runtime, with the fiber's sleeper.
    fn sleep_until(
        &self,
        sleeper: &mut Self::Sleeper,
        deadline: Instant,
    ) -> impl Future<Output = ()>;

    /// Requests this worker's session has sent to each node (address) so far, retries
    /// included; read once per sample, never per request. Empty (the default) for a driver
    /// that does not count them.
    fn node_requests(&self) -> Vec<(String, u64)> {
        Vec::new()
    }

    /// Requests of this worker's session so far that reached a ScyllaDB node or shard
    /// holding no replica of their tablet (answered with its routing); read once per
    /// sample. `None` (the default) for a driver that does not count them.
    fn tablet_misroutes(&self) -> Option<u64> {
        None
    }

    /// Runs a worker's fibers (its fixed set of request loops) to completion. The default
    /// polls them together in one future (`join_all`, whose wake-ups go through reference
    /// counts and a ready queue shared by atomics); a backend whose runtime has cheaper local
    /// tasks runs each fiber as one of those instead. Called once per phase, never per
    /// request.
    fn run_fibers<Fut: Future<Output = ()>>(&self, fibers: Vec<Fut>) -> impl Future<Output = ()> {
        async move {
            futures_util::future::join_all(fibers).await;
        }
    }
}

/// The arguments of one iteration of one statement, encoded on demand into the driver's
/// buffer (each backend implements its driver's value-writing trait for this).
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    /// The statement's generators and column kinds.
    pub bound: &'a BoundArgs,
    /// The iteration.
    pub iteration: u64,
    /// With `--validate`, for a statement that names the row it reads: the check each
    /// returned row's raw cells go through (see [`super::validate`]).
    pub(crate) check: Option<&'a RowCheck>,
}

/// The elements of one BATCH: `repeat` copies of its statements, copy `k` with the
/// arguments of iteration `iteration * repeat + k` (so that `i / repeat`-style keys of the
/// copies fall in one partition), in the order copy 0's statements, copy 1's, ...
#[derive(Debug)]
pub struct BatchArgs<'a, P> {
    /// The batch's statements.
    pub(crate) members: &'a [PlanStatement<P>],
    /// The iteration.
    pub(crate) iteration: u64,
    /// Copies of the statements.
    pub(crate) repeat: u32,
}

impl<P> Clone for BatchArgs<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for BatchArgs<'_, P> {}

impl<'a, P> BatchArgs<'a, P> {
    /// Its number of elements.
    pub(crate) fn len(&self) -> usize {
        self.members.len() * self.repeat as usize
    }

    /// Element `n`: its statement and its arguments (`None` past the last).
    pub(crate) fn element(&self, n: usize) -> Option<(&'a PlanStatement<P>, Args<'a>)> {
        let m = self.members.len();
        if m == 0 || n >= self.len() {
            return None;
        }
        let member = &self.members[n % m];
        let copy = (n / m) as u64;
        Some((
            member,
            Args {
                bound: &member.args,
                iteration: self
                    .iteration
                    .wrapping_mul(u64::from(self.repeat))
                    .wrapping_add(copy),
                check: None,
            },
        ))
    }
}
