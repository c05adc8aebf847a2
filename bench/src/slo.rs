//! What `doppio findmax` is told, parsed from its options: latency objectives
//! (`--slo p99<10ms`) and rates (`--start`, `--max-rate`, `--factor`). A module of its own so
//! that the command line (`cli`) reads these without importing the search (`findmax`),
//! which imports the command line's arguments.

use std::time::Duration;

use crate::units::{self, UnitError};

/// Why a text is not a latency objective.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum SloError {
    /// No `<` between the percentile and the bound.
    #[error("`{0}` is not a latency objective such as p99<10ms (PERCENTILE<DURATION)")]
    Shape(String),
    /// The percentile is not `p` and a number in (0, 100].
    #[error("`{text}`: `{percentile}` is not a percentile such as p50, p99 or p99.9")]
    Percentile {
        /// The whole objective.
        text: String,
        /// Its percentile part.
        percentile: String,
    },
    /// The bound is not a duration.
    #[error("`{text}`: the bound {source}")]
    Bound {
        /// The whole objective.
        text: String,
        /// Why the bound is not a duration.
        source: UnitError,
    },
    /// The bound is zero: no request can meet it.
    #[error("`{0}`: the bound must be above zero")]
    ZeroBound(String),
}

/// A latency objective: the `percentile` of a step's latencies (from each request's intended
/// start) must stay below `bound`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Slo {
    /// The percentile, in (0, 100].
    pub percentile: f64,
    /// The bound it must stay below.
    pub bound: Duration,
    /// As given.
    pub text: String,
}

impl Slo {
    /// Reads `p99<10ms`, `p99.9<2.5ms`, `p50<500us`.
    pub(crate) fn parse(text: &str) -> Result<Self, SloError> {
        let trimmed = text.trim();
        let (p, bound) = trimmed
            .split_once('<')
            .ok_or_else(|| SloError::Shape(text.to_owned()))?;
        let p = p.trim();
        let percentile = p
            .strip_prefix('p')
            .or_else(|| p.strip_prefix('P'))
            .and_then(|n| n.parse::<f64>().ok())
            .filter(|n| *n > 0.0 && *n <= 100.0)
            .ok_or_else(|| SloError::Percentile {
                text: text.to_owned(),
                percentile: p.to_owned(),
            })?;
        let bound = units::duration(bound.trim()).map_err(|source| SloError::Bound {
            text: text.to_owned(),
            source,
        })?;
        if bound.is_zero() {
            return Err(SloError::ZeroBound(text.to_owned()));
        }
        Ok(Slo {
            percentile,
            bound,
            text: trimmed.to_owned(),
        })
    }
}

/// Why a rate option is not usable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum RateError {
    /// Not a count.
    #[error(transparent)]
    Unit(#[from] UnitError),
    /// Zero.
    #[error("the rate must be above zero")]
    Zero,
    /// A factor that would not raise the rate.
    #[error("`{0}` is not a factor above 1 (such as 1.5)")]
    Factor(String),
}

/// A rate in requests per second (`1000`, `1k`, `1.5M`), above zero.
pub(crate) fn parse_rate(text: &str) -> Result<f64, RateError> {
    let n = units::count(text)?;
    if n == 0 {
        return Err(RateError::Zero);
    }
    Ok(n as f64)
}

/// The step factor: a number above 1 (and at most 100).
pub(crate) fn parse_factor(text: &str) -> Result<f64, RateError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|f| *f > 1.0 && *f <= 100.0)
        .ok_or_else(|| RateError::Factor(text.to_owned()))
}
