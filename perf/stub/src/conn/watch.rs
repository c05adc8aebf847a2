//! A cluster node's connections watched from each of its executors: closed when the node is
//! taken down ([`ClusterControl::take_down`](crate::ClusterControl::take_down)), and sent the events
//! they registered for (an EVENT on stream -1) as the stub's event log grows. One task per
//! node and executor, waking every [`TICK`]; each connection is added once (control plane:
//! never per request).

use std::cell::RefCell;
use std::rc::{Rc, Weak};
use std::time::Duration;

use doppio_proto::response::Response;

use crate::conn::state::Conn;
use crate::shard::ShardContext;

/// How often the watcher looks: the most a down node's connection stays open, or an event
/// waits before it is sent.
pub(crate) const TICK: Duration = Duration::from_millis(10);

/// The connections of one node on one executor, as the watcher sees them.
#[derive(Default)]
pub(crate) struct Watched {
    conns: RefCell<Vec<Weak<Conn>>>,
}

impl Watched {
    pub(super) fn add(&self, conn: &Rc<Conn>) {
        self.conns.borrow_mut().push(Rc::downgrade(conn));
    }
}

/// Watches `watched` (the connections of `ctx`'s node on this executor) until the stub stops.
pub(crate) async fn watch(watched: Rc<Watched>, ctx: Rc<ShardContext>) {
    let mut downs = ctx.node().downs();
    // Events pushed before this executor started reach no connection: none had registered.
    let mut cursor = ctx.events().next_seq();
    while !ctx.stopping() {
        doppio_rt::sleep(TICK).await;
        let live: Vec<Rc<Conn>> = {
            let mut conns = watched.conns.borrow_mut();
            conns.retain(|c| c.upgrade().is_some_and(|c| !c.closed.get()));
            conns.iter().filter_map(Weak::upgrade).collect()
        };
        // Taken down since the last look (even if up again already): its connections close,
        // as a node's do when its process dies.
        let now = ctx.node().downs();
        if now != downs {
            downs = now;
            for c in &live {
                c.close();
            }
        }
        let (events, next) = ctx.events().since(cursor);
        cursor = next;
        for event in events {
            let kind = crate::events::kind_of(&event);
            let message = Response::Event(event);
            for c in live
                .iter()
                .filter(|c| !c.closed.get() && c.events.get() & kind != 0)
            {
                let mut out = c.out.borrow_mut();
                c.put(&mut out, -1, &message);
                drop(out);
                c.wake_flusher();
            }
        }
    }
}
