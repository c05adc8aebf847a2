//! One request's outcome as the engine sees it, whichever backend sent it: what a success
//! returned ([`Answer`]) or why it failed ([`RequestError`], the bench's kind for counting
//! and the driver's message).

use super::error_kind::ErrorKind;
use super::waterfall::DriverStages;

/// A failed request as the engine sees it: the bench's kind for counting, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// Its kind, as the backend's adapter maps its driver's error.
    pub(crate) kind: ErrorKind,
    /// The driver's message.
    pub(crate) message: String,
}

/// What a successful request returned. Every request's result carries one, moved from the
/// backend's future through the engine to the recorder: kept to two words and a flag (the
/// rare stage timings behind a `Box`, not inline, where their 48 bytes were copied with
/// every answer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// Result rows of all its pages.
    pub(crate) rows: u64,
    /// A conditional update (lightweight transaction) that was not applied: its result's
    /// `[applied]` column is false. Read only for conditional statements.
    pub(crate) not_applied: bool,
    /// With `--waterfall`, for a request the backend timed: its way through the driver,
    /// stage by stage ([`super::waterfall`]), one request in N; `None` otherwise.
    pub(crate) stages: Option<Box<DriverStages>>,
}

impl Answer {
    /// An answer of `rows` rows, applied.
    pub fn rows(rows: u64) -> Self {
        Self {
            rows,
            not_applied: false,
            stages: None,
        }
    }
}
