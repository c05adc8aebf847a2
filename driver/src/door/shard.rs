//! The door's shard side: the drainer task that takes requests off a shard's [`Lane`] and
//! runs each as a local task on the shard's session, at most `max_in_flight` at once; the
//! shard's map from the door's prepared statements to its own [`PreparedStatement`]s; and a
//! request's shape ([`Request`], made by [`request`]).
//!
//! Invariants:
//! - The drainer never waits on a lock: it pops the lane, spawns, and sends each answer
//!   through its one-shot channel; the only cross-thread touches are the lane's atomics and
//!   the answer's channel.
//! - When the drainer ends (its lane closed and its requests answered) or is dropped (its
//!   executor ended), its lane is closed: no caller waits for a shard that is gone.
//! - A prepared statement made through the door is prepared at most once per shard while
//!   it lives; its entry is swept once every handle to it is gone.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::rc::Rc;
use std::sync::{Arc, Weak};
use std::task::Poll;

use doppio_proto::metadata::ColumnSpec;
use futures_channel::oneshot;

use super::lane::Lane;
use super::owned::OwnedResult;
use crate::result::QueryResult;
use crate::session::{PreparedStatement, Session, Statement, StatementConfig};

/// One request: given the shard's side of the door and its slot among the requests in
/// flight, it spawns its work there (or drops it, when its caller is gone already).
pub(super) type Request = Box<dyn FnOnce(&Rc<ShardSide>, InFlight) + Send>;

/// The request that runs `work` on a shard and sends its output back, with the receiver its
/// caller awaits. The receiver sees `Canceled` if the request is dropped unrun (its lane
/// closed) or its task is dropped unfinished (its executor ended).
pub(super) fn request<W, Fut, T>(work: W) -> (Request, oneshot::Receiver<T>)
where
    W: FnOnce(Rc<ShardSide>) -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
    T: Send + 'static,
{
    let (tx, rx) = oneshot::channel();
    let request: Request = Box::new(move |side: &Rc<ShardSide>, in_flight: InFlight| {
        if tx.is_canceled() {
            return; // the caller stopped waiting while it was queued: skip the work
        }
        let work = work(side.clone());
        doppio_rt::spawn_local(async move {
            let out = work.await;
            let _ = tx.send(out); // the caller may have stopped waiting: nothing to do
            drop(in_flight);
        })
        .detach();
    });
    (request, rx)
}

/// A prepared statement made through the door, as its shards know it: a process-unique id
/// (the key of each shard's map) and the statement to prepare where the shard has not yet.
#[derive(Debug)]
pub(super) struct PreparedKey {
    pub(super) id: u64,
    pub(super) statement: Statement,
}

/// What a shard keeps of one prepared statement made through the door.
struct Entry {
    /// Gone once every handle to the statement is: the entry is then swept.
    alive: Weak<PreparedKey>,
    statement: PreparedStatement,
    /// The statement's result columns as last seen (`Rc`) and their `Send` copy (`Arc`),
    /// made again only when a re-prepare changes them.
    columns: Option<SharedColumns>,
}

/// Result columns as a shard's statement holds them (`Rc`) and their `Send` copy (`Arc`).
struct SharedColumns {
    seen: Rc<[ColumnSpec]>,
    shared: Arc<[ColumnSpec]>,
}

/// A shard's side of one door: its session and its prepared statements.
pub(super) struct ShardSide {
    pub(super) session: Session,
    prepared: RefCell<HashMap<u64, Entry>>,
    /// The map's size at which dead entries are swept next (doubles with the live ones:
    /// amortized constant work per insertion).
    sweep_at: Cell<usize>,
}

impl ShardSide {
    pub(super) fn new(session: Session) -> Self {
        Self {
            session,
            prepared: RefCell::new(HashMap::new()),
            sweep_at: Cell::new(64),
        }
    }

    /// The shard's own statement for `key`, prepared here on first use, with `config`.
    pub(super) async fn prepared(
        &self,
        key: &Arc<PreparedKey>,
        config: StatementConfig,
    ) -> Result<PreparedStatement, crate::Error> {
        let known = self
            .prepared
            .borrow()
            .get(&key.id)
            .map(|e| e.statement.clone());
        let mut statement = match known {
            Some(s) => s,
            None => {
                let s = self.session.prepare(key.statement.clone()).await?;
                self.insert(key, s.clone());
                s
            }
        };
        *statement.config_mut() = config;
        Ok(statement)
    }

    fn insert(&self, key: &Arc<PreparedKey>, statement: PreparedStatement) {
        let mut map = self.prepared.borrow_mut();
        if map.len() >= self.sweep_at.get() {
            map.retain(|_, e| e.alive.strong_count() > 0);
            self.sweep_at.set((map.len() * 2).max(64));
        }
        map.entry(key.id).or_insert(Entry {
            alive: Arc::downgrade(key),
            statement,
            columns: None,
        });
    }

    /// `result` of an execution of `key` as an [`OwnedResult`]: its result columns (an `Rc`
    /// shared with the statement) as the entry's `Arc` copy, made when they changed.
    pub(super) fn own_prepared(&self, key: &PreparedKey, result: QueryResult) -> OwnedResult {
        let columns = result.columns.as_ref().map(|rc| {
            let mut map = self.prepared.borrow_mut();
            let Some(entry) = map.get_mut(&key.id) else {
                return Arc::from(&rc[..]);
            };
            match &entry.columns {
                Some(c) if Rc::ptr_eq(&c.seen, rc) => c.shared.clone(),
                _ => {
                    let shared: Arc<[ColumnSpec]> = Arc::from(&rc[..]);
                    entry.columns = Some(SharedColumns {
                        seen: rc.clone(),
                        shared: shared.clone(),
                    });
                    shared
                }
            }
        });
        OwnedResult::new(result, columns)
    }
}

/// What the drainer and its requests in flight share.
struct Drain {
    lane: Arc<Lane<Request>>,
    running: Cell<usize>,
    max_in_flight: usize,
}

/// One request's place among those in flight on its shard; freed when dropped (its task
/// ended), waking the drainer if it had stopped at the limit or is waiting to end.
pub(super) struct InFlight(Rc<Drain>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let d = &self.0;
        let was = d.running.get();
        d.running.set(was - 1);
        if was == d.max_in_flight || d.lane.is_closed() {
            d.lane.wake_drainer();
        }
    }
}

/// Closes the lane when the drainer ends, by return or by being dropped.
struct CloseOnExit(Arc<Lane<Request>>);

impl Drop for CloseOnExit {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The shard's drainer: runs what arrives on `lane` on `side`, at most `max_in_flight` at
/// once, until the lane closes and what runs has finished.
pub(super) async fn drain(lane: Arc<Lane<Request>>, side: Rc<ShardSide>, max_in_flight: usize) {
    let _close = CloseOnExit(lane.clone());
    let drain = Rc::new(Drain {
        lane,
        running: Cell::new(0),
        max_in_flight: max_in_flight.max(1),
    });
    poll_fn(|cx| {
        let lane = &drain.lane;
        lane.register_drainer(cx.waker());
        if !lane.is_closed() {
            let mut popped = false;
            while drain.running.get() < drain.max_in_flight {
                let Some(request) = lane.pop() else { break };
                popped = true;
                drain.running.set(drain.running.get() + 1);
                request(&side, InFlight(drain.clone()));
            }
            if popped {
                lane.made_room();
            }
        }
        if lane.is_closed() && drain.running.get() == 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
}
