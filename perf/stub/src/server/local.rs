//! A stub served by tasks on the caller's own executor, on one listener it is given
//! ([`Stub::serve_local`]), and its handle.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use doppio_rt::TcpListener;

use crate::node::NodeShared;
use crate::rules::Matcher;
use crate::server::config::StubConfig;
use crate::server::listen::accept_loop;
use crate::server::plan::{shard_context, Answering};
use crate::server::start::Stub;
use crate::shard::Shared;

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
        doppio_rt::spawn_local(accept_loop(listener, false, ctx, shared.clone(), None)).detach();
        Ok(LocalStubHandle { addr, shared })
    }
}
