//! The doppio backend's errors: its own ([`err_of`]), and a request's failure classified as
//! the driver classifies it ([`classify`]).

use doppio_driver::Error;

use super::rows;
use crate::backend::driver::Driver;
use crate::engine::phase::BackendError;
use crate::engine::RequestError;

pub(super) fn err_of(driver: Driver) -> impl Fn(String) -> BackendError {
    move |message| BackendError {
        driver: driver.name(),
        message,
    }
}

/// The bench's kind of a doppio error: the driver's own classification
/// ([`doppio_driver::ErrorKind`]), the one the session counts by.
pub(crate) fn classify(e: &Error) -> &'static str {
    e.kind().name()
}

pub(super) fn request_error(e: &Error) -> RequestError {
    RequestError {
        kind: classify(e),
        message: doppio_driver::error::Report(e).to_string(),
    }
}

pub(super) fn rows_error(e: &rows::RowsError) -> RequestError {
    RequestError {
        kind: doppio_driver::ErrorKind::Serialization.name(),
        message: doppio_driver::error::Report(e).to_string(),
    }
}
