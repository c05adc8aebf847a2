//! The bench's settings as doppio takes them: its consistency levels, and the settings it
//! cannot honour.

use doppio_driver::proto::consistency::Consistency;

use crate::backend::driver::Driver;
use crate::backend::options::{ConnectOptions, Consistency as BenchConsistency};
use crate::backend::settings::{SerialConsistency, SettingError};

/// doppio's consistency level for the bench's.
pub(super) fn consistency(c: BenchConsistency) -> Consistency {
    match c {
        BenchConsistency::Any => Consistency::Any,
        BenchConsistency::One => Consistency::One,
        BenchConsistency::Two => Consistency::Two,
        BenchConsistency::Three => Consistency::Three,
        BenchConsistency::Quorum => Consistency::Quorum,
        BenchConsistency::All => Consistency::All,
        BenchConsistency::LocalQuorum => Consistency::LocalQuorum,
        BenchConsistency::EachQuorum => Consistency::EachQuorum,
        BenchConsistency::LocalOne => Consistency::LocalOne,
    }
}

/// doppio's serial consistency level for the bench's.
pub(crate) fn serial_consistency(c: SerialConsistency) -> Consistency {
    match c {
        SerialConsistency::Serial => Consistency::Serial,
        SerialConsistency::LocalSerial => Consistency::LocalSerial,
    }
}

/// The settings doppio cannot honour: a preferred rack (its load-balancing policy knows
/// data centers, not racks).
pub(crate) fn check_settings(driver: Driver, o: &ConnectOptions) -> Result<(), SettingError> {
    if o.locality.rack.is_some() {
        return Err(SettingError::Unsupported {
            driver: driver.name(),
            option: "--rack",
            why: "doppio's load-balancing policy prefers a data center, not a rack",
        });
    }
    Ok(())
}
