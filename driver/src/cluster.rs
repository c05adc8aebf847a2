//! The entry point: a [`Cluster`] starts one pinned executor per core (glommio's by default,
//! or doppio's own io_uring runtime: [`ClusterBuilder::runtime`]), opens a [`Session`] on
//! each, and runs user code on every shard.
//!
//! ```no_run
//! use doppio_driver::{Cluster, Consistency, SessionConfig};
//!
//! let session = SessionConfig::new("127.0.0.1:9042".parse().unwrap())
//!     .with_consistency(Consistency::One);
//! let cluster = Cluster::builder()
//!     .session_config(session)
//!     .cores(&[0, 1])
//!     .build()
//!     .expect("connect");
//! let counts = cluster
//!     .run_on_shards(|session| async move {
//!         let r = session.query_unpaged("SELECT * FROM system.local", &()).await?;
//!         Ok::<_, doppio_driver::Error>(r.rows_count())
//!     })
//!     .expect("shards ran");
//! println!("{counts:?}");
//! cluster.shutdown();
//! ```
//!
//! `Cluster` is the `Send + Sync` handle of the whole client: share it between threads (in
//! an `Arc`) and hand work to the shards from any of them. The work itself runs on the shards,
//! each with its own `Session` (`!Send`, `Rc` inside): nothing on the request path crosses
//! cores.
//!
//! Invariant: a `Cluster` whose `build` returned `Ok` has a connected session on every shard;
//! after [`Cluster::shutdown`] every shard refuses new work, running work has had the grace
//! period, every session is dropped (its connections closed, whatever was still in flight
//! failed with a "shut down" connection error) and every executor thread is joined.

use std::cell::RefCell;
use std::future::Future;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::control::{ControlEvent, Publisher};
use crate::error::{ConnectError, Error};
use crate::routing::topology::TopologySnapshot;
use crate::session::{ControlRole, Latency, Session, SessionConfig};
/// Why the shards could not start or stopped (a cause of [`ClusterError::Runtime`]).
pub use crate::shards::RuntimeError;
use crate::shards::{ShardOptions, Shards};
use doppio_rt::Runtime;

/// Why a cluster could not start, or could not run work.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// The configuration is unusable (no contact point, no core).
    #[error("invalid cluster configuration: {0}")]
    Config(String),
    /// An executor could not start, or a shard stopped.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A shard could not connect: refused for good, no node reachable, or the cluster's
    /// metadata unreadable.
    #[error("shard {shard} could not connect")]
    Connect {
        /// Shard index.
        shard: usize,
        /// Why.
        #[source]
        error: ConnectError,
    },
}

/// The whole client's configuration: the session configuration every shard opens its
/// session with, plus what only a cluster has (cores, pinning, runtime, shutdown grace).
/// `Send + Sync`: shared by every shard.
#[derive(Clone)]
struct ClusterConfig {
    session: SessionConfig,
    /// The shards to start: cores, pinning, runtime and its settings, shutdown grace.
    shards: ShardOptions,
}

/// Builds a [`Cluster`]: the [`SessionConfig`] every shard connects with (the one place for
/// contact points, connections, credentials, TLS, defaults and policies:
/// [`ClusterBuilder::session_config`]) and what only a cluster has (cores, pinning, runtime,
/// shutdown grace). Defaults: `SessionConfig::new(127.0.0.1:9042)` (one connection per node
/// per shard, lz4 off, no credentials, LOCAL_QUORUM, pages of 5000 rows, request timeout
/// 12 s, connect timeout 5 s, the default retry and load-balancing policies), one shard per
/// available core (pinned), 5 s of shutdown grace.
#[derive(Clone)]
pub struct ClusterBuilder {
    config: ClusterConfig,
}

impl std::fmt::Debug for ClusterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.config;
        // The session configuration never prints credentials (only whether there are any).
        f.debug_struct("ClusterBuilder")
            .field("session", &c.session)
            .field("cores", &c.shards.cores)
            .field("pin", &c.shards.pin)
            .field("runtime", &c.shards.runtime)
            .field("grace", &c.shards.grace)
            .finish_non_exhaustive()
    }
}

impl Default for ClusterBuilder {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            config: ClusterConfig {
                session: SessionConfig::new(SocketAddr::from(([127, 0, 0, 1], 9042))),
                shards: ShardOptions::new(
                    &(0..cores).collect::<Vec<_>>(),
                    true,
                    Duration::from_secs(5),
                ),
            },
        }
    }
}

impl ClusterBuilder {
    /// Every shard's session configuration (contact points, connections, timeouts,
    /// credentials, TLS, defaults, policies): see [`SessionConfig`] and its `with_*`
    /// setters.
    pub fn session_config(mut self, session: SessionConfig) -> Self {
        self.config.session = session;
        self
    }

    /// The cores to run one shard each on.
    pub fn cores(mut self, cores: &[usize]) -> Self {
        self.config.shards.cores = cores.to_vec();
        self
    }

    /// Pins each shard to its core (default), or leaves placement to the kernel (for tests
    /// that share a machine).
    pub fn pin(mut self, pin: bool) -> Self {
        self.config.shards.pin = pin;
        self
    }

    /// How long shutdown lets running work finish before dropping the sessions.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.config.shards.grace = grace;
        self
    }

    /// The event loop of every shard: [`Runtime::Glommio`] (the default) or doppio's own
    /// [`Runtime::Uring`] (at most one `io_uring_enter` per loop turn, socket data through
    /// the ring). The same driver runs on both. `build` fails with a clear error where
    /// io_uring is not usable.
    pub fn runtime(mut self, runtime: Runtime) -> Self {
        self.config.shards.runtime = runtime;
        self
    }

    /// doppio's io_uring runtime only: ring entries, provided buffers (count and size, shared
    /// by the shard's connections), the poll budget per loop turn, the opt-in SQPOLL mode
    /// (every shard's ring gets its own kernel submission thread) and the teardown wait.
    pub fn uring_config(mut self, config: doppio_rt::uring::Config) -> Self {
        self.config.shards.uring = config;
        self
    }

    /// glommio only: lets each shard spin for up to `spin` looking for work before it parks
    /// (off by default). Parking costs glommio several `io_uring_enter` calls; spinning saves them
    /// when answers arrive closer together than `spin`, at the price of CPU time.
    pub fn spin_before_park(mut self, spin: Option<Duration>) -> Self {
        self.config.shards.spin_before_park = spin;
        self
    }

    /// Starts the shards and connects a session on each. Blocks until every shard is
    /// connected or one has failed (then the shards started so far are shut down).
    pub fn build(self) -> Result<Cluster, ClusterError> {
        let config = self.config;
        if config.shards.cores.is_empty() {
            return Err(ClusterError::Config("no core to run a shard on".into()));
        }
        let shards = Shards::start_with(&config.shards, |index| ShardState {
            index,
            session: RefCell::new(None),
            latest: RefCell::new(None),
        })?;
        let config = Arc::new(config);
        let fail = |shards: &Shards<ShardState>, shard, error| {
            shards.shutdown();
            Err(ClusterError::Connect {
                shard,
                error: ConnectError::from_connect(error),
            })
        };
        // Shard 0 runs the control connection: it reads the topology first, then hands
        // every change to all shards (itself included) over the control plane.
        let poster = shards.poster();
        let first = {
            let config = config.clone();
            shards.run_on_shards(move |state| {
                let (config, poster) = (config.clone(), poster.clone());
                async move {
                    if state.index != 0 {
                        return Ok(None);
                    }
                    let publish: Publisher = Rc::new(move |event: ControlEvent| {
                        poster.post_all(move |state: Rc<ShardState>| {
                            state.on_control_event(&event);
                            async {}
                        });
                    });
                    let session =
                        Session::connect_as(config.session.clone(), ControlRole::Run(publish))
                            .await?;
                    let snapshot = session.topology();
                    *state.session.borrow_mut() = Some(session);
                    Ok::<_, Error>(Some(snapshot))
                }
            })?
        };
        let mut snapshot = None;
        for r in first {
            match r {
                Ok(Some(s)) => snapshot = Some(s),
                Ok(None) => {}
                Err(error) => return fail(&shards, 0, error),
            }
        }
        let Some(snapshot) = snapshot else {
            shards.shutdown();
            return Err(ClusterError::Runtime(RuntimeError::ShardStopped {
                shard: 0,
            }));
        };
        // The other shards follow, from that topology (or a newer one already posted).
        let others = {
            let config = config.clone();
            shards.run_on_shards(move |state| {
                let (config, snapshot) = (config.clone(), snapshot.clone());
                async move {
                    if state.index == 0 {
                        return Ok(());
                    }
                    let latest = state.latest.borrow().clone();
                    let start = match latest {
                        Some(l) if l.version > snapshot.version => l,
                        _ => snapshot,
                    };
                    let session =
                        Session::connect_as(config.session.clone(), ControlRole::Follow(start))
                            .await?;
                    // A change posted while this shard was connecting.
                    if let Some(l) = state.latest.borrow().clone() {
                        session.apply(&ControlEvent::Topology(l));
                    }
                    *state.session.borrow_mut() = Some(session);
                    Ok::<(), Error>(())
                }
            })?
        };
        for (shard, result) in others.into_iter().enumerate() {
            if let Err(error) = result {
                return fail(&shards, shard, error);
            }
        }
        Ok(Cluster {
            shards,
            config,
            closers: Mutex::new(Vec::new()),
        })
    }
}

/// What each shard keeps: its session, set once `build` has connected it, and the latest
/// topology the control connection posted (kept for a session still connecting).
struct ShardState {
    index: usize,
    session: RefCell<Option<Session>>,
    latest: RefCell<Option<Arc<TopologySnapshot>>>,
}

impl ShardState {
    fn on_control_event(&self, event: &ControlEvent) {
        if let ControlEvent::Topology(s) = event {
            let mut latest = self.latest.borrow_mut();
            if latest.as_ref().is_none_or(|l| l.version < s.version) {
                *latest = Some(s.clone());
            }
        }
        let session = self.session.borrow().clone();
        if let Some(session) = session {
            session.apply(event);
        }
    }
}

impl Drop for ShardState {
    /// Dropped by the shard after the shutdown grace period: closing the connections fails
    /// whatever work is still in flight with a clear reason (work may hold session clones,
    /// so dropping ours alone would not close them).
    fn drop(&mut self) {
        if let Some(s) = self.session.borrow_mut().take() {
            s.close("the client is shutting down");
        }
    }
}

/// A running client: one shard per core, each with a connected [`Session`]. `Send + Sync`.
pub struct Cluster {
    shards: Shards<ShardState>,
    config: Arc<ClusterConfig>,
    /// What to close before the shards stop (the doors into them, `crate::door`), while it
    /// lives. Control plane only.
    closers: Mutex<Vec<Weak<dyn CloseOnShutdown>>>,
}

/// Something that leads work into the shards and must be closed before they stop (a door,
/// whose drainers end only when it closes).
pub(crate) trait CloseOnShutdown: Send + Sync {
    /// Refuses new work and lets what is queued fail; idempotent.
    fn close(&self);
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("cores", &self.shards.cores())
            .field("contact_points", &self.config.session.contact_points())
            .finish()
    }
}

impl Cluster {
    /// A builder with the defaults listed on [`ClusterBuilder`].
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// Number of shards.
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The core of each shard, by shard index.
    pub fn cores(&self) -> Vec<usize> {
        self.shards.cores()
    }

    /// The event loop the shards run.
    pub fn runtime(&self) -> Runtime {
        self.config.shards.runtime
    }

    /// Runs `f(session)` on every shard at once and returns each shard's result in shard
    /// order. Blocks the calling thread, which must not be one of the shards.
    pub fn run_on_shards<F, Fut, T>(&self, f: F) -> Result<Vec<T>, ClusterError>
    where
        F: Fn(Session) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = T> + 'static,
        T: Send + 'static,
    {
        self.run_on_shards_indexed(move |_, session| f(session))
    }

    /// Like [`Cluster::run_on_shards`], also telling `f` its shard's index.
    pub fn run_on_shards_indexed<F, Fut, T>(&self, f: F) -> Result<Vec<T>, ClusterError>
    where
        F: Fn(usize, Session) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = T> + 'static,
        T: Send + 'static,
    {
        let f = Arc::new(f);
        let results = self.shards.run_on_shards(move |state| {
            let session = state.session.borrow().clone();
            let index = state.index;
            let f = f.clone();
            async move {
                match session {
                    Some(s) => Some(f(index, s).await),
                    None => None,
                }
            }
        })?;
        let mut out = Vec::with_capacity(results.len());
        for (shard, r) in results.into_iter().enumerate() {
            // `build` connects every shard before returning; a missing session means the
            // shard is shutting down.
            out.push(r.ok_or(ClusterError::Runtime(RuntimeError::ShardStopped { shard }))?);
        }
        Ok(out)
    }

    /// The request latencies of every shard merged into one histogram (each shard's is
    /// [`Session::latency`]), gathered as [`Cluster::run_on_shards`] runs work (and blocking
    /// the same way); `None` if the sessions record none ([`SessionConfig::latency`]).
    pub fn latency(&self) -> Result<Option<Latency>, ClusterError> {
        let shards = self.run_on_shards(|session| async move { session.latency() })?;
        let mut merged: Option<Latency> = None;
        for shard in shards.into_iter().flatten() {
            match &mut merged {
                Some(m) => m.merge(&shard),
                None => merged = Some(shard),
            }
        }
        Ok(merged)
    }

    /// Stops the shards gracefully: no new work, running work gets the grace period, then
    /// every session's connections close and the executor threads are joined. Returns the
    /// shards whose thread ended in a panic. Idempotent; also done on drop.
    pub fn shutdown(&self) -> Vec<usize> {
        self.close_doors();
        self.shards.shutdown()
    }

    /// Registers `door`, closed by [`Cluster::shutdown`] (and on drop) before the shards
    /// stop, if it still lives then.
    pub(crate) fn on_shutdown(&self, door: Weak<dyn CloseOnShutdown>) {
        let mut closers = self.closers.lock().unwrap_or_else(|p| p.into_inner());
        // Forget the doors already gone (nothing else would).
        closers.retain(|c| c.strong_count() > 0);
        closers.push(door);
    }

    fn close_doors(&self) {
        let closers = std::mem::take(&mut *self.closers.lock().unwrap_or_else(|p| p.into_inner()));
        for door in closers.iter().filter_map(Weak::upgrade) {
            door.close();
        }
    }

    /// Posts `f(shard index, session)` to every shard with a session, without waiting: its
    /// future runs there as a job (shutdown gives it the grace period). `f` is dropped once
    /// every shard has called it or dropped its job unrun (a shard that stopped).
    pub(crate) fn post_to_sessions<F, Fut>(&self, f: F)
    where
        F: Fn(usize, Session) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.shards.poster().post_all(move |state: Rc<ShardState>| {
            let session = state.session.borrow().clone();
            // Called here, not in the future: the future does not keep `f` alive.
            let work = session.map(|s| f(state.index, s));
            async move {
                if let Some(work) = work {
                    work.await;
                }
            }
        });
    }
}

impl Drop for Cluster {
    /// Closes the doors into the shards first (their drainers end), then the shards stop
    /// as [`Cluster::shutdown`] stops them.
    fn drop(&mut self) {
        self.close_doors();
    }
}
