//! The report's times: RFC 3339 UTC to the second, to and from seconds since the Unix
//! epoch.

use chrono::{DateTime, SecondsFormat, Utc};

/// Now as RFC 3339 UTC to the second (`2026-11-22T15:04:05Z`).
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339_of_unix(i64::try_from(secs).unwrap_or(i64::MAX))
}

/// Seconds since the Unix epoch as RFC 3339 UTC to the second (`2026-11-22T15:04:05Z`); the
/// epoch itself for a time outside chrono's range.
pub fn rfc3339_of_unix(secs: i64) -> String {
    DateTime::<Utc>::from_timestamp(secs, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Seconds since the Unix epoch of an RFC 3339 time (as [`now_rfc3339`] writes it, or with
/// an offset or fractional seconds); `None` for anything else.
pub fn rfc3339_to_unix(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rfc3339_round_trips() {
        assert_eq!(rfc3339_to_unix("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_to_unix("2026-11-22T15:04:05Z"), Some(1_795_359_845));
        assert_eq!(rfc3339_to_unix("2000-02-29T12:00:00Z"), Some(951_825_600));
        assert_eq!(rfc3339_to_unix("yesterday"), None);
        assert_eq!(rfc3339_to_unix("2026-13-01T00:00:00Z"), None);
        assert_eq!(
            rfc3339_to_unix("2026-11-22T16:04:05+01:00"),
            Some(1_795_359_845)
        );
        for secs in [0, 951_825_600, 1_795_359_845, 4_102_444_800] {
            assert_eq!(rfc3339_to_unix(&rfc3339_of_unix(secs)), Some(secs));
        }
        assert_eq!(rfc3339_of_unix(1_795_359_845), "2026-11-22T15:04:05Z");
        assert_eq!(rfc3339_of_unix(951_825_600), "2000-02-29T12:00:00Z");
        let now = now_rfc3339();
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        assert!((rfc3339_to_unix(&now).unwrap() - secs).abs() <= 2);
    }

    #[test]
    fn rfc3339_has_the_right_shape() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.starts_with("20"), "{t}");
        assert!(t.ends_with('Z'));
    }
}
