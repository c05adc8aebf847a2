//! `uuid` and `timeuuid` as their 16 bytes ([`CqlUuid`]), and the version check a `timeuuid`
//! needs. (`inet` needs no type of its own: it is [`std::net::IpAddr`].)

use super::result::ValueResult;
use crate::error::ValueError;

/// A `uuid` or `timeuuid` as its 16 bytes, for when the `uuid` feature is off or unwanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CqlUuid(pub [u8; 16]);

impl CqlUuid {
    /// The UUID version (the high nibble of byte 6): 1 for a `timeuuid`.
    pub fn version(&self) -> u8 {
        self.0[6] >> 4
    }
}

/// A version-1 UUID, as a `timeuuid` needs.
pub(crate) fn check_timeuuid(u: &[u8; 16]) -> ValueResult<()> {
    match u[6] >> 4 {
        1 => Ok(()),
        version => Err(ValueError::NotTimeuuid { version }),
    }
}
