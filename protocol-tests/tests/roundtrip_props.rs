//! Property tests: encode-then-decode round trips.

use doppio_proto::types::ColumnType;
use doppio_proto::wire::Reader;
use proptest::prelude::*;

/// Native (non-parameterised) types.
fn native_type() -> impl Strategy<Value = ColumnType> {
    prop::sample::select(vec![
        ColumnType::Ascii,
        ColumnType::Bigint,
        ColumnType::Blob,
        ColumnType::Boolean,
        ColumnType::Counter,
        ColumnType::Decimal,
        ColumnType::Double,
        ColumnType::Float,
        ColumnType::Int,
        ColumnType::Timestamp,
        ColumnType::Uuid,
        ColumnType::Varchar,
        ColumnType::Varint,
        ColumnType::Timeuuid,
        ColumnType::Inet,
        ColumnType::Date,
        ColumnType::Time,
        ColumnType::Smallint,
        ColumnType::Tinyint,
        ColumnType::Duration,
    ])
}

fn ident() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,12}"
}

/// Any column type, nested up to a few levels.
pub fn column_type() -> impl Strategy<Value = ColumnType> {
    let leaf = prop_oneof![
        8 => native_type(),
        1 => "[A-Z][a-z]{1,8}".prop_map(|n| ColumnType::Custom(format!("com.example.{n}Type"))),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| ColumnType::List(Box::new(t))),
            inner.clone().prop_map(|t| ColumnType::Set(Box::new(t))),
            (inner.clone(), inner.clone())
                .prop_map(|(k, v)| ColumnType::Map(Box::new(k), Box::new(v))),
            prop::collection::vec(inner.clone(), 1..4).prop_map(ColumnType::Tuple),
            (
                ident(),
                ident(),
                prop::collection::vec((ident(), inner.clone()), 1..4)
            )
                .prop_map(|(keyspace, name, fields)| ColumnType::Udt {
                    keyspace,
                    name,
                    fields
                }),
            (vector_element(), 1u32..5).prop_map(|(element, dimension)| ColumnType::Vector {
                element: Box::new(element),
                dimension
            }),
        ]
    })
}

/// Element types of a vector: native types and vectors of them.
fn vector_element() -> impl Strategy<Value = ColumnType> {
    prop_oneof![
        4 => native_type(),
        1 => (native_type(), 1u32..4).prop_map(|(e, d)| ColumnType::Vector {
            element: Box::new(e),
            dimension: d
        }),
    ]
}

fn type_round_trip(t: &ColumnType) -> Result<(), TestCaseError> {
    let mut buf = Vec::new();
    t.encode(&mut buf)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut r = Reader::new(&buf);
    let back = ColumnType::decode(&mut r).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(r.is_empty());
    prop_assert_eq!(&back, t);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn column_types_round_trip(t in column_type()) {
        type_round_trip(&t)?;
    }
}

/// Cassandra allows any element type in a vector; collections inside a vector are named
/// by their marshal class (`ListType(...)`), which must come back as the same type.
///
/// BUG (doppio-proto types.rs `from_class_name`): only native class names and nested
/// `VectorType` are recognised, so `vector<list<int>, 2>` decodes its element as
/// `Custom("org.apache.cassandra.db.marshal.ListType(...)")` and its values stay opaque.
/// Real Cassandra 5 sends exactly this (see `vector_element_types_from_cassandra`).
#[test]
#[ignore = "doppio-proto bug: collection/tuple class names inside VectorType decode as Custom"]
fn vector_of_collections_round_trips() {
    for element in [
        ColumnType::List(Box::new(ColumnType::Int)),
        ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(ColumnType::Int)),
        ColumnType::Set(Box::new(ColumnType::Float)),
        ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Varchar]),
    ] {
        let t = ColumnType::Vector {
            element: Box::new(element),
            dimension: 2,
        };
        let mut buf = Vec::new();
        t.encode(&mut buf).unwrap();
        let back = ColumnType::decode(&mut Reader::new(&buf)).unwrap();
        assert_eq!(back, t);
    }
}

mod notations {
    use std::net::{IpAddr, SocketAddr};

    use doppio_proto::wire::{self, RawValue, Reader};
    use proptest::prelude::*;

    fn small_string() -> impl Strategy<Value = String> {
        "\\PC{0,20}"
    }

    fn raw_value() -> impl Strategy<Value = Option<Option<Vec<u8>>>> {
        // None: unset; Some(None): null; Some(Some(b)): bytes.
        prop_oneof![
            Just(None),
            Just(Some(None)),
            prop::collection::vec(any::<u8>(), 0..40).prop_map(|b| Some(Some(b))),
        ]
    }

    fn as_raw(v: &Option<Option<Vec<u8>>>) -> RawValue<'_> {
        match v {
            None => RawValue::Unset,
            Some(None) => RawValue::Null,
            Some(Some(b)) => RawValue::Bytes(b),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn every_notation_round_trips(
            short in any::<u16>(),
            int in any::<i32>(),
            long in any::<i64>(),
            s in small_string(),
            ls in small_string(),
            list in prop::collection::vec(small_string(), 0..6),
            map in prop::collection::vec((small_string(), small_string()), 0..6),
            multimap in prop::collection::vec((small_string(), prop::collection::vec(small_string(), 0..4)), 0..4),
            bytes_map in prop::collection::vec((small_string(), prop::option::of(prop::collection::vec(any::<u8>(), 0..10))), 0..5),
            values in prop::collection::vec(raw_value(), 0..6),
            short_bytes in prop::collection::vec(any::<u8>(), 0..40),
            ip in any::<IpAddr>(),
            port in any::<u16>(),
        ) {
            let mut buf = Vec::new();
            wire::put_short(&mut buf, short);
            wire::put_int(&mut buf, int);
            wire::put_long(&mut buf, long);
            wire::put_string(&mut buf, &s, "s").unwrap();
            wire::put_long_string(&mut buf, &ls, "ls").unwrap();
            wire::put_string_list(&mut buf, list.iter().map(String::as_str), "l").unwrap();
            let pairs: Vec<(&str, &str)> = map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            wire::put_string_map(&mut buf, &pairs, "m").unwrap();
            wire::put_string_multimap(&mut buf, &multimap, "mm").unwrap();
            let bm: Vec<(&str, Option<&[u8]>)> =
                bytes_map.iter().map(|(k, v)| (k.as_str(), v.as_deref())).collect();
            wire::put_bytes_map(&mut buf, &bm, "bm").unwrap();
            for v in &values {
                wire::put_value(&mut buf, as_raw(v), "v").unwrap();
            }
            wire::put_short_bytes(&mut buf, &short_bytes, "sb").unwrap();
            let addr = SocketAddr::new(ip, port);
            wire::put_inet(&mut buf, addr);

            let mut r = Reader::new(&buf);
            prop_assert_eq!(r.read_short("short").unwrap(), short);
            prop_assert_eq!(r.read_int("int").unwrap(), int);
            prop_assert_eq!(r.read_long("long").unwrap(), long);
            prop_assert_eq!(r.read_string("s").unwrap(), s.as_str());
            prop_assert_eq!(r.read_long_string("ls").unwrap(), ls.as_str());
            let back: Vec<&str> = r.read_string_list("l").unwrap().collect();
            prop_assert_eq!(back, list.iter().map(String::as_str).collect::<Vec<_>>());
            prop_assert_eq!(r.read_string_map("m").unwrap(), pairs);
            let back = r.read_string_multimap("mm").unwrap();
            prop_assert_eq!(back.len(), multimap.len());
            for ((k, vs), (ek, evs)) in back.iter().zip(&multimap) {
                prop_assert_eq!(*k, ek.as_str());
                prop_assert_eq!(vs.clone(), evs.iter().map(String::as_str).collect::<Vec<_>>());
            }
            prop_assert_eq!(r.read_bytes_map("bm").unwrap(), bm);
            for v in &values {
                prop_assert_eq!(r.read_value("v").unwrap(), as_raw(v));
            }
            prop_assert_eq!(r.read_short_bytes("sb").unwrap(), &short_bytes[..]);
            prop_assert_eq!(r.read_inet("inet").unwrap(), addr);
            prop_assert!(r.is_empty());
        }
    }
}
