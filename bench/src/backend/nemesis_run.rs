//! Which adapter runs the nemesis's acknowledged-writes workload (`super::nemesis` holds
//! its plan and results): doppio on either runtime for now; another driver is refused.

use std::time::Duration;

use super::doppio;
use super::driver::Driver;
use super::nemesis::{ReadBackRun, WritesPlan, WritesRun, WritesTarget};
use crate::engine::phase::BackendError;

/// The keyspace (if absent) and the run's table created, schema agreement waited for.
pub(crate) fn create_table(target: &WritesTarget) -> Result<(), BackendError> {
    match target.driver {
        Driver::Doppio | Driver::DoppioUring => doppio::nemesis::create_table(target),
        other => Err(unsupported(other)),
    }
}

/// Runs the writers until `plan.until` (blocking this thread).
pub(crate) fn write(target: &WritesTarget, plan: &WritesPlan) -> Result<WritesRun, BackendError> {
    match target.driver {
        Driver::Doppio | Driver::DoppioUring => doppio::nemesis::write(target, plan),
        other => Err(unsupported(other)),
    }
}

/// Reads keys `0..keys` back at `ALL`, each up to `attempts` times (`pause` apart).
pub(crate) fn read_back(
    target: &WritesTarget,
    keys: i64,
    attempts: u32,
    pause: Duration,
) -> Result<ReadBackRun, BackendError> {
    match target.driver {
        Driver::Doppio | Driver::DoppioUring => {
            doppio::nemesis::read_back(target, keys, attempts, pause)
        }
        other => Err(unsupported(other)),
    }
}

/// Whether `driver` runs the nemesis's workload in this slice.
pub(crate) fn supported(driver: Driver) -> bool {
    matches!(driver, Driver::Doppio | Driver::DoppioUring)
}

fn unsupported(driver: Driver) -> BackendError {
    BackendError {
        driver: driver.name(),
        message: "the nemesis runs on doppio and doppio-uring only (for now)".to_owned(),
    }
}
