//! The doppio backend's errors: its own ([`err_of`]), and a request's failure mapped onto
//! the bench's kinds ([`classify`], from the driver's own classification).

use doppio_driver::{Error, ErrorKind as DriverKind};

use super::rows;
use crate::backend::driver::Driver;
use crate::engine::error_kind::ErrorKind;
use crate::engine::phase::BackendError;
use crate::engine::RequestError;

pub(super) fn err_of(driver: Driver) -> impl Fn(String) -> BackendError {
    move |message| BackendError {
        driver: driver.name(),
        message,
    }
}

/// The bench's kind of a doppio error: its driver's classification
/// ([`doppio_driver::ErrorKind`], the one the session counts by) mapped kind for kind.
pub(crate) fn classify(e: &Error) -> ErrorKind {
    kind_of(e.kind())
}

/// The bench's kind of a doppio kind: the one of the same meaning (and name).
pub(crate) fn kind_of(kind: DriverKind) -> ErrorKind {
    match kind {
        DriverKind::Unavailable => ErrorKind::Unavailable,
        DriverKind::Overloaded => ErrorKind::Overloaded,
        DriverKind::Bootstrapping => ErrorKind::Bootstrapping,
        DriverKind::ReadTimeout => ErrorKind::ReadTimeout,
        DriverKind::WriteTimeout => ErrorKind::WriteTimeout,
        DriverKind::ReadFailure => ErrorKind::ReadFailure,
        DriverKind::WriteFailure => ErrorKind::WriteFailure,
        DriverKind::FunctionFailure => ErrorKind::FunctionFailure,
        DriverKind::Syntax => ErrorKind::Syntax,
        DriverKind::Unauthorized => ErrorKind::Unauthorized,
        DriverKind::Invalid => ErrorKind::Invalid,
        DriverKind::ConfigError => ErrorKind::ConfigError,
        DriverKind::AlreadyExists => ErrorKind::AlreadyExists,
        DriverKind::Unprepared => ErrorKind::Unprepared,
        DriverKind::ServerError => ErrorKind::ServerError,
        DriverKind::RateLimited => ErrorKind::RateLimited,
        DriverKind::Timeout => ErrorKind::Timeout,
        DriverKind::ConnectionBroken => ErrorKind::ConnectionBroken,
        DriverKind::NoConnection => ErrorKind::NoConnection,
        DriverKind::Closed => ErrorKind::Closed,
        DriverKind::Protocol => ErrorKind::Protocol,
        DriverKind::Serialization => ErrorKind::Serialization,
        DriverKind::Handshake => ErrorKind::Handshake,
        DriverKind::Tls => ErrorKind::Tls,
        DriverKind::TraceUnavailable => ErrorKind::TraceUnavailable,
        // A kind the driver added after this map (its enum is non-exhaustive): the unit
        // test that walks `DriverKind::ALL` fails until it is mapped here.
        _ => ErrorKind::Other,
    }
}

pub(super) fn request_error(e: &Error) -> RequestError {
    RequestError {
        kind: classify(e),
        message: doppio_driver::error::Report(e).to_string(),
    }
}

pub(super) fn rows_error(e: &rows::RowsError) -> RequestError {
    RequestError {
        kind: ErrorKind::Serialization,
        message: doppio_driver::error::Report(e).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every doppio kind has a bench kind of the same name, so that a report's
    /// `errors_by_kind` reads as it did when the bench counted by doppio's names.
    #[test]
    fn every_doppio_kind_maps_to_the_bench_kind_of_its_name() {
        for k in DriverKind::ALL {
            assert_eq!(kind_of(k).as_str(), k.name(), "{k:?}");
        }
    }
}
