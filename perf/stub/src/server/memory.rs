//! A stub served over in-memory listeners on an executor's own thread ([`Stub::in_memory`],
//! [`MemoryStub::serve`]): made on any thread, served beside the client (a simulation's).

use std::net::SocketAddr;

use doppio_rt::TcpListener;

use crate::server::config::{StubConfig, StubError};
use crate::server::handle::StubHandle;
use crate::server::listen::{Bound, NodeListeners};
use crate::server::plan::{Plan, Serving};
use crate::server::start::Stub;

/// The port a stub in memory listens on when `listen` asks for any (0): Cassandra's.
const MEMORY_PORT: u16 = 9042;
/// The shard-aware port a stub in memory listens on when its [`ScyllaShards`](crate::ScyllaShards) asks for any
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
