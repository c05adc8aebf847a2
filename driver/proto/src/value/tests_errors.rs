//! Tests of values that are refused: hostile collections, values that do not fit their
//! type, and typed errors that keep their sources.

use super::*;
use crate::error::{ProtoError, Result, ValueError};
use crate::types::ColumnType;

#[test]
fn hostile_collections_are_errors() {
    let list = ColumnType::List(Box::new(ColumnType::Int));
    assert!(CqlValue::decode(&list, &[0x7f, 0xff, 0xff, 0xff]).is_err());
    assert!(CqlValue::decode(&list, &[0xff, 0xff, 0xff, 0xfe]).is_err());
    assert!(CqlValue::decode(&list, &[0, 0, 0, 1, 0, 0, 0, 9, 1]).is_err());
    assert!(CqlValue::decode(&list, &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]).is_err());
    let v = ColumnType::Vector {
        element: Box::new(ColumnType::Varchar),
        dimension: u32::MAX,
    };
    assert!(CqlValue::decode(&v, &[0xff; 9]).is_err());
    assert!(CqlValue::decode(&ColumnType::Duration, &[0xff]).is_err());
}

#[test]
fn mismatches_say_why() {
    let err = CqlValue::Bigint(1)
        .encode(&ColumnType::Int, &mut Vec::new())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid CQL value: cannot encode a Bigint value as int"
    );
    let err = CqlValue::List(vec![]).encode(
        &ColumnType::Map(Box::new(ColumnType::Int), Box::new(ColumnType::Int)),
        &mut Vec::new(),
    );
    assert!(err.unwrap_err().to_string().contains("map<int, int>"));
}

#[test]
fn errors_are_typed_and_keep_their_sources() {
    use std::error::Error as _;
    let value_error = |r: Result<CqlValue>| match r {
        Err(ProtoError::InvalidCqlValue(e)) => *e,
        other => panic!("expected a value error, got {other:?}"),
    };
    let err = CqlValue::decode(&ColumnType::Varchar, &[b'a', 0xff]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid CQL value: text is not valid UTF-8"
    );
    // ProtoError -> ValueError -> Utf8Error, each reachable by source().
    let value = err.source().expect("a value error");
    assert!(matches!(
        err.value_error(),
        Some(ValueError::InvalidUtf8 { what: "text", .. })
    ));
    assert_eq!(value.to_string(), "text is not valid UTF-8");
    let utf8 = value.source().expect("the utf8 error");
    assert_eq!(
        utf8.downcast_ref::<std::str::Utf8Error>()
            .map(std::str::Utf8Error::valid_up_to),
        Some(1)
    );
    assert_eq!(
        value_error(CqlValue::decode(&ColumnType::Int, &[1, 2, 3])),
        ValueError::WrongSize {
            typ: type_name(&ColumnType::Int),
            len: 3,
            expected: 4
        }
    );
    assert_eq!(
        value_error(CqlValue::decode(&ColumnType::Int, &[1, 2, 3])).to_string(),
        "int value of 3 bytes, expected 4"
    );
    assert_eq!(
        value_error(CqlValue::decode(
            &ColumnType::Time,
            &CqlTime::NANOS_PER_DAY.to_be_bytes()
        )),
        ValueError::TimeOutsideDay {
            nanos: CqlTime::NANOS_PER_DAY
        }
    );
    let mut v4 = [0u8; 16];
    v4[6] = 0x40;
    assert_eq!(
        value_error(CqlValue::decode(&ColumnType::Timeuuid, &v4)),
        ValueError::NotTimeuuid { version: 4 }
    );
    let list = ColumnType::List(Box::new(ColumnType::Int));
    assert_eq!(
        value_error(CqlValue::decode(&list, &[0x7f, 0xff, 0xff, 0xff])),
        ValueError::CountTooLarge {
            what: "element count",
            count: 0x7fff_ffff,
            left: 0
        }
    );
    assert_eq!(
        value_error(CqlValue::decode(&list, &[0xff, 0xff, 0xff, 0xfe])),
        ValueError::NegativeCount {
            what: "element count",
            count: -2
        }
    );
    assert_eq!(
        value_error(CqlValue::decode(&list, &[0, 0, 0, 1, 0, 0, 0, 9, 1])),
        ValueError::Truncated {
            what: "element",
            needed: 9,
            left: 1
        }
    );
    assert_eq!(
        value_error(CqlValue::decode(&ColumnType::Ascii, b"ab\xc3\xa9")),
        ValueError::NonAscii { offset: 2 }
    );
    assert_eq!(
        value_error(CqlValue::decode(&ColumnType::Inet, &[1, 2, 3, 4, 5])),
        ValueError::InetLength { len: 5 }
    );
    assert_eq!(
        CqlDuration::new(1, -1, 0).unwrap_err(),
        ProtoError::from(ValueError::DurationSigns {
            months: 1,
            days: -1,
            nanoseconds: 0
        })
    );
    assert_eq!(
        i64::try_from(&CqlVarint::from(i128::MAX))
            .unwrap_err()
            .to_string(),
        "invalid CQL value: varint of 16 bytes does not fit in i64"
    );
    let udt = ColumnType::Udt {
        keyspace: "ks".into(),
        name: "point".into(),
        fields: vec![("x".into(), ColumnType::Int)],
    };
    let mut buf = Vec::new();
    assert_eq!(
        value_error(
            CqlValue::Udt(vec![("y".into(), None)])
                .encode(&udt, &mut buf)
                .map(|()| CqlValue::Empty)
        ),
        ValueError::NoSuchField {
            udt: "point".into(),
            field: "y".into()
        }
    );
}
