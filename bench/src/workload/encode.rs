//! Generated values written as the CQL bytes of a bind marker's column type, with no
//! allocation: the same bytes for every backend (each driver takes them pre-serialized).

use super::expr::{mix, EvalError, Value};

/// The column types the bench can generate values for. Each backend maps its driver's type
/// description onto this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CqlKind {
    /// ascii
    Ascii,
    /// bigint
    BigInt,
    /// blob
    Blob,
    /// boolean
    Boolean,
    /// counter
    Counter,
    /// date (days, 2^31 = epoch)
    Date,
    /// double
    Double,
    /// float
    Float,
    /// int
    Int,
    /// smallint
    SmallInt,
    /// text / varchar
    Text,
    /// time (nanoseconds of the day)
    Time,
    /// timestamp (milliseconds since the epoch)
    Timestamp,
    /// timeuuid
    TimeUuid,
    /// tinyint
    TinyInt,
    /// uuid
    Uuid,
    /// varint
    Varint,
    /// Anything else: only null can be bound.
    Other,
}

/// Where encoded bytes go (a frame buffer, or a scratch vector).
pub trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for bytes::BytesMut {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

const ALNUM: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Whether a value was written or is null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoded {
    /// Bytes were appended.
    Written,
    /// The value is null: nothing was appended.
    Null,
}

/// Checks, at compile time of a workload, that values of this shape can go to `kind`.
/// `sample` is the generator's value for iteration 0.
pub fn compatible(sample: &Value<'_>, kind: CqlKind) -> bool {
    use CqlKind as K;
    match sample {
        Value::Null => true,
        Value::Int(_) | Value::Float(_) => !matches!(kind, K::Other | K::Uuid | K::TimeUuid),
        Value::Bool(_) => matches!(kind, K::Boolean),
        Value::Text { .. } | Value::Blob { .. } | Value::Str(_) => {
            matches!(kind, K::Text | K::Ascii | K::Blob)
        }
        Value::Uuid(_) => matches!(kind, K::Uuid | K::TimeUuid | K::Text | K::Ascii | K::Blob),
    }
}

/// Writes `value` as the content (without the length prefix) of a `kind` cell.
pub fn encode(value: Value<'_>, kind: CqlKind, out: &mut impl Sink) -> Result<Encoded, EvalError> {
    use CqlKind as K;
    match value {
        Value::Null => return Ok(Encoded::Null),
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
                return encode(Value::Int(v as i64), kind, out)
            }
            K::Time | K::Date | K::Varint | K::Boolean | K::Blob => {
                return encode(Value::Int(v as i64), kind, out)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: Value<'_>, k: CqlKind) -> Vec<u8> {
        let mut out = Vec::new();
        encode(v, k, &mut out).unwrap();
        out
    }

    #[test]
    fn integers_take_the_column_width() {
        assert_eq!(enc(Value::Int(-2), CqlKind::TinyInt), vec![0xfe]);
        assert_eq!(enc(Value::Int(258), CqlKind::SmallInt), vec![1, 2]);
        assert_eq!(enc(Value::Int(1), CqlKind::Int), vec![0, 0, 0, 1]);
        assert_eq!(
            enc(Value::Int(i64::MIN), CqlKind::BigInt),
            i64::MIN.to_be_bytes()
        );
        assert_eq!(enc(Value::Int(0), CqlKind::Date), vec![0x80, 0, 0, 0]);
        assert_eq!(enc(Value::Int(-1234), CqlKind::Text), b"-1234");
        assert_eq!(enc(Value::Int(0), CqlKind::Text), b"0");
        assert_eq!(enc(Value::Float(0.5), CqlKind::Text), b"0.5");
    }

    #[test]
    fn varints_are_minimal() {
        assert_eq!(enc(Value::Int(0), CqlKind::Varint), vec![0]);
        assert_eq!(enc(Value::Int(127), CqlKind::Varint), vec![0x7f]);
        assert_eq!(enc(Value::Int(128), CqlKind::Varint), vec![0, 0x80]);
        assert_eq!(enc(Value::Int(-1), CqlKind::Varint), vec![0xff]);
        assert_eq!(enc(Value::Int(-129), CqlKind::Varint), vec![0xff, 0x7f]);
    }

    #[test]
    fn text_is_deterministic_alphanumeric_of_the_asked_length() {
        let a = enc(Value::Text { seed: 9, len: 21 }, CqlKind::Text);
        assert_eq!(a.len(), 21);
        assert!(a.iter().all(|b| ALNUM.contains(b)));
        assert_eq!(a, enc(Value::Text { seed: 9, len: 21 }, CqlKind::Text));
        assert_ne!(a, enc(Value::Text { seed: 10, len: 21 }, CqlKind::Text));
        assert!(enc(Value::Text { seed: 1, len: 0 }, CqlKind::Blob).is_empty());
    }

    #[test]
    fn uuids_and_mismatches() {
        let u = 0x0123_4567_89ab_4def_8123_4567_89ab_cdefu128;
        assert_eq!(
            enc(Value::Uuid(u), CqlKind::Text),
            b"01234567-89ab-4def-8123-456789abcdef"
        );
        let t = enc(Value::Uuid(u), CqlKind::TimeUuid);
        assert_eq!(t[6] >> 4, 1, "version 1");
        let mut out = Vec::new();
        assert!(encode(Value::Bool(true), CqlKind::Int, &mut out).is_err());
        assert!(encode(Value::Uuid(u), CqlKind::Int, &mut out).is_err());
        assert_eq!(
            encode(Value::Null, CqlKind::Other, &mut out).unwrap(),
            Encoded::Null
        );
        assert!(compatible(&Value::Int(1), CqlKind::Text));
        assert!(!compatible(&Value::Bool(true), CqlKind::Text));
    }
}
