//! The scylla backend connected ([`ScyllaBackend::connect`]): its tokio runtime, pinned or
//! not, and one session configured as its users run it.

use std::num::NonZeroUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use scylla::client::session::{Session, TlsContext};
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::frame::Compression;

use super::error::err;
use super::pins::Pins;
use super::profile::execution_profile;
use crate::backend::options::ConnectOptions;
use crate::backend::settings::Compression as BenchCompression;
use crate::backend::tls::tls_config;
use crate::engine::phase::BackendError;

/// A connected scylla-rust-driver session and its runtime.
pub(crate) struct ScyllaBackend {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) session: Arc<Session>,
    pub(super) threads: usize,
    /// Rows per result page.
    pub(super) page_size: i32,
    /// Count result rows without decoding them.
    pub(super) discard_results: bool,
    pub(super) pins: Arc<Pins>,
}

impl ScyllaBackend {
    /// Builds the runtime and connects the session.
    pub(crate) fn connect(o: &ConnectOptions) -> Result<Self, BackendError> {
        let threads = o.threads.max(1);
        let pins = Arc::new(Pins::new(o.pinned_cores())?);
        let runtime = if threads == 1 {
            // Its thread is whichever drives it: pinned in `run_phase`.
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        } else {
            let hook = pins.clone();
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .thread_name("scylla-bench")
                .on_thread_start(move || hook.pin_next())
                .enable_all()
                .build()
        }
        .map_err(|e| err(format!("cannot start tokio: {e}")))?;
        let (profile, retry_nodes) = execution_profile(o);
        let mut b = SessionBuilder::new()
            .known_nodes_addr(o.nodes.iter().copied())
            .default_execution_profile_handle(profile.into_handle())
            // Per ScyllaDB shard, as doppio's pools (and scylla-rust-driver's default,
            // `PerShard(1)`); a Cassandra node counts as one shard, so there it is the same
            // as `PerHost`. `PerHost` gave a ScyllaDB node one connection in all, whose
            // requests then crossed shards on the node (and never reached their tablet's
            // shard: 75 % of them misrouted on the tablet stub). `-c` per thread: each of
            // doppio's `-t` shards holds a pool of its own, so the same connections per
            // node and shard take `-c` times `-t` in this one pool.
            .pool_size(PoolSize::PerShard(pool_size(o)))
            .compression((o.compression == BenchCompression::Lz4).then_some(Compression::Lz4));
        if let (Some(u), Some(p)) = (&o.username, &o.password) {
            b = b.user(u, p.expose());
        }
        if let Some(t) = &o.tls {
            // The rustls configuration doppio's backends use (ring provider, same roots and
            // client certificate): both drivers verify alike.
            let tls = tls_config(t).map_err(|e| err(e.to_string()))?;
            b = b.tls_context(Some(TlsContext::Rustls023(tls.rustls_config())));
        }
        let session = runtime
            .block_on(b.build())
            .map_err(|e| err(format!("cannot connect: {e}")))?;
        if let Some(nodes) = retry_nodes {
            let known = session.get_cluster_state().get_nodes_info().len();
            nodes.store(known.max(1), Ordering::Relaxed);
        }
        pins.check()?;
        Ok(Self {
            runtime,
            session: Arc::new(session),
            threads,
            page_size: o.page_size,
            discard_results: o.discard_results,
            pins,
        })
    }
}

/// Connections per node and ScyllaDB shard: `-c` for each of `-t` threads, as doppio's pools
/// hold (one per doppio shard).
pub(super) fn pool_size(o: &ConnectOptions) -> NonZeroUsize {
    NonZeroUsize::new(o.connections.max(1).saturating_mul(o.threads.max(1)))
        .unwrap_or(NonZeroUsize::MIN)
}
