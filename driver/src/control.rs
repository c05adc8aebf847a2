//! The control connection: one per client (on one shard), it reads the cluster's topology
//! and keyspaces, listens for its events, and publishes what changes.
//!
//! It connects to a contact point, registers for `TOPOLOGY_CHANGE`, `STATUS_CHANGE` and
//! `SCHEMA_CHANGE`, and reads `system.local`, `system.peers_v2` (falling back to
//! `system.peers` on nodes older than 4.0) and `system_schema.keyspaces` into a
//! [`TopologySnapshot`]. Then it waits: a topology or status event re-reads the nodes, a
//! keyspace schema event re-reads the keyspaces, and a periodic refresh catches anything an
//! event missed. Events come in bursts (a node joining sends several), so it waits a short
//! moment and reads once per burst. If its connection drops, or a refresh fails, it moves to
//! another known node (then the contact points), with backoff between rounds.
//!
//! What it learns goes out through a publisher: each shard gets the snapshot over the
//! control plane and builds its own routing tables from it (nothing here is on the request
//! path). A node reported `UP` is also published on its own, so that shards retry its
//! connections at once instead of waiting out their backoff.
//!
//! Invariants:
//! - Snapshot versions strictly increase; a shard applies a snapshot only if it is newer.
//! - The control loop ends when its owner says so (`stop`), closing its connection.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use doppio_proto::response::{Event, Response, SchemaTarget};

use crate::connection::Connection;
use crate::error::Error;
use crate::pool::{Backoff, ConnectFn, Jitter};
use crate::routing::topology::TopologySnapshot;
use crate::system::{fetch_keyspaces, fetch_topology, register};

/// What the control connection tells the shards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ControlEvent {
    /// A new view of the cluster.
    Topology(Arc<TopologySnapshot>),
    /// The cluster reports this node up: retry its connections now.
    NodeUp(SocketAddr),
}

/// Where control events go (the owning shard forwards them to every shard).
pub(crate) type Publisher = Rc<dyn Fn(ControlEvent)>;

/// Tunables of the control connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControlConfig {
    /// Re-read everything this often even without events.
    pub refresh_interval: Duration,
    /// After an event, wait this long for the rest of its burst before reading.
    pub debounce: Duration,
    /// Backoff between rounds of reconnection attempts.
    pub backoff: Backoff,
}

impl Default for ControlConfig {
    fn default() -> Self {
        Self {
            refresh_interval: Duration::from_secs(60),
            debounce: Duration::from_millis(20),
            backoff: Backoff {
                base: Duration::from_millis(100),
                cap: Duration::from_secs(5),
            },
        }
    }
}

/// What a burst of events asks to re-read.
#[derive(Debug, Default, Clone, Copy)]
struct Refresh {
    nodes: bool,
    keyspaces: bool,
}

/// The control connection's state. Owned by one shard's session.
pub(crate) struct Control {
    contact_points: Vec<SocketAddr>,
    connect: ConnectFn,
    config: ControlConfig,
    publish: Publisher,
    conn: RefCell<Option<Connection>>,
    stopped: Cell<bool>,
    version: Cell<u64>,
    last: RefCell<Arc<TopologySnapshot>>,
    peers_v2: Cell<Option<bool>>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("node", &self.node())
            .field("version", &self.version.get())
            .finish()
    }
}

impl Control {
    /// Connects to the first of `contact_points` that answers and reads the topology. The
    /// first snapshot is returned, not published (the caller builds its sessions from it).
    pub(crate) async fn connect(
        contact_points: Vec<SocketAddr>,
        connect: ConnectFn,
        config: ControlConfig,
        publish: Publisher,
    ) -> Result<(Rc<Self>, Arc<TopologySnapshot>), Error> {
        let control = Rc::new(Self {
            contact_points,
            connect,
            config,
            publish,
            conn: RefCell::new(None),
            stopped: Cell::new(false),
            version: Cell::new(0),
            last: RefCell::new(Arc::new(TopologySnapshot::default())),
            peers_v2: Cell::new(None),
        });
        let mut last = Error::NoConnection("no contact point".into());
        for addr in control.contact_points.clone() {
            match control.open(addr).await {
                Ok(snapshot) => return Ok((control, snapshot)),
                // Credentials refused are refused everywhere: say so at once.
                Err(e @ Error::Authentication { .. }) => return Err(e),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The node the control connection talks to now.
    pub(crate) fn node(&self) -> Option<SocketAddr> {
        self.conn.borrow().as_ref().map(Connection::addr)
    }

    /// The latest snapshot.
    pub(crate) fn snapshot(&self) -> Arc<TopologySnapshot> {
        self.last.borrow().clone()
    }

    /// Ends the control loop and closes its connection.
    pub(crate) fn stop(&self) {
        self.stopped.set(true);
        if let Some(c) = self.conn.borrow_mut().take() {
            c.close("the control connection was stopped");
        }
    }

    /// Opens a control connection to `addr`: connect, register, read the topology.
    async fn open(&self, addr: SocketAddr) -> Result<Arc<TopologySnapshot>, Error> {
        let conn = (self.connect)(addr, None)
            .await
            .map_err(Error::ConnectionBroken)?;
        let read = async {
            register(&conn).await?;
            fetch_topology(&conn, &self.peers_v2).await
        };
        match read.await {
            Ok(snapshot) => {
                if self.stopped.get() {
                    conn.close("the control connection was stopped");
                    return Err(Error::Closed("the control connection was stopped".into()));
                }
                if let Some(old) = self.conn.borrow_mut().replace(conn) {
                    old.close("replaced");
                }
                Ok(self.install(snapshot))
            }
            Err(e) => {
                conn.close("control connection set-up failed");
                Err(e)
            }
        }
    }

    /// Numbers `snapshot` and keeps it as the latest.
    fn install(&self, mut snapshot: TopologySnapshot) -> Arc<TopologySnapshot> {
        let version = self.version.get() + 1;
        self.version.set(version);
        snapshot.version = version;
        let snapshot = Arc::new(snapshot);
        *self.last.borrow_mut() = snapshot.clone();
        snapshot
    }

    fn current(&self) -> Option<Connection> {
        self.conn.borrow().clone()
    }

    /// Re-reads what `what` asks for and publishes the result if it changed.
    async fn refresh(&self, conn: &Connection, what: Refresh) -> Result<(), Error> {
        let old = self.snapshot();
        let new = if what.nodes {
            fetch_topology(conn, &self.peers_v2).await?
        } else {
            fetch_keyspaces(conn).await?.applied_to(&old)
        };
        let unchanged = new.nodes == old.nodes
            && new.keyspaces == old.keyspaces
            && new.tablet_keyspaces == old.tablet_keyspaces
            && new.contact_datacenter == old.contact_datacenter;
        if !unchanged {
            let snapshot = self.install(new);
            (self.publish)(ControlEvent::Topology(snapshot));
        }
        Ok(())
    }

    /// The control loop: follow events, refresh, fail over. Runs until [`Control::stop`].
    pub(crate) async fn run(self: Rc<Self>) {
        let mut failed_rounds: u32 = 0;
        let jitter = Jitter::seeded(0);
        while !self.stopped.get() {
            let Some(conn) = self.current() else {
                if self.reconnect().await {
                    failed_rounds = 0;
                    (self.publish)(ControlEvent::Topology(self.snapshot()));
                } else {
                    let delay = self.config.backoff.delay(failed_rounds, jitter.next());
                    failed_rounds = failed_rounds.saturating_add(1);
                    doppio_rt::sleep(delay).await;
                }
                continue;
            };
            let outcome = self.follow(&conn).await;
            if outcome.is_err() {
                if self.stopped.get() {
                    break;
                }
                conn.close("the control connection failed; moving to another node");
                let mut slot = self.conn.borrow_mut();
                if slot.as_ref().is_some_and(|c| c.addr() == conn.addr()) {
                    *slot = None;
                }
            }
        }
        self.stop();
    }

    /// Waits for events on `conn` and handles them; returns when the connection fails.
    async fn follow(&self, conn: &Connection) -> Result<(), Error> {
        loop {
            if self.stopped.get() {
                return Ok(());
            }
            let next = doppio_rt::timeout(self.config.refresh_interval, conn.next_event()).await;
            let mut what = Refresh::default();
            match next {
                // The periodic refresh.
                Err(_) => {
                    what.nodes = true;
                    what.keyspaces = true;
                }
                Ok(Err(e)) => return Err(Error::ConnectionBroken(e)),
                Ok(Ok(frame)) => {
                    self.note_event(conn, &frame, &mut what);
                    // Let the rest of the burst arrive, then take all of it.
                    doppio_rt::sleep(self.config.debounce).await;
                    while let Some(Ok(frame)) =
                        futures_lite::future::poll_once(conn.next_event()).await
                    {
                        self.note_event(conn, &frame, &mut what);
                    }
                }
            }
            if what.nodes || what.keyspaces {
                self.refresh(conn, what).await?;
            }
        }
    }

    /// Decodes one event and notes what it asks for.
    fn note_event(
        &self,
        conn: &Connection,
        frame: &doppio_proto::frame::Frame,
        what: &mut Refresh,
    ) {
        let decoded = doppio_proto::response::ResponseFrame::decode_with(
            frame,
            conn.compression(),
            conn.config().max_frame_body,
            conn.metadata_ids(),
        );
        let Ok(frame) = decoded else {
            // A malformed event: re-read everything rather than trust it.
            what.nodes = true;
            what.keyspaces = true;
            return;
        };
        match frame.response {
            Response::Event(Event::TopologyChange { .. }) => what.nodes = true,
            Response::Event(Event::StatusChange { change, node }) => {
                if change == "UP" {
                    (self.publish)(ControlEvent::NodeUp(node));
                }
                what.nodes = true;
            }
            Response::Event(Event::SchemaChange(change)) => {
                if matches!(change.target, SchemaTarget::Keyspace(_)) {
                    what.keyspaces = true;
                }
            }
            _ => {}
        }
    }

    /// One round of reconnection: every known node (other than the last one), then the
    /// contact points. True if one answered (its snapshot is installed).
    async fn reconnect(&self) -> bool {
        let last = self.snapshot();
        let mut candidates: Vec<SocketAddr> = last.nodes.iter().map(|n| n.addr).collect();
        for c in &self.contact_points {
            if !candidates.contains(c) {
                candidates.push(*c);
            }
        }
        // Start after a rotating offset so that repeated failures try different nodes.
        let offset = (self.version.get() as usize) % candidates.len().max(1);
        candidates.rotate_left(offset);
        for addr in candidates {
            if self.stopped.get() {
                return false;
            }
            if self.open(addr).await.is_ok() {
                return true;
            }
        }
        false
    }
}
