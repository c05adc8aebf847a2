//! The parser of a duration option with its unit (`500ms`, `5s`), shared by several option
//! groups.

use std::time::Duration;

use crate::units::{self, UnitError};

/// Parses a duration with its unit: `500ms`, `5s`, `2m`, `1h` (see [`crate::units::duration`]).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    units::duration(text)
}
