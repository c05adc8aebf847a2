//! The server: one pinned executor per core (glommio's, or doppio's own io_uring runtime:
//! [`StubConfig::runtime`]), each accepting on the same address
//! (`SO_REUSEPORT`: the kernel spreads connections over the shards) and serving its
//! connections itself, with its own responder and rule state. Nothing is shared on the
//! request path; the connection counter and the rule fire counts are the only atomics
//! (once per connection, and once per fired rule).

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use doppio_proto::ProtocolVersion;
use doppio_rt::{ExecutorHandle, ExecutorSpec, Runtime, TcpListener};

use crate::answer::{Responder, Shape};
use crate::conn;
use crate::rules::{Matcher, Rules};
use crate::scylla::{ScyllaShards, ShardAwarePort, ShardCounts};
use crate::shard::{ShardContext, Shared};

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
    /// An executor could not start.
    #[error("cannot start the shard on core {core}: {message}")]
    Executor {
        /// The core.
        core: usize,
        /// Why.
        message: String,
    },
}

/// A running stub. Dropping it stops it.
pub struct StubHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    threads: Vec<ExecutorHandle<()>>,
}

impl std::fmt::Debug for StubHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StubHandle")
            .field("addr", &self.addr)
            .field("shards", &self.threads.len())
            .finish()
    }
}

/// Starts stubs.
#[derive(Debug)]
pub struct Stub;

impl Stub {
    /// Starts a stub: binds every shard's listener, then returns (it serves in the
    /// background until [`StubHandle::stop`] or drop).
    pub fn start(config: StubConfig) -> Result<StubHandle, StubError> {
        let cores: Vec<Option<usize>> = if config.cores.is_empty() {
            vec![None]
        } else {
            config.cores.iter().map(|&c| Some(c)).collect()
        };
        let shared = Arc::new(Shared::new(
            &config.rules,
            config.log_rules,
            config.record_values,
            config.scylla,
        ));
        // The shard-aware listener, if any: every executor listens there too.
        let mut aware = match config.scylla.map(|s| s.shard_aware_port) {
            Some(ShardAwarePort::Listen(a)) => Some(a),
            _ => None,
        };
        let rules = Arc::new(config.rules.clone());
        let answering = Answering::of(&config);
        let mut addr = config.listen;
        let mut threads = Vec::new();
        for (shard, core) in cores.into_iter().enumerate() {
            let spec = ExecutorSpec {
                core: core.filter(|_| config.pin),
                ..ExecutorSpec::new(config.runtime, &format!("doppio-stub-{shard}"))
            };
            type Bound = (SocketAddr, Option<SocketAddr>);
            let (tx, rx) = std::sync::mpsc::channel::<Result<Bound, String>>();
            let (shared2, rules, answering) = (shared.clone(), rules.clone(), answering.clone());
            let tls = config.tls.clone();
            let spawned = doppio_rt::spawn_executor(spec, move || async move {
                let listener = match TcpListener::bind(addr, 64 * 1024) {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let bound = match listener.local_addr() {
                    Ok(a) => a,
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let aware_listener = match aware
                    .map(|a| TcpListener::bind(a, 64 * 1024).and_then(|l| Ok((l.local_addr()?, l))))
                {
                    None => None,
                    Some(Ok(l)) => Some(l),
                    Some(Err(e)) => {
                        let _ = tx.send(Err(format!("shard-aware port: {e}")));
                        return;
                    }
                };
                let _ = tx.send(Ok((bound, aware_listener.as_ref().map(|(a, _)| *a))));
                let ctx = shard_context(
                    answering.responder(bound, shared2.scylla.is_some()),
                    Matcher::new(rules, shard),
                    shared2.clone(),
                    tls,
                );
                if let Some((_, l)) = aware_listener {
                    doppio_rt::spawn_local(accept_loop(l, true, ctx.clone(), shared2.clone()))
                        .detach();
                }
                accept_loop(listener, false, ctx, shared2).await;
            });
            let handle = match spawned {
                Ok(h) => h,
                Err(e) => {
                    stop_all(&shared, threads);
                    return Err(StubError::Executor {
                        core: core.unwrap_or(0),
                        message: e.cause.to_string(),
                    });
                }
            };
            match rx.recv() {
                Ok(Ok((bound, aware_bound))) => {
                    // The first shard picks the ports; the others share them.
                    addr = bound;
                    if let (Some(a), Some(e)) = (aware_bound, shared.scylla.as_ref()) {
                        e.set_aware_port(a.port());
                        aware = Some(a);
                    }
                    threads.push(handle);
                }
                Ok(Err(message)) => {
                    let _ = handle.join();
                    stop_all(&shared, threads);
                    return Err(StubError::Bind { addr, message });
                }
                Err(_) => {
                    let _ = handle.join();
                    stop_all(&shared, threads);
                    return Err(StubError::Bind {
                        addr,
                        message: "the shard ended before binding".into(),
                    });
                }
            }
        }
        Ok(StubHandle {
            addr,
            shared,
            threads,
        })
    }
}

/// What every shard's responder is made from, taken from a [`StubConfig`] once.
#[derive(Clone)]
struct Answering {
    shape: Arc<Shape>,
    newest_protocol: ProtocolVersion,
    authenticator: Option<Arc<str>>,
    routed_keyspace: Option<Arc<str>>,
}

impl Answering {
    fn of(config: &StubConfig) -> Self {
        Self {
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

    /// The responder of a shard listening on `bound` (`scylla`: emulating ScyllaDB's shards).
    fn responder(&self, bound: SocketAddr, scylla: bool) -> Responder {
        let r = Responder::new(bound, self.shape.clone())
            .with_newest_protocol(self.newest_protocol)
            .with_authenticator(self.authenticator.clone());
        let r = if scylla {
            r.with_first_marker_as_key()
        } else {
            r
        };
        match &self.routed_keyspace {
            Some(ks) => r.with_routed_keyspace(ks),
            None => r,
        }
    }
}

/// One shard's state: its responder and rule matcher.
fn shard_context(
    responder: Responder,
    matcher: Matcher,
    shared: Arc<Shared>,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Rc<ShardContext> {
    Rc::new(ShardContext::new(responder, matcher, shared, tls))
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
}

impl Drop for LocalStubHandle {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
    }
}

impl Stub {
    /// Serves `listener` with tasks on the current thread's executor, beside the caller's
    /// own: a stub in the client's event loop, answering as one shard of a stub of `config`
    /// would (its `listen`, `cores`, `pin` and `runtime` are not used; the listener decides).
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
        let shared = Arc::new(Shared::new(
            &config.rules,
            config.log_rules,
            config.record_values,
            config.scylla,
        ));
        let ctx = shard_context(
            Answering::of(config).responder(addr, shared.scylla.is_some()),
            Matcher::new(Arc::new(config.rules.clone()), 0),
            shared.clone(),
            config.tls.clone(),
        );
        doppio_rt::spawn_local(accept_loop(listener, false, ctx, shared.clone())).detach();
        Ok(LocalStubHandle { addr, shared })
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
                let scylla_shard = shared
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
    /// The address the stub listens on (the real port when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How often each rule fired so far, by rule name, in rule order.
    pub fn fired(&self) -> Vec<(String, u64)> {
        self.shared
            .names
            .iter()
            .zip(&self.shared.fired)
            .map(|(n, c)| (n.clone(), c.load(Ordering::Relaxed)))
            .collect()
    }

    /// The first bound value of every EXECUTE so far, in arrival order per shard (empty
    /// unless [`StubConfig::record_values`]; an EXECUTE without values records nothing).
    pub fn executed_first_values(&self) -> Vec<Vec<u8>> {
        self.shared
            .values
            .as_ref()
            .map(|v| v.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }

    /// Where requests landed per emulated ScyllaDB shard (`None` unless
    /// [`StubConfig::scylla`]).
    pub fn shard_counts(&self) -> Option<ShardCounts> {
        self.shared.scylla.as_ref().map(|e| e.counts())
    }

    /// The emulated ScyllaDB node's shard-aware port, when it listens on one.
    pub fn shard_aware_addr(&self) -> Option<SocketAddr> {
        let e = self.shared.scylla.as_ref()?;
        match e.config.shard_aware_port {
            ShardAwarePort::Listen(_) => Some(SocketAddr::new(self.addr.ip(), e.aware_port())),
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
