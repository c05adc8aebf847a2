//! Choosing a backend: [`check_settings`] refuses what the chosen driver cannot honour
//! before anything connects, and [`connect`] starts it ([`super::doppio`],
//! [`super::scylla_rust_driver`] or [`super::null`]).

use std::sync::Arc;

use super::driver::Driver;
use super::interface::Backend;
use super::options::ConnectOptions;
use super::settings::SettingError;
use super::{doppio, null, scylla_rust_driver};
use crate::engine::phase::BackendError;

/// Refuses the settings `driver` cannot honour (before anything connects), naming the
/// backend and the option.
pub(crate) fn check_settings(driver: Driver, options: &ConnectOptions) -> Result<(), SettingError> {
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => {
            doppio::check_settings(driver, options)
        }
        Driver::Scylla => scylla_rust_driver::check_settings(options),
        // Nothing is sent: every driver setting is moot, none is refused.
        Driver::Null => Ok(()),
    }
}

/// Connects the chosen backend.
pub(crate) fn connect(
    driver: Driver,
    options: &ConnectOptions,
) -> Result<Arc<dyn Backend>, BackendError> {
    // The engine's clock calibrates once per process (up to 200 ms): here, before any phase
    // is measured.
    crate::engine::clock::calibrate();
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => {
            Ok(Arc::new(doppio::DoppioBackend::connect(options, driver)?))
        }
        Driver::Scylla => Ok(Arc::new(scylla_rust_driver::ScyllaBackend::connect(
            options,
        )?)),
        Driver::Null => Ok(Arc::new(null::NullBackend::connect(options)?)),
    }
}
