//! CQL values (spec section 6): newtypes for values without a natural Rust type, and the
//! dynamic [`CqlValue`] covering every type Cassandra 5 serves.
//!
//! Formats (v4 section 6, and Cassandra 5 for the two types v4 lacks):
//! - varint: big-endian two's complement, minimal length; decimal: `[int]` scale, varint.
//! - date: `u32` days with 2^31 at 1970-01-01; time: `i64` nanoseconds of the day.
//! - duration: three zig-zag signed vints (months, days, nanoseconds), Cassandra's vint: the
//!   first byte's leading one-bits count the bytes that follow.
//! - list/set: `[int]` n, then n elements as `[bytes]`; map: n, then key and value `[bytes]`.
//! - tuple and UDT: each field as `[bytes]` (null allowed); a UDT may omit trailing fields.
//! - vector: `dimension` elements with no count. Element types Cassandra 5 treats as fixed
//!   size (boolean, int, bigint, float, double, timestamp, uuid, timeuuid, and vectors of
//!   those: see [`vector_element_size`]) are written back to back; every other element type
//!   (text, varint, collections, and also tinyint, smallint, date and time, which Cassandra
//!   does not mark fixed-length) is prefixed with an unsigned vint length. Nulls are refused.
//!
//! Invariants: decoding checks every count and length against the bytes left before it
//! reserves or slices, recursion is bounded by [`crate::types::MAX_TYPE_DEPTH`], and any
//! input gives a value or an error, never a panic.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use bytes::BufMut;

use crate::error::{ProtoError, Result, ValueError};
use crate::types::{ColumnType, MAX_TYPE_DEPTH};

/// Why a value could not be decoded or encoded (the caller adds the column).
pub type ValueResult<T> = std::result::Result<T, ValueError>;

/// The explicit "not set" marker: leaves the column's current value unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Unset;

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

impl CqlDecimal {
    /// `unscaled * 10^-scale` from an `i64` unscaled value.
    pub fn new(unscaled: i64, scale: i32) -> Self {
        Self {
            unscaled: CqlVarint::from(unscaled),
            scale,
        }
    }
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

    fn check(&self) -> ValueResult<()> {
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

/// A `uuid` or `timeuuid` as its 16 bytes, for when the `uuid` feature is off or unwanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CqlUuid(pub [u8; 16]);

impl CqlUuid {
    /// The UUID version (the high nibble of byte 6): 1 for a `timeuuid`.
    pub fn version(&self) -> u8 {
        self.0[6] >> 4
    }
}

/// The size of a vector element of type `typ` when Cassandra 5 writes it without a length
/// (`AbstractType.valueLengthIfFixed`): boolean, int, bigint, float, double, timestamp, uuid,
/// timeuuid and vectors of those. Every other element type (including tinyint, smallint,
/// date and time, which Cassandra treats as variable-length) is prefixed by an unsigned vint.
pub fn vector_element_size(typ: &ColumnType) -> Option<usize> {
    match typ {
        ColumnType::Boolean => Some(1),
        ColumnType::Int | ColumnType::Float => Some(4),
        ColumnType::Bigint | ColumnType::Double | ColumnType::Timestamp => Some(8),
        ColumnType::Uuid | ColumnType::Timeuuid => Some(16),
        ColumnType::Vector { element, dimension } => {
            vector_element_size(element)?.checked_mul(*dimension as usize)
        }
        _ => None,
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

/// Any CQL value, tagged with its type.
#[derive(Debug, Clone, PartialEq)]
pub enum CqlValue {
    /// `ascii`.
    Ascii(String),
    /// `bigint`.
    Bigint(i64),
    /// `blob`.
    Blob(Vec<u8>),
    /// `boolean`.
    Boolean(bool),
    /// `counter`.
    Counter(i64),
    /// `decimal`.
    Decimal(CqlDecimal),
    /// `double`.
    Double(f64),
    /// `float`.
    Float(f32),
    /// `int`.
    Int(i32),
    /// `timestamp`.
    Timestamp(CqlTimestamp),
    /// `uuid`.
    Uuid([u8; 16]),
    /// `text` / `varchar`.
    Text(String),
    /// `varint`.
    Varint(CqlVarint),
    /// `timeuuid`.
    Timeuuid([u8; 16]),
    /// `inet`.
    Inet(IpAddr),
    /// `date`.
    Date(CqlDate),
    /// `time`.
    Time(CqlTime),
    /// `smallint`.
    Smallint(i16),
    /// `tinyint`.
    Tinyint(i8),
    /// `duration`.
    Duration(CqlDuration),
    /// `list<T>`.
    List(Vec<CqlValue>),
    /// `set<T>`.
    Set(Vec<CqlValue>),
    /// `map<K, V>`, in wire order.
    Map(Vec<(CqlValue, CqlValue)>),
    /// `tuple<...>`; `None` is a null field.
    Tuple(Vec<Option<CqlValue>>),
    /// A user-defined type's fields by name; `None` is a null (or omitted) field.
    Udt(Vec<(String, Option<CqlValue>)>),
    /// `vector<T, N>`.
    Vector(Vec<CqlValue>),
    /// A custom type's raw bytes.
    Custom(Vec<u8>),
    /// A zero-length value of a type whose values are never empty (CQL allows it for most
    /// non-collection types; Cassandra writes it for `blobAsInt(0x)` and the like).
    Empty,
}

/// A cursor over a value's bytes that reports shortfalls as value errors.
pub(crate) struct Cursor<'a>(pub(crate) &'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> ValueResult<&'a [u8]> {
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

    fn int(&mut self, what: &'static str) -> ValueResult<i32> {
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
    fn unsigned_vint(&mut self) -> ValueResult<u64> {
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

    fn signed_vint(&mut self) -> ValueResult<i64> {
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

/// Calls `f` with the bytes of each element of a `vector<element, dimension>` value, then
/// checks that nothing is left over.
pub(crate) fn vector_elements<'a>(
    element: &ColumnType,
    dimension: u32,
    bytes: &'a [u8],
    mut f: impl FnMut(&'a [u8]) -> ValueResult<()>,
) -> ValueResult<()> {
    let n = dimension as usize;
    let size = vector_element_size(element);
    match size {
        // Cassandra has no zero-dimension vectors; refuse a type that would let
        // `dimension` elements be read from no bytes at all.
        Some(0) if n > 0 => return Err(ValueError::ZeroSizedVectorElements),
        // Fixed-size elements: the whole length is known, so it is checked once, up front.
        Some(size) if size.saturating_mul(n) > bytes.len() => {
            return Err(ValueError::Truncated {
                what: "vector",
                needed: size.saturating_mul(n),
                left: bytes.len(),
            })
        }
        _ => {}
    }
    let mut b = Cursor(bytes);
    for _ in 0..n {
        let len = match size {
            Some(size) => size,
            // A length past usize (32-bit targets) is past the bytes left too.
            None => usize::try_from(b.unsigned_vint()?).unwrap_or(usize::MAX),
        };
        f(b.take(len, "vector element")?)?;
    }
    b.end("vector")
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

fn put_signed_vint(buf: &mut impl BufMut, v: i64) {
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

/// Fails unless every byte is ASCII (as an `ascii` value needs).
pub(crate) fn check_ascii(b: &[u8]) -> ValueResult<()> {
    // `is_ascii` checks a word at a time; the offset is looked for only on failure.
    if b.is_ascii() {
        return Ok(());
    }
    let offset = b.iter().position(|c| !c.is_ascii()).unwrap_or(0);
    Err(ValueError::NonAscii { offset })
}

/// The text of an `ascii` or `text` value (`ascii` is checked to be ASCII).
pub(crate) fn text<'b>(b: &'b [u8], typ: &ColumnType) -> ValueResult<&'b str> {
    if matches!(typ, ColumnType::Ascii) {
        check_ascii(b)?;
    }
    std::str::from_utf8(b).map_err(|source| ValueError::InvalidUtf8 {
        what: "text",
        source,
    })
}

impl CqlValue {
    /// Decodes the bytes of one value of type `typ` (a zero-length value of a type that is
    /// never empty reads as [`CqlValue::Empty`]). Fails with [`ProtoError::InvalidCqlValue`]
    /// saying why; the row reader reports the column instead.
    pub fn decode(typ: &ColumnType, bytes: &[u8]) -> Result<CqlValue> {
        Ok(decode_at(typ, bytes, 0)?)
    }

    /// Encodes this value as a value of `typ` (without the `[bytes]` length), checking that
    /// it fits the type. On error `buf` may hold part of the value.
    pub fn encode(&self, typ: &ColumnType, buf: &mut impl BufMut) -> Result<()> {
        Ok(encode_at(self, typ, buf, 0)?)
    }

    /// [`CqlValue::decode`] with the bare reason as the error, for callers adding context.
    pub(crate) fn decode_reason(typ: &ColumnType, bytes: &[u8]) -> ValueResult<CqlValue> {
        decode_at(typ, bytes, 0)
    }

    /// [`CqlValue::encode`] with the bare reason as the error, for callers adding context.
    pub(crate) fn encode_reason(&self, typ: &ColumnType, buf: &mut impl BufMut) -> ValueResult<()> {
        encode_at(self, typ, buf, 0)
    }

    /// The name of this value's variant (`Bigint`, `List`, ...), for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            CqlValue::Ascii(_) => "Ascii",
            CqlValue::Bigint(_) => "Bigint",
            CqlValue::Blob(_) => "Blob",
            CqlValue::Boolean(_) => "Boolean",
            CqlValue::Counter(_) => "Counter",
            CqlValue::Decimal(_) => "Decimal",
            CqlValue::Double(_) => "Double",
            CqlValue::Float(_) => "Float",
            CqlValue::Int(_) => "Int",
            CqlValue::Timestamp(_) => "Timestamp",
            CqlValue::Uuid(_) => "Uuid",
            CqlValue::Text(_) => "Text",
            CqlValue::Varint(_) => "Varint",
            CqlValue::Timeuuid(_) => "Timeuuid",
            CqlValue::Inet(_) => "Inet",
            CqlValue::Date(_) => "Date",
            CqlValue::Time(_) => "Time",
            CqlValue::Smallint(_) => "Smallint",
            CqlValue::Tinyint(_) => "Tinyint",
            CqlValue::Duration(_) => "Duration",
            CqlValue::List(_) => "List",
            CqlValue::Set(_) => "Set",
            CqlValue::Map(_) => "Map",
            CqlValue::Tuple(_) => "Tuple",
            CqlValue::Udt(_) => "Udt",
            CqlValue::Vector(_) => "Vector",
            CqlValue::Custom(_) => "Custom",
            CqlValue::Empty => "Empty",
        }
    }

    /// The type this value naturally has (collections take their first element's type;
    /// an empty collection is a collection of blobs).
    pub fn natural_type(&self) -> ColumnType {
        let first =
            |v: &[CqlValue]| Box::new(v.first().map_or(ColumnType::Blob, CqlValue::natural_type));
        match self {
            CqlValue::Ascii(_) => ColumnType::Ascii,
            CqlValue::Bigint(_) => ColumnType::Bigint,
            CqlValue::Blob(_) | CqlValue::Empty => ColumnType::Blob,
            CqlValue::Boolean(_) => ColumnType::Boolean,
            CqlValue::Counter(_) => ColumnType::Counter,
            CqlValue::Decimal(_) => ColumnType::Decimal,
            CqlValue::Double(_) => ColumnType::Double,
            CqlValue::Float(_) => ColumnType::Float,
            CqlValue::Int(_) => ColumnType::Int,
            CqlValue::Timestamp(_) => ColumnType::Timestamp,
            CqlValue::Uuid(_) => ColumnType::Uuid,
            CqlValue::Text(_) => ColumnType::Varchar,
            CqlValue::Varint(_) => ColumnType::Varint,
            CqlValue::Timeuuid(_) => ColumnType::Timeuuid,
            CqlValue::Inet(_) => ColumnType::Inet,
            CqlValue::Date(_) => ColumnType::Date,
            CqlValue::Time(_) => ColumnType::Time,
            CqlValue::Smallint(_) => ColumnType::Smallint,
            CqlValue::Tinyint(_) => ColumnType::Tinyint,
            CqlValue::Duration(_) => ColumnType::Duration,
            CqlValue::List(v) => ColumnType::List(first(v)),
            CqlValue::Set(v) => ColumnType::Set(first(v)),
            CqlValue::Map(kv) => match kv.first() {
                Some((k, v)) => {
                    ColumnType::Map(Box::new(k.natural_type()), Box::new(v.natural_type()))
                }
                None => ColumnType::Map(Box::new(ColumnType::Blob), Box::new(ColumnType::Blob)),
            },
            CqlValue::Tuple(fields) => ColumnType::Tuple(
                fields
                    .iter()
                    .map(|f| f.as_ref().map_or(ColumnType::Blob, CqlValue::natural_type))
                    .collect(),
            ),
            CqlValue::Udt(fields) => ColumnType::Udt {
                keyspace: String::new(),
                name: String::new(),
                fields: fields
                    .iter()
                    .map(|(n, f)| {
                        (
                            n.clone(),
                            f.as_ref().map_or(ColumnType::Blob, CqlValue::natural_type),
                        )
                    })
                    .collect(),
            },
            CqlValue::Vector(v) => ColumnType::Vector {
                element: first(v),
                dimension: v.len() as u32,
            },
            CqlValue::Custom(_) => ColumnType::Custom(String::new()),
        }
    }
}

fn decode_at(typ: &ColumnType, bytes: &[u8], depth: usize) -> ValueResult<CqlValue> {
    if depth > MAX_TYPE_DEPTH {
        return Err(ValueError::TooDeep {
            limit: MAX_TYPE_DEPTH,
        });
    }
    let is_collection = matches!(
        typ,
        ColumnType::List(_) | ColumnType::Set(_) | ColumnType::Map(..) | ColumnType::Vector { .. }
    );
    let is_textual = matches!(
        typ,
        ColumnType::Ascii | ColumnType::Varchar | ColumnType::Blob | ColumnType::Custom(_)
    );
    if bytes.is_empty() && !is_collection && !is_textual {
        return Ok(CqlValue::Empty);
    }
    let mut b = Cursor(bytes);
    let nested = |t: &ColumnType, v: &[u8]| decode_at(t, v, depth + 1);
    Ok(match typ {
        ColumnType::Custom(_) => CqlValue::Custom(bytes.to_vec()),
        ColumnType::Ascii => CqlValue::Ascii(text(bytes, typ)?.to_owned()),
        ColumnType::Varchar => CqlValue::Text(text(bytes, typ)?.to_owned()),
        ColumnType::Blob => CqlValue::Blob(bytes.to_vec()),
        ColumnType::Bigint => CqlValue::Bigint(i64::from_be_bytes(fixed(bytes, typ)?)),
        ColumnType::Counter => CqlValue::Counter(i64::from_be_bytes(fixed(bytes, typ)?)),
        ColumnType::Boolean => CqlValue::Boolean(fixed::<1>(bytes, typ)?[0] != 0),
        ColumnType::Double => CqlValue::Double(f64::from_be_bytes(fixed(bytes, typ)?)),
        ColumnType::Float => CqlValue::Float(f32::from_be_bytes(fixed(bytes, typ)?)),
        ColumnType::Int => CqlValue::Int(i32::from_be_bytes(fixed(bytes, typ)?)),
        ColumnType::Smallint => CqlValue::Smallint(i16::from_be_bytes(fixed(bytes, typ)?)),
        ColumnType::Tinyint => CqlValue::Tinyint(i8::from_be_bytes(fixed(bytes, typ)?)),
        ColumnType::Timestamp => {
            CqlValue::Timestamp(CqlTimestamp(i64::from_be_bytes(fixed(bytes, typ)?)))
        }
        ColumnType::Date => CqlValue::Date(CqlDate(u32::from_be_bytes(fixed(bytes, typ)?))),
        ColumnType::Time => {
            CqlValue::Time(CqlTime::checked(i64::from_be_bytes(fixed(bytes, typ)?))?)
        }
        ColumnType::Uuid => CqlValue::Uuid(fixed(bytes, typ)?),
        ColumnType::Timeuuid => {
            let u: [u8; 16] = fixed(bytes, typ)?;
            check_timeuuid(&u)?;
            CqlValue::Timeuuid(u)
        }
        ColumnType::Inet => CqlValue::Inet(match bytes.len() {
            4 => IpAddr::V4(Ipv4Addr::from(fixed::<4>(bytes, typ)?)),
            16 => IpAddr::V6(Ipv6Addr::from(fixed::<16>(bytes, typ)?)),
            len => return Err(ValueError::InetLength { len }),
        }),
        ColumnType::Varint => CqlValue::Varint(CqlVarint::from_signed_bytes_be(bytes)),
        ColumnType::Decimal => {
            let scale = b.int("decimal scale")?;
            if b.0.is_empty() {
                return Err(ValueError::DecimalWithoutUnscaled);
            }
            CqlValue::Decimal(CqlDecimal {
                unscaled: CqlVarint::from_signed_bytes_be(b.0),
                scale,
            })
        }
        ColumnType::Duration => {
            let months = b.signed_vint()?;
            let days = b.signed_vint()?;
            let nanoseconds = b.signed_vint()?;
            b.end("duration")?;
            let out_of_range = |part, value| ValueError::DurationPartOutOfRange { part, value };
            let months = i32::try_from(months).map_err(|_| out_of_range("months", months))?;
            let days = i32::try_from(days).map_err(|_| out_of_range("days", days))?;
            CqlValue::Duration(CqlDuration {
                months,
                days,
                nanoseconds,
            })
        }
        ColumnType::List(t) | ColumnType::Set(t) => {
            let n = b.count("element count", 4)?;
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                let e = b
                    .element("element")?
                    .ok_or_else(|| ValueError::NullElement {
                        what: "element in a collection",
                    })?;
                out.push(nested(t, e)?);
            }
            b.end("collection")?;
            if matches!(typ, ColumnType::List(_)) {
                CqlValue::List(out)
            } else {
                CqlValue::Set(out)
            }
        }
        ColumnType::Map(kt, vt) => {
            let n = b.count("map size", 8)?;
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                let k = b
                    .element("map key")?
                    .ok_or_else(|| ValueError::NullElement { what: "map key" })?;
                let v = b
                    .element("map value")?
                    .ok_or_else(|| ValueError::NullElement { what: "map value" })?;
                out.push((nested(kt, k)?, nested(vt, v)?));
            }
            b.end("map")?;
            CqlValue::Map(out)
        }
        ColumnType::Tuple(types) => {
            let mut out = Vec::with_capacity(types.len());
            for t in types {
                out.push(
                    b.element("tuple field")?
                        .map(|v| nested(t, v))
                        .transpose()?,
                );
            }
            b.end("tuple")?;
            CqlValue::Tuple(out)
        }
        ColumnType::Udt { fields, .. } => {
            let mut out = Vec::with_capacity(fields.len());
            for (name, t) in fields {
                // Trailing fields may be missing (added to the type after the value was written).
                let v = if b.0.is_empty() {
                    None
                } else {
                    b.element("UDT field")?.map(|v| nested(t, v)).transpose()?
                };
                out.push((name.clone(), v));
            }
            b.end("UDT")?;
            CqlValue::Udt(out)
        }
        ColumnType::Vector { element, dimension } => {
            let mut out = Vec::with_capacity((*dimension as usize).min(bytes.len()));
            vector_elements(element, *dimension, bytes, |e| {
                out.push(nested(element, e)?);
                Ok(())
            })?;
            CqlValue::Vector(out)
        }
    })
}

/// A version-1 UUID, as a `timeuuid` needs.
pub(crate) fn check_timeuuid(u: &[u8; 16]) -> ValueResult<()> {
    match u[6] >> 4 {
        1 => Ok(()),
        version => Err(ValueError::NotTimeuuid { version }),
    }
}

/// The CQL name of a type (`map<text, int>`), for messages.
pub fn type_name(typ: &ColumnType) -> String {
    match typ {
        ColumnType::Custom(c) => format!("'{c}'"),
        ColumnType::Ascii => "ascii".into(),
        ColumnType::Bigint => "bigint".into(),
        ColumnType::Blob => "blob".into(),
        ColumnType::Boolean => "boolean".into(),
        ColumnType::Counter => "counter".into(),
        ColumnType::Decimal => "decimal".into(),
        ColumnType::Double => "double".into(),
        ColumnType::Float => "float".into(),
        ColumnType::Int => "int".into(),
        ColumnType::Timestamp => "timestamp".into(),
        ColumnType::Uuid => "uuid".into(),
        ColumnType::Varchar => "text".into(),
        ColumnType::Varint => "varint".into(),
        ColumnType::Timeuuid => "timeuuid".into(),
        ColumnType::Inet => "inet".into(),
        ColumnType::Date => "date".into(),
        ColumnType::Time => "time".into(),
        ColumnType::Smallint => "smallint".into(),
        ColumnType::Tinyint => "tinyint".into(),
        ColumnType::Duration => "duration".into(),
        ColumnType::List(t) => format!("list<{}>", type_name(t)),
        ColumnType::Set(t) => format!("set<{}>", type_name(t)),
        ColumnType::Map(k, v) => format!("map<{}, {}>", type_name(k), type_name(v)),
        ColumnType::Tuple(ts) => {
            format!(
                "tuple<{}>",
                ts.iter().map(type_name).collect::<Vec<_>>().join(", ")
            )
        }
        ColumnType::Udt { keyspace, name, .. } => format!("{keyspace}.{name}"),
        ColumnType::Vector { element, dimension } => {
            format!("vector<{}, {dimension}>", type_name(element))
        }
    }
}

/// Writes `[int]` length, then what `f` writes, patching the length afterwards.
pub(crate) fn put_len_prefixed(
    buf: &mut impl BufMut,
    f: impl FnOnce(&mut Vec<u8>) -> ValueResult<()>,
) -> ValueResult<()> {
    // Nested values go through a small scratch Vec: collection elements are the cold path;
    // top-level values are written in place by the serialize layer.
    let mut scratch = Vec::new();
    f(&mut scratch)?;
    let len = i32::try_from(scratch.len())
        .map_err(|_| ValueError::ValueTooLong { len: scratch.len() })?;
    buf.put_i32(len);
    buf.put_slice(&scratch);
    Ok(())
}

/// An element count as the `[int]` the wire has for it.
pub(crate) fn count_i32(count: usize) -> ValueResult<i32> {
    i32::try_from(count).map_err(|_| ValueError::TooManyElements { count })
}

fn encode_at(
    v: &CqlValue,
    typ: &ColumnType,
    buf: &mut impl BufMut,
    depth: usize,
) -> ValueResult<()> {
    if depth > MAX_TYPE_DEPTH {
        return Err(ValueError::TooDeep {
            limit: MAX_TYPE_DEPTH,
        });
    }
    let nested = |v: &CqlValue, t: &ColumnType, out: &mut Vec<u8>| encode_at(v, t, out, depth + 1);
    match (v, typ) {
        (CqlValue::Empty, _) => {}
        (CqlValue::Custom(b), ColumnType::Custom(_)) | (CqlValue::Blob(b), ColumnType::Blob) => {
            buf.put_slice(b)
        }
        (CqlValue::Ascii(s), ColumnType::Ascii) => buf.put_slice(s.as_bytes()),
        (CqlValue::Ascii(s) | CqlValue::Text(s), ColumnType::Varchar) => {
            buf.put_slice(s.as_bytes())
        }
        (CqlValue::Text(s), ColumnType::Ascii) if s.is_ascii() => buf.put_slice(s.as_bytes()),
        (CqlValue::Bigint(i), ColumnType::Bigint | ColumnType::Counter)
        | (CqlValue::Counter(i), ColumnType::Counter | ColumnType::Bigint) => buf.put_i64(*i),
        (CqlValue::Boolean(x), ColumnType::Boolean) => buf.put_u8(u8::from(*x)),
        (CqlValue::Double(x), ColumnType::Double) => buf.put_f64(*x),
        (CqlValue::Float(x), ColumnType::Float) => buf.put_f32(*x),
        (CqlValue::Int(x), ColumnType::Int) => buf.put_i32(*x),
        (CqlValue::Smallint(x), ColumnType::Smallint) => buf.put_i16(*x),
        (CqlValue::Tinyint(x), ColumnType::Tinyint) => buf.put_i8(*x),
        (CqlValue::Timestamp(t), ColumnType::Timestamp) => buf.put_i64(t.0),
        (CqlValue::Date(d), ColumnType::Date) => buf.put_u32(d.0),
        (CqlValue::Time(t), ColumnType::Time) => buf.put_i64(CqlTime::checked(t.0)?.0),
        (CqlValue::Uuid(u), ColumnType::Uuid)
        | (CqlValue::Timeuuid(u), ColumnType::Timeuuid | ColumnType::Uuid) => buf.put_slice(u),
        (CqlValue::Uuid(u), ColumnType::Timeuuid) => {
            check_timeuuid(u)?;
            buf.put_slice(u)
        }
        (CqlValue::Inet(ip), ColumnType::Inet) => match ip {
            IpAddr::V4(a) => buf.put_slice(&a.octets()),
            IpAddr::V6(a) => buf.put_slice(&a.octets()),
        },
        (CqlValue::Varint(x), ColumnType::Varint) => buf.put_slice(x.as_signed_bytes_be()),
        (CqlValue::Decimal(d), ColumnType::Decimal) => {
            buf.put_i32(d.scale);
            buf.put_slice(d.unscaled.as_signed_bytes_be());
        }
        (CqlValue::Duration(d), ColumnType::Duration) => {
            d.check()?;
            put_signed_vint(buf, i64::from(d.months));
            put_signed_vint(buf, i64::from(d.days));
            put_signed_vint(buf, d.nanoseconds);
        }
        (
            CqlValue::List(items) | CqlValue::Set(items),
            ColumnType::List(t) | ColumnType::Set(t),
        ) => {
            buf.put_i32(count_i32(items.len())?);
            for item in items {
                put_len_prefixed(buf, |out| nested(item, t, out))?;
            }
        }
        (CqlValue::Map(kvs), ColumnType::Map(kt, vt)) => {
            buf.put_i32(count_i32(kvs.len())?);
            for (k, v) in kvs {
                put_len_prefixed(buf, |out| nested(k, kt, out))?;
                put_len_prefixed(buf, |out| nested(v, vt, out))?;
            }
        }
        (CqlValue::Tuple(fields), ColumnType::Tuple(types)) => {
            if fields.len() != types.len() {
                return Err(ValueError::TupleArity {
                    given: fields.len(),
                    expected: types.len(),
                });
            }
            for (f, t) in fields.iter().zip(types) {
                match f {
                    Some(f) => put_len_prefixed(buf, |out| nested(f, t, out))?,
                    None => buf.put_i32(-1),
                }
            }
        }
        (CqlValue::Udt(values), ColumnType::Udt { fields, name, .. }) => {
            for (field, t) in fields {
                match values.iter().find(|(n, _)| n == field) {
                    Some((_, Some(v))) => put_len_prefixed(buf, |out| nested(v, t, out))?,
                    _ => buf.put_i32(-1),
                }
            }
            if let Some((unknown, _)) = values
                .iter()
                .find(|(n, _)| !fields.iter().any(|(f, _)| f == n))
            {
                return Err(ValueError::NoSuchField {
                    udt: name.as_str().into(),
                    field: unknown.as_str().into(),
                });
            }
        }
        (
            CqlValue::Vector(items) | CqlValue::List(items),
            ColumnType::Vector { element, dimension },
        ) => {
            if items.len() != *dimension as usize {
                return Err(ValueError::VectorDimension {
                    given: items.len(),
                    dimension: *dimension,
                });
            }
            let fixed_size = vector_element_size(element);
            for item in items {
                let mut out = Vec::new();
                nested(item, element, &mut out)?;
                match fixed_size {
                    Some(s) if s == out.len() => {}
                    Some(expected) => {
                        return Err(ValueError::VectorElementSize {
                            len: out.len(),
                            expected,
                        })
                    }
                    None => put_unsigned_vint(buf, out.len() as u64),
                }
                buf.put_slice(&out);
            }
        }
        (v, t) => {
            return Err(ValueError::CannotEncode {
                value: v.kind(),
                typ: type_name(t),
            })
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(v: CqlValue, t: ColumnType) -> Vec<u8> {
        let mut buf = Vec::new();
        v.encode(&t, &mut buf).unwrap();
        assert_eq!(CqlValue::decode(&t, &buf).unwrap(), v, "{t:?}");
        buf
    }

    #[test]
    fn scalars_are_byte_exact() {
        assert_eq!(rt(CqlValue::Int(7), ColumnType::Int), [0, 0, 0, 7]);
        assert_eq!(rt(CqlValue::Boolean(true), ColumnType::Boolean), [1]);
        assert_eq!(
            rt(CqlValue::Smallint(-2), ColumnType::Smallint),
            [0xff, 0xfe]
        );
        assert_eq!(
            rt(
                CqlValue::Date(CqlDate::from_days_since_epoch(0)),
                ColumnType::Date
            ),
            [0x80, 0, 0, 0]
        );
        assert_eq!(
            rt(
                CqlValue::Inet("10.0.0.1".parse().unwrap()),
                ColumnType::Inet
            ),
            [10, 0, 0, 1]
        );
        rt(CqlValue::Double(1.5), ColumnType::Double);
        rt(CqlValue::Float(-0.25), ColumnType::Float);
        rt(CqlValue::Text("héllo".into()), ColumnType::Varchar);
        rt(
            CqlValue::Time(CqlTime(CqlTime::NANOS_PER_DAY - 1)),
            ColumnType::Time,
        );
        assert!(CqlValue::decode(&ColumnType::Int, &[1, 2, 3]).is_err());
        assert!(CqlValue::decode(&ColumnType::Varchar, &[0xff]).is_err());
        assert!(CqlValue::decode(&ColumnType::Time, &i64::MAX.to_be_bytes()).is_err());
        assert_eq!(
            CqlValue::decode(&ColumnType::Int, &[]).unwrap(),
            CqlValue::Empty
        );
    }

    #[test]
    fn varint_edges() {
        for (v, bytes) in [
            (0i128, vec![0u8]),
            (-1, vec![0xff]),
            (127, vec![0x7f]),
            (128, vec![0x00, 0x80]),
            (-128, vec![0x80]),
            (-129, vec![0xff, 0x7f]),
            (i128::from(i64::MIN), i64::MIN.to_be_bytes().to_vec()),
        ] {
            let x = CqlVarint::from(v);
            assert_eq!(x.as_signed_bytes_be(), &bytes[..], "{v}");
            assert_eq!(x.to_i128(), Some(v));
            rt(CqlValue::Varint(x), ColumnType::Varint);
        }
        let huge = CqlVarint::from_signed_bytes_be(&[0x7f; 40]);
        assert_eq!(huge.to_i128(), None);
        rt(CqlValue::Varint(huge.clone()), ColumnType::Varint);
        rt(
            CqlValue::Decimal(CqlDecimal {
                unscaled: CqlVarint::from(-12345i64),
                scale: 2,
            }),
            ColumnType::Decimal,
        );
    }

    #[test]
    fn vint_and_duration_edges() {
        for v in [
            0u64,
            1,
            127,
            128,
            16383,
            16384,
            1 << 35,
            u64::MAX >> 1,
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_unsigned_vint(&mut buf, v);
            let mut b = Cursor(&buf);
            assert_eq!(b.unsigned_vint().unwrap(), v, "{v}");
            assert!(b.0.is_empty());
        }
        let mut one = Vec::new();
        put_unsigned_vint(&mut one, 128);
        assert_eq!(one, [0x80, 0x80]);
        for d in [
            CqlDuration {
                months: 1,
                days: 2,
                nanoseconds: 3,
            },
            CqlDuration {
                months: -14,
                days: -1,
                nanoseconds: i64::MIN,
            },
            CqlDuration {
                months: i32::MAX,
                days: 0,
                nanoseconds: i64::MAX,
            },
        ] {
            rt(CqlValue::Duration(d), ColumnType::Duration);
        }
        // months=1, days=2, nanos=3 zig-zag to 2, 4, 6.
        let mut buf = Vec::new();
        CqlValue::Duration(CqlDuration {
            months: 1,
            days: 2,
            nanoseconds: 3,
        })
        .encode(&ColumnType::Duration, &mut buf)
        .unwrap();
        assert_eq!(buf, [2, 4, 6]);
        let mixed = CqlValue::Duration(CqlDuration {
            months: 1,
            days: -1,
            nanoseconds: 0,
        });
        assert!(mixed
            .encode(&ColumnType::Duration, &mut Vec::new())
            .is_err());
    }

    #[test]
    fn collections_tuples_udts_vectors() {
        let list = ColumnType::List(Box::new(ColumnType::Int));
        let bytes = rt(
            CqlValue::List(vec![CqlValue::Int(1), CqlValue::Int(2)]),
            list.clone(),
        );
        assert_eq!(
            bytes,
            [0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2]
        );
        let map = ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(list.clone()));
        rt(
            CqlValue::Map(vec![(CqlValue::Text("a".into()), CqlValue::List(vec![]))]),
            map,
        );
        let tuple = ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Varchar]);
        rt(
            CqlValue::Tuple(vec![None, Some(CqlValue::Text("x".into()))]),
            tuple,
        );
        let udt = ColumnType::Udt {
            keyspace: "ks".into(),
            name: "addr".into(),
            fields: vec![
                ("street".into(), ColumnType::Varchar),
                ("zip".into(), ColumnType::Int),
            ],
        };
        rt(
            CqlValue::Udt(vec![
                ("street".into(), Some(CqlValue::Text("Main".into()))),
                ("zip".into(), None),
            ]),
            udt.clone(),
        );
        // A value written before `zip` was added: the missing trailing field reads as null.
        let short = [0, 0, 0, 1, b'x'];
        assert_eq!(
            CqlValue::decode(&udt, &short).unwrap(),
            CqlValue::Udt(vec![
                ("street".into(), Some(CqlValue::Text("x".into()))),
                ("zip".into(), None)
            ])
        );
        let vf = ColumnType::Vector {
            element: Box::new(ColumnType::Float),
            dimension: 3,
        };
        let b = rt(
            CqlValue::Vector(vec![
                CqlValue::Float(1.0),
                CqlValue::Float(2.0),
                CqlValue::Float(3.0),
            ]),
            vf.clone(),
        );
        assert_eq!(b.len(), 12);
        assert!(CqlValue::Vector(vec![CqlValue::Float(1.0)])
            .encode(&vf, &mut Vec::new())
            .is_err());
        let vt = ColumnType::Vector {
            element: Box::new(ColumnType::Varchar),
            dimension: 2,
        };
        let b = rt(
            CqlValue::Vector(vec![CqlValue::Text("ab".into()), CqlValue::Text("".into())]),
            vt,
        );
        assert_eq!(b, [2, b'a', b'b', 0]);
    }

    #[test]
    fn hostile_collections_are_errors() {
        let list = ColumnType::List(Box::new(ColumnType::Int));
        assert!(CqlValue::decode(&list, &[0x7f, 0xff, 0xff, 0xff]).is_err());
        assert!(CqlValue::decode(&list, &[0xff, 0xff, 0xff, 0xfe]).is_err());
        assert!(CqlValue::decode(&list, &[0, 0, 0, 1, 0, 0, 0, 9, 1]).is_err());
        assert!(CqlValue::decode(&list, &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]).is_err());
        let v = ColumnType::Vector {
            element: Box::new(ColumnType::Varchar),
            dimension: u32::MAX,
        };
        assert!(CqlValue::decode(&v, &[0xff; 9]).is_err());
        assert!(CqlValue::decode(&ColumnType::Duration, &[0xff]).is_err());
    }

    #[test]
    fn mismatches_say_why() {
        let err = CqlValue::Bigint(1)
            .encode(&ColumnType::Int, &mut Vec::new())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid CQL value: cannot encode a Bigint value as int"
        );
        let err = CqlValue::List(vec![]).encode(
            &ColumnType::Map(Box::new(ColumnType::Int), Box::new(ColumnType::Int)),
            &mut Vec::new(),
        );
        assert!(err.unwrap_err().to_string().contains("map<int, int>"));
    }

    #[test]
    fn errors_are_typed_and_keep_their_sources() {
        use std::error::Error as _;
        let value_error = |r: Result<CqlValue>| match r {
            Err(ProtoError::InvalidCqlValue(e)) => *e,
            other => panic!("expected a value error, got {other:?}"),
        };
        let err = CqlValue::decode(&ColumnType::Varchar, &[b'a', 0xff]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid CQL value: text is not valid UTF-8"
        );
        // ProtoError -> ValueError -> Utf8Error, each reachable by source().
        let value = err.source().expect("a value error");
        assert!(matches!(
            err.value_error(),
            Some(ValueError::InvalidUtf8 { what: "text", .. })
        ));
        assert_eq!(value.to_string(), "text is not valid UTF-8");
        let utf8 = value.source().expect("the utf8 error");
        assert_eq!(
            utf8.downcast_ref::<std::str::Utf8Error>()
                .map(std::str::Utf8Error::valid_up_to),
            Some(1)
        );
        assert_eq!(
            value_error(CqlValue::decode(&ColumnType::Int, &[1, 2, 3])),
            ValueError::WrongSize {
                typ: type_name(&ColumnType::Int),
                len: 3,
                expected: 4
            }
        );
        assert_eq!(
            value_error(CqlValue::decode(&ColumnType::Int, &[1, 2, 3])).to_string(),
            "int value of 3 bytes, expected 4"
        );
        assert_eq!(
            value_error(CqlValue::decode(
                &ColumnType::Time,
                &CqlTime::NANOS_PER_DAY.to_be_bytes()
            )),
            ValueError::TimeOutsideDay {
                nanos: CqlTime::NANOS_PER_DAY
            }
        );
        let mut v4 = [0u8; 16];
        v4[6] = 0x40;
        assert_eq!(
            value_error(CqlValue::decode(&ColumnType::Timeuuid, &v4)),
            ValueError::NotTimeuuid { version: 4 }
        );
        let list = ColumnType::List(Box::new(ColumnType::Int));
        assert_eq!(
            value_error(CqlValue::decode(&list, &[0x7f, 0xff, 0xff, 0xff])),
            ValueError::CountTooLarge {
                what: "element count",
                count: 0x7fff_ffff,
                left: 0
            }
        );
        assert_eq!(
            value_error(CqlValue::decode(&list, &[0xff, 0xff, 0xff, 0xfe])),
            ValueError::NegativeCount {
                what: "element count",
                count: -2
            }
        );
        assert_eq!(
            value_error(CqlValue::decode(&list, &[0, 0, 0, 1, 0, 0, 0, 9, 1])),
            ValueError::Truncated {
                what: "element",
                needed: 9,
                left: 1
            }
        );
        assert_eq!(
            value_error(CqlValue::decode(&ColumnType::Ascii, b"ab\xc3\xa9")),
            ValueError::NonAscii { offset: 2 }
        );
        assert_eq!(
            value_error(CqlValue::decode(&ColumnType::Inet, &[1, 2, 3, 4, 5])),
            ValueError::InetLength { len: 5 }
        );
        assert_eq!(
            CqlDuration::new(1, -1, 0).unwrap_err(),
            ProtoError::from(ValueError::DurationSigns {
                months: 1,
                days: -1,
                nanoseconds: 0
            })
        );
        assert_eq!(
            i64::try_from(&CqlVarint::from(i128::MAX))
                .unwrap_err()
                .to_string(),
            "invalid CQL value: varint of 16 bytes does not fit in i64"
        );
        let udt = ColumnType::Udt {
            keyspace: "ks".into(),
            name: "point".into(),
            fields: vec![("x".into(), ColumnType::Int)],
        };
        let mut buf = Vec::new();
        assert_eq!(
            value_error(
                CqlValue::Udt(vec![("y".into(), None)])
                    .encode(&udt, &mut buf)
                    .map(|()| CqlValue::Empty)
            ),
            ValueError::NoSuchField {
                udt: "point".into(),
                field: "y".into()
            }
        );
    }

    #[test]
    fn every_scalar_type_round_trips() {
        let u = *b"\x12\x3e\x45\x67\xe8\x9b\x12\xd3\xa4\x56\x42\x66\x14\x17\x40\x00";
        let cases = [
            (CqlValue::Ascii("abc".into()), ColumnType::Ascii),
            (CqlValue::Bigint(i64::MIN), ColumnType::Bigint),
            (CqlValue::Blob(vec![0, 0xff]), ColumnType::Blob),
            (CqlValue::Blob(vec![]), ColumnType::Blob),
            (CqlValue::Boolean(false), ColumnType::Boolean),
            (CqlValue::Counter(-5), ColumnType::Counter),
            (
                CqlValue::Decimal(CqlDecimal::new(i64::MIN, -3)),
                ColumnType::Decimal,
            ),
            (CqlValue::Double(f64::MAX), ColumnType::Double),
            (CqlValue::Float(f32::MIN_POSITIVE), ColumnType::Float),
            (CqlValue::Int(i32::MIN), ColumnType::Int),
            (CqlValue::Timestamp(CqlTimestamp(-1)), ColumnType::Timestamp),
            (CqlValue::Uuid(u), ColumnType::Uuid),
            (CqlValue::Text(String::new()), ColumnType::Varchar),
            (
                CqlValue::Varint(CqlVarint::from(1i64 << 40)),
                ColumnType::Varint,
            ),
            (CqlValue::Timeuuid(u), ColumnType::Timeuuid),
            (CqlValue::Inet("::1".parse().unwrap()), ColumnType::Inet),
            (CqlValue::Date(CqlDate(0)), ColumnType::Date),
            (CqlValue::Date(CqlDate(u32::MAX)), ColumnType::Date),
            (CqlValue::Time(CqlTime(0)), ColumnType::Time),
            (CqlValue::Smallint(i16::MIN), ColumnType::Smallint),
            (CqlValue::Tinyint(i8::MIN), ColumnType::Tinyint),
            (
                CqlValue::Custom(vec![1, 2, 3]),
                ColumnType::Custom("com.example.T".into()),
            ),
            (CqlValue::Empty, ColumnType::Int),
        ];
        for (v, t) in cases {
            rt(v, t);
        }
        // Version 4 is not a timeuuid.
        let mut v4 = u;
        v4[6] = 0x42;
        assert!(CqlValue::decode(&ColumnType::Timeuuid, &v4).is_err());
        assert!(CqlValue::Uuid(v4)
            .encode(&ColumnType::Timeuuid, &mut Vec::new())
            .is_err());
        // Time bounds.
        assert!(CqlValue::Time(CqlTime(-1))
            .encode(&ColumnType::Time, &mut Vec::new())
            .is_err());
        assert!(
            CqlValue::decode(&ColumnType::Time, &CqlTime::NANOS_PER_DAY.to_be_bytes()).is_err()
        );
        assert!(CqlTime::try_from(CqlTime::NANOS_PER_DAY).is_err());
        assert_eq!(CqlTime::try_from(5).unwrap(), CqlTime(5));
        // Date bounds: the smallest and largest days around the epoch.
        assert_eq!(CqlDate(0).days_since_epoch(), -(1i64 << 31));
        assert_eq!(CqlDate(u32::MAX).days_since_epoch(), (1i64 << 31) - 1);
        assert_eq!(CqlDate::from_days_since_epoch(i32::MIN), CqlDate(0));
        assert_eq!(CqlDate::from_days_since_epoch(-1), CqlDate((1 << 31) - 1));
        // inet of a wrong size, ascii with a high byte.
        assert!(CqlValue::decode(&ColumnType::Inet, &[1, 2, 3, 4, 5]).is_err());
        assert!(CqlValue::decode(&ColumnType::Ascii, "é".as_bytes()).is_err());
    }

    #[test]
    fn varint_and_decimal_bytes_are_minimal_and_exact() {
        // Redundant sign bytes are dropped; needed ones kept.
        for (input, minimal) in [
            (&[0u8, 0, 0x7f][..], &[0x7fu8][..]),
            (&[0xff, 0xff, 0x80], &[0x80]),
            (&[0xff, 0x7f], &[0xff, 0x7f]),
            (&[0x00, 0x80], &[0x00, 0x80]),
            (&[0, 0, 0], &[0]),
            (&[], &[0]),
        ] {
            assert_eq!(
                CqlVarint::from_signed_bytes_be(input).as_signed_bytes_be(),
                minimal
            );
        }
        assert_eq!(CqlVarint::from(i128::MIN).as_signed_bytes_be().len(), 16);
        assert_eq!(CqlVarint::from(i128::MIN).to_i128(), Some(i128::MIN));
        assert_eq!(CqlVarint::from(i128::MAX).to_i64(), None);
        assert_eq!(i64::try_from(&CqlVarint::from(i64::MIN)).unwrap(), i64::MIN);
        assert!(i64::try_from(&CqlVarint::from(i128::from(i64::MAX) + 1)).is_err());
        assert_eq!(
            CqlVarint::from(u64::MAX).as_signed_bytes_be(),
            [0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        // decimal 1.23: scale 2 as [int], then varint 123.
        let mut buf = Vec::new();
        CqlValue::Decimal(CqlDecimal::new(123, 2))
            .encode(&ColumnType::Decimal, &mut buf)
            .unwrap();
        assert_eq!(buf, [0, 0, 0, 2, 123]);
        // -0.5: scale 1, varint -5.
        assert_eq!(
            CqlValue::decode(&ColumnType::Decimal, &[0, 0, 0, 1, 0xfb]).unwrap(),
            CqlValue::Decimal(CqlDecimal::new(-5, 1))
        );
        assert!(CqlValue::decode(&ColumnType::Decimal, &[0, 0, 0, 1]).is_err());
        assert!(CqlValue::decode(&ColumnType::Decimal, &[0, 0]).is_err());
    }

    #[test]
    fn duration_vints_are_byte_exact() {
        let enc = |months, days, nanoseconds| {
            let mut buf = Vec::new();
            CqlValue::Duration(CqlDuration {
                months,
                days,
                nanoseconds,
            })
            .encode(&ColumnType::Duration, &mut buf)
            .unwrap();
            buf
        };
        // -1 zig-zags to 1; 64 to 128, which takes two bytes (0b10 prefix).
        assert_eq!(enc(-1, 0, 0), [1, 0, 0]);
        assert_eq!(enc(64, 0, 0), [0x80, 0x80, 0, 0]);
        // i64::MIN zig-zags to u64::MAX: nine bytes, 0xff then eight 0xff.
        assert_eq!(enc(0, 0, i64::MIN), [&[0u8, 0][..], &[0xff; 9]].concat());
        // Months past i32 are refused, as are trailing bytes and truncated vints.
        let mut big = Vec::new();
        put_signed_vint(&mut big, i64::from(i32::MAX) + 1);
        big.extend_from_slice(&[0, 0]);
        assert!(CqlValue::decode(&ColumnType::Duration, &big).is_err());
        assert!(CqlValue::decode(&ColumnType::Duration, &[0, 0, 0, 0]).is_err());
        assert!(CqlValue::decode(&ColumnType::Duration, &[0, 0, 0xc0, 1]).is_err());
        assert!(CqlDuration::new(1, -1, 0).is_err());
        assert!(CqlDuration::new(-1, -1, -5).is_ok());
    }

    #[test]
    fn vectors_follow_cassandra_element_sizes() {
        // smallint is variable-length for Cassandra's vectors: each element has a vint length.
        let vs = ColumnType::Vector {
            element: Box::new(ColumnType::Smallint),
            dimension: 2,
        };
        let b = rt(
            CqlValue::Vector(vec![CqlValue::Smallint(1), CqlValue::Smallint(-1)]),
            vs,
        );
        assert_eq!(b, [2, 0, 1, 2, 0xff, 0xff]);
        // A vector of fixed-size vectors is fixed-size: no lengths at all.
        let inner = ColumnType::Vector {
            element: Box::new(ColumnType::Int),
            dimension: 2,
        };
        let outer = ColumnType::Vector {
            element: Box::new(inner),
            dimension: 2,
        };
        let v = |a, b| CqlValue::Vector(vec![CqlValue::Int(a), CqlValue::Int(b)]);
        assert_eq!(
            rt(CqlValue::Vector(vec![v(1, 2), v(3, 4)]), outer).len(),
            16
        );
        // A list of vectors of text (variable inside variable).
        let lt = ColumnType::List(Box::new(ColumnType::Vector {
            element: Box::new(ColumnType::Varchar),
            dimension: 1,
        }));
        rt(
            CqlValue::List(vec![CqlValue::Vector(vec![CqlValue::Text("é".into())])]),
            lt,
        );
        // Zero-sized elements would let a huge dimension be read from nothing.
        let zero = ColumnType::Vector {
            element: Box::new(ColumnType::Vector {
                element: Box::new(ColumnType::Int),
                dimension: 0,
            }),
            dimension: u32::MAX,
        };
        assert!(CqlValue::decode(&zero, &[]).is_err());
        // Trailing bytes after the last element.
        let vf = ColumnType::Vector {
            element: Box::new(ColumnType::Float),
            dimension: 1,
        };
        assert!(CqlValue::decode(&vf, &[0; 5]).is_err());
    }

    #[test]
    fn nested_collections_and_hostile_nesting() {
        let t = ColumnType::Map(
            Box::new(ColumnType::Int),
            Box::new(ColumnType::Set(Box::new(ColumnType::Tuple(vec![
                ColumnType::Varchar,
                ColumnType::List(Box::new(ColumnType::Bigint)),
            ])))),
        );
        rt(
            CqlValue::Map(vec![
                (
                    CqlValue::Int(1),
                    CqlValue::Set(vec![CqlValue::Tuple(vec![
                        Some(CqlValue::Text("a".into())),
                        Some(CqlValue::List(vec![CqlValue::Bigint(7)])),
                    ])]),
                ),
                (CqlValue::Int(2), CqlValue::Set(vec![])),
            ]),
            t,
        );
        // Well-formed values nested up to the limit decode; deeper ones are refused rather
        // than recursed into.
        let nested = |levels: usize| {
            let mut t = ColumnType::Int;
            let mut bytes = vec![0, 0, 0, 1];
            for _ in 0..levels {
                t = ColumnType::List(Box::new(t));
                let mut outer = vec![0, 0, 0, 1];
                outer.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                outer.extend_from_slice(&bytes);
                bytes = outer;
            }
            CqlValue::decode(&t, &bytes)
        };
        assert!(nested(MAX_TYPE_DEPTH).is_ok());
        let err = nested(MAX_TYPE_DEPTH + 1).unwrap_err();
        assert!(err.to_string().contains("nested deeper"), "{err}");
        // Map with a negative count, a null key, a count past the end.
        let m = ColumnType::Map(Box::new(ColumnType::Int), Box::new(ColumnType::Int));
        assert!(CqlValue::decode(&m, &[0x80, 0, 0, 0]).is_err());
        assert!(CqlValue::decode(&m, &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]).is_err());
        assert!(CqlValue::decode(&m, &[0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        // A UDT with more fields than its type, a tuple missing a field.
        let udt = ColumnType::Udt {
            keyspace: "ks".into(),
            name: "u".into(),
            fields: vec![("a".into(), ColumnType::Int)],
        };
        assert!(CqlValue::decode(&udt, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).is_err());
        let tuple = ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Int]);
        assert!(CqlValue::decode(&tuple, &[0xff, 0xff, 0xff, 0xff]).is_err());
        // A UDT value naming a field its type lacks is refused on encode.
        assert!(CqlValue::Udt(vec![("zzz".into(), None)])
            .encode(&udt, &mut Vec::new())
            .is_err());
    }
}
