//! A [`CqlValue`] read from the bytes of a value of a given type, every type's wire format,
//! with the nesting depth bounded.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::collections::vector_elements;
use super::cql_value::CqlValue;
use super::cursor::{fixed, Cursor};
use super::numbers::{CqlDecimal, CqlVarint};
use super::result::ValueResult;
use super::text::text;
use super::time::{CqlDate, CqlDuration, CqlTime, CqlTimestamp};
use super::uuids::check_timeuuid;
use crate::error::{Result, ValueError};
use crate::types::{ColumnType, MAX_TYPE_DEPTH};

impl CqlValue {
    /// Decodes the bytes of one value of type `typ` (a zero-length value of a type that is
    /// never empty reads as [`CqlValue::Empty`]). Fails with
    /// [`ProtoError::InvalidCqlValue`](crate::ProtoError::InvalidCqlValue) saying why; the row
    /// reader reports the column instead.
    pub fn decode(typ: &ColumnType, bytes: &[u8]) -> Result<CqlValue> {
        Ok(decode_at(typ, bytes, 0)?)
    }

    /// [`CqlValue::decode`] with the bare reason as the error, for callers adding context.
    pub(crate) fn decode_reason(typ: &ColumnType, bytes: &[u8]) -> ValueResult<CqlValue> {
        decode_at(typ, bytes, 0)
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
