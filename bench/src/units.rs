//! Durations and counts as the bench reads them: the grammar of the crate `doppio-units`
//! (shared with the stub's fault rules), for the command line and workload files.
//!
//! - A duration is a number with its unit (`500us`, `5ms`, `1.5s`, `2m`, `1h30m`); a bare
//!   number is refused with a hint, months are not a unit.
//! - A count is a whole number or a number with `k`, `M` (a million) or `G` (`10k`, `1.5M`).
//! - A phase's length (`-d`, `--warmup`) takes either: a number is a count of iterations, a
//!   number with a time unit a time.

use std::time::Duration;

pub(crate) use doppio_units::{CountError, DurationError};

/// Why a text is not a duration, a count or a phase's length.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Not a duration.
    #[error(transparent)]
    Duration(#[from] DurationError),
    /// Not a count.
    #[error(transparent)]
    Count(#[from] CountError),
    /// Neither a duration nor a count (a phase's length).
    #[error("`{text}` is not a duration (30s, 500ms, 2m) or a count (1000, 10k, 1M)")]
    Limit {
        /// The text given.
        text: String,
    },
}

/// A duration with its unit (`500us`, `5ms`, `1.5s`, `2m`, `1h30m`).
pub(crate) fn duration(text: &str) -> Result<Duration, UnitError> {
    Ok(doppio_units::duration(text)?)
}

/// A count: `1000`, `10_000`, `10k`, `1.5M`, `1G` (rounded to a whole number).
pub(crate) fn count(text: &str) -> Result<u64, UnitError> {
    Ok(doppio_units::count(text)?)
}
