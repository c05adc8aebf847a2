//! Tests of the values: byte-exact formats of every type, round trips, vints and durations,
//! vectors' element sizes, and nesting (refused values are tested in `tests_errors`).

use super::cursor::{put_signed_vint, put_unsigned_vint, Cursor};
use super::*;
use crate::types::{ColumnType, MAX_TYPE_DEPTH};

fn rt(v: CqlValue, t: ColumnType) -> Vec<u8> {
    let mut buf = Vec::new();
    v.encode(&t, &mut buf).unwrap();
    assert_eq!(CqlValue::decode(&t, &buf).unwrap(), v, "{t:?}");
    buf
}

#[test]
fn scalars_are_byte_exact() {
    assert_eq!(rt(CqlValue::Int(7), ColumnType::Int), [0, 0, 0, 7]);
    assert_eq!(rt(CqlValue::Boolean(true), ColumnType::Boolean), [1]);
    assert_eq!(
        rt(CqlValue::Smallint(-2), ColumnType::Smallint),
        [0xff, 0xfe]
    );
    assert_eq!(
        rt(
            CqlValue::Date(CqlDate::from_days_since_epoch(0)),
            ColumnType::Date
        ),
        [0x80, 0, 0, 0]
    );
    assert_eq!(
        rt(
            CqlValue::Inet("10.0.0.1".parse().unwrap()),
            ColumnType::Inet
        ),
        [10, 0, 0, 1]
    );
    rt(CqlValue::Double(1.5), ColumnType::Double);
    rt(CqlValue::Float(-0.25), ColumnType::Float);
    rt(CqlValue::Text("héllo".into()), ColumnType::Varchar);
    rt(
        CqlValue::Time(CqlTime(CqlTime::NANOS_PER_DAY - 1)),
        ColumnType::Time,
    );
    assert!(CqlValue::decode(&ColumnType::Int, &[1, 2, 3]).is_err());
    assert!(CqlValue::decode(&ColumnType::Varchar, &[0xff]).is_err());
    assert!(CqlValue::decode(&ColumnType::Time, &i64::MAX.to_be_bytes()).is_err());
    assert_eq!(
        CqlValue::decode(&ColumnType::Int, &[]).unwrap(),
        CqlValue::Empty
    );
}

#[test]
fn varint_edges() {
    for (v, bytes) in [
        (0i128, vec![0u8]),
        (-1, vec![0xff]),
        (127, vec![0x7f]),
        (128, vec![0x00, 0x80]),
        (-128, vec![0x80]),
        (-129, vec![0xff, 0x7f]),
        (i128::from(i64::MIN), i64::MIN.to_be_bytes().to_vec()),
    ] {
        let x = CqlVarint::from(v);
        assert_eq!(x.as_signed_bytes_be(), &bytes[..], "{v}");
        assert_eq!(x.to_i128(), Some(v));
        rt(CqlValue::Varint(x), ColumnType::Varint);
    }
    let huge = CqlVarint::from_signed_bytes_be(&[0x7f; 40]);
    assert_eq!(huge.to_i128(), None);
    rt(CqlValue::Varint(huge.clone()), ColumnType::Varint);
    rt(
        CqlValue::Decimal(CqlDecimal {
            unscaled: CqlVarint::from(-12345i64),
            scale: 2,
        }),
        ColumnType::Decimal,
    );
}

#[test]
fn vint_and_duration_edges() {
    for v in [
        0u64,
        1,
        127,
        128,
        16383,
        16384,
        1 << 35,
        u64::MAX >> 1,
        u64::MAX,
    ] {
        let mut buf = Vec::new();
        put_unsigned_vint(&mut buf, v);
        let mut b = Cursor(&buf);
        assert_eq!(b.unsigned_vint().unwrap(), v, "{v}");
        assert!(b.0.is_empty());
    }
    let mut one = Vec::new();
    put_unsigned_vint(&mut one, 128);
    assert_eq!(one, [0x80, 0x80]);
    for d in [
        CqlDuration {
            months: 1,
            days: 2,
            nanoseconds: 3,
        },
        CqlDuration {
            months: -14,
            days: -1,
            nanoseconds: i64::MIN,
        },
        CqlDuration {
            months: i32::MAX,
            days: 0,
            nanoseconds: i64::MAX,
        },
    ] {
        rt(CqlValue::Duration(d), ColumnType::Duration);
    }
    // months=1, days=2, nanos=3 zig-zag to 2, 4, 6.
    let mut buf = Vec::new();
    CqlValue::Duration(CqlDuration {
        months: 1,
        days: 2,
        nanoseconds: 3,
    })
    .encode(&ColumnType::Duration, &mut buf)
    .unwrap();
    assert_eq!(buf, [2, 4, 6]);
    let mixed = CqlValue::Duration(CqlDuration {
        months: 1,
        days: -1,
        nanoseconds: 0,
    });
    assert!(mixed
        .encode(&ColumnType::Duration, &mut Vec::new())
        .is_err());
}

#[test]
fn collections_tuples_udts_vectors() {
    let list = ColumnType::List(Box::new(ColumnType::Int));
    let bytes = rt(
        CqlValue::List(vec![CqlValue::Int(1), CqlValue::Int(2)]),
        list.clone(),
    );
    assert_eq!(
        bytes,
        [0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2]
    );
    let map = ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(list.clone()));
    rt(
        CqlValue::Map(vec![(CqlValue::Text("a".into()), CqlValue::List(vec![]))]),
        map,
    );
    let tuple = ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Varchar]);
    rt(
        CqlValue::Tuple(vec![None, Some(CqlValue::Text("x".into()))]),
        tuple,
    );
    let udt = ColumnType::Udt {
        keyspace: "ks".into(),
        name: "addr".into(),
        fields: vec![
            ("street".into(), ColumnType::Varchar),
            ("zip".into(), ColumnType::Int),
        ],
    };
    rt(
        CqlValue::Udt(vec![
            ("street".into(), Some(CqlValue::Text("Main".into()))),
            ("zip".into(), None),
        ]),
        udt.clone(),
    );
    // A value written before `zip` was added: the missing trailing field reads as null.
    let short = [0, 0, 0, 1, b'x'];
    assert_eq!(
        CqlValue::decode(&udt, &short).unwrap(),
        CqlValue::Udt(vec![
            ("street".into(), Some(CqlValue::Text("x".into()))),
            ("zip".into(), None)
        ])
    );
    let vf = ColumnType::Vector {
        element: Box::new(ColumnType::Float),
        dimension: 3,
    };
    let b = rt(
        CqlValue::Vector(vec![
            CqlValue::Float(1.0),
            CqlValue::Float(2.0),
            CqlValue::Float(3.0),
        ]),
        vf.clone(),
    );
    assert_eq!(b.len(), 12);
    assert!(CqlValue::Vector(vec![CqlValue::Float(1.0)])
        .encode(&vf, &mut Vec::new())
        .is_err());
    let vt = ColumnType::Vector {
        element: Box::new(ColumnType::Varchar),
        dimension: 2,
    };
    let b = rt(
        CqlValue::Vector(vec![CqlValue::Text("ab".into()), CqlValue::Text("".into())]),
        vt,
    );
    assert_eq!(b, [2, b'a', b'b', 0]);
}

#[test]
fn every_scalar_type_round_trips() {
    let u = *b"\x12\x3e\x45\x67\xe8\x9b\x12\xd3\xa4\x56\x42\x66\x14\x17\x40\x00";
    let cases = [
        (CqlValue::Ascii("abc".into()), ColumnType::Ascii),
        (CqlValue::Bigint(i64::MIN), ColumnType::Bigint),
        (CqlValue::Blob(vec![0, 0xff]), ColumnType::Blob),
        (CqlValue::Blob(vec![]), ColumnType::Blob),
        (CqlValue::Boolean(false), ColumnType::Boolean),
        (CqlValue::Counter(-5), ColumnType::Counter),
        (
            CqlValue::Decimal(CqlDecimal::new(i64::MIN, -3)),
            ColumnType::Decimal,
        ),
        (CqlValue::Double(f64::MAX), ColumnType::Double),
        (CqlValue::Float(f32::MIN_POSITIVE), ColumnType::Float),
        (CqlValue::Int(i32::MIN), ColumnType::Int),
        (CqlValue::Timestamp(CqlTimestamp(-1)), ColumnType::Timestamp),
        (CqlValue::Uuid(u), ColumnType::Uuid),
        (CqlValue::Text(String::new()), ColumnType::Varchar),
        (
            CqlValue::Varint(CqlVarint::from(1i64 << 40)),
            ColumnType::Varint,
        ),
        (CqlValue::Timeuuid(u), ColumnType::Timeuuid),
        (CqlValue::Inet("::1".parse().unwrap()), ColumnType::Inet),
        (CqlValue::Date(CqlDate(0)), ColumnType::Date),
        (CqlValue::Date(CqlDate(u32::MAX)), ColumnType::Date),
        (CqlValue::Time(CqlTime(0)), ColumnType::Time),
        (CqlValue::Smallint(i16::MIN), ColumnType::Smallint),
        (CqlValue::Tinyint(i8::MIN), ColumnType::Tinyint),
        (
            CqlValue::Custom(vec![1, 2, 3]),
            ColumnType::Custom("com.example.T".into()),
        ),
        (CqlValue::Empty, ColumnType::Int),
    ];
    for (v, t) in cases {
        rt(v, t);
    }
    // Version 4 is not a timeuuid.
    let mut v4 = u;
    v4[6] = 0x42;
    assert!(CqlValue::decode(&ColumnType::Timeuuid, &v4).is_err());
    assert!(CqlValue::Uuid(v4)
        .encode(&ColumnType::Timeuuid, &mut Vec::new())
        .is_err());
    // Time bounds.
    assert!(CqlValue::Time(CqlTime(-1))
        .encode(&ColumnType::Time, &mut Vec::new())
        .is_err());
    assert!(CqlValue::decode(&ColumnType::Time, &CqlTime::NANOS_PER_DAY.to_be_bytes()).is_err());
    assert!(CqlTime::try_from(CqlTime::NANOS_PER_DAY).is_err());
    assert_eq!(CqlTime::try_from(5).unwrap(), CqlTime(5));
    // Date bounds: the smallest and largest days around the epoch.
    assert_eq!(CqlDate(0).days_since_epoch(), -(1i64 << 31));
    assert_eq!(CqlDate(u32::MAX).days_since_epoch(), (1i64 << 31) - 1);
    assert_eq!(CqlDate::from_days_since_epoch(i32::MIN), CqlDate(0));
    assert_eq!(CqlDate::from_days_since_epoch(-1), CqlDate((1 << 31) - 1));
    // inet of a wrong size, ascii with a high byte.
    assert!(CqlValue::decode(&ColumnType::Inet, &[1, 2, 3, 4, 5]).is_err());
    assert!(CqlValue::decode(&ColumnType::Ascii, "é".as_bytes()).is_err());
}

#[test]
fn varint_and_decimal_bytes_are_minimal_and_exact() {
    // Redundant sign bytes are dropped; needed ones kept.
    for (input, minimal) in [
        (&[0u8, 0, 0x7f][..], &[0x7fu8][..]),
        (&[0xff, 0xff, 0x80], &[0x80]),
        (&[0xff, 0x7f], &[0xff, 0x7f]),
        (&[0x00, 0x80], &[0x00, 0x80]),
        (&[0, 0, 0], &[0]),
        (&[], &[0]),
    ] {
        assert_eq!(
            CqlVarint::from_signed_bytes_be(input).as_signed_bytes_be(),
            minimal
        );
    }
    assert_eq!(CqlVarint::from(i128::MIN).as_signed_bytes_be().len(), 16);
    assert_eq!(CqlVarint::from(i128::MIN).to_i128(), Some(i128::MIN));
    assert_eq!(CqlVarint::from(i128::MAX).to_i64(), None);
    assert_eq!(i64::try_from(&CqlVarint::from(i64::MIN)).unwrap(), i64::MIN);
    assert!(i64::try_from(&CqlVarint::from(i128::from(i64::MAX) + 1)).is_err());
    assert_eq!(
        CqlVarint::from(u64::MAX).as_signed_bytes_be(),
        [0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
    );
    // decimal 1.23: scale 2 as [int], then varint 123.
    let mut buf = Vec::new();
    CqlValue::Decimal(CqlDecimal::new(123, 2))
        .encode(&ColumnType::Decimal, &mut buf)
        .unwrap();
    assert_eq!(buf, [0, 0, 0, 2, 123]);
    // -0.5: scale 1, varint -5.
    assert_eq!(
        CqlValue::decode(&ColumnType::Decimal, &[0, 0, 0, 1, 0xfb]).unwrap(),
        CqlValue::Decimal(CqlDecimal::new(-5, 1))
    );
    assert!(CqlValue::decode(&ColumnType::Decimal, &[0, 0, 0, 1]).is_err());
    assert!(CqlValue::decode(&ColumnType::Decimal, &[0, 0]).is_err());
}

#[test]
fn duration_vints_are_byte_exact() {
    let enc = |months, days, nanoseconds| {
        let mut buf = Vec::new();
        CqlValue::Duration(CqlDuration {
            months,
            days,
            nanoseconds,
        })
        .encode(&ColumnType::Duration, &mut buf)
        .unwrap();
        buf
    };
    // -1 zig-zags to 1; 64 to 128, which takes two bytes (0b10 prefix).
    assert_eq!(enc(-1, 0, 0), [1, 0, 0]);
    assert_eq!(enc(64, 0, 0), [0x80, 0x80, 0, 0]);
    // i64::MIN zig-zags to u64::MAX: nine bytes, 0xff then eight 0xff.
    assert_eq!(enc(0, 0, i64::MIN), [&[0u8, 0][..], &[0xff; 9]].concat());
    // Months past i32 are refused, as are trailing bytes and truncated vints.
    let mut big = Vec::new();
    put_signed_vint(&mut big, i64::from(i32::MAX) + 1);
    big.extend_from_slice(&[0, 0]);
    assert!(CqlValue::decode(&ColumnType::Duration, &big).is_err());
    assert!(CqlValue::decode(&ColumnType::Duration, &[0, 0, 0, 0]).is_err());
    assert!(CqlValue::decode(&ColumnType::Duration, &[0, 0, 0xc0, 1]).is_err());
    assert!(CqlDuration::new(1, -1, 0).is_err());
    assert!(CqlDuration::new(-1, -1, -5).is_ok());
}

#[test]
fn vectors_follow_cassandra_element_sizes() {
    // smallint is variable-length for Cassandra's vectors: each element has a vint length.
    let vs = ColumnType::Vector {
        element: Box::new(ColumnType::Smallint),
        dimension: 2,
    };
    let b = rt(
        CqlValue::Vector(vec![CqlValue::Smallint(1), CqlValue::Smallint(-1)]),
        vs,
    );
    assert_eq!(b, [2, 0, 1, 2, 0xff, 0xff]);
    // A vector of fixed-size vectors is fixed-size: no lengths at all.
    let inner = ColumnType::Vector {
        element: Box::new(ColumnType::Int),
        dimension: 2,
    };
    let outer = ColumnType::Vector {
        element: Box::new(inner),
        dimension: 2,
    };
    let v = |a, b| CqlValue::Vector(vec![CqlValue::Int(a), CqlValue::Int(b)]);
    assert_eq!(
        rt(CqlValue::Vector(vec![v(1, 2), v(3, 4)]), outer).len(),
        16
    );
    // A list of vectors of text (variable inside variable).
    let lt = ColumnType::List(Box::new(ColumnType::Vector {
        element: Box::new(ColumnType::Varchar),
        dimension: 1,
    }));
    rt(
        CqlValue::List(vec![CqlValue::Vector(vec![CqlValue::Text("é".into())])]),
        lt,
    );
    // Zero-sized elements would let a huge dimension be read from nothing.
    let zero = ColumnType::Vector {
        element: Box::new(ColumnType::Vector {
            element: Box::new(ColumnType::Int),
            dimension: 0,
        }),
        dimension: u32::MAX,
    };
    assert!(CqlValue::decode(&zero, &[]).is_err());
    // Trailing bytes after the last element.
    let vf = ColumnType::Vector {
        element: Box::new(ColumnType::Float),
        dimension: 1,
    };
    assert!(CqlValue::decode(&vf, &[0; 5]).is_err());
}

#[test]
fn nested_collections_and_hostile_nesting() {
    let t = ColumnType::Map(
        Box::new(ColumnType::Int),
        Box::new(ColumnType::Set(Box::new(ColumnType::Tuple(vec![
            ColumnType::Varchar,
            ColumnType::List(Box::new(ColumnType::Bigint)),
        ])))),
    );
    rt(
        CqlValue::Map(vec![
            (
                CqlValue::Int(1),
                CqlValue::Set(vec![CqlValue::Tuple(vec![
                    Some(CqlValue::Text("a".into())),
                    Some(CqlValue::List(vec![CqlValue::Bigint(7)])),
                ])]),
            ),
            (CqlValue::Int(2), CqlValue::Set(vec![])),
        ]),
        t,
    );
    // Well-formed values nested up to the limit decode; deeper ones are refused rather
    // than recursed into.
    let nested = |levels: usize| {
        let mut t = ColumnType::Int;
        let mut bytes = vec![0, 0, 0, 1];
        for _ in 0..levels {
            t = ColumnType::List(Box::new(t));
            let mut outer = vec![0, 0, 0, 1];
            outer.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
            outer.extend_from_slice(&bytes);
            bytes = outer;
        }
        CqlValue::decode(&t, &bytes)
    };
    assert!(nested(MAX_TYPE_DEPTH).is_ok());
    let err = nested(MAX_TYPE_DEPTH + 1).unwrap_err();
    assert!(err.to_string().contains("nested deeper"), "{err}");
    // Map with a negative count, a null key, a count past the end.
    let m = ColumnType::Map(Box::new(ColumnType::Int), Box::new(ColumnType::Int));
    assert!(CqlValue::decode(&m, &[0x80, 0, 0, 0]).is_err());
    assert!(CqlValue::decode(&m, &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]).is_err());
    assert!(CqlValue::decode(&m, &[0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    // A UDT with more fields than its type, a tuple missing a field.
    let udt = ColumnType::Udt {
        keyspace: "ks".into(),
        name: "u".into(),
        fields: vec![("a".into(), ColumnType::Int)],
    };
    assert!(CqlValue::decode(&udt, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).is_err());
    let tuple = ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Int]);
    assert!(CqlValue::decode(&tuple, &[0xff, 0xff, 0xff, 0xff]).is_err());
    // A UDT value naming a field its type lacks is refused on encode.
    assert!(CqlValue::Udt(vec![("zzz".into(), None)])
        .encode(&udt, &mut Vec::new())
        .is_err());
}
