//! A scalar value written as the bytes of a scalar column type ([`encode_scalar`]): integers
//! at the column's width, text and blobs generated from their seed, uuids, decimals and
//! varints, all without allocation.

use super::sink::{Encoded, Sink};
use super::types::CqlKind;
use crate::workload::expr::{mix, EvalError, Value};

/// Writes a scalar `value` as the content of a `kind` cell.
pub(crate) fn encode_scalar(
    value: Value<'_>,
    kind: CqlKind,
    out: &mut impl Sink,
) -> Result<Encoded, EvalError> {
    use CqlKind as K;
    match value {
        Value::Null => return Ok(Encoded::Null),
        Value::Composite(_) => {
            return Err(EvalError(
                "a list, set, map, tuple or vector cannot be bound to a single value",
            ))
        }
        Value::Int(v) => match kind {
            K::TinyInt => out.put(&(v as i8).to_be_bytes()),
            K::SmallInt => out.put(&(v as i16).to_be_bytes()),
            K::Int => out.put(&(v as i32).to_be_bytes()),
            K::BigInt | K::Counter | K::Timestamp | K::Time => out.put(&v.to_be_bytes()),
            K::Date => out.put(&((v as u32).wrapping_add(1 << 31)).to_be_bytes()),
            K::Float => out.put(&(v as f32).to_be_bytes()),
            K::Double => out.put(&(v as f64).to_be_bytes()),
            K::Varint => put_varint(v, out),
            K::Boolean => out.put(&[u8::from(v != 0)]),
            K::Text | K::Ascii => put_decimal(v, out),
            K::Blob => out.put(&v.to_be_bytes()),
            K::Uuid | K::TimeUuid | K::Other => {
                return Err(EvalError("an integer cannot be bound to this column"))
            }
        },
        Value::Float(v) => match kind {
            K::Float => out.put(&(v as f32).to_be_bytes()),
            K::Double => out.put(&v.to_be_bytes()),
            K::TinyInt | K::SmallInt | K::Int | K::BigInt | K::Counter | K::Timestamp => {
                return encode_scalar(Value::Int(v as i64), kind, out)
            }
            K::Time | K::Date | K::Varint | K::Boolean | K::Blob => {
                return encode_scalar(Value::Int(v as i64), kind, out)
            }
            K::Text | K::Ascii => {
                let mut buf = StackText::default();
                let _ = std::fmt::Write::write_fmt(&mut buf, format_args!("{v}"));
                out.put(buf.as_bytes());
            }
            K::Uuid | K::TimeUuid | K::Other => {
                return Err(EvalError("a float cannot be bound to this column"))
            }
        },
        Value::Bool(b) => match kind {
            K::Boolean => out.put(&[u8::from(b)]),
            _ => return Err(EvalError("a boolean can only be bound to a boolean column")),
        },
        Value::Text { seed, len } | Value::Blob { seed, len } => match kind {
            K::Text | K::Ascii | K::Blob => put_alnum(seed, len, out),
            _ => return Err(EvalError("text can only be bound to text, ascii or blob")),
        },
        Value::Str(s) => match kind {
            K::Text | K::Ascii | K::Blob => out.put(s.as_bytes()),
            _ => {
                return Err(EvalError(
                    "a string can only be bound to text, ascii or blob",
                ))
            }
        },
        Value::Uuid(u) => match kind {
            K::Uuid | K::Blob => out.put(&u.to_be_bytes()),
            K::TimeUuid => {
                // Version 1 layout: what the node checks for a timeuuid.
                let v = (u & !(0xf << 76)) | (0x1 << 76);
                out.put(&v.to_be_bytes());
            }
            K::Text | K::Ascii => put_uuid_text(u, out),
            _ => return Err(EvalError("a uuid cannot be bound to this column")),
        },
    }
    Ok(Encoded::Written)
}

pub(super) const ALNUM: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `len` bytes of URL-safe alphanumerics from `seed`, eight at a time.
fn put_alnum(seed: u64, len: u32, out: &mut impl Sink) {
    let mut left = len as usize;
    let mut k = 0u64;
    let mut chunk = [0u8; 8];
    while left > 0 {
        let h = mix(seed.wrapping_add(k)).to_le_bytes();
        let n = left.min(8);
        for (c, b) in chunk.iter_mut().zip(h) {
            *c = ALNUM[(b & 63) as usize];
        }
        out.put(&chunk[..n]);
        left -= n;
        k += 1;
    }
}

fn put_decimal(v: i64, out: &mut impl Sink) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut n = v.unsigned_abs();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.put(b"-");
    }
    out.put(&buf[pos..]);
}

/// Minimal big-endian two's complement, as CQL varint wants.
fn put_varint(v: i64, out: &mut impl Sink) {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        let redundant = (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    out.put(&bytes[start..]);
}

fn put_uuid_text(u: u128, out: &mut impl Sink) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 36];
    let mut pos = 0;
    for (i, byte) in u.to_be_bytes().iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            buf[pos] = b'-';
            pos += 1;
        }
        buf[pos] = HEX[(byte >> 4) as usize];
        buf[pos + 1] = HEX[(byte & 15) as usize];
        pos += 2;
    }
    out.put(&buf);
}

/// A small fixed buffer for formatting floats without allocating.
struct StackText {
    buf: [u8; 64],
    len: usize,
}

impl Default for StackText {
    fn default() -> Self {
        Self {
            buf: [0; 64],
            len: 0,
        }
    }
}

impl StackText {
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
