//! The column types the bench generates values for ([`CqlKind`], [`CqlType`]), and the type
//! a value is written as when no driver describes the column ([`natural_type`]).

use std::fmt;
use std::sync::Arc;

use crate::workload::expr::{CompositeKind, Value};

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
    pub(crate) fn cql_name(self) -> &'static str {
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
    pub(crate) name: String,
    /// Field names and types, in declaration order.
    pub(crate) fields: Vec<(String, CqlType)>,
}

impl From<CqlKind> for CqlType {
    fn from(k: CqlKind) -> Self {
        CqlType::Scalar(k)
    }
}

impl CqlType {
    /// Whether a set or a map is anywhere in the type: then the server's stored order
    /// (sorted, de-duplicated) need not be the order the bench wrote.
    pub(crate) fn has_unordered(&self) -> bool {
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
pub(crate) fn natural_type(value: &Value<'_>) -> CqlType {
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
pub(crate) fn vector_element_size(t: &CqlType) -> Option<usize> {
    match t {
        CqlType::Scalar(CqlKind::Boolean) => Some(1),
        CqlType::Scalar(CqlKind::Int | CqlKind::Float) => Some(4),
        CqlType::Scalar(CqlKind::BigInt | CqlKind::Double | CqlKind::Timestamp) => Some(8),
        CqlType::Scalar(CqlKind::Uuid | CqlKind::TimeUuid) => Some(16),
        CqlType::Vector(e, d) => vector_element_size(e)?.checked_mul(*d as usize),
        _ => None,
    }
}
