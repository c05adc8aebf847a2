//! Durations: numbers with their units, `500us`, `5ms`, `1.5s`, `2m`, `1h30m`, `1 h 30 m`.
//!
//! Units: `ns`, `us` (or `µs`), `ms`, `s`, `m` (minutes), `h`, `d`, and their long names
//! (`sec`, `seconds`, `min`, `minutes`, `hours`, `days`, ...). A bare number is refused with
//! a hint (the same text meant seconds on some options and iterations on others), and so are
//! months, weeks and years (`1M` is a million where a count is read, never a month).

use std::time::Duration;

/// Why a text is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// A number with no unit.
    #[error("`{text}` is not a duration: a number needs its unit, e.g. `{text}s` or `{text}ms`")]
    BareNumber {
        /// The text given.
        text: String,
    },
    /// A unit this grammar does not know.
    #[error(
        "`{text}` is not a duration: `{unit}` is not a unit of time here (ns, us, ms, s, m for \
         minutes, h, d)"
    )]
    UnknownUnit {
        /// The text given.
        text: String,
        /// The unit found.
        unit: String,
    },
    /// Not numbers with units at all.
    #[error("`{text}` is not a duration such as 500us, 5ms, 1.5s, 2m or 1h30m")]
    Malformed {
        /// The text given.
        text: String,
    },
    /// Longer than this grammar holds (about 584 years).
    #[error("`{text}` is not a duration: longer than 584 years")]
    TooLong {
        /// The text given.
        text: String,
    },
}

/// Nanoseconds in one of each unit, by every name it goes by.
fn unit_nanos(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" | "nsec" | "nanos" | "nanosecond" | "nanoseconds" => 1,
        "us" | "µs" | "usec" | "micros" | "microsecond" | "microseconds" => 1_000,
        "ms" | "msec" | "millis" | "millisecond" | "milliseconds" => 1_000_000,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000_000_000,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000_000_000,
        "d" | "day" | "days" => 86_400_000_000_000,
        _ => return None,
    })
}

/// A decimal number: its digits as a whole number and how many of them follow the point.
struct Decimal {
    digits: u128,
    scale: u32,
}

/// Reads a decimal number (`5`, `1.5`, `0.25`) at the start of `text`: the number and the
/// rest, or `None` when `text` does not start with a digit or has too many digits.
fn decimal(text: &str) -> Option<(Decimal, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, rest) = text.split_at(end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || fraction.contains('.') || whole.len() + fraction.len() > 30 {
        return None;
    }
    let mut digits: u128 = 0;
    for c in whole.chars().chain(fraction.chars()) {
        digits = digits * 10 + u128::from(c.to_digit(10)?);
    }
    Some((
        Decimal {
            digits,
            scale: fraction.len() as u32,
        },
        rest,
    ))
}

/// A duration: one or more numbers, each with its unit, added up (`1h30m`, `1.5s`).
pub fn duration(text: &str) -> Result<Duration, DurationError> {
    let malformed = || DurationError::Malformed {
        text: text.to_owned(),
    };
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(malformed());
    }
    let mut nanos: u128 = 0;
    let mut parts = 0;
    while !rest.is_empty() {
        let (number, after) = decimal(rest).ok_or_else(malformed)?;
        let after = after.trim_start();
        let unit_len = after
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(if parts == 0 && after.is_empty() {
                DurationError::BareNumber {
                    text: text.trim().to_owned(),
                }
            } else {
                malformed()
            });
        }
        let per_unit = unit_nanos(unit).ok_or_else(|| DurationError::UnknownUnit {
            text: text.to_owned(),
            unit: unit.to_owned(),
        })?;
        // At most 30 digits times at most 8.64e13: well inside u128.
        nanos += number.digits * per_unit / 10u128.pow(number.scale);
        if nanos > u128::from(u64::MAX) {
            return Err(DurationError::TooLong {
                text: text.to_owned(),
            });
        }
        parts += 1;
        rest = after.trim_start();
    }
    // At most u64::MAX nanoseconds (checked in the loop).
    Ok(Duration::from_nanos(nanos as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_and_fraction_and_sum() {
        let ms = Duration::from_millis;
        for (text, want) in [
            ("1ns", Duration::from_nanos(1)),
            ("500us", Duration::from_micros(500)),
            ("500µs", Duration::from_micros(500)),
            ("250ms", ms(250)),
            ("5 ms", ms(5)),
            ("1.5s", ms(1500)),
            ("0.25s", ms(250)),
            ("2m", ms(120_000)),
            ("2min", ms(120_000)),
            ("1h", ms(3_600_000)),
            ("1h30m", ms(5_400_000)),
            ("1 h 30 m", ms(5_400_000)),
            ("1d", ms(86_400_000)),
            ("3 seconds", ms(3000)),
            (" 5s ", ms(5000)),
            ("0s", ms(0)),
            ("1.0000001s", Duration::from_nanos(1_000_000_100)),
        ] {
            assert_eq!(duration(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn a_bare_number_is_refused_with_a_hint() {
        for bare in ["5", "0", "0.5", " 5000 "] {
            let e = duration(bare).unwrap_err();
            assert_eq!(
                e,
                DurationError::BareNumber {
                    text: bare.trim().into()
                }
            );
            assert!(e.to_string().contains("a number needs its unit"), "{e}");
        }
        assert_eq!(
            duration("5000").unwrap_err().to_string(),
            "`5000` is not a duration: a number needs its unit, e.g. `5000s` or `5000ms`"
        );
    }

    #[test]
    fn months_weeks_years_and_strangers_are_not_units() {
        for (text, unit) in [
            ("1M", "M"),
            ("1month", "month"),
            ("2w", "w"),
            ("1y", "y"),
            ("3 parsecs", "parsecs"),
            ("1h30x", "x"),
        ] {
            assert_eq!(
                duration(text),
                Err(DurationError::UnknownUnit {
                    text: text.into(),
                    unit: unit.into()
                }),
                "{text}"
            );
        }
        let e = duration("1M").unwrap_err().to_string();
        assert!(e.contains("m for minutes"), "{e}");
    }

    #[test]
    fn malformed_and_too_long_texts_are_refused() {
        for bad in [
            "", "  ", "soon", "-1s", "+1s", "s", ".5s", "1..5s", "1.2.3s", "1s5", "NaN", "inf",
            "1e3s", "5s,", "1k",
        ] {
            assert!(duration(bad).is_err(), "{bad}");
        }
        assert!(matches!(
            duration("1k"),
            Err(DurationError::UnknownUnit { .. })
        ));
        assert_eq!(
            duration("1000000d"),
            Err(DurationError::TooLong {
                text: "1000000d".into()
            })
        );
        assert!(duration("1111111111111111111111111111111d").is_err());
        // The largest duration held: u64::MAX nanoseconds, about 584 years.
        assert!(duration("200000d").is_ok());
    }
}
