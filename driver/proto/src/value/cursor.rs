//! Reading a value's bytes ([`Cursor`], whose shortfalls are value errors), Cassandra's
//! vint both ways, and the bytes of a fixed-size value.

use bytes::BufMut;

use super::result::ValueResult;
use super::type_name::type_name;
use crate::error::ValueError;
use crate::types::ColumnType;

/// A cursor over a value's bytes that reports shortfalls as value errors.
pub(crate) struct Cursor<'a>(pub(crate) &'a [u8]);

impl<'a> Cursor<'a> {
    pub(super) fn take(&mut self, n: usize, what: &'static str) -> ValueResult<&'a [u8]> {
        let Some((h, t)) = self.0.split_at_checked(n) else {
            return Err(ValueError::Truncated {
                what,
                needed: n,
                left: self.0.len(),
            });
        };
        self.0 = t;
        Ok(h)
    }

    pub(super) fn int(&mut self, what: &'static str) -> ValueResult<i32> {
        let Some((h, t)) = self.0.split_first_chunk::<4>() else {
            return Err(ValueError::Truncated {
                what,
                needed: 4,
                left: self.0.len(),
            });
        };
        self.0 = t;
        Ok(i32::from_be_bytes(*h))
    }

    /// An element `[bytes]` (None for a negative length, i.e. null).
    pub(crate) fn element(&mut self, what: &'static str) -> ValueResult<Option<&'a [u8]>> {
        let n = self.int(what)?;
        match usize::try_from(n) {
            Ok(n) => self.take(n, what).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// A count, checked against the bytes left (each element takes `min` bytes or more).
    pub(crate) fn count(&mut self, what: &'static str, min: usize) -> ValueResult<usize> {
        let n = self.int(what)?;
        let n = usize::try_from(n).map_err(|_| ValueError::NegativeCount { what, count: n })?;
        if n.saturating_mul(min) > self.0.len() {
            return Err(ValueError::CountTooLarge {
                what,
                count: n,
                left: self.0.len(),
            });
        }
        Ok(n)
    }

    /// Cassandra's unsigned vint: the first byte's leading one-bits count the bytes that
    /// follow.
    pub(super) fn unsigned_vint(&mut self) -> ValueResult<u64> {
        let truncated = |needed, left| ValueError::Truncated {
            what: "vint",
            needed,
            left,
        };
        let (&first, rest) = self.0.split_first().ok_or(truncated(1, 0))?;
        let extra = first.leading_ones();
        let (tail, rest) = rest
            .split_at_checked(extra as usize)
            .ok_or(truncated(extra as usize, rest.len()))?;
        let mut v = u64::from(first & 0xffu8.checked_shr(extra).unwrap_or(0));
        for &b in tail {
            v = (v << 8) | u64::from(b);
        }
        self.0 = rest;
        Ok(v)
    }

    pub(super) fn signed_vint(&mut self) -> ValueResult<i64> {
        let v = self.unsigned_vint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    pub(crate) fn end(&self, what: &'static str) -> ValueResult<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ValueError::TrailingBytes {
                what,
                extra: self.0.len(),
            })
        }
    }
}

/// Writes Cassandra's unsigned vint.
pub(crate) fn put_unsigned_vint(buf: &mut impl BufMut, v: u64) {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    let size = if bits <= 7 {
        1
    } else {
        ((bits - 1) / 7 + 1).min(9)
    };
    if size == 1 {
        buf.put_u8(v as u8);
        return;
    }
    let extra = size - 1;
    let bytes = v.to_be_bytes();
    if size == 9 {
        buf.put_u8(0xff);
        buf.put_slice(&bytes);
        return;
    }
    let mut out = [0u8; 9];
    out[9 - size..].copy_from_slice(&bytes[8 - size..]);
    out[9 - size] |= !(0xffu8 >> extra);
    buf.put_slice(&out[9 - size..]);
}

pub(super) fn put_signed_vint(buf: &mut impl BufMut, v: i64) {
    put_unsigned_vint(buf, ((v << 1) ^ (v >> 63)) as u64);
}

/// The bytes of a value of the fixed-size type `typ` (`N` of them).
pub(crate) fn fixed<const N: usize>(b: &[u8], typ: &ColumnType) -> ValueResult<[u8; N]> {
    b.try_into().map_err(|_| ValueError::WrongSize {
        typ: type_name(typ),
        len: b.len(),
        expected: N,
    })
}
