//! The doppio backend connected ([`DoppioBackend::connect`]): its shards started on the
//! chosen runtime, each with a session configured from the bench's options.

use std::sync::Arc;
use std::time::Duration;

use doppio_driver::config::Backoff;
use doppio_driver::proto::ProtocolVersion;
use doppio_driver::session::{DefaultRetryPolicy, NoRetry, RetryPolicy};
use doppio_driver::{Cluster, SessionConfig};

use super::error::err_of;
use super::profile::{consistency, serial_consistency};
use super::runtime::runtime_of;
use crate::backend::driver::Driver;
use crate::backend::options::ConnectOptions;
use crate::backend::settings::Compression;
use crate::backend::tls::tls_config;
use crate::engine::phase::BackendError;

/// A running doppio cluster client.
pub(crate) struct DoppioBackend {
    pub(super) cluster: Cluster,
    pub(super) driver: Driver,
    /// Count result rows without decoding them.
    pub(super) discard_results: bool,
    /// Whether the shards are pinned to their cores.
    pub(super) pinned: bool,
    /// `--waterfall N`: one request in N timed stage by stage.
    pub(super) waterfall_every: Option<u64>,
    /// The io_uring runtime's configuration (its wait settings go in the report).
    pub(super) uring: doppio_driver::rt::uring::Config,
}

impl DoppioBackend {
    /// Starts the shards of `driver` (doppio on one of its runtimes) and connects each.
    pub(crate) fn connect(o: &ConnectOptions, driver: Driver) -> Result<Self, BackendError> {
        let (runtime, uring) = runtime_of(driver, o);
        let err = err_of(driver);
        let retry: Arc<dyn RetryPolicy> = if o.retries == 0 {
            Arc::new(NoRetry)
        } else {
            Arc::new(DefaultRetryPolicy {
                max_retries: o.retries,
            })
        };
        let cores = o.worker_cores();
        let mut nodes = o.nodes.iter().copied();
        let first = nodes
            .next()
            .ok_or_else(|| err("no node to connect to".to_owned()))?;
        let mut s = SessionConfig::new(first)
            .with_contact_points(nodes)
            .with_connections(o.connections.max(1))
            .with_compression(o.compression == Compression::Lz4)
            .with_consistency(consistency(o.consistency))
            .with_serial_consistency(Some(serial_consistency(o.serial_consistency)))
            .with_request_timeout(o.request_timeout)
            .with_connect_timeout(o.request_timeout)
            .with_startup_timeout(o.request_timeout)
            .with_retry_policy(retry)
            .with_retry_backoff(o.retry_backoff.map(|b| Backoff::new(b.base, b.cap)))
            // Every backend asks for pages of this size and pages through to the end.
            .with_page_size(Some(o.page_size))
            .with_protocol_version(o.protocol.map(|v| {
                if v == 5 {
                    ProtocolVersion::V5
                } else {
                    ProtocolVersion::V4
                }
            }));
        if let (Some(u), Some(p)) = (&o.username, &o.password) {
            s = s.with_credentials(u, p.expose());
        }
        if let Some(dc) = &o.locality.datacenter {
            s = s.with_local_datacenter(dc);
        }
        if let Some(t) = &o.tls {
            s = s.with_tls(tls_config(t).map_err(|e| err(e.to_string()))?);
        }
        let b = Cluster::builder()
            .session_config(s)
            .cores(&cores)
            .pin(o.pin)
            .shutdown_grace(Duration::from_secs(2))
            .runtime(runtime)
            .uring_config(uring)
            .spin_before_park(o.spin_before_park);
        let cluster = b
            .build()
            .map_err(|e| err(doppio_driver::error::Report(&e).to_string()))?;
        Ok(Self {
            cluster,
            driver,
            discard_results: o.discard_results,
            pinned: o.pin,
            waterfall_every: o.waterfall_every,
            uring,
        })
    }
}
