//! CQL values into Rust types, type-checked once per result.
//!
//! [`DeserializeValue`] splits the check from the conversion: the row reader calls
//! [`DeserializeValue::type_check`] once per column per result, then
//! [`DeserializeValue::deserialize`] per value. Borrowing impls (`&str`, `&[u8]`) read
//! straight from the frame body. [`FromRow`] does the same for a whole row (tuples of 1 to
//! 16 values).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasher, Hash};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::ValueError;
use crate::metadata::ColumnSpec;
use crate::types::ColumnType;
use crate::value::{
    fixed, text, vector_elements, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlUuid,
    CqlValue, CqlVarint, Cursor, ValueResult,
};

/// A Rust type a CQL value can be read into.
pub trait DeserializeValue<'a>: Sized {
    /// Checks that values of `typ` can be read into `Self`.
    fn type_check(typ: &ColumnType) -> ValueResult<()>;

    /// Reads one value (`None` is null). Assumes `type_check(typ)` passed.
    fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self>;
}

fn wrong<T: ?Sized>(typ: &ColumnType) -> ValueError {
    ValueError::CannotDeserialize {
        typ: crate::value::type_name(typ),
        rust: std::any::type_name::<T>(),
    }
}

fn non_null<T: ?Sized>(bytes: Option<&[u8]>) -> ValueResult<&[u8]> {
    bytes.ok_or_else(|| ValueError::Null {
        into: std::any::type_name::<T>(),
    })
}

macro_rules! scalar {
    ($t:ty, $($pat:pat_param)|+ => |$b:ident, $typ:ident| $body:expr) => {
        impl<'a> DeserializeValue<'a> for $t {
            fn type_check(typ: &ColumnType) -> ValueResult<()> {
                match typ {
                    $($pat)|+ => Ok(()),
                    #[allow(unreachable_patterns)]
                    _ => Err(wrong::<$t>(typ)),
                }
            }
            fn deserialize($typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
                let $b = non_null::<$t>(bytes)?;
                $body
            }
        }
    };
}

scalar!(i8, ColumnType::Tinyint => |b, t| Ok(i8::from_be_bytes(fixed(b, t)?)));
scalar!(i16, ColumnType::Smallint => |b, t| Ok(i16::from_be_bytes(fixed(b, t)?)));
scalar!(i32, ColumnType::Int => |b, t| Ok(i32::from_be_bytes(fixed(b, t)?)));
scalar!(i64, ColumnType::Bigint | ColumnType::Counter | ColumnType::Timestamp | ColumnType::Time
    => |b, t| Ok(i64::from_be_bytes(fixed(b, t)?)));
scalar!(f32, ColumnType::Float => |b, t| Ok(f32::from_be_bytes(fixed(b, t)?)));
scalar!(f64, ColumnType::Double => |b, t| Ok(f64::from_be_bytes(fixed(b, t)?)));
scalar!(bool, ColumnType::Boolean => |b, t| Ok(fixed::<1>(b, t)?[0] != 0));
scalar!(&'a str, ColumnType::Ascii | ColumnType::Varchar => |b, t| text(b, t));
scalar!(String, ColumnType::Ascii | ColumnType::Varchar => |b, t| text(b, t).map(str::to_owned));
scalar!(&'a [u8], _ => |b, _t| Ok(b));
scalar!([u8; 16], ColumnType::Uuid | ColumnType::Timeuuid => |b, t| fixed(b, t));
scalar!(CqlDate, ColumnType::Date => |b, t| Ok(CqlDate(u32::from_be_bytes(fixed(b, t)?))));
scalar!(CqlTimestamp, ColumnType::Timestamp => |b, t| Ok(CqlTimestamp(i64::from_be_bytes(fixed(b, t)?))));
scalar!(CqlTime, ColumnType::Time => |b, t| CqlTime::checked(i64::from_be_bytes(fixed(b, t)?)));
scalar!(CqlUuid, ColumnType::Uuid | ColumnType::Timeuuid => |b, t| Ok(CqlUuid(fixed(b, t)?)));
scalar!(Ipv4Addr, ColumnType::Inet => |b, t| Ok(Ipv4Addr::from(fixed::<4>(b, t)?)));
scalar!(Ipv6Addr, ColumnType::Inet => |b, t| Ok(Ipv6Addr::from(fixed::<16>(b, t)?)));
#[cfg(feature = "uuid")]
scalar!(uuid::Uuid, ColumnType::Uuid | ColumnType::Timeuuid
    => |b, t| Ok(uuid::Uuid::from_bytes(fixed(b, t)?)));
scalar!(CqlVarint, ColumnType::Varint => |b, _t| Ok(CqlVarint::from_signed_bytes_be(b)));

macro_rules! via_cql_value {
    ($t:ty, $variant:ident, $($pat:pat_param)|+) => {
        impl<'a> DeserializeValue<'a> for $t {
            fn type_check(typ: &ColumnType) -> ValueResult<()> {
                match typ {
                    $($pat)|+ => Ok(()),
                    _ => Err(wrong::<$t>(typ)),
                }
            }
            fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
                match CqlValue::decode_reason(typ, non_null::<$t>(bytes)?)? {
                    CqlValue::$variant(v) => Ok(v),
                    other => Err(ValueError::UnexpectedKind {
                        expected: stringify!($variant),
                        found: other.kind(),
                    }),
                }
            }
        }
    };
}
via_cql_value!(IpAddr, Inet, ColumnType::Inet);
via_cql_value!(CqlDecimal, Decimal, ColumnType::Decimal);
via_cql_value!(CqlDuration, Duration, ColumnType::Duration);

impl<'a> DeserializeValue<'a> for Vec<u8> {
    fn type_check(_: &ColumnType) -> ValueResult<()> {
        Ok(())
    }
    fn deserialize(_: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
        Ok(non_null::<Self>(bytes)?.to_vec())
    }
}

impl<'a> DeserializeValue<'a> for CqlValue {
    fn type_check(_: &ColumnType) -> ValueResult<()> {
        Ok(())
    }
    fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
        CqlValue::decode_reason(typ, non_null::<Self>(bytes)?)
    }
}

impl<'a, T: DeserializeValue<'a>> DeserializeValue<'a> for Option<T> {
    fn type_check(typ: &ColumnType) -> ValueResult<()> {
        T::type_check(typ)
    }
    fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
        bytes.map(|b| T::deserialize(typ, Some(b))).transpose()
    }
}

/// Reads the elements of a list, set or vector value into `out`, one by one.
fn read_sequence<'a, T: DeserializeValue<'a>>(
    typ: &ColumnType,
    bytes: &'a [u8],
    mut push: impl FnMut(T),
) -> ValueResult<()> {
    match typ {
        ColumnType::List(e) | ColumnType::Set(e) => {
            let mut b = Cursor(bytes);
            for _ in 0..b.count("element count", 4)? {
                push(T::deserialize(e, b.element("element")?)?);
            }
            b.end("collection")
        }
        ColumnType::Vector { element, dimension } => {
            vector_elements(element, *dimension, bytes, |e| {
                push(T::deserialize(element, Some(e))?);
                Ok(())
            })
        }
        _ => Err(wrong::<Vec<T>>(typ)),
    }
}

fn check_sequence<'a, T: DeserializeValue<'a>, C>(typ: &ColumnType) -> ValueResult<()> {
    match typ {
        ColumnType::List(e) | ColumnType::Set(e) => T::type_check(e),
        ColumnType::Vector { element, .. } => T::type_check(element),
        _ => Err(wrong::<C>(typ)),
    }
}

/// A `list`, `set` or `vector`.
impl<'a, T: DeserializeValue<'a>> DeserializeValue<'a> for Vec<T> {
    fn type_check(typ: &ColumnType) -> ValueResult<()> {
        check_sequence::<T, Self>(typ)
    }
    fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
        let bytes = non_null::<Self>(bytes)?;
        let mut out = Vec::new();
        read_sequence(typ, bytes, |v| out.push(v))?;
        Ok(out)
    }
}

/// A `set` (or `list`).
impl<'a, T: DeserializeValue<'a> + Eq + Hash, S: BuildHasher + Default> DeserializeValue<'a>
    for HashSet<T, S>
{
    fn type_check(typ: &ColumnType) -> ValueResult<()> {
        check_sequence::<T, Self>(typ)
    }
    fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
        let mut out = HashSet::default();
        read_sequence(typ, non_null::<Self>(bytes)?, |v| {
            out.insert(v);
        })?;
        Ok(out)
    }
}

/// A `set` (or `list`).
impl<'a, T: DeserializeValue<'a> + Ord> DeserializeValue<'a> for BTreeSet<T> {
    fn type_check(typ: &ColumnType) -> ValueResult<()> {
        check_sequence::<T, Self>(typ)
    }
    fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
        let mut out = BTreeSet::new();
        read_sequence(typ, non_null::<Self>(bytes)?, |v| {
            out.insert(v);
        })?;
        Ok(out)
    }
}

fn read_map<'a, K, V, M>(
    typ: &ColumnType,
    bytes: Option<&'a [u8]>,
    mut insert: impl FnMut(&mut M, K, V),
    mut map: M,
) -> ValueResult<M>
where
    K: DeserializeValue<'a>,
    V: DeserializeValue<'a>,
{
    let ColumnType::Map(kt, vt) = typ else {
        return Err(wrong::<M>(typ));
    };
    let mut b = Cursor(non_null::<M>(bytes)?);
    for _ in 0..b.count("map size", 8)? {
        let k = K::deserialize(kt, b.element("map key")?)?;
        let v = V::deserialize(vt, b.element("map value")?)?;
        insert(&mut map, k, v);
    }
    b.end("map")?;
    Ok(map)
}

fn check_map<'a, K: DeserializeValue<'a>, V: DeserializeValue<'a>, M>(
    typ: &ColumnType,
) -> ValueResult<()> {
    match typ {
        ColumnType::Map(k, v) => {
            K::type_check(k)?;
            V::type_check(v)
        }
        _ => Err(wrong::<M>(typ)),
    }
}

impl<'a, K, V, S> DeserializeValue<'a> for HashMap<K, V, S>
where
    K: DeserializeValue<'a> + Eq + Hash,
    V: DeserializeValue<'a>,
    S: BuildHasher + Default,
{
    fn type_check(typ: &ColumnType) -> ValueResult<()> {
        check_map::<K, V, Self>(typ)
    }
    fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
        read_map(
            typ,
            bytes,
            |m: &mut Self, k, v| {
                m.insert(k, v);
            },
            HashMap::default(),
        )
    }
}

impl<'a, K: DeserializeValue<'a> + Ord, V: DeserializeValue<'a>> DeserializeValue<'a>
    for BTreeMap<K, V>
{
    fn type_check(typ: &ColumnType) -> ValueResult<()> {
        check_map::<K, V, Self>(typ)
    }
    fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
        read_map(
            typ,
            bytes,
            |m: &mut Self, k, v| {
                m.insert(k, v);
            },
            BTreeMap::new(),
        )
    }
}

/// Where each field of a row type is read from among a result's columns, found once per
/// result by [`FromRow::layout`] and handed to every [`FromRow::from_row_with`].
///
/// In order (field `i` is column `i`, the tuples' layout and that of a struct whose fields
/// come in the columns' order) it holds nothing; otherwise one column index per field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowLayout {
    /// `None`: in order. Boxed once per result, never per row.
    columns: Option<Box<[usize]>>,
}

impl RowLayout {
    /// Field `i` is column `i`.
    pub const fn in_order() -> Self {
        Self { columns: None }
    }

    /// Field `i` is column `columns[i]` (in order, when that is what they say).
    pub fn from_columns(columns: Vec<usize>) -> Self {
        if columns.iter().enumerate().all(|(i, &c)| i == c) {
            return Self::in_order();
        }
        Self {
            columns: Some(columns.into_boxed_slice()),
        }
    }

    /// True if field `i` is column `i`.
    pub fn is_in_order(&self) -> bool {
        self.columns.is_none()
    }

    /// The column of field `field` (`usize::MAX`, which no row has, for a field the layout
    /// does not know).
    #[inline]
    pub fn column(&self, field: usize) -> usize {
        match &self.columns {
            None => field,
            Some(c) => c.get(field).copied().unwrap_or(usize::MAX),
        }
    }
}

/// A Rust type a whole row can be read into: tuples (by position) and structs that derive
/// it (`doppio-macros`: by name or by position).
///
/// The row reader ([`crate::rows::RowsView::typed`]) calls [`FromRow::layout`] once per
/// result and [`FromRow::from_row_with`] per row; the other two methods are the same without
/// the layout (a type whose fields are read in column order needs only those two).
pub trait FromRow<'a>: Sized {
    /// Checks the result's columns once: count and each type.
    fn type_check(columns: &[ColumnSpec]) -> Result<(), (usize, ValueError)>;

    /// Reads one row from its raw column values. Assumes `type_check` passed.
    fn from_row(
        columns: &[ColumnSpec],
        values: &[Option<&'a [u8]>],
    ) -> Result<Self, (usize, ValueError)>;

    /// Checks the result's columns once, as [`FromRow::type_check`], and says where each
    /// field is read from, so that rows are read by index (a row type read by column name
    /// searches the names here, not per row). By default: `type_check`, in order.
    fn layout(columns: &[ColumnSpec]) -> Result<RowLayout, (usize, ValueError)> {
        Self::type_check(columns).map(|()| RowLayout::in_order())
    }

    /// Reads one row with the `layout` that [`FromRow::layout`] gave for these `columns`.
    /// By default: [`FromRow::from_row`].
    fn from_row_with(
        layout: &RowLayout,
        columns: &[ColumnSpec],
        values: &[Option<&'a [u8]>],
    ) -> Result<Self, (usize, ValueError)> {
        let _ = layout;
        Self::from_row(columns, values)
    }
}

macro_rules! tuples {
    ($($n:literal => ($($i:tt $T:ident),+);)+) => {$(
        impl<'a, $($T: DeserializeValue<'a>),+> DeserializeValue<'a> for ($($T,)+) {
            fn type_check(typ: &ColumnType) -> ValueResult<()> {
                match typ {
                    ColumnType::Tuple(ts) if ts.len() == $n => {
                        $( $T::type_check(&ts[$i])?; )+
                        Ok(())
                    }
                    _ => Err(wrong::<Self>(typ)),
                }
            }
            fn deserialize(typ: &ColumnType, bytes: Option<&'a [u8]>) -> ValueResult<Self> {
                let ColumnType::Tuple(ts) = typ else { return Err(wrong::<Self>(typ)) };
                let mut rest = non_null::<Self>(bytes)?;
                let mut field = || -> ValueResult<Option<&'a [u8]>> {
                    let (len, tail) = rest.split_first_chunk::<4>().ok_or_else(|| ValueError::Truncated {
                        what: "tuple field length",
                        needed: 4,
                        left: rest.len(),
                    })?;
                    let len = i32::from_be_bytes(*len);
                    match usize::try_from(len) {
                        Err(_) => { rest = tail; Ok(None) }
                        Ok(l) if l <= tail.len() => {
                            let (f, t) = tail.split_at(l);
                            rest = t;
                            Ok(Some(f))
                        }
                        Ok(l) => Err(ValueError::Truncated {
                            what: "tuple field",
                            needed: l,
                            left: tail.len(),
                        }),
                    }
                };
                let arity = || ValueError::TupleArity { given: ts.len(), expected: $n };
                Ok(($( $T::deserialize(ts.get($i).ok_or_else(arity)?, field()?)?, )+))
            }
        }

        impl<'a, $($T: DeserializeValue<'a>),+> FromRow<'a> for ($($T,)+) {
            fn type_check(columns: &[ColumnSpec]) -> Result<(), (usize, ValueError)> {
                if columns.len() != $n {
                    return Err((0, ValueError::ColumnCount { columns: columns.len(), row: $n }));
                }
                $( $T::type_check(&columns[$i].typ).map_err(|e| ($i, e))?; )+
                Ok(())
            }
            fn from_row(columns: &[ColumnSpec], values: &[Option<&'a [u8]>]) -> Result<Self, (usize, ValueError)> {
                let missing = |i, columns| (i, ValueError::ColumnCount { columns, row: $n });
                Ok(($(
                    $T::deserialize(
                        &columns.get($i).ok_or_else(|| missing($i, columns.len()))?.typ,
                        *values.get($i).ok_or_else(|| missing($i, values.len()))?,
                    ).map_err(|e| ($i, e))?,
                )+))
            }
        }
    )+};
}

crate::tuple_arity::for_each_tuple_arity!(tuples);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serialize::{write_value, SerializeValue};
    use bytes::BytesMut;

    fn bytes_of<T: SerializeValue>(v: T, t: &ColumnType) -> Vec<u8> {
        let mut buf = BytesMut::new();
        write_value(&v, Some(t), &mut buf).unwrap();
        buf[4..].to_vec()
    }

    #[test]
    fn round_trips_through_serialize() {
        let t = ColumnType::Varchar;
        let b = bytes_of("hé", &t);
        assert_eq!(<&str>::deserialize(&t, Some(&b)).unwrap(), "hé");
        let t = ColumnType::Map(
            Box::new(ColumnType::Varchar),
            Box::new(ColumnType::List(Box::new(ColumnType::Int))),
        );
        let m: BTreeMap<String, Vec<i32>> = [("a".to_string(), vec![1, 2])].into();
        let b = bytes_of(&m, &t);
        BTreeMap::<String, Vec<i32>>::type_check(&t).unwrap();
        assert_eq!(
            BTreeMap::<String, Vec<i32>>::deserialize(&t, Some(&b)).unwrap(),
            m
        );
        let t = ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Varchar]);
        let b = bytes_of((1i32, None::<&str>), &t);
        assert_eq!(
            <(i32, Option<String>)>::deserialize(&t, Some(&b)).unwrap(),
            (1, None)
        );
        let t = ColumnType::Vector {
            element: Box::new(ColumnType::Float),
            dimension: 3,
        };
        let b = bytes_of(vec![1.0f32, 2.0, 3.0], &t);
        assert_eq!(
            Vec::<f32>::deserialize(&t, Some(&b)).unwrap(),
            vec![1.0, 2.0, 3.0]
        );
    }

    #[test]
    fn checks_and_nulls_explain_themselves() {
        let err = i32::type_check(&ColumnType::Bigint).unwrap_err();
        assert_eq!(
            err,
            ValueError::CannotDeserialize {
                typ: crate::value::type_name(&ColumnType::Bigint),
                rust: "i32"
            }
        );
        assert_eq!(err.to_string(), "cannot read bigint into i32");
        assert_eq!(
            i32::deserialize(&ColumnType::Int, None).unwrap_err(),
            ValueError::Null { into: "i32" }
        );
        assert!(i32::deserialize(&ColumnType::Int, None)
            .unwrap_err()
            .to_string()
            .contains("Option<i32>"));
        assert_eq!(
            Option::<i32>::deserialize(&ColumnType::Int, None).unwrap(),
            None
        );
        assert!(i32::deserialize(&ColumnType::Int, Some(&[1, 2])).is_err());
        let list = ColumnType::List(Box::new(ColumnType::Int));
        assert!(Vec::<i32>::deserialize(&list, Some(&[0x7f, 0xff, 0xff, 0xff])).is_err());
    }

    #[test]
    fn vectors_sets_and_owned_or_borrowed_types() {
        let vt = ColumnType::Vector {
            element: Box::new(ColumnType::Varchar),
            dimension: 2,
        };
        let b = bytes_of(vec!["ab", ""], &vt);
        assert_eq!(b, [2, b'a', b'b', 0]);
        Vec::<&str>::type_check(&vt).unwrap();
        assert_eq!(
            Vec::<&str>::deserialize(&vt, Some(&b)).unwrap(),
            vec!["ab", ""]
        );
        // Truncated vint length, element past the end, too few elements, trailing bytes.
        for bad in [&[0x80][..], &[5, b'a'], &[1, b'a'], &[1, b'a', 0, 0]] {
            assert!(
                Vec::<String>::deserialize(&vt, Some(bad)).is_err(),
                "{bad:?}"
            );
        }
        let vs = ColumnType::Vector {
            element: Box::new(ColumnType::Smallint),
            dimension: 2,
        };
        assert_eq!(
            Vec::<i16>::deserialize(&vs, Some(&[2, 0, 1, 2, 0xff, 0xff])).unwrap(),
            vec![1, -1]
        );
        let set = ColumnType::Set(Box::new(ColumnType::Int));
        let b = bytes_of(
            vec![3i32, 1, 3],
            &ColumnType::List(Box::new(ColumnType::Int)),
        );
        assert_eq!(
            BTreeSet::<i32>::deserialize(&set, Some(&b)).unwrap(),
            BTreeSet::from([1, 3])
        );
        assert_eq!(
            HashSet::<i32>::deserialize(&set, Some(&b)).unwrap().len(),
            2
        );
        assert!(HashSet::<i32>::type_check(&ColumnType::Int).is_err());
        let m = ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(ColumnType::Bigint));
        let b = bytes_of(BTreeMap::from([("k", 9i64)]), &m);
        let got = HashMap::<&str, Option<i64>>::deserialize(&m, Some(&b)).unwrap();
        assert_eq!(got.get("k"), Some(&Some(9)));
        // Fixed-size scalars and their checks.
        let u = [0x11; 16];
        assert_eq!(
            CqlUuid::deserialize(&ColumnType::Timeuuid, Some(&u)).unwrap(),
            CqlUuid(u)
        );
        #[cfg(feature = "uuid")]
        assert_eq!(
            uuid::Uuid::deserialize(&ColumnType::Uuid, Some(&u)).unwrap(),
            uuid::Uuid::from_bytes(u)
        );
        assert_eq!(
            Ipv4Addr::deserialize(&ColumnType::Inet, Some(&[127, 0, 0, 1])).unwrap(),
            Ipv4Addr::LOCALHOST
        );
        assert!(Ipv4Addr::deserialize(&ColumnType::Inet, Some(&[0; 16])).is_err());
        assert!(CqlTime::deserialize(&ColumnType::Time, Some(&(-1i64).to_be_bytes())).is_err());
        assert!(<&str>::deserialize(&ColumnType::Ascii, Some("é".as_bytes())).is_err());
        assert!(String::type_check(&ColumnType::Blob).is_err());
        assert_eq!(
            <&[u8]>::deserialize(&ColumnType::Blob, Some(&[1, 2])).unwrap(),
            &[1, 2]
        );
        let d = CqlDuration::new(1, 2, 3).unwrap();
        let b = bytes_of(d, &ColumnType::Duration);
        assert_eq!(
            CqlDuration::deserialize(&ColumnType::Duration, Some(&b)).unwrap(),
            d
        );
        assert!(CqlDuration::type_check(&ColumnType::Bigint).is_err());
        // A tuple with a field past the end.
        let tt = ColumnType::Tuple(vec![ColumnType::Int]);
        assert!(<(i32,)>::deserialize(&tt, Some(&[0, 0, 0, 9, 1])).is_err());
    }
}
