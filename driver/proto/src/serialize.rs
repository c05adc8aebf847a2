//! Rust values into CQL `[value]`s, checked against column types.
//!
//! [`SerializeValue`] writes one value's bytes for a given column type, or says why it does
//! not fit. Tuples of serializable values (arity 1 to 16), slices of [`CqlValue`] and named
//! pairs implement [`QueryValues`], so they can be bound to QUERY, EXECUTE and BATCH; an error
//! there names the column (index and, when the bind markers are known, name).
//!
//! Hot path: each `[value]` is written in place (length placeholder, bytes, patched length),
//! so binding a tuple of scalars and strings into a reused buffer allocates nothing.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::{ProtoError, Result};
use crate::metadata::ColumnSpec;
use crate::types::ColumnType;
use crate::value::{
    type_name, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlValue, CqlVarint, Unset,
    ValueResult,
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
    let len = i32::try_from(len).map_err(|_| format!("value of {len} bytes is over 2 GiB"))?;
    buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

fn mismatch<T: ?Sized>(typ: &ColumnType) -> String {
    format!(
        "cannot serialize {} as {}",
        std::any::type_name::<T>(),
        type_name(typ)
    )
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
        if !v.is_ascii() {
            return Err("an ascii column needs ASCII text".into());
        }
        buf.put_slice(v.as_bytes())
    },
});
scalar!([u8], ColumnType::Blob, |v, typ, buf| {
    ColumnType::Blob | ColumnType::Custom(_) => buf.put_slice(v),
});
scalar!([u8; 16], ColumnType::Uuid, |v, typ, buf| {
    ColumnType::Uuid => buf.put_slice(v),
    ColumnType::Timeuuid => {
        if v[6] >> 4 != 1 {
            return Err("a timeuuid column needs a version-1 uuid".into());
        }
        buf.put_slice(v)
    },
});
scalar!(Ipv4Addr, ColumnType::Inet, |v, typ, buf| { ColumnType::Inet => buf.put_slice(&v.octets()) });
scalar!(Ipv6Addr, ColumnType::Inet, |v, typ, buf| { ColumnType::Inet => buf.put_slice(&v.octets()) });
scalar!(CqlDate, ColumnType::Date, |v, typ, buf| { ColumnType::Date => buf.put_u32(v.0) });
scalar!(CqlTimestamp, ColumnType::Timestamp, |v, typ, buf| { ColumnType::Timestamp => buf.put_i64(v.0) });
scalar!(CqlTime, ColumnType::Time, |v, typ, buf| {
    ColumnType::Time => {
        if !(0..CqlTime::NANOS_PER_DAY).contains(&v.0) {
            return Err(format!("time {} is outside one day", v.0));
        }
        buf.put_i64(v.0)
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
                CqlValue::$variant(self.clone()).encode(typ, buf)
            }
        }
    };
}
via_cql_value!(CqlDecimal, Decimal, ColumnType::Decimal);
via_cql_value!(CqlDuration, Duration, ColumnType::Duration);

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
        self.encode(typ, buf)
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

fn put_count(buf: &mut BytesMut, n: usize) -> ValueResult<()> {
    buf.put_i32(i32::try_from(n).map_err(|_| format!("{n} elements are too many"))?);
    Ok(())
}

fn write_elements<'x, T: SerializeValue + 'x>(
    items: impl ExactSizeIterator<Item = &'x T>,
    typ: &ColumnType,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    match typ {
        ColumnType::List(e) | ColumnType::Set(e) => {
            put_count(buf, items.len())?;
            for item in items {
                if item.special().is_some() {
                    return Err("a collection cannot hold null or unset elements".into());
                }
                write_value(item, Some(e), buf)?;
            }
            Ok(())
        }
        ColumnType::Vector { element, dimension } => {
            if items.len() != *dimension as usize {
                return Err(format!(
                    "{} elements for a vector of dimension {dimension}",
                    items.len()
                ));
            }
            let fixed = element.fixed_size();
            for item in items {
                if item.special().is_some() {
                    return Err("a vector cannot hold null or unset elements".into());
                }
                let start = buf.len();
                item.write(element, buf)?;
                let len = buf.len() - start;
                match fixed {
                    Some(s) if s == len => {}
                    Some(s) => return Err(format!("vector element of {len} bytes, expected {s}")),
                    None => {
                        // Variable-size elements carry a vint length before them.
                        let elem = buf.split_off(start);
                        crate::value::put_unsigned_vint(buf, len as u64);
                        buf.unsplit(elem);
                    }
                }
            }
            Ok(())
        }
        other => Err(format!(
            "cannot serialize a sequence as {}",
            type_name(other)
        )),
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

impl<T: SerializeValue> SerializeValue for Vec<T> {
    fn natural_type(&self) -> ColumnType {
        self.as_slice().natural_type()
    }
    fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
        self.as_slice().write(typ, buf)
    }
}

fn write_map<'x, K: SerializeValue + 'x, V: SerializeValue + 'x>(
    entries: impl ExactSizeIterator<Item = (&'x K, &'x V)>,
    typ: &ColumnType,
    buf: &mut BytesMut,
) -> ValueResult<()> {
    let ColumnType::Map(kt, vt) = typ else {
        return Err(format!("cannot serialize a map as {}", type_name(typ)));
    };
    put_count(buf, entries.len())?;
    for (k, v) in entries {
        if k.special().is_some() || v.special().is_some() {
            return Err("a map cannot hold null or unset keys or values".into());
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

/// The label of a column in errors: `2 (age)` when its name is known, else `2`.
pub fn column_label(index: usize, columns: Option<&[ColumnSpec]>) -> String {
    match columns.and_then(|c| c.get(index)) {
        Some(c) => format!("{index} ({})", c.name),
        None => index.to_string(),
    }
}

fn bind_error(index: usize, columns: Option<&[ColumnSpec]>, reason: String) -> ProtoError {
    ProtoError::Value {
        column: column_label(index, columns),
        reason,
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
                    return Err(format!("cannot serialize a {}-tuple as {}", $n, type_name(typ)));
                };
                if types.len() != $n {
                    return Err(format!("a {}-tuple for {}", $n, type_name(typ)));
                }
                $(
                    if matches!(self.$i.special(), Some(Special::Unset)) {
                        return Err("a tuple field cannot be unset".into());
                    }
                    write_value(&self.$i, types.get($i), buf)?;
                )+
                Ok(())
            }
        }

        impl<$($T: SerializeValue),+> QueryValues for ($($T,)+) {
            fn count(&self) -> usize {
                $n
            }
            fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
                $(
                    let typ = columns.and_then(|c| c.get($i)).map(|c| &c.typ);
                    write_value(&self.$i, typ, buf).map_err(|r| bind_error($i, columns, r))?;
                )+
                Ok(())
            }
        }
    )+};
}

tuples! {
    1 => (0 A);
    2 => (0 A, 1 B);
    3 => (0 A, 1 B, 2 C);
    4 => (0 A, 1 B, 2 C, 3 D);
    5 => (0 A, 1 B, 2 C, 3 D, 4 E);
    6 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
    7 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
    8 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
    9 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
    10 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
    11 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
    12 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);
    13 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M);
    14 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N);
    15 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O);
    16 => (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L, 12 M, 13 N, 14 O, 15 P);
}

/// Dynamic positional values.
impl QueryValues for [CqlValue] {
    fn count(&self) -> usize {
        self.len()
    }
    fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        for (i, v) in self.iter().enumerate() {
            let typ = columns.and_then(|c| c.get(i)).map(|c| &c.typ);
            write_value(v, typ, buf).map_err(|r| bind_error(i, columns, r))?;
        }
        Ok(())
    }
}

/// Dynamic positional values.
impl QueryValues for Vec<CqlValue> {
    fn count(&self) -> usize {
        self.len()
    }
    fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        self.as_slice().write_values(columns, buf)
    }
}

/// Dynamic named values (QUERY with `:name` markers); with column specs, each value is
/// checked against the marker of the same name.
impl QueryValues for [(&str, CqlValue)] {
    fn count(&self) -> usize {
        self.len()
    }
    fn has_names(&self) -> bool {
        true
    }
    fn write_values(&self, columns: Option<&[ColumnSpec]>, buf: &mut BytesMut) -> Result<()> {
        for (i, (name, v)) in self.iter().enumerate() {
            crate::wire::put_string(buf, name, "bound value name")?;
            let typ = columns
                .and_then(|c| c.iter().find(|c| c.name == *name))
                .map(|c| &c.typ);
            write_value(v, typ, buf).map_err(|reason| ProtoError::Value {
                column: format!("{i} ({name})"),
                reason,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, typ: ColumnType) -> ColumnSpec {
        ColumnSpec {
            keyspace: "ks".into(),
            table: "t".into(),
            name: name.into(),
            typ,
        }
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
            "column 1 (age): cannot serialize i64 as int"
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
        assert!(err.to_string().contains("column 0 (m)"), "{err}");
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
}
