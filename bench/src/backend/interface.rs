//! What every backend implements ([`Backend`]): a connected driver that the engine can run
//! a phase on ([`PhaseRunner`]) and that runs schema statements, reports its counters and
//! what it learned of the nodes' shards, and shuts down.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use super::counters::DriverCounters;
use super::driver::Driver;
use crate::engine::phase::{BackendError, PhaseRunner};

/// A connected backend.
/// What the engine needs to run a phase on it ([`PhaseRunner`]: its workers, preparing and
/// running a phase) comes with it.
pub(crate) trait Backend: PhaseRunner {
    /// Which driver.
    fn driver(&self) -> Driver;
    /// Runs statements one after another (schema), failing on the first error.
    fn execute_all(&self, statements: &[String]) -> Result<(), BackendError>;
    /// Driver-side counters so far, if the driver has them.
    fn counters(&self) -> Option<DriverCounters>;
    /// The cores this backend's request threads are pinned to (empty: not pinned).
    fn thread_cores(&self) -> Vec<usize>;
    /// The CQL protocol version the backend's connections speak, if known.
    fn protocol_version(&self) -> Option<u8>;
    /// The io_uring setup flags of doppio's own runtime's rings (`SQPOLL|SINGLE_ISSUER|...`);
    /// `None` for other event loops.
    fn uring_setup_flags(&self) -> Option<String> {
        None
    }
    /// Each node's ScyllaDB shards as the driver learned them, by IP (empty: no node has
    /// any, as on Cassandra).
    fn scylla_shards(&self) -> BTreeMap<IpAddr, u16> {
        BTreeMap::new()
    }
    /// Lets the backend's background work (filling its pools) go on for `d`: a driver whose
    /// runtime runs only while the bench drives it is driven meanwhile.
    fn idle(&self, d: Duration) {
        std::thread::sleep(d);
    }
    /// Closes connections and stops threads.
    fn shutdown(&self);
}
