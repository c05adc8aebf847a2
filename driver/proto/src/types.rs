//! Column types: the `[option]` type descriptions of spec section 4.2.5.2.
//!
//! Protocol v4 has no type id for `duration` or `vector`; Cassandra 5 sends them as custom
//! types named by their marshal class (`org.apache.cassandra.db.marshal.DurationType`,
//! `org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)`).
//! [`ColumnType::decode`] recognises those names and gives the real variants; encoding writes
//! them back the same way. Any other custom class stays [`ColumnType::Custom`].
//!
//! Invariant: decoding recurses at most [`MAX_TYPE_DEPTH`] levels, so a hostile type
//! description cannot exhaust the stack.

use bytes::BufMut;

use crate::error::{ProtoError, Result};
use crate::wire::{self, Reader};

/// How deeply collection, tuple, UDT and vector types may nest.
pub const MAX_TYPE_DEPTH: usize = 32;

const MARSHAL: &str = "org.apache.cassandra.db.marshal.";

/// A CQL column type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// A custom type, by its Java class name; values are opaque bytes.
    Custom(String),
    /// `ascii`.
    Ascii,
    /// `bigint`.
    Bigint,
    /// `blob`.
    Blob,
    /// `boolean`.
    Boolean,
    /// `counter`.
    Counter,
    /// `decimal`.
    Decimal,
    /// `double`.
    Double,
    /// `float`.
    Float,
    /// `int`.
    Int,
    /// `timestamp`.
    Timestamp,
    /// `uuid`.
    Uuid,
    /// `text` / `varchar`.
    Varchar,
    /// `varint`.
    Varint,
    /// `timeuuid`.
    Timeuuid,
    /// `inet`.
    Inet,
    /// `date`.
    Date,
    /// `time`.
    Time,
    /// `smallint`.
    Smallint,
    /// `tinyint`.
    Tinyint,
    /// `duration` (a custom type in v4).
    Duration,
    /// `list<T>`.
    List(Box<ColumnType>),
    /// `map<K, V>`.
    Map(Box<ColumnType>, Box<ColumnType>),
    /// `set<T>`.
    Set(Box<ColumnType>),
    /// A user-defined type.
    Udt {
        /// Keyspace of the type.
        keyspace: String,
        /// Name of the type.
        name: String,
        /// Field names and types, in declaration order.
        fields: Vec<(String, ColumnType)>,
    },
    /// `tuple<T1, ..., Tn>`.
    Tuple(Vec<ColumnType>),
    /// `vector<T, N>` (a custom type in v4).
    Vector {
        /// Element type.
        element: Box<ColumnType>,
        /// Number of elements.
        dimension: u32,
    },
}

impl ColumnType {
    /// Reads an `[option]` type description.
    pub fn decode(r: &mut Reader<'_>) -> Result<ColumnType> {
        Self::decode_at(r, 0)
    }

    fn decode_at(r: &mut Reader<'_>, depth: usize) -> Result<ColumnType> {
        if depth > MAX_TYPE_DEPTH {
            return Err(ProtoError::InvalidValue {
                what: "column type",
                detail: format!("nested deeper than {MAX_TYPE_DEPTH} levels"),
            });
        }
        let id = r.read_short("column type id")?;
        let next = |r: &mut Reader<'_>| Self::decode_at(r, depth + 1).map(Box::new);
        Ok(match id {
            0x0000 => {
                let class = r.read_string("custom type class")?;
                Self::from_class_name(class, depth)?
            }
            0x0001 => ColumnType::Ascii,
            0x0002 => ColumnType::Bigint,
            0x0003 => ColumnType::Blob,
            0x0004 => ColumnType::Boolean,
            0x0005 => ColumnType::Counter,
            0x0006 => ColumnType::Decimal,
            0x0007 => ColumnType::Double,
            0x0008 => ColumnType::Float,
            0x0009 => ColumnType::Int,
            0x000B => ColumnType::Timestamp,
            0x000C => ColumnType::Uuid,
            0x000D => ColumnType::Varchar,
            0x000E => ColumnType::Varint,
            0x000F => ColumnType::Timeuuid,
            0x0010 => ColumnType::Inet,
            0x0011 => ColumnType::Date,
            0x0012 => ColumnType::Time,
            0x0013 => ColumnType::Smallint,
            0x0014 => ColumnType::Tinyint,
            // v5's id for duration; accepted so a lenient server does not break us.
            0x0015 => ColumnType::Duration,
            0x0020 => ColumnType::List(next(r)?),
            0x0021 => {
                let k = next(r)?;
                ColumnType::Map(k, next(r)?)
            }
            0x0022 => ColumnType::Set(next(r)?),
            0x0030 => {
                let keyspace = r.read_string("UDT keyspace")?.to_owned();
                let name = r.read_string("UDT name")?.to_owned();
                let n = r.read_short("UDT field count")? as usize;
                // Reserve little up front: nested types would each reserve against the same
                // remaining input, multiplying memory by the depth. Growth follows real fields.
                let mut fields = Vec::with_capacity(n.min(8));
                for _ in 0..n {
                    let field = r.read_string("UDT field name")?.to_owned();
                    fields.push((field, Self::decode_at(r, depth + 1)?));
                }
                ColumnType::Udt {
                    keyspace,
                    name,
                    fields,
                }
            }
            0x0031 => {
                let n = r.read_short("tuple arity")? as usize;
                let mut types = Vec::with_capacity(n.min(8));
                for _ in 0..n {
                    types.push(Self::decode_at(r, depth + 1)?);
                }
                ColumnType::Tuple(types)
            }
            other => {
                return Err(ProtoError::InvalidValue {
                    what: "column type id",
                    detail: format!("0x{other:04x} is not a CQL v4 type"),
                })
            }
        })
    }

    /// Maps a custom type's class name to a type (`DurationType`, `VectorType(...)`, or the
    /// class names of the native types when they appear nested in a vector).
    fn from_class_name(class: &str, depth: usize) -> Result<ColumnType> {
        if depth > MAX_TYPE_DEPTH {
            return Err(ProtoError::InvalidValue {
                what: "custom type class",
                detail: format!("nested deeper than {MAX_TYPE_DEPTH} levels"),
            });
        }
        let short = class.strip_prefix(MARSHAL).unwrap_or(class).trim();
        // Parameterised marshal classes: `Name(arg, arg, ...)`, as they appear inside a
        // vector's element type (Cassandra spells them out in full there).
        if let Some((name, args)) = short
            .split_once('(')
            .and_then(|(n, rest)| Some((n, rest.strip_suffix(')')?)))
        {
            let args = split_top_level(args);
            let bad = || ProtoError::InvalidValue {
                what: "custom type class",
                detail: format!("cannot parse {class:?}"),
            };
            let inner = |i: usize| -> Result<ColumnType> {
                let a = args.get(i).ok_or_else(bad)?;
                Self::from_class_name(a, depth + 1)
            };
            return Ok(match name {
                "VectorType" => {
                    let dimension = args
                        .get(1)
                        .and_then(|d| d.trim().parse::<u32>().ok())
                        .ok_or_else(bad)?;
                    ColumnType::Vector {
                        element: Box::new(inner(0)?),
                        dimension,
                    }
                }
                "FrozenType" | "ReversedType" => inner(0)?,
                "ListType" => ColumnType::List(Box::new(inner(0)?)),
                "SetType" => ColumnType::Set(Box::new(inner(0)?)),
                "MapType" => ColumnType::Map(Box::new(inner(0)?), Box::new(inner(1)?)),
                "TupleType" => {
                    ColumnType::Tuple((0..args.len()).map(inner).collect::<Result<Vec<_>>>()?)
                }
                // User types name their fields in hex inside the class: kept opaque.
                _ => ColumnType::Custom(class.to_owned()),
            });
        }
        Ok(match short {
            "AsciiType" => ColumnType::Ascii,
            "LongType" => ColumnType::Bigint,
            "BytesType" => ColumnType::Blob,
            "BooleanType" => ColumnType::Boolean,
            "CounterColumnType" => ColumnType::Counter,
            "DecimalType" => ColumnType::Decimal,
            "DoubleType" => ColumnType::Double,
            "FloatType" => ColumnType::Float,
            "Int32Type" => ColumnType::Int,
            "TimestampType" => ColumnType::Timestamp,
            "UUIDType" => ColumnType::Uuid,
            "UTF8Type" => ColumnType::Varchar,
            "IntegerType" => ColumnType::Varint,
            "TimeUUIDType" => ColumnType::Timeuuid,
            "InetAddressType" => ColumnType::Inet,
            "SimpleDateType" => ColumnType::Date,
            "TimeType" => ColumnType::Time,
            "ShortType" => ColumnType::Smallint,
            "ByteType" => ColumnType::Tinyint,
            "DurationType" => ColumnType::Duration,
            _ => ColumnType::Custom(class.to_owned()),
        })
    }

    /// The marshal class name Cassandra uses for this type, where v4 needs one (custom,
    /// duration, vector and the element types a vector names).
    pub fn class_name(&self) -> String {
        let simple = |s: &str| format!("{MARSHAL}{s}");
        match self {
            ColumnType::Custom(c) => c.clone(),
            ColumnType::Ascii => simple("AsciiType"),
            ColumnType::Bigint => simple("LongType"),
            ColumnType::Blob => simple("BytesType"),
            ColumnType::Boolean => simple("BooleanType"),
            ColumnType::Counter => simple("CounterColumnType"),
            ColumnType::Decimal => simple("DecimalType"),
            ColumnType::Double => simple("DoubleType"),
            ColumnType::Float => simple("FloatType"),
            ColumnType::Int => simple("Int32Type"),
            ColumnType::Timestamp => simple("TimestampType"),
            ColumnType::Uuid => simple("UUIDType"),
            ColumnType::Varchar => simple("UTF8Type"),
            ColumnType::Varint => simple("IntegerType"),
            ColumnType::Timeuuid => simple("TimeUUIDType"),
            ColumnType::Inet => simple("InetAddressType"),
            ColumnType::Date => simple("SimpleDateType"),
            ColumnType::Time => simple("TimeType"),
            ColumnType::Smallint => simple("ShortType"),
            ColumnType::Tinyint => simple("ByteType"),
            ColumnType::Duration => simple("DurationType"),
            // Cassandra 5 spells it with a space before the comma.
            ColumnType::Vector { element, dimension } => {
                format!(
                    "{MARSHAL}VectorType({} , {dimension})",
                    element.class_name()
                )
            }
            ColumnType::List(e) => format!("{MARSHAL}ListType({})", e.class_name()),
            ColumnType::Set(e) => format!("{MARSHAL}SetType({})", e.class_name()),
            ColumnType::Map(k, v) => {
                format!("{MARSHAL}MapType({},{})", k.class_name(), v.class_name())
            }
            ColumnType::Tuple(ts) => {
                let inner: Vec<String> = ts.iter().map(ColumnType::class_name).collect();
                format!("{MARSHAL}TupleType({})", inner.join(","))
            }
            ColumnType::Udt { name, .. } => format!("{MARSHAL}UserType({name})"),
        }
    }

    /// Writes this type as an `[option]`.
    pub fn encode(&self, buf: &mut impl BufMut) -> Result<()> {
        let id: u16 = match self {
            ColumnType::Custom(_) | ColumnType::Duration | ColumnType::Vector { .. } => {
                buf.put_u16(0x0000);
                return wire::put_string(buf, &self.class_name(), "custom type class");
            }
            ColumnType::Ascii => 0x0001,
            ColumnType::Bigint => 0x0002,
            ColumnType::Blob => 0x0003,
            ColumnType::Boolean => 0x0004,
            ColumnType::Counter => 0x0005,
            ColumnType::Decimal => 0x0006,
            ColumnType::Double => 0x0007,
            ColumnType::Float => 0x0008,
            ColumnType::Int => 0x0009,
            ColumnType::Timestamp => 0x000B,
            ColumnType::Uuid => 0x000C,
            ColumnType::Varchar => 0x000D,
            ColumnType::Varint => 0x000E,
            ColumnType::Timeuuid => 0x000F,
            ColumnType::Inet => 0x0010,
            ColumnType::Date => 0x0011,
            ColumnType::Time => 0x0012,
            ColumnType::Smallint => 0x0013,
            ColumnType::Tinyint => 0x0014,
            ColumnType::List(e) => {
                buf.put_u16(0x0020);
                return e.encode(buf);
            }
            ColumnType::Map(k, v) => {
                buf.put_u16(0x0021);
                k.encode(buf)?;
                return v.encode(buf);
            }
            ColumnType::Set(e) => {
                buf.put_u16(0x0022);
                return e.encode(buf);
            }
            ColumnType::Udt {
                keyspace,
                name,
                fields,
            } => {
                buf.put_u16(0x0030);
                wire::put_string(buf, keyspace, "UDT keyspace")?;
                wire::put_string(buf, name, "UDT name")?;
                buf.put_u16(count_u16(fields.len(), "UDT field count")?);
                for (field, t) in fields {
                    wire::put_string(buf, field, "UDT field name")?;
                    t.encode(buf)?;
                }
                return Ok(());
            }
            ColumnType::Tuple(ts) => {
                buf.put_u16(0x0031);
                buf.put_u16(count_u16(ts.len(), "tuple arity")?);
                for t in ts {
                    t.encode(buf)?;
                }
                return Ok(());
            }
        };
        buf.put_u16(id);
        Ok(())
    }
}

/// Splits `a, B(c, d), e` at the commas outside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

fn count_u16(n: usize, what: &'static str) -> Result<u16> {
    u16::try_from(n).map_err(|_| ProtoError::TooLong {
        what,
        len: n,
        limit: u16::MAX as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(t: &ColumnType) -> ColumnType {
        let mut buf = Vec::new();
        t.encode(&mut buf).unwrap();
        let mut r = Reader::new(&buf);
        let back = ColumnType::decode(&mut r).unwrap();
        r.expect_end("type").unwrap();
        back
    }

    #[test]
    fn nested_types_round_trip() {
        let t = ColumnType::Map(
            Box::new(ColumnType::Varchar),
            Box::new(ColumnType::List(Box::new(ColumnType::Tuple(vec![
                ColumnType::Int,
                ColumnType::Duration,
                ColumnType::Udt {
                    keyspace: "ks".into(),
                    name: "addr".into(),
                    fields: vec![("street".into(), ColumnType::Varchar)],
                },
            ])))),
        );
        assert_eq!(round_trip(&t), t);
    }

    #[test]
    fn vector_from_cassandra_class_name() {
        let class = "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)";
        let mut buf = vec![0, 0];
        wire::put_string(&mut buf, class, "t").unwrap();
        let t = ColumnType::decode(&mut Reader::new(&buf)).unwrap();
        assert_eq!(
            t,
            ColumnType::Vector {
                element: Box::new(ColumnType::Float),
                dimension: 3
            }
        );
        assert_eq!(crate::value::vector_element_size(&t), Some(12));
        assert_eq!(round_trip(&t), t);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut buf = Vec::new();
        for _ in 0..10_000 {
            buf.extend_from_slice(&0x0020u16.to_be_bytes());
        }
        buf.extend_from_slice(&0x0009u16.to_be_bytes());
        assert!(ColumnType::decode(&mut Reader::new(&buf)).is_err());
    }
}
