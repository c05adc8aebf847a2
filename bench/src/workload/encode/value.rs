//! A value written as the bytes of a column type ([`encode`]): scalars by [`encode_scalar`],
//! composites by recursion, element by element as they are evaluated, each element's length
//! patched in afterwards or counted first.

use super::scalar::encode_scalar;
use super::sink::{Counter, Encoded, Sink};
use super::types::{vector_element_size, CqlType};
use crate::workload::expr::{Composite, CompositeKind, EvalError, Value};

/// Writes `value` as the content (without the length prefix) of a `ty` cell.
pub(crate) fn encode(
    value: Value<'_>,
    ty: &CqlType,
    out: &mut impl Sink,
) -> Result<Encoded, EvalError> {
    match (value, ty) {
        (Value::Null, _) => Ok(Encoded::Null),
        (Value::Composite(c), _) => {
            encode_composite(&c, ty, out)?;
            Ok(Encoded::Written)
        }
        (v, CqlType::Scalar(k)) => encode_scalar(v, *k, out),
        _ => Err(EvalError(
            "a single value cannot be bound to a collection, tuple, user type or vector",
        )),
    }
}

/// The length `value` encodes to as a `ty` cell (a counting pass: nothing is stored).
pub(crate) fn encoded_len(value: Value<'_>, ty: &CqlType) -> Result<usize, EvalError> {
    let mut c = Counter::default();
    encode(value, ty, &mut c)?;
    Ok(c.0)
}

fn put_count(n: u32, out: &mut impl Sink) {
    // `n` is at most i32::MAX (checked when the composite was evaluated).
    out.put(&n.to_be_bytes());
}

/// Writes `value` as `[bytes]`: its `[int]` length (-1: null), then its bytes.
fn put_cell(value: Value<'_>, ty: &CqlType, out: &mut impl Sink) -> Result<(), EvalError> {
    let too_long = EvalError("an element is longer than 2 GiB");
    if value == Value::Null {
        out.put(&(-1i32).to_be_bytes());
        return Ok(());
    }
    if let Some(at) = out.position() {
        out.put(&[0; 4]);
        encode(value, ty, out)?;
        let len = out.position().unwrap_or(at + 4).saturating_sub(at + 4);
        let len = i32::try_from(len).map_err(|_| too_long)?;
        out.patch(at, len.to_be_bytes());
    } else {
        let len = i32::try_from(encoded_len(value, ty)?).map_err(|_| too_long)?;
        out.put(&len.to_be_bytes());
        encode(value, ty, out)?;
    }
    Ok(())
}

fn encode_composite(c: &Composite<'_>, ty: &CqlType, out: &mut impl Sink) -> Result<(), EvalError> {
    use CompositeKind as G;
    match (c.kind(), ty) {
        (G::List, CqlType::List(e)) | (G::Set, CqlType::Set(e)) => {
            put_count(c.len(), out);
            for j in 0..c.len() {
                put_cell(c.element(j, 0)?, e, out)?;
            }
        }
        (G::Map, CqlType::Map(kv)) => {
            put_count(c.len(), out);
            for j in 0..c.len() {
                put_cell(c.element(j, 0)?, &kv.0, out)?;
                put_cell(c.element(j, 1)?, &kv.1, out)?;
            }
        }
        (G::Tuple, CqlType::Tuple(ts)) => {
            if c.len() as usize != ts.len() {
                return Err(EvalError("the tuple's arity differs from the column's"));
            }
            for (j, t) in ts.iter().enumerate() {
                put_cell(c.element(j as u32, 0)?, t, out)?;
            }
        }
        (G::Tuple, CqlType::Udt(u)) => {
            if c.len() as usize != u.fields.len() {
                return Err(EvalError(
                    "the tuple's arity differs from the user type's fields",
                ));
            }
            for (j, (_, t)) in u.fields.iter().enumerate() {
                put_cell(c.element(j as u32, 0)?, t, out)?;
            }
        }
        (G::Vector, CqlType::Vector(e, dim)) => {
            if c.len() != *dim {
                return Err(EvalError(
                    "the vector's length differs from the column's dimension",
                ));
            }
            let fixed = vector_element_size(e).is_some();
            for j in 0..c.len() {
                let v = c.element(j, 0)?;
                if v == Value::Null {
                    return Err(EvalError("a vector cannot hold null"));
                }
                // A fixed-size element: `compatible` admitted only values whose scalar
                // encoding is that size (an integer as int is 4 bytes, and so on).
                if !fixed {
                    put_unsigned_vint(encoded_len(v, e)? as u64, out);
                }
                encode(v, e, out)?;
            }
        }
        _ => {
            return Err(EvalError(
                "the generator's shape does not fit the column's type",
            ))
        }
    }
    Ok(())
}

/// Cassandra's unsigned vint: the first byte's leading one-bits count the bytes that follow,
/// the value big-endian in the remaining bits.
fn put_unsigned_vint(v: u64, out: &mut impl Sink) {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    let extra = (bits - 1) / 7;
    if extra >= 8 {
        out.put(&[0xff]);
        out.put(&v.to_be_bytes());
        return;
    }
    let mut buf = v.to_be_bytes();
    let start = 8 - (extra + 1);
    buf[start] |= !(0xffu8 >> extra);
    out.put(&buf[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_vints_match_cassandra() {
        let v = |n: u64| {
            let mut out = Vec::new();
            put_unsigned_vint(n, &mut out);
            out
        };
        assert_eq!(v(0), [0]);
        assert_eq!(v(127), [0x7f]);
        assert_eq!(v(128), [0x80, 0x80]);
        assert_eq!(v(16383), [0xbf, 0xff]);
        assert_eq!(v(16384), [0xc0, 0x40, 0x00]);
        assert_eq!(v(u64::MAX), [0xff; 9]);
    }
}
