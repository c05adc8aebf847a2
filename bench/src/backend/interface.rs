//! What every backend implements ([`Backend`]): a connected driver that the engine can run
//! a phase on ([`PhaseRunner`]) and that runs schema statements, reports its counters and
//! shuts down.

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
    /// Closes connections and stops threads.
    fn shutdown(&self);
}
