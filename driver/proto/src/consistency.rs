//! The `[consistency]` notation: a `[short]` naming a consistency level.

use bytes::BufMut;

use crate::error::{ProtoError, Result};
use crate::wire::Reader;

/// A consistency level (spec section 3, `[consistency]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Consistency {
    /// ANY.
    Any,
    /// ONE.
    One,
    /// TWO.
    Two,
    /// THREE.
    Three,
    /// QUORUM.
    Quorum,
    /// ALL.
    All,
    /// LOCAL_QUORUM.
    #[default]
    LocalQuorum,
    /// EACH_QUORUM.
    EachQuorum,
    /// SERIAL.
    Serial,
    /// LOCAL_SERIAL.
    LocalSerial,
    /// LOCAL_ONE.
    LocalOne,
}

impl Consistency {
    /// Every level, in code order.
    pub const ALL_LEVELS: [Consistency; 11] = [
        Consistency::Any,
        Consistency::One,
        Consistency::Two,
        Consistency::Three,
        Consistency::Quorum,
        Consistency::All,
        Consistency::LocalQuorum,
        Consistency::EachQuorum,
        Consistency::Serial,
        Consistency::LocalSerial,
        Consistency::LocalOne,
    ];

    /// The wire code.
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// The level for a wire code.
    pub fn from_code(code: u16) -> Result<Self> {
        Self::ALL_LEVELS
            .get(code as usize)
            .copied()
            .ok_or_else(|| ProtoError::InvalidValue {
                what: "consistency",
                detail: format!("unknown code 0x{code:04x}"),
            })
    }

    /// Reads a `[consistency]`.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self> {
        Self::from_code(r.read_short("consistency")?)
    }

    /// Writes a `[consistency]`.
    pub fn encode(self, buf: &mut impl BufMut) {
        buf.put_u16(self.code());
    }

    /// True for SERIAL and LOCAL_SERIAL, the only levels allowed as serial consistency.
    pub const fn is_serial(self) -> bool {
        matches!(self, Consistency::Serial | Consistency::LocalSerial)
    }

    /// The level's CQL name (`LOCAL_QUORUM`).
    pub const fn name(self) -> &'static str {
        match self {
            Consistency::Any => "ANY",
            Consistency::One => "ONE",
            Consistency::Two => "TWO",
            Consistency::Three => "THREE",
            Consistency::Quorum => "QUORUM",
            Consistency::All => "ALL",
            Consistency::LocalQuorum => "LOCAL_QUORUM",
            Consistency::EachQuorum => "EACH_QUORUM",
            Consistency::Serial => "SERIAL",
            Consistency::LocalSerial => "LOCAL_SERIAL",
            Consistency::LocalOne => "LOCAL_ONE",
        }
    }
}

impl std::fmt::Display for Consistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Consistency {
    type Err = ProtoError;

    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.trim().to_ascii_uppercase().replace('-', "_");
        Self::ALL_LEVELS
            .into_iter()
            .find(|c| c.name() == wanted)
            .ok_or_else(|| ProtoError::InvalidValue {
                what: "consistency",
                detail: format!("{s:?} is not a consistency level"),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_spec_and_round_trip() {
        assert_eq!(Consistency::Any.code(), 0x0000);
        assert_eq!(Consistency::LocalQuorum.code(), 0x0006);
        assert_eq!(Consistency::LocalOne.code(), 0x000A);
        for c in Consistency::ALL_LEVELS {
            let mut buf = Vec::new();
            c.encode(&mut buf);
            assert_eq!(Consistency::decode(&mut Reader::new(&buf)).unwrap(), c);
            assert_eq!(c.name().parse::<Consistency>().unwrap(), c);
        }
        assert!(Consistency::from_code(0x000B).is_err());
        assert_eq!(
            "local-one".parse::<Consistency>().unwrap(),
            Consistency::LocalOne
        );
    }
}
