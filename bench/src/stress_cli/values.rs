//! Values as cassandra-stress writes them, each read with the option it belongs to so that
//! an error names it: counts with `k`/`m`/`b` (`1M`, `10k`), durations with `s`, `m` or
//! `h` (`5m`), rates `R/s`, ranges `MIN..MAX`, distributions (`GAUSSIAN(1..1M)`).

use std::time::Duration;

use super::error::StressError;
use crate::workload::dist::{parse_count, Distribution};

/// The most operations `n=` takes (10^12: beyond any run, far below overflow).
pub(crate) const MAX_OPS: u64 = 1_000_000_000_000;
/// The longest `duration=` (a year).
pub(crate) const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);
/// The highest rate `throttle=` and `fixed=` take (10^9 per second).
pub(crate) const MAX_RATE: f64 = 1e9;

/// Refuses a second value of `option` (`slot` holds the first, if any).
pub(crate) fn once<T>(slot: &Option<T>, option: &str) -> Result<(), StressError> {
    if slot.is_some() {
        return Err(StressError::Repeated {
            option: option.to_owned(),
        });
    }
    Ok(())
}

/// A whole number in `min..=max`, with cassandra-stress's `k`, `m`, `b` (any case).
pub(crate) fn count(option: &str, value: &str, min: u64, max: u64) -> Result<u64, StressError> {
    let n = parse_count(value).ok_or_else(|| {
        StressError::bad(option, value, "is not a count (such as 1000, 10k or 1M)")
    })?;
    match u64::try_from(n) {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(StressError::bad(
            option,
            value,
            &format!("is out of range ({min} to {max})"),
        )),
    }
}

/// A duration with cassandra-stress's units: a whole number and `s`, `m` or `h`; not 0.
pub(crate) fn duration(option: &str, value: &str) -> Result<Duration, StressError> {
    let t = value.trim().to_ascii_lowercase();
    let bad = |problem: &str| StressError::bad(option, value, problem);
    let (digits, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c),
        _ => return Err(bad("has no unit (give s, m or h: 30s, 5m, 1h)")),
    };
    let secs_per = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        _ => return Err(bad("has an unknown unit (give s, m or h: 30s, 5m, 1h)")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| bad("is not a whole number with s, m or h (30s, 5m, 1h)"))?;
    let secs = n
        .checked_mul(secs_per)
        .filter(|&s| s <= MAX_DURATION.as_secs())
        .ok_or_else(|| bad("is longer than a year"))?;
    if secs == 0 {
        return Err(bad("runs nothing (give more than 0)"));
    }
    Ok(Duration::from_secs(secs))
}

/// A rate `R/s` (operations per second, `R` a count such as 10000 or 10k).
pub(crate) fn rate(option: &str, value: &str) -> Result<f64, StressError> {
    let Some(r) = value.trim().strip_suffix("/s") else {
        return Err(StressError::bad(
            option,
            value,
            "is not a rate per second (such as 10000/s)",
        ));
    };
    let n = count(option, r, 1, MAX_RATE as u64).map_err(|_| {
        StressError::bad(
            option,
            value,
            &format!("is not a rate per second from 1/s to {MAX_RATE:e}/s (such as 10000/s)"),
        )
    })?;
    Ok(n as f64)
}

/// `MIN..MAX` of counts, `0 <= MIN <= MAX`.
pub(crate) fn range(option: &str, value: &str) -> Result<(i64, i64), StressError> {
    let bad = || {
        StressError::bad(
            option,
            value,
            "is not a range MIN..MAX with 0 <= MIN <= MAX (such as 1..1M)",
        )
    };
    let (lo, hi) = value.split_once("..").ok_or_else(bad)?;
    let lo = parse_count(lo).ok_or_else(bad)?;
    let hi = parse_count(hi).ok_or_else(bad)?;
    if lo < 0 || lo > hi || hi > MAX_OPS as i64 {
        return Err(bad());
    }
    Ok((lo, hi))
}

/// A distribution, checked; its values within `min..=max`.
pub(crate) fn distribution(
    option: &str,
    value: &str,
    min: i64,
    max: i64,
) -> Result<Distribution, StressError> {
    let d = Distribution::parse(value)
        .map_err(|e| StressError::bad(option, value, &format!("is not a distribution: {e}")))?;
    if d.min < min || d.max > max {
        return Err(StressError::bad(
            option,
            value,
            &format!("gives values outside {min} to {max}"),
        ));
    }
    Ok(d)
}

/// A positive finite weight (`ratio(...)`, `ops(...)`).
pub(crate) fn weight(option: &str, value: &str) -> Result<f64, StressError> {
    match value.trim().parse::<f64>() {
        Ok(w) if (0.0..=1e9).contains(&w) => Ok(w),
        _ => Err(StressError::bad(
            option,
            value,
            "is not a weight (a number from 0 to 10^9)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_cassandra_stress_suffixes_and_refuse_zero_negative_and_huge() {
        assert_eq!(count("n", "1M", 1, MAX_OPS).unwrap(), 1_000_000);
        assert_eq!(count("n", "10k", 1, MAX_OPS).unwrap(), 10_000);
        assert_eq!(count("n", "2B", 1, MAX_OPS).unwrap(), 2_000_000_000);
        for bad in [
            "0",
            "-5",
            "10000000000000",
            "99999999999999999999",
            "ten",
            "",
        ] {
            let e = count("n", bad, 1, MAX_OPS).unwrap_err();
            assert!(e.to_string().contains("`n`"), "{e}");
        }
    }

    #[test]
    fn durations_need_s_m_or_h() {
        assert_eq!(
            duration("duration", "5m").unwrap(),
            Duration::from_secs(300)
        );
        assert_eq!(
            duration("duration", "2h").unwrap(),
            Duration::from_secs(7200)
        );
        assert_eq!(
            duration("duration", "30s").unwrap(),
            Duration::from_secs(30)
        );
        for (bad, why) in [
            ("30", "no unit"),
            ("0s", "runs nothing"),
            ("5d", "unknown unit"),
            ("-5m", "not a whole number"),
            ("9999999h", "longer than a year"),
            ("m", "not a whole number"),
        ] {
            let e = duration("duration", bad).unwrap_err().to_string();
            assert!(e.contains("`duration`") && e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn rates_are_per_second() {
        assert_eq!(rate("-rate fixed", "10000/s").unwrap(), 10_000.0);
        assert_eq!(rate("-rate fixed", "10k/s").unwrap(), 10_000.0);
        for bad in ["10000", "0/s", "-1/s", "10000/m", "x/s"] {
            let e = rate("-rate fixed", bad).unwrap_err().to_string();
            assert!(e.contains("`-rate fixed`"), "{e}");
        }
    }

    #[test]
    fn ranges_and_distributions_are_checked() {
        assert_eq!(range("-pop seq", "1..1M").unwrap(), (1, 1_000_000));
        for bad in ["1", "5..1", "-1..5", "1..x"] {
            assert!(range("-pop seq", bad).is_err(), "{bad}");
        }
        assert!(distribution("-pop dist", "GAUSSIAN(1..1M)", 0, i64::MAX).is_ok());
        let e = distribution("-pop dist", "NOPE(1..2)", 0, i64::MAX).unwrap_err();
        assert!(e.to_string().contains("`-pop dist`"), "{e}");
        assert!(distribution("-col size", "FIXED(2000000)", 0, 1 << 20).is_err());
        assert!(weight("ratio", "-1").is_err());
        assert_eq!(weight("ratio", "2.5").unwrap(), 2.5);
    }
}
