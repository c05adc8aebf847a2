//! A [`CqlValue`] written as a value of a given type, checked to fit it, every type's wire
//! format, with the nesting depth bounded.

use std::net::IpAddr;

use bytes::BufMut;

use super::collections::{count_i32, put_len_prefixed, vector_element_size};
use super::cql_value::CqlValue;
use super::cursor::{put_signed_vint, put_unsigned_vint};
use super::result::ValueResult;
use super::time::CqlTime;
use super::type_name::type_name;
use super::uuids::check_timeuuid;
use crate::error::{Result, ValueError};
use crate::types::{ColumnType, MAX_TYPE_DEPTH};

impl CqlValue {
    /// Encodes this value as a value of `typ` (without the `[bytes]` length), checking that
    /// it fits the type. On error `buf` may hold part of the value.
    pub fn encode(&self, typ: &ColumnType, buf: &mut impl BufMut) -> Result<()> {
        Ok(encode_at(self, typ, buf, 0)?)
    }

    /// [`CqlValue::encode`] with the bare reason as the error, for callers adding context.
    pub(crate) fn encode_reason(&self, typ: &ColumnType, buf: &mut impl BufMut) -> ValueResult<()> {
        encode_at(self, typ, buf, 0)
    }
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
