//! The doppio backend behind the bench's [`Backend`] interface: schema statements, the
//! driver's counters summed over the shards, the nodes' ScyllaDB shards, the protocol
//! version, io_uring's flags, the cores, shutdown.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use super::connect::DoppioBackend;
use super::error::err_of;
use super::runtime::wait_text;
use crate::backend::counters::{add_counts, DriverCounters, UringEnters};
use crate::backend::driver::Driver;
use crate::backend::interface::Backend;
use crate::engine::phase::BackendError;

impl Backend for DoppioBackend {
    fn driver(&self) -> Driver {
        self.driver
    }

    fn execute_all(&self, statements: &[String]) -> Result<(), BackendError> {
        let statements: Arc<Vec<String>> = Arc::new(statements.to_vec());
        // Schema statements run once, on shard 0.
        let out = self
            .cluster
            .run_on_shards_indexed(move |shard, session| {
                let statements = statements.clone();
                async move {
                    if shard != 0 {
                        return Ok(());
                    }
                    for s in statements.iter() {
                        session
                            .query_unpaged(s, &())
                            .await
                            .map_err(|e| format!("`{s}`: {e}"))?;
                    }
                    Ok::<(), String>(())
                }
            })
            .map_err(|e| err_of(self.driver)(doppio_driver::error::Report(&e).to_string()))?;
        out.into_iter()
            .collect::<Result<(), _>>()
            .map_err(err_of(self.driver))
    }

    fn counters(&self) -> Option<DriverCounters> {
        let stats = self
            .cluster
            .run_on_shards(|session| async move {
                let status = session.nodes();
                let nodes: Vec<(String, u64)> = status
                    .iter()
                    .map(|n| (n.info.addr.to_string(), n.counters.requests))
                    .collect();
                let shards: Vec<(String, Vec<u64>)> = status
                    .into_iter()
                    .filter(|n| !n.requests_by_scylla_shard.is_empty())
                    .map(|n| (n.info.addr.to_string(), n.requests_by_scylla_shard))
                    .collect();
                let stats = session.stats();
                let uring = doppio_driver::rt::uring::is_running().then(|| {
                    let u = doppio_driver::rt::uring::stats();
                    UringEnters {
                        total: u.enters,
                        waiting: u.enters_waiting,
                        sq_wakeup: u.enters_sq_wakeup,
                        cq_overflow: u.enters_cq_overflow,
                        woke_by_completion: u.wakes_completion,
                        woke_by_remote: u.wakes_remote,
                        woke_by_timer: u.wakes_timer,
                        woke_empty: u.wakes_empty,
                    }
                });
                (
                    stats.connections,
                    (stats.retries, stats.reprepares, stats.tablet_payloads),
                    nodes,
                    (shards, uring),
                )
            })
            .ok()?;
        let mut c = DriverCounters::default();
        for (s, (retries, reprepares, misroutes), nodes, (shards, uring)) in stats {
            if let Some(u) = uring {
                c.uring_enters = Some(c.uring_enters.unwrap_or_default().plus(&u));
            }
            c.retries += retries;
            c.reprepares += reprepares;
            c.tablet_misroutes += misroutes;
            for (node, n) in nodes {
                *c.nodes.entry(node).or_default() += n;
            }
            for (node, counts) in shards {
                add_counts(c.scylla_shards.entry(node).or_default(), &counts);
            }
            c.requests += s.requests;
            c.flushes += s.flushes;
            c.reads += s.reads;
            c.bytes_written += s.bytes_written;
            c.bytes_read += s.bytes_read;
        }
        Some(c)
    }

    fn protocol_version(&self) -> Option<u8> {
        let versions = self
            .cluster
            .run_on_shards(|session| async move { session.protocol_version() })
            .ok()?;
        versions.into_iter().flatten().next().map(|v| v.number())
    }

    fn scylla_shards(&self) -> BTreeMap<IpAddr, u16> {
        let learned = self
            .cluster
            .run_on_shards(|session| async move {
                session
                    .nodes()
                    .iter()
                    .filter_map(|n| {
                        let info = session.node_at(n.info.addr)?.scylla_sharding()?;
                        Some((n.info.addr.ip(), info.sharder.nr_shards.get()))
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        learned.into_iter().flatten().collect()
    }

    fn uring_setup_flags(&self) -> Option<String> {
        let uring = self.uring;
        let flags = self
            .cluster
            .run_on_shards(move |_| async move {
                doppio_driver::rt::uring::is_running()
                    .then(doppio_driver::rt::uring::setup_flags)
                    .flatten()
                    .map(|f| format!("{f}; {}", wait_text(&uring, f.min_timeout)))
            })
            .ok()?;
        let mut flags: Vec<String> = flags.into_iter().flatten().collect();
        flags.dedup();
        (!flags.is_empty()).then(|| flags.join(" / "))
    }

    fn thread_cores(&self) -> Vec<usize> {
        if self.pinned {
            self.cluster.cores()
        } else {
            Vec::new()
        }
    }

    fn shutdown(&self) {
        self.cluster.shutdown();
    }
}
