//! One request's outcome as the engine sees it, whichever backend sent it: what a success
//! returned ([`Answer`]) or why it failed ([`RequestError`], a short kind for counting and
//! the driver's message), and the kinds that mean the node went away ([`NODE_GONE_KINDS`]).

use super::waterfall::DriverStages;

/// A failed request as the engine sees it: a short kind for counting, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// Short, stable kind (`timeout`, `overloaded`, `unavailable`, `connection`, ...).
    pub kind: &'static str,
    /// The driver's message.
    pub message: String,
}

/// What a successful request returned. Every request's result carries one, moved from the
/// backend's future through the engine to the recorder: kept to two words and a flag (the
/// rare stage timings behind a `Box`, not inline, where their 48 bytes were copied with
/// every answer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// Result rows of all its pages.
    pub rows: u64,
    /// A conditional update (lightweight transaction) that was not applied: its result's
    /// `[applied]` column is false. Read only for conditional statements.
    pub not_applied: bool,
    /// With `--waterfall`, for a request the backend timed: its way through the driver,
    /// stage by stage ([`super::waterfall`]), one request in N; `None` otherwise.
    pub stages: Option<Box<DriverStages>>,
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

/// Error kinds that mean the node is out of reach (as both backends name them).
pub const NODE_GONE_KINDS: [&str; 3] = ["connection_broken", "no_connection", "closed"];
