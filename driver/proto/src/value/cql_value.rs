//! [`CqlValue`], any CQL value tagged with its type (what it is called and the type it
//! naturally has), and the [`Unset`] marker.

use std::net::IpAddr;

use super::numbers::{CqlDecimal, CqlVarint};
use super::time::{CqlDate, CqlDuration, CqlTime, CqlTimestamp};
use crate::types::ColumnType;

/// The explicit "not set" marker: leaves the column's current value unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Unset;

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

impl CqlValue {
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
