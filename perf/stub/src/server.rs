//! The server: one pinned executor per core (glommio's, or doppio's own io_uring runtime:
//! [`StubConfig::runtime`]), each accepting on the same address
//! (`SO_REUSEPORT`: the kernel spreads connections over the shards) and serving its
//! connections itself, with its own responder and rule state. Nothing is shared on the
//! request path; the connection counter and the rule fire counts are the only atomics
//! (once per connection, and once per fired rule).
//!
//! Playing a cluster ([`StubConfig::cluster`]), every executor also listens on every other
//! node's address (see [`crate::cluster`]), with a responder per node that describes that
//! node; each node keeps its own counters ([`StubHandle::node_counts`]).
//!
//! A stub can also be served by tasks on the caller's executor: [`Stub::serve_local`] (one
//! node on a given listener) and [`Stub::in_memory`] (any configuration, a cluster too, on
//! in-memory listeners: what a test on the simulated runtime, which has no sockets and no
//! other threads, serves beside its client).

use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppio_proto::ProtocolVersion;
use doppio_rt::{ExecutorHandle, ExecutorSpec, Runtime, TcpListener};

use crate::answer::{Responder, Shape};
use crate::cluster::{Cluster, ClusterError, Ring};
use crate::conn;
use crate::node::{NodeCounts, NodeShared};
use crate::rules::{Matcher, Rules};
use crate::scylla::{ScyllaShards, ShardAwarePort, ShardCounts};
use crate::shard::{ShardContext, Shared};
use crate::tablets::{TabletLayout, Tablets};

/// What a stub serves and how.
#[derive(Debug, Clone)]
pub struct StubConfig {
    /// Where to listen (port 0: any free port).
    pub listen: SocketAddr,
    /// One shard per core, pinned; empty: one unpinned shard.
    pub cores: Vec<usize>,
    /// Whether to pin each shard to its core (tests sharing a machine may not).
    pub pin: bool,
    /// The event loop of every shard.
    pub runtime: Runtime,
    /// Result shape and bind-marker type.
    pub shape: Shape,
    /// Fault rules.
    pub rules: Rules,
    /// Log fired rules to stderr.
    pub log_rules: bool,
    /// Keep the first bound value of every EXECUTE, for tests that check which keys a
    /// client sent ([`StubHandle::executed_first_values`]). Off by default: when on, every
    /// EXECUTE takes a lock and allocates, so it is for correctness tests, never for
    /// overhead measurements.
    pub record_values: bool,
    /// The newest protocol version offered and spoken (v5 by default, as Cassandra 5.0;
    /// v4 to play a node that offers no v5).
    pub newest_protocol: ProtocolVersion,
    /// Answer STARTUP with AUTHENTICATE naming this server authenticator class (any
    /// credentials then succeed); none: READY.
    pub authenticator: Option<String>,
    /// Emulate a ScyllaDB node's shards (off by default): see [`crate::scylla`].
    pub scylla: Option<ScyllaShards>,
    /// A keyspace to list with SimpleStrategy (replication factor 1), the first bind
    /// marker of every prepared statement named its partition key: drivers then route by
    /// token (off by default: only the system keyspaces, LocalStrategy, nothing routed).
    pub routed_keyspace: Option<String>,
    /// Serve TLS with this configuration (see [`crate::tls::server_config`]); `None`:
    /// plaintext.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Play a cluster of several nodes (off by default: one node). Node `i` listens on the
    /// IPv4 address `i` steps after `listen`'s, same port; each answers as the single stub
    /// does (same shape, rules, shards, TLS) with its own system tables and counters, the
    /// routed keyspace is listed with the cluster's replication factor, and every EXECUTE
    /// with a bound partition key is checked against its token's replicas: see
    /// [`crate::cluster`] and [`StubHandle::node_counts`].
    pub cluster: Option<Cluster>,
    /// Lay the routed keyspace's tables out in ScyllaDB's tablets (a cluster with emulated
    /// ScyllaDB shards only): requests are checked against their tablet's replicas and a
    /// misrouted one's answer carries the tablet's routing; the routed keyspace is listed as
    /// a keyspace in tablets (NetworkTopologyStrategy, `system_schema.scylla_keyspaces`).
    /// See [`crate::tablets`].
    pub tablets: Option<Tablets>,
}

impl Default for StubConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            cores: Vec::new(),
            pin: false,
            runtime: Runtime::default(),
            shape: Shape::default(),
            rules: Rules::default(),
            log_rules: true,
            record_values: false,
            newest_protocol: ProtocolVersion::V5,
            authenticator: None,
            scylla: None,
            routed_keyspace: None,
            tls: None,
            cluster: None,
            tablets: None,
        }
    }
}

/// Why a stub could not start.
#[derive(Debug, thiserror::Error)]
pub enum StubError {
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}: {message}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        message: String,
    },
    /// Another node of a cluster could not listen on its address (taken by another
    /// process, or not a local address).
    #[error("cannot listen on {addr} for node {node} of the cluster: {message}")]
    NodeBind {
        /// The node.
        node: u8,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        message: String,
    },
    /// Tablets were asked for without the cluster and the ScyllaDB shards they are laid
    /// over.
    #[error("tablets need a cluster (`cluster`) of emulated ScyllaDB nodes (`scylla`)")]
    TabletsWithoutCluster,
    /// The cluster's nodes cannot be given addresses.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// An executor could not start.
    #[error("cannot start the shard on core {core}: {cause}")]
    Executor {
        /// The core.
        core: usize,
        /// Why.
        #[source]
        cause: doppio_rt::StartFailure,
    },
}

/// A running stub. Dropping it stops it. (A stub served in memory, [`Stub::in_memory`],
/// has no threads of its own: its handle stops its accepting.)
pub struct StubHandle {
    /// Every node's address, node 0 first.
    addrs: Vec<SocketAddr>,
    shared: Arc<Shared>,
    threads: Vec<ExecutorHandle<()>>,
}

impl std::fmt::Debug for StubHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StubHandle")
            .field("addrs", &self.addrs)
            .field("shards", &self.threads.len())
            .finish()
    }
}

/// Starts stubs.
#[derive(Debug)]
pub struct Stub;

impl Stub {
    /// Starts a stub: binds every shard's listeners (each node's, for a cluster), then
    /// returns (it serves in the background until [`StubHandle::stop`] or drop).
    pub fn start(config: StubConfig) -> Result<StubHandle, StubError> {
        let cores: Vec<Option<usize>> = if config.cores.is_empty() {
            vec![None]
        } else {
            config.cores.iter().map(|&c| Some(c)).collect()
        };
        let Plan {
            ips,
            aware,
            serving,
        } = Plan::of(&config)?;
        let shared = serving.shared.clone();
        let mut layout = Layout {
            ips,
            port: config.listen.port(),
            aware,
            probe: true,
        };
        let executors = cores.len();
        let mut addrs = Vec::new();
        let mut threads = Vec::new();
        for (shard, core) in cores.into_iter().enumerate() {
            let spec = ExecutorSpec {
                core: core.filter(|_| config.pin),
                ..ExecutorSpec::new(config.runtime, &format!("doppio-stub-{shard}"))
            };
            let (tx, rx) = std::sync::mpsc::channel::<Result<Vec<Bound>, StubError>>();
            let serving = serving.clone();
            let at = layout.clone();
            let spawned = doppio_rt::spawn_executor(spec, move || async move {
                let listeners = match at.bind() {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let bound: Vec<Bound> = listeners.iter().map(NodeListeners::bound).collect();
                let _ = tx.send(Ok(bound.clone()));
                let addrs: Vec<SocketAddr> = bound.iter().map(|b| b.0).collect();
                let started = serving.shared.started;
                let mut loops = serving.accept_loops(listeners, &addrs, shard, executors, started);
                // The executor lives as long as its last accept loop; the others run beside.
                let last = loops.pop();
                for l in loops {
                    doppio_rt::spawn_local(l).detach();
                }
                if let Some(l) = last {
                    l.await;
                }
            });
            let handle = match spawned {
                Ok(h) => h,
                Err(e) => {
                    stop_all(&shared, threads);
                    return Err(StubError::Executor {
                        core: core.unwrap_or(0),
                        cause: e.cause,
                    });
                }
            };
            let first_ip = layout.ips.first().copied().unwrap_or(config.listen.ip());
            let first_node = SocketAddr::new(first_ip, layout.port);
            match rx.recv() {
                Ok(Ok(bound)) => {
                    // The first shard picks the ports; the others share them.
                    if let Some((addr, aware_bound)) = bound.first() {
                        layout.port = addr.port();
                        if let (Some(a), Some(configured)) = (aware_bound, layout.aware.as_mut()) {
                            configured.set_port(a.port());
                            for node in &shared.nodes {
                                if let Some(e) = &node.scylla {
                                    e.set_aware_port(a.port());
                                }
                            }
                        }
                    }
                    layout.probe = false;
                    addrs = bound.iter().map(|b| b.0).collect();
                    threads.push(handle);
                }
                Ok(Err(e)) => {
                    let _ = handle.join();
                    stop_all(&shared, threads);
                    return Err(e);
                }
                Err(_) => {
                    let _ = handle.join();
                    stop_all(&shared, threads);
                    return Err(StubError::Bind {
                        addr: first_node,
                        message: "the shard ended before binding".into(),
                    });
                }
            }
        }
        Ok(StubHandle {
            addrs,
            shared,
            threads,
        })
    }
}

/// Where one node listens on one executor: `(address, shard-aware address)`.
type Bound = (SocketAddr, Option<SocketAddr>);

/// One node's listeners on one executor.
struct NodeListeners {
    plain: TcpListener,
    addr: SocketAddr,
    aware: Option<(SocketAddr, TcpListener)>,
}

impl NodeListeners {
    fn bound(&self) -> Bound {
        (self.addr, self.aware.as_ref().map(|(a, _)| *a))
    }
}

/// Where every executor binds its listeners: node `i` on `ips[i]`, all on `port` (node 0
/// picks it when it is 0, the others then take the same), and a shard-aware port likewise.
#[derive(Clone)]
struct Layout {
    ips: Vec<IpAddr>,
    port: u16,
    /// Node 0's shard-aware address (the other nodes' are on their own address, same port).
    aware: Option<SocketAddr>,
    /// Check that the other nodes' addresses are free before binding them (the first
    /// executor: with `SO_REUSEPORT` a bind would share a port another stub holds, rather
    /// than fail).
    probe: bool,
}

impl Layout {
    fn bind(&self) -> Result<Vec<NodeListeners>, StubError> {
        let mut port = self.port;
        let mut aware_port = self.aware.map(|a| a.port());
        let mut out = Vec::with_capacity(self.ips.len());
        for (node, &ip) in self.ips.iter().enumerate() {
            let fail = |addr: SocketAddr, message: String| match u8::try_from(node) {
                Ok(n) if n > 0 => StubError::NodeBind {
                    node: n,
                    addr,
                    message,
                },
                _ => StubError::Bind { addr, message },
            };
            let listen = |addr: SocketAddr| -> Result<(SocketAddr, TcpListener), StubError> {
                if self.probe && node > 0 {
                    // Dropped at once: only whether the address is free matters.
                    std::net::TcpListener::bind(addr).map_err(|e| fail(addr, e.to_string()))?;
                }
                let l =
                    TcpListener::bind(addr, 64 * 1024).map_err(|e| fail(addr, e.to_string()))?;
                let bound = l.local_addr().map_err(|e| fail(addr, e.to_string()))?;
                Ok((bound, l))
            };
            let (addr, plain) = listen(SocketAddr::new(ip, port))?;
            port = addr.port();
            let aware = match (self.aware, aware_port) {
                (Some(first), Some(p)) => {
                    let at = if node == 0 {
                        first
                    } else {
                        SocketAddr::new(ip, p)
                    };
                    let (a, l) = listen(at).map_err(|e| match e {
                        StubError::Bind { addr, message } => StubError::Bind {
                            addr,
                            message: format!("shard-aware port: {message}"),
                        },
                        other => other,
                    })?;
                    aware_port = Some(a.port());
                    Some((a, l))
                }
                _ => None,
            };
            out.push(NodeListeners { plain, addr, aware });
        }
        Ok(out)
    }
}

/// What every shard's responder is made from, taken from a [`StubConfig`] once.
#[derive(Clone)]
struct Answering {
    shape: Arc<Shape>,
    newest_protocol: ProtocolVersion,
    authenticator: Option<Arc<str>>,
    routed_keyspace: Option<Arc<str>>,
    /// The cluster's ring, when playing one.
    ring: Option<Arc<Ring>>,
    /// The routed keyspace's replication factor.
    replication: u8,
    /// Tablets per table of the routed keyspace, when it is in tablets.
    tablets: Option<u32>,
}

impl Answering {
    fn of(config: &StubConfig, ring: Option<Arc<Ring>>) -> Self {
        Self {
            replication: config.cluster.map_or(1, |c| c.replication()),
            tablets: config.tablets.map(|t| t.count.get()),
            ring,
            shape: Arc::new(config.shape.clone()),
            // ScyllaDB speaks v4 only: emulating its shards caps the versions offered.
            newest_protocol: if config.scylla.is_some() {
                config.newest_protocol.min(ProtocolVersion::V4)
            } else {
                config.newest_protocol
            },
            authenticator: config.authenticator.as_deref().map(Arc::from),
            routed_keyspace: config.routed_keyspace.as_deref().map(Arc::from),
        }
    }

    /// The responder of node `node` of those listening on `addrs` (`scylla`: emulating
    /// ScyllaDB's shards).
    fn responder(&self, addrs: &[SocketAddr], node: usize, scylla: bool) -> Responder {
        let bound = addrs.get(node).or(addrs.first()).copied();
        let bound = bound.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
        let mut r = Responder::new(bound, self.shape.clone())
            .with_newest_protocol(self.newest_protocol)
            .with_authenticator(self.authenticator.clone());
        if scylla {
            r = r.with_first_marker_as_key();
        }
        if let Some(ring) = &self.ring {
            let rows = ring.node_rows(addrs);
            let (local, peers): (Vec<_>, Vec<_>) =
                rows.into_iter().enumerate().partition(|(i, _)| *i == node);
            let peers: Vec<_> = peers.into_iter().map(|(_, p)| p).collect();
            if let Some((_, local)) = local.first() {
                r = r.with_topology(local, &peers);
            }
        }
        if scylla {
            r = r.with_scylla_keyspaces();
        }
        match (&self.routed_keyspace, self.tablets) {
            (Some(ks), Some(tablets)) => r.with_tablet_keyspace(ks, self.replication, tablets),
            (Some(ks), None) => r.with_routed_keyspace(ks, self.replication),
            (None, _) => r,
        }
    }
}

/// One shard's state for one node: its responder and rule matcher; `started`: when the
/// stub started, on this executor's clock (rules' time windows count from it).
fn shard_context(
    responder: Responder,
    matcher: Matcher,
    shared: Arc<Shared>,
    node: Arc<NodeShared>,
    tls: Option<Arc<rustls::ServerConfig>>,
    started: Instant,
) -> Rc<ShardContext> {
    Rc::new(ShardContext::new(responder, matcher, shared, node, tls).started_at(started))
}

/// What a [`StubConfig`] makes before any executor runs: every node's IP, node 0's
/// shard-aware address (if any), and what each executor serves with.
struct Plan {
    ips: Vec<IpAddr>,
    aware: Option<SocketAddr>,
    serving: Serving,
}

impl Plan {
    fn of(config: &StubConfig) -> Result<Self, StubError> {
        let ips = match config.cluster {
            Some(c) => c.addresses(config.listen.ip())?,
            None => vec![config.listen.ip()],
        };
        let ring = config.cluster.map(|c| Arc::new(c.ring()));
        let tablets = match (config.tablets, config.cluster, config.scylla) {
            (None, _, _) => None,
            (Some(tablets), Some(cluster), Some(scylla)) => Some(TabletLayout {
                tablets,
                nodes: cluster.nodes.get(),
                replication: cluster.replication(),
                shards: scylla.shards,
            }),
            (Some(_), _, _) => return Err(StubError::TabletsWithoutCluster),
        };
        let nodes = (0..ips.len())
            .map(|i| {
                let place = ring.clone().map(|r| (r, i as u8));
                Arc::new(NodeShared::new(config.scylla, place).with_tablets(tablets))
            })
            .collect();
        let shared = Arc::new(Shared::new(
            &config.rules,
            config.log_rules,
            config.record_values,
            nodes,
        ));
        // The shard-aware listener, if any: every executor listens there too.
        let aware = match config.scylla.map(|s| s.shard_aware_port) {
            Some(ShardAwarePort::Listen(a)) => Some(a),
            _ => None,
        };
        Ok(Self {
            ips,
            aware,
            serving: Serving {
                shared,
                rules: Arc::new(config.rules.clone()),
                answering: Answering::of(config, ring),
                tls: config.tls.clone(),
            },
        })
    }
}

/// What every executor of a stub serves with (`Send`: handed to each executor's thread).
#[derive(Clone)]
struct Serving {
    shared: Arc<Shared>,
    rules: Arc<Rules>,
    answering: Answering,
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl Serving {
    /// The accept loops of shard `shard` of `executors` over `listeners` (one per node, in
    /// node order, the nodes at `addrs`): one per listener, each node with its own
    /// responder and rule matcher.
    fn accept_loops(
        &self,
        listeners: Vec<NodeListeners>,
        addrs: &[SocketAddr],
        shard: usize,
        executors: usize,
        started: Instant,
    ) -> Vec<impl std::future::Future<Output = ()>> {
        let mut loops = Vec::new();
        for ((node, l), state) in listeners.into_iter().enumerate().zip(&self.shared.nodes) {
            let ctx = shard_context(
                self.answering
                    .responder(addrs, node, state.scylla.is_some()),
                Matcher::new(self.rules.clone(), shard + node * executors),
                self.shared.clone(),
                state.clone(),
                self.tls.clone(),
                started,
            );
            if let Some((_, aware)) = l.aware {
                loops.push(accept_loop(aware, true, ctx.clone(), self.shared.clone()));
            }
            loops.push(accept_loop(l.plain, false, ctx, self.shared.clone()));
        }
        loops
    }
}

/// A stub served by tasks on the caller's own executor ([`Stub::serve_local`]). Dropping it
/// stops accepting; connections already accepted are served until their clients close them.
pub struct LocalStubHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for LocalStubHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalStubHandle")
            .field("addr", &self.addr)
            .finish()
    }
}

impl LocalStubHandle {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.next_connection.load(Ordering::Relaxed)
    }

    /// How often each rule fired so far, by rule name, in rule order.
    pub fn fired(&self) -> Vec<(String, u64)> {
        self.shared.fired_counts()
    }

    /// The first bound value of every EXECUTE so far, in arrival order (empty unless
    /// [`StubConfig::record_values`]).
    pub fn executed_first_values(&self) -> Vec<Vec<u8>> {
        self.shared.recorded_values()
    }
}

impl Drop for LocalStubHandle {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
    }
}

impl Stub {
    /// Serves `listener` with tasks on the current thread's executor, beside the caller's
    /// own: a stub in the client's event loop, answering as one shard of a stub of `config`
    /// would (its `listen`, `cores`, `pin`, `runtime` and `cluster` are not used; the
    /// listener decides, and it plays one node).
    /// With an in-memory listener ([`doppio_rt::TcpListener::bind_memory`]) a client on this
    /// thread talks to it with no kernel round trip: what the request-path benchmarks use to
    /// tell the driver's own cost from the kernel's.
    ///
    /// Must be called on an executor thread (either runtime).
    pub fn serve_local(
        listener: TcpListener,
        config: &StubConfig,
    ) -> std::io::Result<LocalStubHandle> {
        let addr = listener.local_addr()?;
        let node = Arc::new(NodeShared::new(config.scylla, None));
        let shared = Arc::new(Shared::new(
            &config.rules,
            config.log_rules,
            config.record_values,
            vec![node.clone()],
        ));
        let ctx = shard_context(
            Answering::of(config, None).responder(&[addr], 0, config.scylla.is_some()),
            Matcher::new(Arc::new(config.rules.clone()), 0),
            shared.clone(),
            node,
            config.tls.clone(),
            shared.started,
        );
        doppio_rt::spawn_local(accept_loop(listener, false, ctx, shared.clone())).detach();
        Ok(LocalStubHandle { addr, shared })
    }
}

/// The port a stub in memory listens on when `listen` asks for any (0): Cassandra's.
const MEMORY_PORT: u16 = 9042;
/// The shard-aware port a stub in memory listens on when its [`ScyllaShards`] asks for any
/// (0): ScyllaDB's.
const MEMORY_SHARD_AWARE_PORT: u16 = 19042;

/// A stub to serve on an executor's own thread over in-memory listeners
/// ([`doppio_rt::TcpListener::bind_memory`]), made by [`Stub::in_memory`] on any thread
/// (`Send`): on a simulation ([`doppio_rt::Runtime::Sim`]) a stub cannot run on threads of
/// its own, so the test's executor serves it beside the client, with no socket.
#[derive(Clone)]
pub struct MemoryStub {
    /// Every node's addresses, node 0 first.
    bound: Vec<Bound>,
    serving: Serving,
}

impl std::fmt::Debug for MemoryStub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStub")
            .field("nodes", &self.bound)
            .finish_non_exhaustive()
    }
}

impl Stub {
    /// A stub of `config` (one node, or a cluster) to be served in memory on an executor's
    /// thread by [`MemoryStub::serve`], as one shard of [`Stub::start`]'s would serve it
    /// (`cores`, `pin` and `runtime` are not used). Returns at once, on any thread: the
    /// handle (every node's address, the counters, readable from any thread; dropping or
    /// stopping it stops accepting, and connections already accepted are served until their
    /// clients close them or their executor ends) and the stub to serve.
    ///
    /// Node 0 is at `listen` (port 0: 9042, Cassandra's), node `i` of a cluster `i`
    /// addresses after it on the same port, as [`Stub::start`] places them; an emulated
    /// ScyllaDB node's shard-aware port is on each node's own address (port 0: 19042,
    /// ScyllaDB's).
    pub fn in_memory(config: StubConfig) -> Result<(StubHandle, MemoryStub), StubError> {
        let port = match config.listen.port() {
            0 => MEMORY_PORT,
            p => p,
        };
        let Plan {
            ips,
            aware,
            serving,
        } = Plan::of(&config)?;
        let aware_port = aware.map(|a| match a.port() {
            0 if port == MEMORY_SHARD_AWARE_PORT => MEMORY_SHARD_AWARE_PORT + 1,
            0 => MEMORY_SHARD_AWARE_PORT,
            p => p,
        });
        if let Some(p) = aware_port {
            for node in &serving.shared.nodes {
                if let Some(e) = &node.scylla {
                    e.set_aware_port(p);
                }
            }
        }
        let bound: Vec<Bound> = ips
            .iter()
            .map(|&ip| {
                (
                    SocketAddr::new(ip, port),
                    aware_port.map(|p| SocketAddr::new(ip, p)),
                )
            })
            .collect();
        let handle = StubHandle {
            addrs: bound.iter().map(|b| b.0).collect(),
            shared: serving.shared.clone(),
            threads: Vec::new(),
        };
        Ok((handle, MemoryStub { bound, serving }))
    }
}

impl MemoryStub {
    /// Binds every node's in-memory listeners on the current thread and serves them with
    /// tasks on its executor, beside the caller's own, until the [`StubHandle`] is dropped
    /// or stopped, or the executor ends. Rules' time windows count from now, on this
    /// executor's clock. Several executors may serve it in turn (or at once, each on its
    /// own thread): the counters add up.
    ///
    /// Must be called on an executor thread (any runtime); fails if a node's address has an
    /// in-memory listener on this thread already.
    pub fn serve(&self) -> Result<(), StubError> {
        let mut listeners = Vec::with_capacity(self.bound.len());
        for (node, &(addr, aware)) in self.bound.iter().enumerate() {
            let bind = |addr: SocketAddr| {
                TcpListener::bind_memory(addr).map_err(|e| match u8::try_from(node) {
                    Ok(n) if n > 0 => StubError::NodeBind {
                        node: n,
                        addr,
                        message: e.to_string(),
                    },
                    _ => StubError::Bind {
                        addr,
                        message: e.to_string(),
                    },
                })
            };
            let plain = bind(addr)?;
            let aware = match aware {
                Some(a) => Some((a, bind(a)?)),
                None => None,
            };
            listeners.push(NodeListeners { plain, addr, aware });
        }
        let addrs: Vec<SocketAddr> = self.bound.iter().map(|b| b.0).collect();
        let loops = self
            .serving
            .accept_loops(listeners, &addrs, 0, 1, doppio_rt::now());
        for l in loops {
            doppio_rt::spawn_local(l).detach();
        }
        Ok(())
    }
}

fn stop_all(shared: &Shared, threads: Vec<ExecutorHandle<()>>) {
    shared.stop.store(true, Ordering::SeqCst);
    for t in threads {
        let _ = t.join();
    }
}

/// Accepts until the stub stops; each connection is served on this shard. `shard_aware`:
/// this is the emulated ScyllaDB node's shard-aware port.
async fn accept_loop(
    listener: TcpListener,
    shard_aware: bool,
    ctx: Rc<ShardContext>,
    shared: Arc<Shared>,
) {
    while !shared.stop.load(Ordering::Relaxed) {
        // A bounded wait, so that a stop is noticed without a connection to wake us.
        let accepted = doppio_rt::timeout(Duration::from_millis(100), listener.accept()).await;
        match accepted {
            Ok(Ok((stream, peer))) => {
                let node = ctx.node();
                node.accepted();
                let scylla_shard = node
                    .scylla
                    .as_ref()
                    .map(|e| e.assign(shard_aware, peer.port()));
                doppio_rt::spawn_local(conn::serve(stream, ctx.clone(), scylla_shard)).detach();
            }
            Ok(Err(e)) => {
                eprintln!("doppio-stub: accept failed: {e}");
                doppio_rt::sleep(Duration::from_millis(10)).await;
            }
            Err(_) => {}
        }
    }
}

impl StubHandle {
    /// The address the stub listens on (the real port when 0 was asked for); node 0's
    /// when it plays a cluster.
    pub fn addr(&self) -> SocketAddr {
        self.addrs
            .first()
            .copied()
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Every node's address, node 0 first (one unless it plays a cluster).
    pub fn node_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// What arrived at each node so far, node 0 first: connections, and (in a cluster)
    /// EXECUTEs with a bound partition key, those at a node that is no replica of their
    /// token, and lightweight transactions that missed their primary replica; each node's
    /// requests per emulated ScyllaDB shard when [`StubConfig::scylla`].
    pub fn node_counts(&self) -> Vec<NodeCounts> {
        self.shared
            .nodes
            .iter()
            .zip(&self.addrs)
            .map(|(n, &a)| n.counts(a))
            .collect()
    }

    /// How often each rule fired so far, by rule name, in rule order.
    pub fn fired(&self) -> Vec<(String, u64)> {
        self.shared.fired_counts()
    }

    /// The first bound value of every EXECUTE so far, in arrival order per shard (empty
    /// unless [`StubConfig::record_values`]; an EXECUTE without values records nothing).
    pub fn executed_first_values(&self) -> Vec<Vec<u8>> {
        self.shared.recorded_values()
    }

    /// Where requests landed per emulated ScyllaDB shard (`None` unless
    /// [`StubConfig::scylla`]); node 0's in a cluster (every node's: [`Self::node_counts`]).
    pub fn shard_counts(&self) -> Option<ShardCounts> {
        self.shared
            .nodes
            .first()?
            .scylla
            .as_ref()
            .map(|e| e.counts())
    }

    /// The emulated ScyllaDB node's shard-aware port, when it listens on one (node 0's in a
    /// cluster; the other nodes' are on their own addresses, same port).
    pub fn shard_aware_addr(&self) -> Option<SocketAddr> {
        let e = self.shared.nodes.first()?.scylla.as_ref()?;
        match e.config.shard_aware_port {
            ShardAwarePort::Listen(_) => Some(SocketAddr::new(self.addr().ip(), e.aware_port())),
            _ => None,
        }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.next_connection.load(Ordering::Relaxed)
    }

    /// Stops accepting, closes every connection and joins the shards.
    pub fn stop(mut self) {
        let threads = std::mem::take(&mut self.threads);
        stop_all(&self.shared, threads);
    }
}

impl Drop for StubHandle {
    fn drop(&mut self) {
        let threads = std::mem::take(&mut self.threads);
        stop_all(&self.shared, threads);
    }
}
