//! Listening and accepting: where each node's listeners are bound on an executor (its plain
//! port and its shard-aware one), and the accept loop that serves each connection.

use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use doppio_rt::TcpListener;

use crate::conn;
use crate::server::config::StubError;
use crate::shard::{ShardContext, Shared};

/// Where one node listens on one executor: `(address, shard-aware address)`.
pub(super) type Bound = (SocketAddr, Option<SocketAddr>);

/// One node's listeners on one executor.
pub(super) struct NodeListeners {
    pub(super) plain: TcpListener,
    pub(super) addr: SocketAddr,
    pub(super) aware: Option<(SocketAddr, TcpListener)>,
}

impl NodeListeners {
    pub(super) fn bound(&self) -> Bound {
        (self.addr, self.aware.as_ref().map(|(a, _)| *a))
    }
}

/// Where every executor binds its listeners: node `i` on `ips[i]`, all on `port` (node 0
/// picks it when it is 0, the others then take the same), and a shard-aware port likewise.
#[derive(Clone)]
pub(super) struct Layout {
    pub(super) ips: Vec<IpAddr>,
    pub(super) port: u16,
    /// Node 0's shard-aware address (the other nodes' are on their own address, same port).
    pub(super) aware: Option<SocketAddr>,
    /// Check that the other nodes' addresses are free before binding them (the first
    /// executor: with `SO_REUSEPORT` a bind would share a port another stub holds, rather
    /// than fail).
    pub(super) probe: bool,
}

impl Layout {
    pub(super) fn bind(&self) -> Result<Vec<NodeListeners>, StubError> {
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

/// Accepts until the stub stops; each connection is served on this shard. `shard_aware`:
/// this is the emulated ScyllaDB node's shard-aware port.
pub(super) async fn accept_loop(
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
