//! Counts: `1000`, `10_000`, `10k`, `1.5M`, `1G`.

/// Why a text is not a count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a count such as 1000, 10_000, 10k, 1.5M or 1G")]
pub struct CountError {
    /// The text given.
    pub text: String,
}

/// The decimal suffixes of a count and their scale.
const SUFFIXES: [(&str, f64); 3] = [("k", 1e3), ("M", 1e6), ("G", 1e9)];

/// The largest f64 below 2^64: it and everything below convert to `u64` exactly.
const LARGEST: f64 = 18_446_744_073_709_549_568.0;

/// A count: a whole number (`_` separators allowed) or a number with a decimal suffix, `k`
/// (10^3), `M` (10^6) or `G` (10^9), rounded to a whole number (`1.5k` is 1500).
pub fn count(text: &str) -> Result<u64, CountError> {
    let t = text.trim().replace('_', "");
    let bad = || CountError {
        text: text.to_owned(),
    };
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    let (number, scale) = SUFFIXES
        .into_iter()
        .find_map(|(suffix, scale)| t.strip_suffix(suffix).map(|n| (n, scale)))
        .ok_or_else(bad)?;
    // A plain decimal only: no sign, exponent, `inf` or `NaN` before the suffix.
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let n: f64 = number.parse().map_err(|_| bad())?;
    let n = (n * scale).round();
    if !(0.0..LARGEST).contains(&n) {
        return Err(bad());
    }
    // In range and whole (checked above): the conversion is exact.
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            (" 7 ", 7),
        ] {
            assert_eq!(count(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn what_is_not_a_count_is_refused_with_the_text() {
        for bad in [
            "",
            "1m",
            "1s",
            "-1",
            "-1k",
            "1.5",
            "k",
            "1e30G",
            "1e3k",
            "infk",
            "many",
            "+1k",
            "18446744073709551616",
        ] {
            assert_eq!(count(bad), Err(CountError { text: bad.into() }), "{bad}");
        }
    }
}
