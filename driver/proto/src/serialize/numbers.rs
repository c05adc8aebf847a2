//! Numbers and booleans as CQL values: the integers (also as `varint`), floats, `bool`,
//! [`CqlVarint`] and [`CqlDecimal`].

use bytes::{BufMut, BytesMut};

use super::macros::{scalar, via_cql_value};
use super::value_trait::{mismatch, SerializeValue};
use crate::types::ColumnType;
use crate::value::{CqlDecimal, CqlValue, CqlVarint, ValueResult};

scalar!(i8, ColumnType::Tinyint, |v, typ, buf| {
    ColumnType::Tinyint => buf.put_i8(*v),
    ColumnType::Varint => buf.put_slice(CqlVarint::from(i64::from(*v)).as_signed_bytes_be()),
});
scalar!(i16, ColumnType::Smallint, |v, typ, buf| {
    ColumnType::Smallint => buf.put_i16(*v),
    ColumnType::Varint => buf.put_slice(CqlVarint::from(i64::from(*v)).as_signed_bytes_be()),
});
scalar!(i32, ColumnType::Int, |v, typ, buf| {
    ColumnType::Int => buf.put_i32(*v),
    ColumnType::Varint => buf.put_slice(CqlVarint::from(i64::from(*v)).as_signed_bytes_be()),
});
scalar!(i64, ColumnType::Bigint, |v, typ, buf| {
    ColumnType::Bigint | ColumnType::Counter => buf.put_i64(*v),
    ColumnType::Varint => buf.put_slice(CqlVarint::from(*v).as_signed_bytes_be()),
});
scalar!(f32, ColumnType::Float, |v, typ, buf| { ColumnType::Float => buf.put_f32(*v) });
scalar!(f64, ColumnType::Double, |v, typ, buf| { ColumnType::Double => buf.put_f64(*v) });
scalar!(bool, ColumnType::Boolean, |v, typ, buf| { ColumnType::Boolean => buf.put_u8(u8::from(*v)) });

scalar!(CqlVarint, ColumnType::Varint, |v, typ, buf| {
    ColumnType::Varint => buf.put_slice(v.as_signed_bytes_be()),
});

via_cql_value!(CqlDecimal, Decimal, ColumnType::Decimal);
