//! Rust values into CQL `[value]`s, checked against column types.
//!
//! [`SerializeValue`] writes one value's bytes for a given column type, or says why it does
//! not fit (an `i64` for an `int` column, a `Vec` for a `map`, a vector of the wrong
//! dimension). [`SerializeRow`] writes a whole row: tuples of serializable values (arity 0 to
//! 16), slices and `Vec`s of one serializable type (`CqlValue`, `&dyn SerializeValue`), and
//! named values ([`Named`], maps from names). Each of these is also a [`QueryValues`] (wrap
//! other rows in [`Bound`]), so they bind to QUERY, EXECUTE and BATCH; with the bind markers
//! known, the count and every type are checked and an error names the column
//! (``column 2 `age`: cannot serialize i64 as int``); without them, each value is written as
//! its Rust type's natural CQL type.
//!
//! Invariants: each `[value]` is written in place (length placeholder, bytes, patched
//! length), so binding a tuple of scalars and strings into a reused buffer allocates nothing;
//! a value that is refused is truncated away (an error from a row may leave earlier values,
//! which the message encoder truncates).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::{ProtoError, Result, ValueError};
use crate::metadata::ColumnSpec;
use crate::types::ColumnType;
use crate::value::{
    check_ascii, check_timeuuid, count_i32, vector_element_size, CqlDate, CqlDecimal, CqlDuration,
    CqlTime, CqlTimestamp, CqlUuid, CqlValue, CqlVarint, Unset, ValueResult,
};
use crate::values::QueryValues;

/// What a value writes instead of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `null` (length -1).
    Null,
    /// `not set` (length -2).
    Unset,
}

/// A Rust value that can be bound as a CQL value.
pub trait SerializeValue {
    /// The column type used when no bind-marker metadata is known (unprepared QUERY).
    fn natural_type(&self) -> ColumnType;

    /// Writes the value's bytes (no length prefix) as a value of `typ`, or says why it does
    /// not fit.
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()>;

    /// `Some` if this value is null or unset rather than bytes.
    fn special(&self) -> Option<Special> {
        None
    }
}

/// Writes `v` as a whole `[value]` (length, then bytes), for `typ` or its natural type.
pub fn write_value<T: SerializeValue + ?Sized>(
    v: &T,
    typ: Option<&ColumnType>,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    match v.special() {
        Some(Special::Null) => {
            buf.put_i32(-1);
            return Ok(());
        }
        Some(Special::Unset) => {
            buf.put_i32(-2);
            return Ok(());
        }
        None => {}
    }
    let start = buf.len();
    buf.put_i32(0);
    let result = match typ {
        Some(t) => v.write(t, buf),
        None => v.write(&v.natural_type(), buf),
    };
    if let Err(e) = result {
        buf.truncate(start);
        return Err(e);
    }
    let len = buf.len() - start - 4;
    let len = i32::try_from(len).map_err(|_| ValueError::ValueTooLong { len })?;
    buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

fn mismatch<T: ?Sized>(typ: &ColumnType) -> ValueError {
    ValueError::CannotSerialize {
        rust: std::any::type_name::<T>(),
        typ: crate::value::type_name(typ),
    }
}

macro_rules! scalar {
    ($t:ty, $natural:expr, |$v:ident, $typ:ident, $buf:ident| { $($arm:pat => $body:expr),+ $(,)? }) => {
        impl SerializeValue for $t {
            fn natural_type(&self) -> ColumnType {
                $natural
            }
            fn write(&self, $typ: &ColumnType, $buf: &mut BytesMut) -> ValueResult<()> {
                let $v = self;
                match $typ {
                    $($arm => $body,)+
                    #[allow(unreachable_patterns)]
                    _ => return Err(mismatch::<$t>($typ)),
                }
                Ok(())
            }
        }
    };
}

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
scalar!(str, ColumnType::Varchar, |v, typ, buf| {
    ColumnType::Varchar => buf.put_slice(v.as_bytes()),
    ColumnType::Ascii => {
        check_ascii(v.as_bytes())?;
        buf.put_slice(v.as_bytes())
    },
});
scalar!([u8], ColumnType::Blob, |v, typ, buf| {
    ColumnType::Blob | ColumnType::Custom(_) => buf.put_slice(v),
});
scalar!([u8; 16], ColumnType::Uuid, |v, typ, buf| {
    ColumnType::Uuid => buf.put_slice(v),
    ColumnType::Timeuuid => {
        check_timeuuid(v)?;
        buf.put_slice(v)
    },
});
impl SerializeValue for CqlUuid {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Uuid
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        match typ {
            ColumnType::Uuid | ColumnType::Timeuuid => self.0.write(typ, buf),
            _ => Err(mismatch::<Self>(typ)),
        }
    }
}

scalar!(Ipv4Addr, ColumnType::Inet, |v, typ, buf| { ColumnType::Inet => buf.put_slice(&v.octets()) });
scalar!(Ipv6Addr, ColumnType::Inet, |v, typ, buf| { ColumnType::Inet => buf.put_slice(&v.octets()) });
scalar!(CqlDate, ColumnType::Date, |v, typ, buf| { ColumnType::Date => buf.put_u32(v.0) });
scalar!(CqlTimestamp, ColumnType::Timestamp, |v, typ, buf| { ColumnType::Timestamp => buf.put_i64(v.0) });
scalar!(CqlTime, ColumnType::Time, |v, typ, buf| {
    ColumnType::Time => {
        buf.put_i64(CqlTime::checked(v.0)?.0)
    },
});
scalar!(CqlVarint, ColumnType::Varint, |v, typ, buf| {
    ColumnType::Varint => buf.put_slice(v.as_signed_bytes_be()),
});

macro_rules! via_cql_value {
    ($t:ty, $variant:ident, $natural:expr) => {
        impl SerializeValue for $t {
            fn natural_type(&self) -> ColumnType {
                $natural
            }
            fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
                // Cold types (decimal, duration): the value is cloned into a CqlValue once.
                CqlValue::$variant(self.clone()).encode_reason(typ, buf)
            }
        }
    };
}
via_cql_value!(CqlDecimal, Decimal, ColumnType::Decimal);
via_cql_value!(CqlDuration, Duration, ColumnType::Duration);

/// `uuid::Uuid` as a `uuid` (or, when it is a version-1 UUID, a `timeuuid`).
#[cfg(feature = "uuid")]
impl SerializeValue for uuid::Uuid {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Uuid
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        match typ {
            ColumnType::Uuid | ColumnType::Timeuuid => self.as_bytes().write(typ, buf),
            _ => Err(mismatch::<Self>(typ)),
        }
    }
}

impl SerializeValue for IpAddr {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Inet
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        match self {
            IpAddr::V4(a) => a.write(typ, buf),
            IpAddr::V6(a) => a.write(typ, buf),
        }
    }
}

impl SerializeValue for String {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Varchar
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_str().write(typ, buf)
    }
}

impl SerializeValue for Vec<u8> {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Blob
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_slice().write(typ, buf)
    }
}

impl SerializeValue for Bytes {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Blob
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_ref().write(typ, buf)
    }
}

impl SerializeValue for CqlValue {
    fn natural_type(&self) -> ColumnType {
        CqlValue::natural_type(self)
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.encode_reason(typ, buf)
    }
}

impl SerializeValue for Unset {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Blob
    }
    fn write(&self, _: &ColumnType, _: &mut BytesMut) -> ValueResult<()> {
        Ok(())
    }
    fn special(&self) -> Option<Special> {
        Some(Special::Unset)
    }
}

impl<T: SerializeValue> SerializeValue for Option<T> {
    fn natural_type(&self) -> ColumnType {
        self.as_ref().map_or(ColumnType::Blob, T::natural_type)
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        match self {
            Some(v) => v.write(typ, buf),
            None => Ok(()),
        }
    }
    fn special(&self) -> Option<Special> {
        match self {
            Some(v) => v.special(),
            None => Some(Special::Null),
        }
    }
}

impl<T: SerializeValue + ?Sized> SerializeValue for &T {
    fn natural_type(&self) -> ColumnType {
        (**self).natural_type()
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        (**self).write(typ, buf)
    }
    fn special(&self) -> Option<Special> {
        (**self).special()
    }
}

fn write_elements<'x, T: SerializeValue + 'x>(
    items: impl ExactSizeIterator<Item = &'x T>,
    typ: &ColumnType,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    match typ {
        ColumnType::List(e) | ColumnType::Set(e) => {
            buf.put_i32(count_i32(items.len())?);
            for item in items {
                if item.special().is_some() {
                    return Err(ValueError::NullOrUnsetElement {
                        container: "collection",
                        what: "elements",
                    });
                }
                write_value(item, Some(e), buf)?;
            }
            Ok(())
        }
        ColumnType::Vector { element, dimension } => {
            if items.len() != *dimension as usize {
                return Err(ValueError::VectorDimension {
                    given: items.len(),
                    dimension: *dimension,
                });
            }
            let fixed = vector_element_size(element);
            for item in items {
                if item.special().is_some() {
                    return Err(ValueError::NullOrUnsetElement {
                        container: "vector",
                        what: "elements",
                    });
                }
                let start = buf.len();
                item.write(element, buf)?;
                let len = buf.len() - start;
                match fixed {
                    Some(s) if s == len => {}
                    Some(expected) => return Err(ValueError::VectorElementSize { len, expected }),
                    None => {
                        // Variable-size elements carry an unsigned vint length before them:
                        // append it, then rotate it in front of the element (no allocation).
                        let end = buf.len();
                        crate::value::put_unsigned_vint(buf, len as u64);
                        let vint_len = buf.len() - end;
                        if let Some(written) = buf.get_mut(start..) {
                            written.rotate_right(vint_len);
                        }
                    }
                }
            }
            Ok(())
        }
        other => Err(ValueError::CannotSerialize {
            rust: "a sequence",
            typ: crate::value::type_name(other),
        }),
    }
}

impl<T: SerializeValue> SerializeValue for [T] {
    fn natural_type(&self) -> ColumnType {
        ColumnType::List(Box::new(
            self.first().map_or(ColumnType::Blob, T::natural_type),
        ))
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_elements(self.iter(), typ, buf)
    }
}

/// Arrays, for vectors (`[f32; 3]`) as well as lists and sets. (`[u8; 16]` is a uuid.)
impl<T: SerializeValue, const N: usize> SerializeValue for [T; N] {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Vector {
            element: Box::new(self.first().map_or(ColumnType::Blob, T::natural_type)),
            dimension: N as u32,
        }
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_slice().write(typ, buf)
    }
}

impl<T: SerializeValue> SerializeValue for Vec<T> {
    fn natural_type(&self) -> ColumnType {
        self.as_slice().natural_type()
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_slice().write(typ, buf)
    }
}

impl<T: SerializeValue, S> SerializeValue for HashSet<T, S> {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Set(Box::new(
            self.iter().next().map_or(ColumnType::Blob, T::natural_type),
        ))
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_elements(self.iter(), typ, buf)
    }
}

impl<T: SerializeValue> SerializeValue for BTreeSet<T> {
    fn natural_type(&self) -> ColumnType {
        ColumnType::Set(Box::new(
            self.iter().next().map_or(ColumnType::Blob, T::natural_type),
        ))
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_elements(self.iter(), typ, buf)
    }
}

fn write_map<'x, K: SerializeValue + 'x, V: SerializeValue + 'x>(
    entries: impl ExactSizeIterator<Item = (&'x K, &'x V)>,
    typ: &ColumnType,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    let ColumnType::Map(kt, vt) = typ else {
        return Err(ValueError::CannotSerialize {
            rust: "a map",
            typ: crate::value::type_name(typ),
        });
    };
    buf.put_i32(count_i32(entries.len())?);
    for (k, v) in entries {
        if k.special().is_some() || v.special().is_some() {
            return Err(ValueError::NullOrUnsetElement {
                container: "map",
                what: "keys or values",
            });
        }
        write_value(k, Some(kt), buf)?;
        write_value(v, Some(vt), buf)?;
    }
    Ok(())
}

fn map_natural<K: SerializeValue, V: SerializeValue>(first: Option<(&K, &V)>) -> ColumnType {
    match first {
        Some((k, v)) => ColumnType::Map(Box::new(k.natural_type()), Box::new(v.natural_type())),
        None => ColumnType::Map(Box::new(ColumnType::Blob), Box::new(ColumnType::Blob)),
    }
}

impl<K: SerializeValue, V: SerializeValue, S> SerializeValue for HashMap<K, V, S> {
    fn natural_type(&self) -> ColumnType {
        map_natural(self.iter().next())
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_map(self.iter(), typ, buf)
    }
}

impl<K: SerializeValue, V: SerializeValue> SerializeValue for BTreeMap<K, V> {
    fn natural_type(&self) -> ColumnType {
        map_natural(self.iter().next())
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        write_map(self.iter(), typ, buf)
    }
}

/// The label of a column in errors: ``2 `age` `` when its name is known, else `2`.
pub fn column_label(index: usize, columns: Option<&[ColumnSpec]>) -> String {
    match columns.and_then(|c| c.get(index)) {
        Some(c) => format!("{index} `{}`", c.name),
        None => index.to_string(),
    }
}

fn bind_error(index: usize, columns: Option<&[ColumnSpec]>, reason: ValueError) -> ProtoError {
    ProtoError::Value {
        column: column_label(index, columns),
        reason: Box::new(reason),
    }
}

/// Fails unless `count` values were given for the known bind markers.
pub(crate) fn check_count(count: usize, columns: Option<&[ColumnSpec]>) -> Result<()> {
    match columns {
        Some(c) if c.len() != count => Err(ProtoError::InvalidValue {
            what: "bound values",
            detail: format!("{count} values for {} bind markers", c.len()),
        }),
        _ => Ok(()),
    }
}

/// A whole row of values bound to a statement, each checked against its bind marker.
///
/// Implemented for tuples of [`SerializeValue`]s (arity 0 to 16), slices and `Vec`s of any
/// one [`SerializeValue`] type (including [`CqlValue`] and `&dyn SerializeValue`), and
/// named values ([`Named`], `HashMap`/`BTreeMap` from names). Every implementation is also a
/// [`QueryValues`]; wrap other implementations in [`Bound`] to bind them.
pub trait SerializeRow {
    /// Number of values.
    fn value_count(&self) -> usize;

    /// True if each value is preceded by its bind-marker name.
    fn is_named(&self) -> bool {
        false
    }

    /// Appends the values (`[string]` name if named, then `[value]`), without the count.
    /// With `columns`, checks the count and each value's type; an error names the column.
    /// Without them, each value is written as its Rust type's natural CQL type.
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()>;
}

/// Binds any [`SerializeRow`] as [`QueryValues`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound<R>(pub R);

impl<R: SerializeRow> QueryValues for Bound<R> {
    fn count(&self) -> usize {
        self.0.value_count()
    }
    fn has_names(&self) -> bool {
        self.0.is_named()
    }
    fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        self.0.serialize_row(columns, buf)
    }
}

macro_rules! query_values_via_row {
    ([$($g:tt)*] $t:ty) => {
        impl<$($g)*> QueryValues for $t {
            fn count(&self) -> usize {
                self.value_count()
            }
            fn has_names(&self) -> bool {
                self.is_named()
            }
            fn write_values(
                &self,
                columns: Option<&[ColumnSpec]>,
                buf: &mut BytesMut,
            ) -> Result<()> {
                self.serialize_row(columns, buf)
            }
        }
    };
}

/// No values (`QueryValues` for `()` lives in [`crate::values`]).
impl SerializeRow for () {
    fn value_count(&self) -> usize {
        0
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, _: &mut BytesMut) -> Result<()> {
        check_count(0, columns)
    }
}

macro_rules! tuples {
    ($($n:literal => ($($i:tt $T:ident),+);)+) => {$(
        impl<$($T: SerializeValue),+> SerializeValue for ($($T,)+) {
            fn natural_type(&self) -> ColumnType {
                ColumnType::Tuple(vec![$(self.$i.natural_type()),+])
            }
            fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
                let ColumnType::Tuple(types) = typ else {
                    return Err(mismatch::<Self>(typ));
                };
                if types.len() != $n {
                    return Err(ValueError::TupleArity { given: $n, expected: types.len() });
                }
                $(
                    if matches!(self.$i.special(), Some(Special::Unset)) {
                        return Err(ValueError::UnsetTupleField);
                    }
                    write_value(&self.$i, types.get($i), buf)?;
                )+
                Ok(())
            }
        }

        impl<$($T: SerializeValue),+> SerializeRow for ($($T,)+) {
            fn value_count(&self) -> usize {
                $n
            }
            fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
                check_count($n, columns)?;
                $(
                    let typ = columns.and_then(|c| c.get($i)).map(|c| &c.typ);
                    write_value(&self.$i, typ, buf).map_err(|r| bind_error($i, columns, r))?;
                )+
                Ok(())
            }
        }

        query_values_via_row!([$($T: SerializeValue),+] ($($T,)+));
    )+};
}

crate::tuple_arity::for_each_tuple_arity!(tuples);

/// Positional values of one Rust type (`[CqlValue]` for dynamic use, or
/// `[&dyn SerializeValue]` for mixed types).
impl<V: SerializeValue> SerializeRow for [V] {
    fn value_count(&self) -> usize {
        self.len()
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        check_count(self.len(), columns)?;
        for (i, v) in self.iter().enumerate() {
            let typ = columns.and_then(|c| c.get(i)).map(|c| &c.typ);
            write_value(v, typ, buf).map_err(|r| bind_error(i, columns, r))?;
        }
        Ok(())
    }
}

/// Positional values of one Rust type.
impl<V: SerializeValue> SerializeRow for Vec<V> {
    fn value_count(&self) -> usize {
        self.len()
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        self.as_slice().serialize_row(columns, buf)
    }
}

query_values_via_row!([V: SerializeValue] [V]);
query_values_via_row!([V: SerializeValue] Vec<V>);

/// Named values (QUERY with `:name` markers), in the order given: `Named(&[("id", v), ...])`
/// or `Named(vec![...])`. With column specs, each value is checked against the marker of the
/// same name, and a name no marker has is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named<T>(pub T);

fn write_named<'x, N: AsRef<str> + 'x, V: SerializeValue + 'x>(
    values: impl Iterator<Item = (&'x N, &'x V)>,
    count: usize,
    columns: Option<&[ColumnSpec]>,
    buf: &mut BytesMut,
) -> Result<()> {
    check_count(count, columns)?;
    for (i, (name, v)) in values.enumerate() {
        let name = name.as_ref();
        crate::wire::put_string(buf, name, "bound value name")?;
        let typ = match columns {
            Some(c) => match c.iter().find(|c| c.name == name) {
                Some(c) => Some(&c.typ),
                None => {
                    return Err(ProtoError::Value {
                        column: format!("{i} `{name}`"),
                        reason: Box::new(ValueError::NoBindMarker),
                    })
                }
            },
            None => None,
        };
        write_value(v, typ, buf).map_err(|reason| ProtoError::Value {
            column: format!("{i} `{name}`"),
            reason: Box::new(reason),
        })?;
    }
    Ok(())
}

impl<N: AsRef<str>, V: SerializeValue> SerializeRow for Named<&[(N, V)]> {
    fn value_count(&self) -> usize {
        self.0.len()
    }
    fn is_named(&self) -> bool {
        true
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        write_named(
            self.0.iter().map(|(n, v)| (n, v)),
            self.0.len(),
            columns,
            buf,
        )
    }
}

impl<N: AsRef<str>, V: SerializeValue> SerializeRow for Named<Vec<(N, V)>> {
    fn value_count(&self) -> usize {
        self.0.len()
    }
    fn is_named(&self) -> bool {
        true
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        Named(self.0.as_slice()).serialize_row(columns, buf)
    }
}

/// Named values from a map of marker names.
impl<N: AsRef<str>, V: SerializeValue, S> SerializeRow for HashMap<N, V, S> {
    fn value_count(&self) -> usize {
        self.len()
    }
    fn is_named(&self) -> bool {
        true
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        write_named(self.iter(), self.len(), columns, buf)
    }
}

/// Named values from a map of marker names.
impl<N: AsRef<str>, V: SerializeValue> SerializeRow for BTreeMap<N, V> {
    fn value_count(&self) -> usize {
        self.len()
    }
    fn is_named(&self) -> bool {
        true
    }
    fn serialize_row(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        write_named(self.iter(), self.len(), columns, buf)
    }
}

query_values_via_row!(['n, N: AsRef<str>, V: SerializeValue] Named<&'n [(N, V)]>);
query_values_via_row!([N: AsRef<str>, V: SerializeValue] Named<Vec<(N, V)>>);
query_values_via_row!([N: AsRef<str>, V: SerializeValue, S] HashMap<N, V, S>);
query_values_via_row!([N: AsRef<str>, V: SerializeValue] BTreeMap<N, V>);

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, typ: ColumnType) -> ColumnSpec {
        ColumnSpec::new("ks", "t", name, typ)
    }

    #[test]
    fn typed_values_match_cql_value_encoding() {
        type Writer = Box<dyn Fn(&mut BytesMut)>;
        let cases: Vec<(Writer, CqlValue, ColumnType)> = vec![
            (
                Box::new(|b| write_value(&7i32, None, b).unwrap()),
                CqlValue::Int(7),
                ColumnType::Int,
            ),
            (
                Box::new(|b| write_value("hé", None, b).unwrap()),
                CqlValue::Text("hé".into()),
                ColumnType::Varchar,
            ),
            (
                Box::new(|b| write_value(&vec![1i64, 2], None, b).unwrap()),
                CqlValue::List(vec![CqlValue::Bigint(1), CqlValue::Bigint(2)]),
                ColumnType::List(Box::new(ColumnType::Bigint)),
            ),
            (
                Box::new(|b| {
                    let m: BTreeMap<&str, i32> = [("a", 1)].into();
                    write_value(&m, None, b).unwrap()
                }),
                CqlValue::Map(vec![(CqlValue::Text("a".into()), CqlValue::Int(1))]),
                ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(ColumnType::Int)),
            ),
            (
                Box::new(|b| write_value(&(1i32, Some("x"), None::<i32>), None, b).unwrap()),
                CqlValue::Tuple(vec![
                    Some(CqlValue::Int(1)),
                    Some(CqlValue::Text("x".into())),
                    None,
                ]),
                ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Varchar, ColumnType::Blob]),
            ),
        ];
        for (write, v, t) in cases {
            let mut a = BytesMut::new();
            write(&mut a);
            let mut b = BytesMut::new();
            write_value(&v, Some(&t), &mut b).unwrap();
            assert_eq!(a, b, "{v:?}");
        }
    }

    #[test]
    fn vectors_fixed_and_variable() {
        let vf = ColumnType::Vector {
            element: Box::new(ColumnType::Float),
            dimension: 2,
        };
        let mut buf = BytesMut::new();
        write_value(&vec![1.0f32, 2.0], Some(&vf), &mut buf).unwrap();
        assert_eq!(&buf[..4], &8i32.to_be_bytes());
        assert_eq!(
            CqlValue::decode(&vf, &buf[4..]).unwrap(),
            CqlValue::Vector(vec![CqlValue::Float(1.0), CqlValue::Float(2.0)])
        );
        assert!(write_value(&vec![1.0f32], Some(&vf), &mut BytesMut::new()).is_err());
        let vt = ColumnType::Vector {
            element: Box::new(ColumnType::Varchar),
            dimension: 2,
        };
        let mut buf = BytesMut::new();
        write_value(&vec!["ab", ""], Some(&vt), &mut buf).unwrap();
        assert_eq!(&buf[4..], &[2, b'a', b'b', 0]);
    }

    #[test]
    fn mismatches_name_the_column_and_leave_no_partial_value() {
        let cols = [spec("id", ColumnType::Int), spec("age", ColumnType::Int)];
        let mut buf = BytesMut::from(&b"prefix"[..]);
        let err = (1i32, 2i64)
            .write_values(Some(&cols), &mut buf)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "column 1 `age`: cannot serialize i64 as int"
        );
        let err = (vec![1i32],)
            .write_values(
                Some(&[spec(
                    "m",
                    ColumnType::Map(Box::new(ColumnType::Int), Box::new(ColumnType::Int)),
                )]),
                &mut BytesMut::new(),
            )
            .unwrap_err();
        assert!(err.to_string().contains("column 0 `m`"), "{err}");
        let err = ("é",)
            .write_values(Some(&[spec("a", ColumnType::Ascii)]), &mut BytesMut::new())
            .unwrap_err();
        assert!(err.to_string().contains("ASCII"), "{err}");
    }

    #[test]
    fn null_and_unset() {
        let mut buf = BytesMut::new();
        (None::<i32>, Unset, Some(5i32))
            .write_values(None, &mut buf)
            .unwrap();
        assert_eq!(
            &buf[..],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 4, 0, 0, 0, 5]
        );
        assert!(write_value(&vec![None::<i32>], None, &mut BytesMut::new()).is_err());
    }

    /// Counts allocations made by the current thread (tests run in parallel threads).
    mod counting {
        use std::alloc::{GlobalAlloc, Layout, System};
        use std::cell::Cell;

        thread_local! {
            static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
        }

        struct Counting;

        // SAFETY: forwards to the system allocator; only counts.
        unsafe impl GlobalAlloc for Counting {
            unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
                let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
                // SAFETY: same contract as ours.
                unsafe { System.alloc(layout) }
            }
            unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
                // SAFETY: same contract as ours.
                unsafe { System.dealloc(ptr, layout) }
            }
            unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
                let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
                // SAFETY: same contract as ours.
                unsafe { System.realloc(ptr, layout, new_size) }
            }
        }

        #[global_allocator]
        static GLOBAL: Counting = Counting;

        pub(super) fn allocations_in(f: impl FnOnce()) -> usize {
            let before = ALLOCATIONS.with(Cell::get);
            f();
            ALLOCATIONS.with(Cell::get) - before
        }
    }

    #[test]
    fn binding_a_tuple_into_a_reused_buffer_allocates_nothing() {
        let cols = [
            spec("id", ColumnType::Int),
            spec("name", ColumnType::Varchar),
            spec("ts", ColumnType::Bigint),
            spec(
                "v",
                ColumnType::Vector {
                    element: Box::new(ColumnType::Varchar),
                    dimension: 2,
                },
            ),
        ];
        let values = (42i32, "alice", Some(7i64), ["ab", "c"].as_slice());
        let mut buf = BytesMut::with_capacity(1024);
        values.write_values(Some(&cols), &mut buf).unwrap();
        let expected = buf.clone();
        let n = counting::allocations_in(|| {
            for _ in 0..100 {
                buf.clear();
                values.write_values(Some(&cols), &mut buf).unwrap();
            }
        });
        assert_eq!(n, 0, "allocations while binding with column specs");
        assert_eq!(buf, expected);
        // Without column specs, scalars and strings use their natural types: no allocation
        // either (a collection's natural type is boxed, so that one path allocates).
        let scalars = (42i32, "alice", Some(7i64), None::<f64>, Unset);
        let n = counting::allocations_in(|| {
            for _ in 0..100 {
                buf.clear();
                scalars.write_values(None, &mut buf).unwrap();
            }
        });
        assert_eq!(n, 0, "allocations while binding without column specs");
    }

    #[test]
    fn row_count_and_names_are_checked() {
        let cols = [spec("id", ColumnType::Int), spec("age", ColumnType::Int)];
        let err = (1i32,)
            .write_values(Some(&cols), &mut BytesMut::new())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid bound values: 1 values for 2 bind markers"
        );
        assert!(vec![CqlValue::Int(1); 3]
            .write_values(Some(&cols), &mut BytesMut::new())
            .is_err());
        // Named values: checked against the marker of the same name, in any order.
        let mut buf = BytesMut::new();
        let named = Named(vec![("age", 30i32), ("id", 1)]);
        assert!(named.has_names());
        named.write_values(Some(&cols), &mut buf).unwrap();
        assert_eq!(&buf[..], b"\x00\x03age\x00\x00\x00\x04\x00\x00\x00\x1e\x00\x02id\x00\x00\x00\x04\x00\x00\x00\x01");
        let err = Named([("id", 1i64), ("age", 2)].as_slice())
            .write_values(Some(&cols), &mut BytesMut::new())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "column 0 `id`: cannot serialize i64 as int"
        );
        let err = Named(vec![("id", 1i32), ("nope", 2)])
            .write_values(Some(&cols), &mut BytesMut::new())
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("column 1 `nope`: the statement has no bind marker"),
            "{err}"
        );
        let map: HashMap<&str, CqlValue> =
            [("id", CqlValue::Int(1)), ("age", CqlValue::Int(2))].into();
        assert_eq!(map.count(), 2);
        map.write_values(Some(&cols), &mut BytesMut::new()).unwrap();
        // Mixed types through trait objects, and any SerializeRow through `Bound`.
        let mixed: [&dyn SerializeValue; 2] = [&1i32, &"x"];
        let mut a = BytesMut::new();
        mixed.write_values(None, &mut a).unwrap();
        let mut b = BytesMut::new();
        Bound((1i32, "x")).write_values(None, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(SerializeRow::value_count(&()), 0);
        assert!(().serialize_row(Some(&cols), &mut BytesMut::new()).is_err());
    }

    #[test]
    fn typed_values_of_every_kind_match_cql_value() {
        fn same<T: SerializeValue>(v: T, dynamic: CqlValue, t: ColumnType) {
            let mut a = BytesMut::new();
            write_value(&v, Some(&t), &mut a).unwrap();
            let mut b = BytesMut::new();
            write_value(&dynamic, Some(&t), &mut b).unwrap();
            assert_eq!(a, b, "{dynamic:?} as {t:?}");
            assert_eq!(CqlValue::decode(&t, &a[4..]).unwrap(), dynamic);
        }
        let u = [0x10; 16];
        same(-3i8, CqlValue::Tinyint(-3), ColumnType::Tinyint);
        same(300i16, CqlValue::Smallint(300), ColumnType::Smallint);
        same(
            -129i32,
            CqlValue::Varint(CqlVarint::from(-129i64)),
            ColumnType::Varint,
        );
        same(5i64, CqlValue::Counter(5), ColumnType::Counter);
        same(0.5f64, CqlValue::Double(0.5), ColumnType::Double);
        same(true, CqlValue::Boolean(true), ColumnType::Boolean);
        same(
            String::from("a"),
            CqlValue::Ascii("a".into()),
            ColumnType::Ascii,
        );
        same(vec![1u8, 2], CqlValue::Blob(vec![1, 2]), ColumnType::Blob);
        same(
            Bytes::from_static(b"z"),
            CqlValue::Blob(b"z".to_vec()),
            ColumnType::Blob,
        );
        same(CqlUuid(u), CqlValue::Timeuuid(u), ColumnType::Timeuuid);
        same(u, CqlValue::Uuid(u), ColumnType::Uuid);
        same(
            IpAddr::from([1, 2, 3, 4]),
            CqlValue::Inet(IpAddr::from([1, 2, 3, 4])),
            ColumnType::Inet,
        );
        same(
            Ipv6Addr::LOCALHOST,
            CqlValue::Inet(Ipv6Addr::LOCALHOST.into()),
            ColumnType::Inet,
        );
        same(CqlDate(1), CqlValue::Date(CqlDate(1)), ColumnType::Date);
        same(CqlTime(2), CqlValue::Time(CqlTime(2)), ColumnType::Time);
        same(
            CqlTimestamp(3),
            CqlValue::Timestamp(CqlTimestamp(3)),
            ColumnType::Timestamp,
        );
        let d = CqlDuration {
            months: 1,
            days: 2,
            nanoseconds: 3,
        };
        same(d, CqlValue::Duration(d), ColumnType::Duration);
        same(
            CqlDecimal::new(1, 1),
            CqlValue::Decimal(CqlDecimal::new(1, 1)),
            ColumnType::Decimal,
        );
        same(
            BTreeSet::from([2i32, 1]),
            CqlValue::Set(vec![CqlValue::Int(1), CqlValue::Int(2)]),
            ColumnType::Set(Box::new(ColumnType::Int)),
        );
        same(
            HashSet::from(["x"]),
            CqlValue::Set(vec![CqlValue::Text("x".into())]),
            ColumnType::Set(Box::new(ColumnType::Varchar)),
        );
        same(
            vec![1i16, -1],
            CqlValue::Vector(vec![CqlValue::Smallint(1), CqlValue::Smallint(-1)]),
            ColumnType::Vector {
                element: Box::new(ColumnType::Smallint),
                dimension: 2,
            },
        );
        same(
            (1i32, vec!["a"]),
            CqlValue::Tuple(vec![
                Some(CqlValue::Int(1)),
                Some(CqlValue::List(vec![CqlValue::Text("a".into())])),
            ]),
            ColumnType::Tuple(vec![
                ColumnType::Int,
                ColumnType::List(Box::new(ColumnType::Varchar)),
            ]),
        );
        same(
            [1.0f32, 2.0],
            CqlValue::Vector(vec![CqlValue::Float(1.0), CqlValue::Float(2.0)]),
            ColumnType::Vector {
                element: Box::new(ColumnType::Float),
                dimension: 2,
            },
        );
        #[cfg(feature = "uuid")]
        same(
            uuid::Uuid::from_bytes(u),
            CqlValue::Uuid(u),
            ColumnType::Uuid,
        );
        // Checks that refuse.
        let mut buf = BytesMut::new();
        assert!(write_value(&CqlTime(-1), Some(&ColumnType::Time), &mut buf).is_err());
        assert!(write_value(&CqlUuid([0x40; 16]), Some(&ColumnType::Timeuuid), &mut buf).is_err());
        assert!(write_value(&1.0f32, Some(&ColumnType::Double), &mut buf).is_err());
        assert!(write_value(
            &(1i32,),
            Some(&ColumnType::Tuple(vec![ColumnType::Int; 2])),
            &mut buf
        )
        .is_err());
        assert!(write_value(
            &(Unset,),
            Some(&ColumnType::Tuple(vec![ColumnType::Int])),
            &mut buf
        )
        .is_err());
        assert!(buf.is_empty(), "a refused value leaves nothing behind");
    }
}
