//! Durations and counts as the bench reads them, in one grammar for the command line
//! (`-d`, `--warmup`, `--timeout`, `-s`, `--spin`, `--max-outage`) and workload parameters.
//!
//! - A duration is humantime's grammar: a number with a unit, `ns`, `us`/`µs`, `ms`, `s`,
//!   `m` (minutes), `h`, `d` (and their long names), fractions and sums allowed (`1.5s`,
//!   `1h30m`). The stub server's fault rules (`perf/stub/src/rules.rs`) read durations with
//!   the same crate, so one duration means the same everywhere.
//! - Where only a duration makes sense (`--timeout`), a bare number is seconds (`5`, `0.5`).
//! - A count is a whole number (`_` separators allowed) or a number with a decimal suffix:
//!   `k` (10^3), `M` (10^6), `G` (10^9): `10k`, `1.5M`. `M` is a million here, never a month.

use std::time::Duration;

/// Why a text is not a duration or a count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Not a duration.
    #[error("`{text}` is not a duration such as 500us, 5ms, 1.5s, 2m or 1h30m: {reason}")]
    Duration {
        /// The text given.
        text: String,
        /// humantime's reason (unknown unit, missing unit, ...).
        reason: String,
    },
    /// Not a count.
    #[error("`{text}` is not a count such as 1000, 10_000, 10k, 1.5M or 1G")]
    Count {
        /// The text given.
        text: String,
    },
    /// Neither a duration nor a count (a phase's length).
    #[error("`{text}` is not a duration (30s, 500ms, 2m) or a count (1000, 10k, 1M)")]
    Limit {
        /// The text given.
        text: String,
    },
}

/// A duration with its unit (`500us`, `5ms`, `1.5s`, `2m`, `1h30m`).
pub fn duration_with_unit(text: &str) -> Result<Duration, UnitError> {
    humantime::parse_duration(text.trim()).map_err(|e| UnitError::Duration {
        text: text.to_owned(),
        reason: e.to_string(),
    })
}

/// A duration with its unit, or a bare non-negative number of seconds (`5`, `0.5`).
pub fn duration(text: &str) -> Result<Duration, UnitError> {
    match text.trim().parse::<f64>() {
        Ok(secs) => Duration::try_from_secs_f64(secs).map_err(|_| UnitError::Duration {
            text: text.to_owned(),
            reason: "seconds must be a non-negative number".to_owned(),
        }),
        Err(_) => duration_with_unit(text),
    }
}

/// A count: `1000`, `10_000`, `10k`, `1.5M`, `1G` (rounded to a whole number).
pub fn count(text: &str) -> Result<u64, UnitError> {
    let t = text.trim().replace('_', "");
    let bad = || UnitError::Count {
        text: text.to_owned(),
    };
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    let (number, scale) = [("k", 1e3), ("M", 1e6), ("G", 1e9)]
        .into_iter()
        .find_map(|(suffix, scale)| t.strip_suffix(suffix).map(|n| (n, scale)))
        .ok_or_else(bad)?;
    let n: f64 = number.parse().map_err(|_| bad())?;
    let n = (n * scale).round();
    // The largest f64 below 2^64 converts exactly; anything larger or negative is no count.
    if !(0.0..18_446_744_073_709_549_568.0).contains(&n) {
        return Err(bad());
    }
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_every_unit_the_bench_and_the_stub_ever_took() {
        let ms = Duration::from_millis;
        for (text, want) in [
            ("1ns", Duration::from_nanos(1)),
            ("500us", Duration::from_micros(500)),
            ("500µs", Duration::from_micros(500)),
            ("250ms", ms(250)),
            ("5 ms", ms(5)),
            ("1.5s", ms(1500)),
            ("2m", ms(120_000)),
            ("1h", ms(3_600_000)),
            ("1h30m", ms(5_400_000)),
            (" 5s ", ms(5000)),
        ] {
            assert_eq!(duration_with_unit(text), Ok(want), "{text}");
            assert_eq!(duration(text), Ok(want), "{text}");
        }
        // Bare numbers are seconds where only a duration makes sense.
        assert_eq!(duration("5"), Ok(ms(5000)));
        assert_eq!(duration("0.25"), Ok(ms(250)));
        assert!(duration_with_unit("5").is_err());
    }

    #[test]
    fn bad_durations_say_what_was_wrong() {
        let e = duration("3 parsecs").unwrap_err().to_string();
        assert!(
            e.starts_with("`3 parsecs` is not a duration such as"),
            "{e}"
        );
        assert!(e.contains("unknown time unit \"parsecs\""), "{e}");
        for bad in ["", "soon", "-1s", "-2", "1k", "NaN", "inf"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_take_decimal_suffixes_and_separators() {
        for (text, want) in [
            ("0", 0),
            ("1000", 1000),
            ("10_000", 10_000),
            ("10k", 10_000),
            ("1.5k", 1500),
            ("1M", 1_000_000),
            ("2.5M", 2_500_000),
            ("1G", 1_000_000_000),
        ] {
            assert_eq!(count(text), Ok(want), "{text}");
        }
        for bad in ["", "1m", "1s", "-1", "-1k", "1.5", "k", "1e30G", "many"] {
            assert_eq!(
                count(bad),
                Err(UnitError::Count { text: bad.into() }),
                "{bad}"
            );
        }
    }
}
