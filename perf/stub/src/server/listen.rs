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

/// How many ports a cluster whose port the kernel picks tries, when another node's address
/// has the picked port taken (by another process, or by a test's stub beside it).
const PICK_ATTEMPTS: usize = 16;

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

/// One node's listeners as bound: `(address, listener, shard-aware)`, over any listener
/// type (a test binds placeholders).
type BoundNode<L> = (SocketAddr, L, Option<(SocketAddr, L)>);

/// Why one attempt at binding every node failed.
struct Failed<L> {
    error: StubError,
    /// A later node found a port node 0 had the kernel pick taken: another pick may do.
    picked_port_taken: bool,
    /// What this attempt bound before failing, held until the end so that the kernel does
    /// not pick the same port again.
    bound: Vec<BoundNode<L>>,
}

impl Layout {
    pub(super) fn bind(&self) -> Result<Vec<NodeListeners>, StubError> {
        let nodes = self.bind_with(|node, addr| {
            if self.probe && node > 0 {
                // Dropped at once: only whether the address is free matters.
                std::net::TcpListener::bind(addr)?;
            }
            let l = TcpListener::bind(addr, 64 * 1024)?;
            Ok((l.local_addr()?, l))
        })?;
        Ok(nodes
            .into_iter()
            .map(|(addr, plain, aware)| NodeListeners { plain, addr, aware })
            .collect())
    }

    /// Binds every node with `listen(node, address)`; when the kernel picks the port and a
    /// later node's address has it taken, tries another pick (up to [`PICK_ATTEMPTS`]).
    fn bind_with<L>(
        &self,
        mut listen: impl FnMut(usize, SocketAddr) -> std::io::Result<(SocketAddr, L)>,
    ) -> Result<Vec<BoundNode<L>>, StubError> {
        let mut held = Vec::new();
        for attempt in 1.. {
            match self.bind_once(&mut listen) {
                Ok(nodes) => return Ok(nodes),
                Err(f) if f.picked_port_taken && attempt < PICK_ATTEMPTS => held.push(f.bound),
                Err(f) => return Err(f.error),
            }
        }
        unreachable!("the attempts end with a return")
    }

    fn bind_once<L>(
        &self,
        listen: &mut impl FnMut(usize, SocketAddr) -> std::io::Result<(SocketAddr, L)>,
    ) -> Result<Vec<BoundNode<L>>, Failed<L>> {
        let aware_picked = self.aware.is_some_and(|a| a.port() == 0);
        let mut port = self.port;
        let mut aware_port = self.aware.map(|a| a.port());
        let mut out: Vec<BoundNode<L>> = Vec::with_capacity(self.ips.len());
        for (node, &ip) in self.ips.iter().enumerate() {
            // `picked`: this address's port is one node 0 had the kernel pick.
            let mut bind_at = |addr: SocketAddr, picked: bool, what: &str| match listen(node, addr)
            {
                Ok(l) => Ok(l),
                Err(e) => Err((
                    match u8::try_from(node) {
                        Ok(n) if n > 0 => StubError::NodeBind {
                            node: n,
                            addr,
                            message: format!("{what}{e}"),
                        },
                        _ => StubError::Bind {
                            addr,
                            message: format!("{what}{e}"),
                        },
                    },
                    node > 0 && picked && e.kind() == std::io::ErrorKind::AddrInUse,
                )),
            };
            let attempt =
                bind_at(SocketAddr::new(ip, port), self.port == 0, "").and_then(|(addr, plain)| {
                    port = addr.port();
                    let aware = match (self.aware, aware_port) {
                        (Some(first), Some(p)) => {
                            let at = if node == 0 {
                                first
                            } else {
                                SocketAddr::new(ip, p)
                            };
                            let (a, l) = bind_at(at, aware_picked, "shard-aware port: ")?;
                            aware_port = Some(a.port());
                            Some((a, l))
                        }
                        _ => None,
                    };
                    Ok((addr, plain, aware))
                });
            match attempt {
                Ok(n) => out.push(n),
                Err((error, picked_port_taken)) => {
                    return Err(Failed {
                        error,
                        picked_port_taken,
                        bound: out,
                    })
                }
            }
        }
        Ok(out)
    }
}

/// Accepts until the stub stops; each connection is served on this shard. `shard_aware`:
/// this is the emulated ScyllaDB node's shard-aware port. `watched`: a cluster node's
/// connections on this executor (`conn::watch`). While the node is down, a connection is
/// closed as soon as it is accepted (the listener is shared, so it cannot refuse it).
pub(super) async fn accept_loop(
    listener: TcpListener,
    shard_aware: bool,
    ctx: Rc<ShardContext>,
    shared: Arc<Shared>,
    watched: Option<Rc<conn::Watched>>,
) {
    while !shared.stop.load(Ordering::Relaxed) {
        // A bounded wait, so that a stop is noticed without a connection to wake us.
        let accepted = doppio_rt::timeout(Duration::from_millis(100), listener.accept()).await;
        match accepted {
            Ok(Ok((stream, _))) if ctx.node().is_down() => stream.shutdown(),
            Ok(Ok((stream, peer))) => {
                let node = ctx.node();
                node.accepted();
                let scylla_shard = node
                    .scylla
                    .as_ref()
                    .map(|e| e.assign(shard_aware, peer.port()));
                let serve = conn::serve(stream, ctx.clone(), scylla_shard, watched.clone());
                doppio_rt::spawn_local(serve).detach();
            }
            Ok(Err(e)) => {
                eprintln!("doppio-stub: accept failed: {e}");
                doppio_rt::sleep(Duration::from_millis(10)).await;
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};

    use super::{Layout, PICK_ATTEMPTS};
    use crate::server::config::StubError;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
    }

    fn layout(port: u16, aware: Option<u16>) -> Layout {
        Layout {
            ips: vec![ip(1), ip(2), ip(3)],
            port,
            aware: aware.map(|p| SocketAddr::new(ip(1), p)),
            probe: false,
        }
    }

    /// A kernel that picks ports 40000, 40001, ... for port 0, and says "in use" for the
    /// addresses in `taken`; the listener is the address it was bound at.
    struct Kernel {
        next: u16,
        taken: Vec<SocketAddr>,
        calls: Vec<SocketAddr>,
    }

    impl Kernel {
        fn new(taken: &[(u8, u16)]) -> Self {
            Kernel {
                next: 40_000,
                taken: taken
                    .iter()
                    .map(|&(i, p)| SocketAddr::new(ip(i), p))
                    .collect(),
                calls: Vec::new(),
            }
        }

        fn listen(&mut self, addr: SocketAddr) -> io::Result<(SocketAddr, SocketAddr)> {
            self.calls.push(addr);
            if self.taken.contains(&addr) {
                return Err(io::Error::from(io::ErrorKind::AddrInUse));
            }
            let bound = if addr.port() == 0 {
                self.next += 1;
                SocketAddr::new(addr.ip(), self.next - 1)
            } else {
                addr
            };
            Ok((bound, bound))
        }
    }

    #[test]
    fn a_picked_port_taken_on_a_later_node_is_picked_again() {
        // The CI failure: node 2's address had the port node 0 was given.
        let mut kernel = Kernel::new(&[(3, 40_000)]);
        let nodes = layout(0, None)
            .bind_with(|_, a| kernel.listen(a))
            .expect("a second pick binds");
        let ports: Vec<u16> = nodes.iter().map(|n| n.0.port()).collect();
        assert_eq!(ports, [40_001; 3], "every node on the second pick");
        assert_eq!(nodes[2].0.ip(), ip(3));
    }

    #[test]
    fn a_picked_shard_aware_port_taken_is_picked_again() {
        // Plain ports 40000 (node 0) and the shard-aware one 40001; node 1's aware 40001 is
        // taken, so both are picked again: 40002 and 40003.
        let mut kernel = Kernel::new(&[(2, 40_001)]);
        let nodes = layout(0, Some(0))
            .bind_with(|_, a| kernel.listen(a))
            .expect("a second pick binds");
        for (addr, _, aware) in &nodes {
            assert_eq!(addr.port(), 40_002);
            assert_eq!(aware.as_ref().map(|a| a.0.port()), Some(40_003));
        }
    }

    #[test]
    fn a_port_the_user_named_is_not_swapped_for_another() {
        let mut kernel = Kernel::new(&[(2, 9042)]);
        let err = layout(9042, None)
            .bind_with(|_, a| kernel.listen(a))
            .expect_err("the named port is taken on node 1");
        assert!(
            matches!(err, StubError::NodeBind { node: 1, addr, .. } if addr.port() == 9042),
            "{err}"
        );
        assert_eq!(kernel.calls.len(), 2, "one attempt: {:?}", kernel.calls);
    }

    #[test]
    fn picking_gives_up_after_its_attempts_with_the_last_error() {
        let taken: Vec<(u8, u16)> = (40_000..40_100).map(|p| (2, p)).collect();
        let mut kernel = Kernel::new(&taken);
        let err = layout(0, None)
            .bind_with(|_, a| kernel.listen(a))
            .expect_err("every pick is taken on node 1");
        assert!(matches!(err, StubError::NodeBind { node: 1, .. }), "{err}");
        assert_eq!(kernel.calls.len(), 2 * PICK_ATTEMPTS);
    }

    #[test]
    fn a_taken_address_of_node_0_is_an_error_at_once() {
        let mut kernel = Kernel::new(&[(1, 9042)]);
        let err = layout(9042, None)
            .bind_with(|_, a| kernel.listen(a))
            .expect_err("node 0's address is taken");
        assert!(matches!(err, StubError::Bind { .. }), "{err}");
        assert_eq!(kernel.calls.len(), 1);
    }
}
