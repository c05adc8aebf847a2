//! The numbers without a natural Rust type: `varint` ([`CqlVarint`], big-endian two's
//! complement of minimal length) and `decimal` ([`CqlDecimal`], an `[int]` scale then a
//! varint), with their conversions.

use crate::error::{ProtoError, Result, ValueError};

/// A `varint`: an integer of any size, as big-endian two's complement bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CqlVarint(Vec<u8>);

impl CqlVarint {
    /// From big-endian two's complement bytes (normalised to the minimal form; empty is 0).
    pub fn from_signed_bytes_be(bytes: &[u8]) -> Self {
        let mut b = bytes;
        // A leading 0x00 before a byte without its sign bit (or 0xff before one with it)
        // adds nothing: drop it.
        while let [first, second, ..] = b {
            let redundant =
                (*first == 0 && second & 0x80 == 0) || (*first == 0xff && second & 0x80 != 0);
            match (redundant, b.split_first()) {
                (true, Some((_, tail))) => b = tail,
                _ => break,
            }
        }
        if b.is_empty() {
            return Self(vec![0]);
        }
        Self(b.to_vec())
    }

    /// The minimal big-endian two's complement bytes.
    pub fn as_signed_bytes_be(&self) -> &[u8] {
        &self.0
    }

    /// The value as an `i128`, if it fits.
    pub fn to_i128(&self) -> Option<i128> {
        let fill = if self.0.first().is_some_and(|b| b & 0x80 != 0) {
            0xff
        } else {
            0
        };
        let mut buf = [fill; 16];
        let start = 16usize.checked_sub(self.0.len())?;
        buf.get_mut(start..)?.copy_from_slice(&self.0);
        Some(i128::from_be_bytes(buf))
    }

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        self.to_i128().and_then(|v| i64::try_from(v).ok())
    }
}

impl TryFrom<&CqlVarint> for i128 {
    type Error = ProtoError;
    fn try_from(v: &CqlVarint) -> Result<i128> {
        v.to_i128().ok_or_else(|| {
            ProtoError::from(ValueError::VarintOverflow {
                len: v.0.len(),
                target: "i128",
            })
        })
    }
}

impl TryFrom<&CqlVarint> for i64 {
    type Error = ProtoError;
    fn try_from(v: &CqlVarint) -> Result<i64> {
        v.to_i64().ok_or_else(|| {
            ProtoError::from(ValueError::VarintOverflow {
                len: v.0.len(),
                target: "i64",
            })
        })
    }
}

impl From<i32> for CqlVarint {
    fn from(v: i32) -> Self {
        Self::from(i128::from(v))
    }
}

impl From<u64> for CqlVarint {
    fn from(v: u64) -> Self {
        Self::from(i128::from(v))
    }
}

impl From<i128> for CqlVarint {
    fn from(v: i128) -> Self {
        Self::from_signed_bytes_be(&v.to_be_bytes())
    }
}

impl From<i64> for CqlVarint {
    fn from(v: i64) -> Self {
        Self::from(i128::from(v))
    }
}

/// A `decimal`: `unscaled * 10^-scale`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CqlDecimal {
    /// The unscaled integer.
    pub unscaled: CqlVarint,
    /// The power of ten to divide by.
    pub scale: i32,
}

impl CqlDecimal {
    /// `unscaled * 10^-scale` from an `i64` unscaled value.
    pub fn new(unscaled: i64, scale: i32) -> Self {
        Self {
            unscaled: CqlVarint::from(unscaled),
            scale,
        }
    }
}
