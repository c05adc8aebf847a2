//! The door for tokio (and any other) applications: a [`SendSession`], `Send + Sync +
//! Clone`, whose calls any thread's task can await; each request is run on a shard's
//! session and its answer comes back to the caller.
//!
//! A [`Session`] is `!Send` (`Rc`, `RefCell`: nothing on its request path is shared across
//! cores), so a tokio task cannot hold one: tokio moves tasks between its worker threads.
//! [`Cluster::run_on_shards`] runs code on the shards but blocks its caller. The door
//! crosses once each way instead:
//!
//! ```text
//!  tokio task ──push (lock-free, bounded)──▶ lane of shard i ──drainer──▶ local task: session.execute_unpaged
//!      ▲                                                                        │
//!      └──────────────── one-shot channel (OwnedResult or Error) ◀──────────────┘
//! ```
//!
//! - **One hop each way, no lock on the shard's side.** Each shard has one lane per door: a
//!   bounded lock-free queue (crossbeam's `ArrayQueue`) that the caller pushes into, and an
//!   `AtomicWaker` the caller wakes: the wake is the runtime's own cross-thread wake
//!   (glommio's, or doppio's io_uring runtime's), the one the control plane uses too. On the
//!   shard a drainer task pops the lane and runs each request as a local task on the
//!   shard's session; the answer goes back through a `futures` one-shot channel, which any
//!   executor can await (the door names no runtime: tokio appears only in the tests and the
//!   benchmark).
//! - **Which shard.** Round robin over the shards, skipping a full lane. Every shard's
//!   session connects to every node and routes by token itself, so the choice changes only
//!   the load per shard, not where a request goes in the cluster.
//! - **Backpressure: the caller waits.** A lane holds `queue_capacity` requests and its
//!   shard runs at most `max_in_flight` of them at once; when every lane is full, the
//!   caller's future waits for room (as a bounded channel's `send` does), woken by the
//!   drainer when it takes requests off. Waiting rather than failing because a tokio
//!   service's own concurrency (its tasks) is what to slow down, and an `await` that takes
//!   longer is how it learns; a caller that wants a deadline wraps the call in its runtime's
//!   timeout. Memory stays bounded: queued plus running requests per shard, whatever the
//!   number of callers.
//! - **Prepared statements.** A [`SendPrepared`] is the CQL text with its settings and a
//!   process-unique id; [`SendSession::prepare`] prepares it on every shard, and each
//!   shard keeps its own [`PreparedStatement`](crate::PreparedStatement) under that id (prepared again on a shard
//!   that lost it), swept when the last `SendPrepared` clone is gone.
//! - **Owned values, owned answers.** Values are moved in (`QueryValues + Send + 'static`:
//!   tuples of owned values, `Vec<CqlValue>`, ...); answers come back as [`OwnedResult`]
//!   (the frame's `Bytes`, no copy of the rows) or [`OwnedPage`].
//! - **Errors.** [`DoorError::Request`] carries the driver's [`Error`] from the shard;
//!   [`DoorError::ShardGone`] says the shard could not take or answer the request (the
//!   cluster shut down, the shard's thread stopped). No call hangs on a shard that is gone.
//! - **Anything else** (a batch, `use_keyspace`, a [`RowStream`](crate::session::RowStream)):
//!   [`SendSession::run`] runs a closure on one shard's session and brings its `Send`
//!   output back.
//!
//! Its modules: `lane` (the queue into one shard, its wakers), `shard` (the drainer, the
//! shard's prepared statements, a request's shape), `owned` ([`OwnedResult`],
//! [`OwnedPage`]).
//!
//! Invariants:
//! - Every request made through the door is answered, fails with its error, or fails with
//!   [`DoorError::ShardGone`]: a request queued when its lane closes is dropped and its
//!   caller told; [`Cluster::shutdown`] closes every door first (queued requests fail, running
//!   ones get the grace period), and so does dropping the last clone of a `SendSession`.
//! - The shards' side of the door holds no lock and no `Arc` per request beyond the
//!   answer's channel and a prepared statement's key.

mod lane;
mod owned;
mod shard;

use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use doppio_proto::metadata::PreparedMetadata;
use doppio_proto::values::QueryValues;
use futures_channel::oneshot;

use crate::cluster::{CloseOnShutdown, Cluster};
use crate::error::Error;
use crate::session::{PagingState, Session, Statement, StatementConfig};
use lane::{Lane, Refused};
use shard::{drain, request, PreparedKey, Request, ShardSide};

pub use owned::{OwnedPage, OwnedResult};

/// Why a request through the door failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum DoorError {
    /// The request ran on its shard and failed there, with the driver's error (a server
    /// error, a timeout, a broken connection, ...).
    #[error(transparent)]
    Request(#[from] Error),
    /// The shard could not take the request or did not answer it: the cluster shut down,
    /// the shard's thread stopped, or its executor ended with the request unfinished (it
    /// may then have been applied).
    #[error("shard {shard} is gone (the cluster shut down or the shard stopped)")]
    ShardGone {
        /// The shard's index.
        shard: usize,
    },
}

/// A door's sizes, per shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DoorConfig {
    /// Requests that wait in a shard's lane (at least 1, at most 1,048,576: the lane's
    /// slots are allocated up front; default 1024). Past that, callers wait for room.
    pub queue_capacity: usize,
    /// Requests a shard runs at once for this door (at least 1; default 1024). Past that,
    /// requests wait in the lane.
    pub max_in_flight: usize,
}

impl Default for DoorConfig {
    fn default() -> Self {
        Self {
            queue_capacity: 1024,
            max_in_flight: 1024,
        }
    }
}

/// A prepared statement made through the door: `Send + Sync`, cheap to clone, usable with
/// any shard (each prepares it once and keeps its own). Its settings are this clone's.
#[derive(Debug, Clone)]
pub struct SendPrepared {
    key: Arc<PreparedKey>,
    config: StatementConfig,
    metadata: Arc<PreparedMetadata>,
}

impl SendPrepared {
    /// The CQL text.
    pub fn cql(&self) -> &str {
        self.key.statement.cql()
    }

    /// Bind markers and partition-key indexes, as the first shard's node described them.
    pub fn metadata(&self) -> &PreparedMetadata {
        &self.metadata
    }

    /// Its settings (this clone's).
    pub fn config(&self) -> &StatementConfig {
        &self.config
    }

    /// Its settings, to change (this clone's: other clones keep theirs).
    pub fn config_mut(&mut self) -> &mut StatementConfig {
        &mut self.config
    }

    /// A clone with its settings changed by `f`.
    pub fn with_config(&self, f: impl FnOnce(&mut StatementConfig)) -> Self {
        let mut statement = self.clone();
        f(&mut statement.config);
        statement
    }
}

/// What a door's clones share: one lane per shard, and the round robin's position.
struct Shared {
    lanes: Vec<Arc<Lane<Request>>>,
    next: AtomicUsize,
}

impl CloseOnShutdown for Shared {
    fn close(&self) {
        for lane in &self.lanes {
            lane.close();
        }
    }
}

impl Drop for Shared {
    /// The last clone of the door is gone: each shard's drainer ends once what it runs has
    /// finished.
    fn drop(&mut self) {
        self.close();
    }
}

/// Closes the lanes whose drainer never started (its shard had stopped, or its job was
/// dropped unrun) once every shard's job has started or been dropped.
struct CloseUnstarted {
    lanes: Vec<Arc<Lane<Request>>>,
    started: Vec<AtomicBool>,
}

impl Drop for CloseUnstarted {
    fn drop(&mut self) {
        for (lane, started) in self.lanes.iter().zip(&self.started) {
            if !started.load(Ordering::Acquire) {
                lane.close();
            }
        }
    }
}

/// The `Send + Sync + Clone` handle of a [`Cluster`]'s sessions: every call is run on one
/// shard's session and its answer comes back to the awaiting task (module docs: [`self`]).
#[derive(Clone)]
pub struct SendSession {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SendSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendSession")
            .field("shards", &self.shared.lanes.len())
            .finish_non_exhaustive()
    }
}

/// Where the ids of the door's prepared statements come from.
static NEXT_PREPARED: AtomicU64 = AtomicU64::new(1);

impl SendSession {
    /// A door into `cluster`'s shards with the default sizes ([`DoorConfig`]). Starts one
    /// drainer task per shard; returns at once. A door made after the cluster shut down
    /// fails every call with [`DoorError::ShardGone`].
    pub fn new(cluster: &Cluster) -> Self {
        Self::with_config(cluster, DoorConfig::default())
    }

    /// A door into `cluster`'s shards with these sizes.
    pub fn with_config(cluster: &Cluster, config: DoorConfig) -> Self {
        let lanes: Vec<_> = (0..cluster.shards())
            .map(|_| Arc::new(Lane::new(config.queue_capacity)))
            .collect();
        let shared = Arc::new(Shared {
            lanes: lanes.clone(),
            next: AtomicUsize::new(0),
        });
        let door: Arc<dyn CloseOnShutdown> = shared.clone();
        cluster.on_shutdown(Arc::downgrade(&door));
        let guard = CloseUnstarted {
            started: lanes.iter().map(|_| AtomicBool::new(false)).collect(),
            lanes,
        };
        let max_in_flight = config.max_in_flight;
        cluster.post_to_sessions(move |index, session| {
            let lane = guard.lanes.get(index).cloned();
            if lane.is_some() {
                guard.started[index].store(true, Ordering::Release);
            }
            async move {
                if let Some(lane) = lane {
                    drain(lane, Rc::new(ShardSide::new(session)), max_in_flight).await;
                }
            }
        });
        Self { shared }
    }

    /// Number of shards the door leads to.
    pub fn shards(&self) -> usize {
        self.shared.lanes.len()
    }

    /// [`Session::query_unpaged`] on one shard: an unprepared statement's whole result.
    pub fn query_unpaged<V>(
        &self,
        statement: impl Into<Statement>,
        values: V,
    ) -> impl Future<Output = Result<OwnedResult, DoorError>> + Send + '_
    where
        V: QueryValues + Send + 'static,
    {
        let statement = statement.into();
        self.call(move |side| async move {
            let result = side.session.query_unpaged(statement, &values).await?;
            Ok(OwnedResult::new(result, None))
        })
    }

    /// [`Session::query_single_page`] on one shard: one page, from `from`.
    pub fn query_single_page<V>(
        &self,
        statement: impl Into<Statement>,
        values: V,
        from: PagingState,
    ) -> impl Future<Output = Result<OwnedPage, DoorError>> + Send + '_
    where
        V: QueryValues + Send + 'static,
    {
        let statement = statement.into();
        self.call(move |side| async move {
            let page = side
                .session
                .query_single_page(statement, &values, &from)
                .await?;
            Ok(OwnedPage::new(OwnedResult::new(page.into_result(), None)))
        })
    }

    /// Prepares `statement` on every shard (concurrently) and returns its door handle; the
    /// first shard's error if one fails.
    pub async fn prepare(
        &self,
        statement: impl Into<Statement>,
    ) -> Result<SendPrepared, DoorError> {
        let statement = statement.into();
        let config = statement.config().clone();
        let key = Arc::new(PreparedKey {
            id: NEXT_PREPARED.fetch_add(1, Ordering::Relaxed),
            statement,
        });
        let mut answers = Vec::with_capacity(self.shards());
        for shard in 0..self.shards() {
            let (key, config) = (key.clone(), config.clone());
            let (request, answer) = request(move |side: Rc<ShardSide>| async move {
                let prepared = side.prepared(&key, config).await?;
                Ok::<_, Error>(prepared.metadata().clone())
            });
            self.push_to(shard, request).await?;
            answers.push((shard, answer));
        }
        let mut metadata = None;
        for (shard, answer) in answers {
            let m = Self::answer(shard, answer).await?;
            metadata.get_or_insert(m);
        }
        let metadata = metadata.ok_or(DoorError::ShardGone { shard: 0 })?;
        Ok(SendPrepared {
            key,
            config,
            metadata: Arc::new(metadata),
        })
    }

    /// [`Session::execute_unpaged`] on one shard: a prepared statement's whole result.
    pub fn execute_unpaged<V>(
        &self,
        prepared: &SendPrepared,
        values: V,
    ) -> impl Future<Output = Result<OwnedResult, DoorError>> + Send + '_
    where
        V: QueryValues + Send + 'static,
    {
        let (key, config) = (prepared.key.clone(), prepared.config.clone());
        self.call(move |side| async move {
            let statement = side.prepared(&key, config).await?;
            let result = side.session.execute_unpaged(&statement, &values).await?;
            Ok(side.own_prepared(&key, result))
        })
    }

    /// [`Session::execute_single_page`] on one shard: one page, from `from`. Any shard
    /// continues a result from another's paging state.
    pub fn execute_single_page<V>(
        &self,
        prepared: &SendPrepared,
        values: V,
        from: PagingState,
    ) -> impl Future<Output = Result<OwnedPage, DoorError>> + Send + '_
    where
        V: QueryValues + Send + 'static,
    {
        let (key, config) = (prepared.key.clone(), prepared.config.clone());
        self.call(move |side| async move {
            let statement = side.prepared(&key, config).await?;
            let page = side
                .session
                .execute_single_page(&statement, &values, &from)
                .await?;
            Ok(OwnedPage::new(side.own_prepared(&key, page.into_result())))
        })
    }

    /// Runs `f` with one shard's session there, and brings its output back: for what the
    /// door has no call of its own for (a batch, `use_keyspace`, a row stream consumed on
    /// the shard).
    pub fn run<F, Fut, T>(&self, f: F) -> impl Future<Output = Result<T, DoorError>> + Send + '_
    where
        F: FnOnce(Session) -> Fut + Send + 'static,
        Fut: Future<Output = T> + 'static,
        T: Send + 'static,
    {
        let (request, answer) = request(move |side: Rc<ShardSide>| f(side.session.clone()));
        async move {
            let shard = self.push(request).await?;
            answer
                .await
                .map_err(|oneshot::Canceled| DoorError::ShardGone { shard })
        }
    }

    /// Runs `work` on one shard and returns its answer.
    fn call<W, Fut, T>(&self, work: W) -> impl Future<Output = Result<T, DoorError>> + Send + '_
    where
        W: FnOnce(Rc<ShardSide>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, Error>> + 'static,
        T: Send + 'static,
    {
        let (request, answer) = request(work);
        async move {
            let shard = self.push(request).await?;
            Self::answer(shard, answer).await
        }
    }

    async fn answer<T>(
        shard: usize,
        answer: oneshot::Receiver<Result<T, Error>>,
    ) -> Result<T, DoorError> {
        match answer.await {
            Ok(out) => out.map_err(DoorError::Request),
            Err(oneshot::Canceled) => Err(DoorError::ShardGone { shard }),
        }
    }

    /// Queues `request` on the next shard in turn whose lane has room, else waits for room
    /// on that next one; returns the shard.
    async fn push(&self, request: Request) -> Result<usize, DoorError> {
        let lanes = &self.shared.lanes;
        if lanes.is_empty() {
            return Err(DoorError::ShardGone { shard: 0 });
        }
        let first = self.shared.next.fetch_add(1, Ordering::Relaxed) % lanes.len();
        let mut request = request;
        for step in 0..lanes.len() {
            let shard = (first + step) % lanes.len();
            match lanes[shard].try_push(request) {
                Ok(()) => return Ok(shard),
                Err(Refused::Closed(_)) => return Err(DoorError::ShardGone { shard }),
                Err(Refused::Full(r)) => request = r,
            }
        }
        self.push_to(first, request).await?;
        Ok(first)
    }

    /// Queues `request` on `shard`, waiting for room.
    async fn push_to(&self, shard: usize, request: Request) -> Result<(), DoorError> {
        match self.shared.lanes.get(shard) {
            Some(lane) => lane
                .push(request)
                .await
                .map_err(|_| DoorError::ShardGone { shard }),
            None => Err(DoorError::ShardGone { shard }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_door_and_what_crosses_it_are_send() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<SendSession>();
        send_sync::<SendPrepared>();
        send_sync::<DoorError>();
        send::<OwnedResult>();
        send::<OwnedPage>();
        send::<Request>();
    }
}
