//! Times and dates: `date` ([`CqlDate`], `u32` days with 2^31 at 1970-01-01), `time`
//! ([`CqlTime`], `i64` nanoseconds of the day), `timestamp` ([`CqlTimestamp`]) and `duration`
//! ([`CqlDuration`], three zig-zag signed vints), with their conversions and checks.

use super::result::ValueResult;
use crate::error::{ProtoError, Result, ValueError};

/// A `date`: days since -5877641-06-23, with 2^31 at the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CqlDate(pub u32);

impl CqlDate {
    /// The date `days` days after 1970-01-01 (negative: before).
    pub fn from_days_since_epoch(days: i32) -> Self {
        Self((i64::from(days) + (1i64 << 31)) as u32)
    }

    /// Days since 1970-01-01.
    pub fn days_since_epoch(self) -> i64 {
        i64::from(self.0) - (1i64 << 31)
    }
}

/// A `time`: nanoseconds since midnight, 0 to 86 399 999 999 999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CqlTime(pub i64);

impl CqlTime {
    /// Nanoseconds in a day.
    pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;
}

/// A `timestamp`: milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CqlTimestamp(pub i64);

/// A `duration`: months, days and nanoseconds, each signed (all of one sign).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CqlDuration {
    /// Months.
    pub months: i32,
    /// Days.
    pub days: i32,
    /// Nanoseconds.
    pub nanoseconds: i64,
}

impl From<i64> for CqlTimestamp {
    fn from(millis: i64) -> Self {
        Self(millis)
    }
}

impl From<CqlTimestamp> for i64 {
    fn from(t: CqlTimestamp) -> i64 {
        t.0
    }
}

impl CqlTime {
    /// Nanoseconds since midnight, checked to lie within one day.
    pub(crate) fn checked(nanos: i64) -> ValueResult<Self> {
        if (0..Self::NANOS_PER_DAY).contains(&nanos) {
            Ok(Self(nanos))
        } else {
            Err(ValueError::TimeOutsideDay { nanos })
        }
    }
}

impl TryFrom<i64> for CqlTime {
    type Error = ProtoError;
    /// Nanoseconds since midnight; fails outside one day.
    fn try_from(nanos: i64) -> Result<Self> {
        Ok(Self::checked(nanos)?)
    }
}

impl From<CqlTime> for i64 {
    fn from(t: CqlTime) -> i64 {
        t.0
    }
}

impl From<CqlDate> for u32 {
    fn from(d: CqlDate) -> u32 {
        d.0
    }
}

impl CqlDuration {
    /// A duration; fails unless months, days and nanoseconds share one sign (as CQL requires).
    pub fn new(months: i32, days: i32, nanoseconds: i64) -> Result<Self> {
        let d = Self {
            months,
            days,
            nanoseconds,
        };
        d.check()?;
        Ok(d)
    }

    pub(super) fn check(&self) -> ValueResult<()> {
        let parts = [
            i64::from(self.months),
            i64::from(self.days),
            self.nanoseconds,
        ];
        if parts.iter().any(|x| *x > 0) && parts.iter().any(|x| *x < 0) {
            return Err(ValueError::DurationSigns {
                months: self.months,
                days: self.days,
                nanoseconds: self.nanoseconds,
            });
        }
        Ok(())
    }
}
