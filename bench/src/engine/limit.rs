//! How long a phase lasts ([`Limit`]): a time or a number of iterations, as `-d` and
//! `--warmup` give it.

use std::time::Duration;

use crate::units::{self, UnitError};

/// How long a phase lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// For this long.
    Time(Duration),
    /// For this many iterations (all workers together).
    Count(u64),
}

impl Limit {
    /// Parses a count (`1000`, `10k`, `1M`: see [`crate::units::count`]) or else a time
    /// with its unit (`30s`, `500ms`, `2m`, `1h`: [`crate::units::duration`]).
    pub(crate) fn parse(text: &str) -> Result<Self, UnitError> {
        if let Ok(n) = units::count(text) {
            return Ok(Limit::Count(n));
        }
        units::duration(text)
            .map(Limit::Time)
            .map_err(|_| UnitError::Limit {
                text: text.to_owned(),
            })
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Time(d) => write!(f, "{:.3}s", d.as_secs_f64()),
            Limit::Count(n) => write!(f, "{n} iterations"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse() {
        assert_eq!(
            Limit::parse("30s"),
            Ok(Limit::Time(Duration::from_secs(30)))
        );
        assert_eq!(
            Limit::parse("250ms"),
            Ok(Limit::Time(Duration::from_millis(250)))
        );
        assert_eq!(
            Limit::parse("2m"),
            Ok(Limit::Time(Duration::from_secs(120)))
        );
        assert_eq!(Limit::parse("1M"), Ok(Limit::Count(1_000_000)));
        assert_eq!(Limit::parse("10k"), Ok(Limit::Count(10_000)));
        assert_eq!(Limit::parse("1_000"), Ok(Limit::Count(1000)));
        assert!(Limit::parse("soon").is_err());
        assert!(Limit::parse("-1s").is_err());
        // A bare number is a count; a time needs its unit.
        assert_eq!(Limit::parse("1500"), Ok(Limit::Count(1500)));
        assert_eq!(
            Limit::parse("1.5"),
            Err(UnitError::Limit { text: "1.5".into() })
        );
        assert_eq!(
            Limit::parse("1h30m"),
            Ok(Limit::Time(Duration::from_secs(5400)))
        );
        assert_eq!(
            Limit::parse("500us"),
            Ok(Limit::Time(Duration::from_micros(500)))
        );
    }
}
