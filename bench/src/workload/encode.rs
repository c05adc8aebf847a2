//! Generated values written as the CQL bytes of a bind marker's column type, with no
//! allocation: the same bytes for every backend (each driver takes them pre-serialized).
//!
//! A column's type is a [`CqlType`]: a scalar [`CqlKind`], or a list, set, map, tuple, user
//! type or vector of further types, built once per prepared statement by each backend from
//! its driver's type description. Composite values ([`Value::Composite`]) are encoded by
//! recursion, element by element as they are evaluated:
//! - list/set: `[int]` count, then each element as `[bytes]` (`[int]` length, -1 for null);
//!   map: count, then key and value `[bytes]` per entry; tuple and user type: each field as
//!   `[bytes]` (null allowed), as many as the type has;
//! - vector (Cassandra 5 `VectorType`): exactly `dimension` elements, no count and no nulls;
//!   an element of a fixed-size type ([`vector_element_size`]) is its bytes alone, any other
//!   is preceded by its length as an unsigned vint.
//!
//! An element's length comes before its bytes: a sink that can rewrite what it holds
//! ([`Sink::position`]: a frame buffer) gets a placeholder patched afterwards; an append-only
//! sink (scylla's cell builder) gets the length from a counting pass over the element first
//! (the same evaluation into [`Counter`], which stores nothing). Either way, no allocation.

use std::fmt;
use std::sync::Arc;

use super::expr::{mix, Composite, CompositeKind, EvalError, Value};

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

impl CqlKind {
    /// The CQL name.
    pub fn cql_name(self) -> &'static str {
        match self {
            CqlKind::Ascii => "ascii",
            CqlKind::BigInt => "bigint",
            CqlKind::Blob => "blob",
            CqlKind::Boolean => "boolean",
            CqlKind::Counter => "counter",
            CqlKind::Date => "date",
            CqlKind::Double => "double",
            CqlKind::Float => "float",
            CqlKind::Int => "int",
            CqlKind::SmallInt => "smallint",
            CqlKind::Text => "text",
            CqlKind::Time => "time",
            CqlKind::Timestamp => "timestamp",
            CqlKind::TimeUuid => "timeuuid",
            CqlKind::TinyInt => "tinyint",
            CqlKind::Uuid => "uuid",
            CqlKind::Varint => "varint",
            CqlKind::Other => "unsupported type",
        }
    }
}

/// A column's type as the bench generates values for it: a scalar, or a composite of
/// further types. Built once per prepared statement; cloning is a reference count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CqlType {
    /// A scalar type.
    Scalar(CqlKind),
    /// `list<T>`.
    List(Arc<CqlType>),
    /// `set<T>`.
    Set(Arc<CqlType>),
    /// `map<K, V>`.
    Map(Arc<(CqlType, CqlType)>),
    /// `tuple<T1, ...>`.
    Tuple(Arc<[CqlType]>),
    /// A user-defined type: its name and its fields in declaration order.
    Udt(Arc<UdtType>),
    /// `vector<T, dimension>`.
    Vector(Arc<CqlType>, u32),
}

/// A user-defined type's name and fields.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UdtType {
    /// Its name (without keyspace).
    pub name: String,
    /// Field names and types, in declaration order.
    pub fields: Vec<(String, CqlType)>,
}

impl From<CqlKind> for CqlType {
    fn from(k: CqlKind) -> Self {
        CqlType::Scalar(k)
    }
}

impl CqlType {
    /// Whether a set or a map is anywhere in the type: then the server's stored order
    /// (sorted, de-duplicated) need not be the order the bench wrote.
    pub fn has_unordered(&self) -> bool {
        match self {
            CqlType::Scalar(_) => false,
            CqlType::Set(_) | CqlType::Map(_) => true,
            CqlType::List(e) | CqlType::Vector(e, _) => e.has_unordered(),
            CqlType::Tuple(ts) => ts.iter().any(CqlType::has_unordered),
            CqlType::Udt(u) => u.fields.iter().any(|(_, t)| t.has_unordered()),
        }
    }
}

impl fmt::Display for CqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CqlType::Scalar(k) => f.write_str(k.cql_name()),
            CqlType::List(e) => write!(f, "list<{e}>"),
            CqlType::Set(e) => write!(f, "set<{e}>"),
            CqlType::Map(kv) => write!(f, "map<{}, {}>", kv.0, kv.1),
            CqlType::Tuple(ts) => {
                f.write_str("tuple<")?;
                for (k, t) in ts.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(">")
            }
            CqlType::Udt(u) => {
                write!(f, "{} {{", u.name)?;
                for (k, (name, t)) in u.fields.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name} {t}")?;
                }
                f.write_str("}")
            }
            CqlType::Vector(e, d) => write!(f, "vector<{e}, {d}>"),
        }
    }
}

/// The column type a generated value is written as when no driver has described the column
/// (the null backend, which prepares against no server): an integer as `bigint`, a float as
/// `double`, text and strings as `text`, and so on; a composite by its generator, its
/// elements' types from its element 0 (a tuple: each field). The same bytes a real column
/// of that type gets, so argument generation costs what it costs against a node.
pub fn natural_type(value: &Value<'_>) -> CqlType {
    match value {
        Value::Int(_) => CqlType::Scalar(CqlKind::BigInt),
        Value::Float(_) => CqlType::Scalar(CqlKind::Double),
        Value::Bool(_) => CqlType::Scalar(CqlKind::Boolean),
        Value::Text { .. } | Value::Str(_) => CqlType::Scalar(CqlKind::Text),
        Value::Blob { .. } | Value::Null => CqlType::Scalar(CqlKind::Blob),
        Value::Uuid(_) => CqlType::Scalar(CqlKind::Uuid),
        Value::Composite(c) => {
            let part = |j: u32, part: usize| {
                c.element(j, part)
                    .map_or(CqlType::Scalar(CqlKind::Blob), |v| natural_type(&v))
            };
            match c.kind() {
                CompositeKind::List => CqlType::List(Arc::new(part(0, 0))),
                CompositeKind::Set => CqlType::Set(Arc::new(part(0, 0))),
                CompositeKind::Map => CqlType::Map(Arc::new((part(0, 0), part(0, 1)))),
                CompositeKind::Vector => {
                    let dimension = c
                        .constant_len()
                        .and_then(|n| u32::try_from(n).ok())
                        .unwrap_or(c.len());
                    CqlType::Vector(Arc::new(part(0, 0)), dimension)
                }
                CompositeKind::Tuple => CqlType::Tuple((0..c.len()).map(|j| part(j, 0)).collect()),
            }
        }
    }
}

/// The size of a vector element of type `t` when Cassandra 5 writes it without a length
/// (its `valueLengthIfFixed`): boolean, int, float, bigint, double, timestamp, uuid, timeuuid
/// and vectors of those. Every other element (tinyint, smallint, date, time, text, ...) is
/// preceded by an unsigned vint length.
pub fn vector_element_size(t: &CqlType) -> Option<usize> {
    match t {
        CqlType::Scalar(CqlKind::Boolean) => Some(1),
        CqlType::Scalar(CqlKind::Int | CqlKind::Float) => Some(4),
        CqlType::Scalar(CqlKind::BigInt | CqlKind::Double | CqlKind::Timestamp) => Some(8),
        CqlType::Scalar(CqlKind::Uuid | CqlKind::TimeUuid) => Some(16),
        CqlType::Vector(e, d) => vector_element_size(e)?.checked_mul(*d as usize),
        _ => None,
    }
}

/// Where encoded bytes go (a frame buffer, or a scratch vector).
pub trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// The number of bytes held, for a sink that can rewrite them ([`Sink::patch`]): an
    /// element's length is then patched in after its bytes. `None` (the default): the sink
    /// is append-only, and lengths are counted before the bytes are written.
    fn position(&self) -> Option<usize> {
        None
    }

    /// Overwrites the 4 bytes at `at` (a [`Sink::position`] taken earlier).
    fn patch(&mut self, _at: usize, _bytes: [u8; 4]) {}
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn position(&self) -> Option<usize> {
        Some(self.len())
    }

    fn patch(&mut self, at: usize, bytes: [u8; 4]) {
        if let Some(dst) = self.get_mut(at..at + 4) {
            dst.copy_from_slice(&bytes);
        }
    }
}

impl Sink for bytes::BytesMut {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn position(&self) -> Option<usize> {
        Some(self.len())
    }

    fn patch(&mut self, at: usize, bytes: [u8; 4]) {
        if let Some(dst) = self.get_mut(at..at + 4) {
            dst.copy_from_slice(&bytes);
        }
    }
}

/// A sink that only counts: the length of a value before it is written to an append-only
/// sink. It reports a position (its count) so that nested lengths are not counted again.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counter(pub usize);

impl Sink for Counter {
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }

    fn position(&self) -> Option<usize> {
        Some(self.0)
    }

    fn patch(&mut self, _at: usize, _bytes: [u8; 4]) {}
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

/// Why a generator's values cannot go to a column of a type, found when a statement is
/// prepared ([`compatible`]); the message says what does not fit, from the outside in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    /// A value whose shape is not the column's (an integer for a `list<int>`, a list for a
    /// `set<text>`).
    #[error("{shape} cannot be bound to a {ty} value")]
    Shape {
        /// The value's shape, as a message names it (`an integer`, `a list`).
        shape: String,
        /// The column's type.
        ty: CqlType,
    },
    /// A vector of a constant length other than the type's dimension.
    #[error("vector({len}, ...) for a {ty} value: the lengths differ")]
    VectorLength {
        /// The generator's length.
        len: i64,
        /// The column's type.
        ty: CqlType,
    },
    /// A tuple with another number of fields than the tuple type.
    #[error("a tuple of {len} for a {ty} value of {fields}")]
    TupleArity {
        /// The generator's fields.
        len: u32,
        /// The column's type.
        ty: CqlType,
        /// The type's fields.
        fields: usize,
    },
    /// A tuple with another number of fields than the user type.
    #[error("a tuple of {len} for the user type {ty} of {fields} fields")]
    UdtArity {
        /// The generator's fields.
        len: u32,
        /// The column's type.
        ty: CqlType,
        /// The user type's fields.
        fields: usize,
    },
    /// An element, key, value or field of a composite that does not fit.
    #[error("{part}: {source}")]
    Part {
        /// Which part.
        part: Part,
        /// Why it does not fit.
        #[source]
        source: Box<FitError>,
    },
    /// An element, key, value or field of a composite that could not be computed.
    #[error("{part}: {source}")]
    Eval {
        /// Which part.
        part: Part,
        /// Why it could not.
        #[source]
        source: EvalError,
    },
}

/// A part of a composite value, as a [`FitError`] names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// An element of a list, set or vector.
    Element,
    /// A map's key.
    Key,
    /// A map's value.
    Value,
    /// A tuple's field, counted from 1.
    Field(usize),
    /// A user type's field, by name.
    UdtField(String),
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::Element => f.write_str("element"),
            Part::Key => f.write_str("key"),
            Part::Value => f.write_str("value"),
            Part::Field(n) => write!(f, "field {n}"),
            Part::UdtField(name) => write!(f, "field `{name}`"),
        }
    }
}

/// Checks, when a statement is prepared, that values of this shape can go to a `ty` column:
/// recursively, composites against the type's shape (a tuple's arity against the type's
/// fields, a constant vector length against its dimension) and one sample element against
/// the element type. `sample` is the generator's value for iteration 0. The error says what
/// does not fit, from the outside in.
pub fn compatible(sample: &Value<'_>, ty: &CqlType) -> Result<(), FitError> {
    match (sample, ty) {
        (Value::Null, _) => Ok(()),
        (Value::Composite(c), _) => composite_fits(c, ty),
        (v, CqlType::Scalar(k)) if scalar_fits(v, *k) => Ok(()),
        (v, _) => Err(FitError::Shape {
            shape: describe(v),
            ty: ty.clone(),
        }),
    }
}

/// A value's shape for a message.
fn describe(v: &Value<'_>) -> String {
    match v {
        Value::Int(_) => "an integer".into(),
        Value::Float(_) => "a float".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Text { .. } => "text".into(),
        Value::Blob { .. } => "a blob".into(),
        Value::Str(_) => "a string".into(),
        Value::Uuid(_) => "a uuid".into(),
        Value::Composite(c) => format!("a {}", c.kind().name()),
        Value::Null => "null".into(),
    }
}

fn element_fits(
    c: &Composite<'_>,
    j: u32,
    at: usize,
    ty: &CqlType,
    part: Part,
) -> Result<(), FitError> {
    let v = c.element(j, at).map_err(|source| FitError::Eval {
        part: part.clone(),
        source,
    })?;
    compatible(&v, ty).map_err(|e| FitError::Part {
        part,
        source: Box::new(e),
    })
}

fn composite_fits(c: &Composite<'_>, ty: &CqlType) -> Result<(), FitError> {
    use CompositeKind as G;
    match (c.kind(), ty) {
        (G::List, CqlType::List(e)) | (G::Set, CqlType::Set(e)) => {
            element_fits(c, 0, 0, e, Part::Element)
        }
        (G::Map, CqlType::Map(kv)) => {
            element_fits(c, 0, 0, &kv.0, Part::Key)?;
            element_fits(c, 0, 1, &kv.1, Part::Value)
        }
        (G::Vector, CqlType::Vector(e, dim)) => {
            if let Some(n) = c.constant_len() {
                if n != i64::from(*dim) {
                    return Err(FitError::VectorLength {
                        len: n,
                        ty: ty.clone(),
                    });
                }
            }
            element_fits(c, 0, 0, e, Part::Element)
        }
        (G::Tuple, CqlType::Tuple(ts)) => {
            if c.len() as usize != ts.len() {
                return Err(FitError::TupleArity {
                    len: c.len(),
                    ty: ty.clone(),
                    fields: ts.len(),
                });
            }
            for (k, t) in ts.iter().enumerate() {
                element_fits(c, k as u32, 0, t, Part::Field(k + 1))?;
            }
            Ok(())
        }
        (G::Tuple, CqlType::Udt(u)) => {
            if c.len() as usize != u.fields.len() {
                return Err(FitError::UdtArity {
                    len: c.len(),
                    ty: ty.clone(),
                    fields: u.fields.len(),
                });
            }
            for (k, (name, t)) in u.fields.iter().enumerate() {
                element_fits(c, k as u32, 0, t, Part::UdtField(name.clone()))?;
            }
            Ok(())
        }
        (kind, _) => Err(FitError::Shape {
            shape: format!("a {}", kind.name()),
            ty: ty.clone(),
        }),
    }
}

fn scalar_fits(sample: &Value<'_>, kind: CqlKind) -> bool {
    use CqlKind as K;
    match sample {
        Value::Null => true,
        Value::Composite(_) => false,
        Value::Int(_) | Value::Float(_) => !matches!(kind, K::Other | K::Uuid | K::TimeUuid),
        Value::Bool(_) => matches!(kind, K::Boolean),
        Value::Text { .. } | Value::Blob { .. } | Value::Str(_) => {
            matches!(kind, K::Text | K::Ascii | K::Blob)
        }
        Value::Uuid(_) => matches!(kind, K::Uuid | K::TimeUuid | K::Text | K::Ascii | K::Blob),
    }
}

/// Writes `value` as the content (without the length prefix) of a `ty` cell.
pub fn encode(value: Value<'_>, ty: &CqlType, out: &mut impl Sink) -> Result<Encoded, EvalError> {
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
pub fn encoded_len(value: Value<'_>, ty: &CqlType) -> Result<usize, EvalError> {
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

/// Writes a scalar `value` as the content of a `kind` cell.
pub fn encode_scalar(
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
        encode(v, &k.into(), &mut out).unwrap();
        out
    }

    #[test]
    fn a_generators_natural_type_takes_its_values() {
        use super::super::expr::Expr;
        let p = |name: &str| (name == "rows").then_some(super::super::expr::ParamValue::Int(10));
        let natural = |text: &str| {
            let e = Expr::compile(text, 1, &p).unwrap();
            let t = natural_type(&e.eval(3).unwrap());
            compatible(&e.eval(3).unwrap(), &t).unwrap();
            t.to_string()
        };
        assert_eq!(natural("hash(i) % rows"), "bigint");
        assert_eq!(natural("i * 0.5"), "double");
        assert_eq!(natural("text(8)"), "text");
        assert_eq!(natural("'x'"), "text");
        assert_eq!(natural("blob(64)"), "blob");
        assert_eq!(natural("uuid()"), "uuid");
        assert_eq!(natural("list(3, i)"), "list<bigint>");
        assert_eq!(natural("set(2, text(4))"), "set<text>");
        assert_eq!(natural("map(2, j, 1.5)"), "map<bigint, double>");
        assert_eq!(natural("vector(3, 0.5)"), "vector<double, 3>");
        assert_eq!(
            natural("tuple(i, 'a', blob(2))"),
            "tuple<bigint, text, blob>"
        );
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
        let t = |k: CqlKind| CqlType::Scalar(k);
        assert!(encode(Value::Bool(true), &t(CqlKind::Int), &mut out).is_err());
        assert!(encode(Value::Uuid(u), &t(CqlKind::Int), &mut out).is_err());
        assert_eq!(
            encode(Value::Null, &t(CqlKind::Other), &mut out).unwrap(),
            Encoded::Null
        );
        assert!(compatible(&Value::Int(1), &t(CqlKind::Text)).is_ok());
        assert!(compatible(&Value::Bool(true), &t(CqlKind::Text)).is_err());
    }

    use crate::workload::expr::Expr;

    fn int() -> CqlType {
        CqlKind::Int.into()
    }

    fn text() -> CqlType {
        CqlKind::Text.into()
    }

    fn list(e: CqlType) -> CqlType {
        CqlType::List(Arc::new(e))
    }

    fn expr(text: &str) -> Expr {
        Expr::compile(text, 3, &|_| None).unwrap()
    }

    /// An append-only sink, as scylla's cell builder is: lengths are counted first.
    struct AppendOnly(Vec<u8>);

    impl Sink for AppendOnly {
        fn put(&mut self, bytes: &[u8]) {
            self.0.extend_from_slice(bytes);
        }
    }

    /// The bytes of `text` at iteration `i` for `ty`, checked to be the same through a
    /// patching sink and an append-only one, and to fit by `compatible`.
    fn bytes(text: &str, ty: &CqlType, i: u64) -> Vec<u8> {
        let e = expr(text);
        compatible(&e.eval(0).unwrap(), ty).unwrap();
        let mut patched = Vec::new();
        encode(e.eval(i).unwrap(), ty, &mut patched).unwrap();
        let mut appended = AppendOnly(Vec::new());
        encode(e.eval(i).unwrap(), ty, &mut appended).unwrap();
        assert_eq!(
            patched, appended.0,
            "{text}: both sinks write the same bytes"
        );
        assert_eq!(encoded_len(e.eval(i).unwrap(), ty).unwrap(), patched.len());
        patched
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn lists_sets_and_maps_are_counted_cells() {
        assert_eq!(
            bytes("list(3, j * 2)", &list(int()), 0),
            cat(&[
                &[0, 0, 0, 3],
                &[0, 0, 0, 4, 0, 0, 0, 0],
                &[0, 0, 0, 4, 0, 0, 0, 2],
                &[0, 0, 0, 4, 0, 0, 0, 4]
            ])
        );
        assert_eq!(
            bytes("set(2, 'ab')", &CqlType::Set(Arc::new(text())), 0),
            cat(&[&[0, 0, 0, 2], &[0, 0, 0, 2], b"ab", &[0, 0, 0, 2], b"ab"])
        );
        let map = CqlType::Map(Arc::new((text(), CqlKind::BigInt.into())));
        assert_eq!(
            bytes("map(1, 'k', i + j)", &map, 5),
            cat(&[
                &[0, 0, 0, 1],
                &[0, 0, 0, 1],
                b"k",
                &[0, 0, 0, 8],
                &5i64.to_be_bytes()
            ])
        );
        // Empty, and null elements (the server refuses those, but they encode).
        assert_eq!(bytes("list(0, j)", &list(int()), 0), vec![0, 0, 0, 0]);
        assert_eq!(
            bytes("list(2, null)", &list(int()), 0),
            vec![0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        // The count is evaluated per iteration.
        let n = |i| bytes("list(i % 4, 1)", &list(int()), i)[3];
        assert_eq!((n(0), n(1), n(6)), (0, 1, 2));
    }

    #[test]
    fn tuples_and_user_types_are_fields_in_order() {
        let tuple = CqlType::Tuple(Arc::from([int(), text()]));
        assert_eq!(
            bytes("tuple(7, 'x')", &tuple, 0),
            cat(&[&[0, 0, 0, 4, 0, 0, 0, 7], &[0, 0, 0, 1], b"x"])
        );
        assert_eq!(
            bytes("tuple(i, null)", &tuple, 1),
            vec![0, 0, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]
        );
        let udt = CqlType::Udt(Arc::new(UdtType {
            name: "point".into(),
            fields: vec![("x".into(), int()), ("label".into(), text())],
        }));
        assert_eq!(
            bytes("udt(7, 'x')", &udt, 0),
            bytes("tuple(7, 'x')", &tuple, 0)
        );
    }

    #[test]
    fn nested_composites_recurse_with_their_own_positions() {
        // list<frozen<tuple<int, text>>>: j is the list's position inside the tuple.
        let t = list(CqlType::Tuple(Arc::from([int(), text()])));
        assert_eq!(
            bytes("list(2, tuple(j, 'x'))", &t, 0),
            cat(&[
                &[0, 0, 0, 2],
                &[0, 0, 0, 13, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1],
                b"x",
                &[0, 0, 0, 13, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1],
                b"x",
            ])
        );
        // map<text, frozen<list<int>>>: the inner j is the inner list's position.
        let m = CqlType::Map(Arc::new((text(), list(int()))));
        let b = bytes("map(2, text(4), list(2, j + 10))", &m, 9);
        let inner = cat(&[
            &[0, 0, 0, 2],
            &[0, 0, 0, 4, 0, 0, 0, 10],
            &[0, 0, 0, 4, 0, 0, 0, 11],
        ]);
        assert_eq!(b.len(), 4 + 2 * (4 + 4 + 4 + inner.len()));
        assert_eq!(&b[12..16], &(inner.len() as u32).to_be_bytes());
        assert_eq!(&b[16..16 + inner.len()], inner.as_slice());
        assert_ne!(
            &b[8..12],
            &b[16 + inner.len() + 4..16 + inner.len() + 8],
            "keys differ"
        );
    }

    #[test]
    fn vectors_have_no_count_and_prefix_only_variable_size_elements() {
        let floats = CqlType::Vector(Arc::new(CqlKind::Float.into()), 3);
        assert_eq!(
            bytes("vector(3, j * 0.5)", &floats, 0),
            cat(&[
                &0f32.to_be_bytes(),
                &0.5f32.to_be_bytes(),
                &1f32.to_be_bytes()
            ])
        );
        let texts = CqlType::Vector(Arc::new(text()), 2);
        assert_eq!(bytes("vector(2, 'ab')", &texts, 0), b"\x02ab\x02ab");
        let long = bytes("vector(2, text(300))", &texts, 0);
        assert_eq!(&long[..2], &[0x81, 0x2c], "300 as a two-byte unsigned vint");
        assert_eq!(long.len(), 2 * 302);
        let mut out = Vec::new();
        let e = expr("vector(i, 1.0)");
        assert!(
            encode(e.eval(2).unwrap(), &floats, &mut out).is_err(),
            "2 of 3"
        );
        assert!(encode(expr("vector(3, null)").eval(0).unwrap(), &floats, &mut out).is_err());
    }

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

    #[test]
    fn composites_are_pure_and_their_elements_differ() {
        let t = list(CqlType::Tuple(Arc::from([text(), CqlKind::Uuid.into()])));
        let e = "list(uniform(1, 8), tuple(text(6), uuid()))";
        for i in 0..50 {
            assert_eq!(bytes(e, &t, i), bytes(e, &t, i));
        }
        assert_ne!(bytes(e, &t, 1), bytes(e, &t, 2));
        // Ten random elements of one iteration: all different.
        let b = bytes("list(10, uniform(0, 1000000000))", &list(int()), 4);
        let mut elems: Vec<&[u8]> = b[4..].chunks(8).collect();
        elems.sort();
        elems.dedup();
        assert_eq!(elems.len(), 10);
    }

    #[test]
    fn shapes_that_do_not_fit_are_errors_naming_what_differs() {
        let check = |text: &str, ty: &CqlType| {
            compatible(&expr(text).eval(0).unwrap(), ty).map_err(|e| e.to_string())
        };
        let set = CqlType::Set(Arc::new(text()));
        let e = check("list(3, 'a')", &set).unwrap_err();
        assert!(e.contains("list") && e.contains("set<text>"), "{e}");
        let e = check("set(3, true)", &set).unwrap_err();
        assert!(e.starts_with("element: a boolean"), "{e}");
        let tuple = CqlType::Tuple(Arc::from([int(), text()]));
        let e = check("tuple(1, 'a', 2)", &tuple).unwrap_err();
        assert!(e.contains("tuple of 3") && e.contains("of 2"), "{e}");
        let e = check("tuple(1, true)", &tuple).unwrap_err();
        assert!(e.starts_with("field 2"), "{e}");
        let floats = CqlType::Vector(Arc::new(CqlKind::Float.into()), 3);
        let e = check("vector(4, 1.0)", &floats).unwrap_err();
        assert!(e.contains("vector<float, 3>"), "{e}");
        assert!(
            check("vector(uniform(3, 4), 1.0)", &floats).is_ok(),
            "checked per request"
        );
        assert!(check("7", &list(int())).is_err());
        assert!(check("list(1, 7)", &int()).is_err());
        let map = CqlType::Map(Arc::new((text(), int())));
        let e = check("map(2, 'k', uuid())", &map).unwrap_err();
        assert!(e.starts_with("value: a uuid"), "{e}");
        assert!(check("null", &map).is_ok());
        // At run time too, a shape that does not fit is an error, never a panic.
        let mut out = Vec::new();
        assert!(encode(expr("list(1, 1)").eval(0).unwrap(), &set, &mut out).is_err());
        assert!(encode(Value::Int(1), &set, &mut out).is_err());
    }
}
