//! Starting a stub on executors of its own: one per core, each binding every node's
//! listeners (the first picks the ports, the others share them), then accepting.

use std::net::SocketAddr;

use doppio_rt::ExecutorSpec;

use crate::server::config::{StubConfig, StubError};
use crate::server::handle::{stop_all, StubHandle};
use crate::server::listen::{Bound, Layout, NodeListeners};
use crate::server::plan::Plan;

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
