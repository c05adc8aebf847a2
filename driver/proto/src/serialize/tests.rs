//! Tests of serialization: byte-exact values and rows, type checks naming the column, named
//! values, vectors, and values that are refused leaving nothing behind.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::net::{IpAddr, Ipv6Addr};

use bytes::{Bytes, BytesMut};

use super::*;
use crate::metadata::ColumnSpec;
use crate::types::ColumnType;
use crate::value::{
    CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlUuid, CqlValue, CqlVarint, Unset,
};
use crate::values::QueryValues;

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
    assert_eq!(
        &buf[..],
        b"\x00\x03age\x00\x00\x00\x04\x00\x00\x00\x1e\x00\x02id\x00\x00\x00\x04\x00\x00\x00\x01"
    );
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
    let map: HashMap<&str, CqlValue> = [("id", CqlValue::Int(1)), ("age", CqlValue::Int(2))].into();
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
