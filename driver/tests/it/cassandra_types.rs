//! Every CQL type round-trips through a real Cassandra 5.0, by prepared and by unprepared
//! statements, with and without lz4: typical values, extremes (i64::MIN, NaN, -0.0,
//! infinities, empty strings and blobs, a 1 MiB blob, unicode), nulls in every column,
//! empty and nested collections, tuples with null members, UDTs (nested, with null fields,
//! and after `ALTER TYPE ... ADD`), vectors of fixed- and variable-size elements, counters.
//!
//! What the server does that a reader might not expect, asserted here: an empty non-frozen
//! collection is stored as no cells and reads back as null (an empty frozen one stays
//! empty); lists keep order and duplicates; a UDT written before a field was added reads
//! back with that field null.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::net::IpAddr;

use doppio_driver::config::HandshakeConfig;
use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::serialize::Bound;
use doppio_driver::proto::value::{
    CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlValue, CqlVarint,
};
use doppio_driver::{Session, SessionConfig};

use crate::support;

use doppio_driver::rt::Runtime;
use support::{cassandra, create_keyspace_cql, keyspace, on_runtime};

const COLUMNS: &str = "asci, big, bl, bo, dat, dec, dou, dur, flo, ine, i, sm, te, ti, ts, tu, \
                       tiny, u, vi, li, se, ma, nested, ms, tup, ud, outer_u, vf, vt";

const TABLE: &str = "CREATE TABLE t (k int PRIMARY KEY, asci ascii, big bigint, bl blob, \
    bo boolean, dat date, dec decimal, dou double, dur duration, flo float, ine inet, i int, \
    sm smallint, te text, ti time, ts timestamp, tu timeuuid, tiny tinyint, u uuid, vi varint, \
    li list<int>, se set<text>, ma map<text, int>, nested frozen<list<map<int, text>>>, \
    ms map<text, frozen<set<int>>>, tup tuple<int, text, double>, ud frozen<point>, \
    outer_u frozen<shape>, vf vector<float, 3>, vt vector<text, 2>)";

async fn session(compression: bool) -> Session {
    let mut c = SessionConfig::new(cassandra());
    c.consistency = Consistency::One;
    c.handshake = {
        let mut cfg = HandshakeConfig::default();
        cfg.compression = compression;
        cfg
    };
    Session::connect(c).await.unwrap()
}

fn varint(v: i128) -> CqlValue {
    CqlValue::Varint(CqlVarint::from_signed_bytes_be(&v.to_be_bytes()))
}

fn udt(fields: &[(&str, Option<CqlValue>)]) -> CqlValue {
    CqlValue::Udt(
        fields
            .iter()
            .map(|(n, v)| ((*n).to_owned(), v.clone()))
            .collect(),
    )
}

fn point(x: Option<i32>, y: Option<i32>, label: Option<&str>) -> CqlValue {
    udt(&[
        ("x", x.map(CqlValue::Int)),
        ("y", y.map(CqlValue::Int)),
        ("label", label.map(|l| CqlValue::Text(l.into()))),
    ])
}

/// A version-1 (time-based) UUID, as timeuuid columns require.
fn timeuuid(seed: u8) -> [u8; 16] {
    let mut b = [seed; 16];
    b[6] = 0x11; // version 1
    b[8] = 0x80 | (seed & 0x3f); // RFC 4122 variant
    b
}

/// Values for the columns of `COLUMNS`, in order: (what to write, what the server returns).
/// One row of every column, nullable.
type Values = Vec<Option<CqlValue>>;

fn rows() -> Vec<(&'static str, Values, Values)> {
    let some = Some;
    let typical: Values = vec![
        some(CqlValue::Ascii("plain ascii".into())),
        some(CqlValue::Bigint(1_234_567_890_123)),
        some(CqlValue::Blob(vec![0, 1, 2, 0xff])),
        some(CqlValue::Boolean(true)),
        some(CqlValue::Date(CqlDate::from_days_since_epoch(19_000))),
        some(CqlValue::Decimal(CqlDecimal::new(-123_456_789, 4))),
        some(CqlValue::Double(std::f64::consts::PI)),
        some(CqlValue::Duration(
            CqlDuration::new(1, 2, 3_000_000_000).unwrap(),
        )),
        some(CqlValue::Float(1.5)),
        some(CqlValue::Inet("10.1.2.3".parse::<IpAddr>().unwrap())),
        some(CqlValue::Int(-42)),
        some(CqlValue::Smallint(-300)),
        some(CqlValue::Text("héllo wörld ☕ 字".into())),
        some(CqlValue::Time(CqlTime(13 * 3600 * 1_000_000_000 + 5))),
        some(CqlValue::Timestamp(CqlTimestamp(1_700_000_000_123))),
        some(CqlValue::Timeuuid(timeuuid(7))),
        some(CqlValue::Tinyint(-7)),
        some(CqlValue::Uuid([0x42; 16])),
        some(varint(-170_141_183_460_469_231_731_687_303_715_884_105_728)), // i128::MIN
        some(CqlValue::List(vec![
            CqlValue::Int(3),
            CqlValue::Int(1),
            CqlValue::Int(3),
        ])),
        some(CqlValue::Set(vec![
            CqlValue::Text("a".into()),
            CqlValue::Text("b".into()),
        ])),
        some(CqlValue::Map(vec![
            (CqlValue::Text("one".into()), CqlValue::Int(1)),
            (CqlValue::Text("two".into()), CqlValue::Int(2)),
        ])),
        some(CqlValue::List(vec![
            CqlValue::Map(vec![(CqlValue::Int(1), CqlValue::Text("x".into()))]),
            CqlValue::Map(vec![]),
        ])),
        some(CqlValue::Map(vec![(
            CqlValue::Text("s".into()),
            CqlValue::Set(vec![CqlValue::Int(1), CqlValue::Int(2)]),
        )])),
        some(CqlValue::Tuple(vec![
            some(CqlValue::Int(1)),
            None,
            some(CqlValue::Double(2.5)),
        ])),
        some(point(Some(1), None, Some("p"))),
        some(udt(&[
            ("name", Some(CqlValue::Text("square".into()))),
            ("corner", Some(point(Some(0), Some(0), None))),
            (
                "corners",
                Some(CqlValue::List(vec![point(Some(1), Some(1), Some("c"))])),
            ),
        ])),
        some(CqlValue::Vector(vec![
            CqlValue::Float(1.0),
            CqlValue::Float(-2.5),
            CqlValue::Float(3.25),
        ])),
        some(CqlValue::Vector(vec![
            CqlValue::Text("variable".into()),
            CqlValue::Text("".into()),
        ])),
    ];
    let extremes: Values = vec![
        some(CqlValue::Ascii(String::new())),
        some(CqlValue::Bigint(i64::MIN)),
        some(CqlValue::Blob(Vec::new())),
        some(CqlValue::Boolean(false)),
        some(CqlValue::Date(CqlDate(0))),
        some(CqlValue::Decimal(CqlDecimal::new(i64::MAX, -10))),
        some(CqlValue::Double(f64::NAN)),
        some(CqlValue::Duration(CqlDuration::new(-1, -2, -3).unwrap())),
        some(CqlValue::Float(-0.0)),
        some(CqlValue::Inet("::1".parse::<IpAddr>().unwrap())),
        some(CqlValue::Int(i32::MIN)),
        some(CqlValue::Smallint(i16::MAX)),
        some(CqlValue::Text(String::new())),
        some(CqlValue::Time(CqlTime(CqlTime::NANOS_PER_DAY - 1))),
        some(CqlValue::Timestamp(CqlTimestamp(-1))),
        some(CqlValue::Timeuuid(timeuuid(0))),
        some(CqlValue::Tinyint(i8::MIN)),
        some(CqlValue::Uuid([0; 16])),
        some(varint(i128::MAX)),
        some(CqlValue::List(vec![CqlValue::Int(i32::MAX)])),
        some(CqlValue::Set(vec![CqlValue::Text(String::new())])),
        some(CqlValue::Map(vec![(
            CqlValue::Text(String::new()),
            CqlValue::Int(0),
        )])),
        some(CqlValue::List(vec![])),
        some(CqlValue::Map(vec![])),
        some(CqlValue::Tuple(vec![
            None,
            None,
            some(CqlValue::Double(f64::NEG_INFINITY)),
        ])),
        some(point(None, None, None)),
        some(udt(&[("name", None), ("corner", None), ("corners", None)])),
        some(CqlValue::Vector(vec![
            CqlValue::Float(f32::INFINITY),
            CqlValue::Float(f32::MIN_POSITIVE),
            CqlValue::Float(f32::NAN),
        ])),
        some(CqlValue::Vector(vec![
            CqlValue::Text("☕".repeat(1000)),
            CqlValue::Text("x".into()),
        ])),
    ];
    // An empty frozen collection is a value and reads back empty; an empty non-frozen
    // collection is stored as no cells at all and reads back as null.
    let mut extremes_back = extremes.clone();
    extremes_back[23] = None; // `ms`, a non-frozen map, written empty
    let nulls: Values = vec![None; 29];
    let mut big = nulls.clone();
    big[2] = some(CqlValue::Blob(
        (0..(1 << 20)).map(|i: u32| (i % 251) as u8).collect(),
    ));
    vec![
        ("typical", typical.clone(), typical),
        ("extremes", extremes, extremes_back),
        ("nulls", nulls.clone(), nulls),
        ("1 MiB blob", big.clone(), big),
    ]
}

fn same(a: &[Option<CqlValue>], b: &[Option<CqlValue>]) -> bool {
    // Debug formatting compares NaN with NaN and tells -0.0 from 0.0, as bit-exact
    // round trips need.
    format!("{a:?}") == format!("{b:?}")
}

fn every_type(runtime: Runtime, compression: bool, test: &'static str) {
    on_runtime(runtime, "types", move || async move {
        let s = session(compression).await;
        let ks = keyspace(test);
        s.query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap();
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged("CREATE TYPE point (x int, y int, label text)", &())
            .await
            .unwrap();
        s.query_unpaged(
            "CREATE TYPE shape (name text, corner frozen<point>, corners list<frozen<point>>)",
            &(),
        )
        .await
        .unwrap();
        s.query_unpaged(TABLE, &()).await.unwrap();
        let markers = vec!["?"; 30].join(", ");
        let insert_cql = format!("INSERT INTO t (k, {COLUMNS}) VALUES ({markers})");
        let select_cql = format!("SELECT {COLUMNS} FROM t WHERE k = ?");
        let insert = s.prepare(&insert_cql).await.unwrap();
        let select = s.prepare(&select_cql).await.unwrap();
        for (n, (name, written, expected)) in rows().into_iter().enumerate() {
            for prepared in [true, false] {
                let k = (n * 2 + usize::from(prepared)) as i32;
                let mut values = vec![Some(CqlValue::Int(k))];
                values.extend(written.iter().cloned());
                let got = if prepared {
                    s.execute_unpaged(&insert, &Bound(values)).await.unwrap();
                    s.execute_unpaged(&select, &(k,)).await.unwrap()
                } else {
                    s.query_unpaged(&insert_cql, &Bound(values)).await.unwrap();
                    s.query_unpaged(&select_cql, &(k,)).await.unwrap()
                };
                let rows = got.rows().unwrap();
                let row = rows.iter().next().unwrap().unwrap().to_values().unwrap();
                assert!(
                    same(&row, &expected),
                    "{name} (prepared: {prepared}, lz4: {compression}):\n got  {row:?}\n want {expected:?}"
                );
            }
        }
        // Typed rows of the extremes.
        let typed: Vec<(i64, f64, String, Vec<u8>)> = s
            .query_unpaged("SELECT big, dou, te, bl FROM t WHERE k = 3", &())
            .await
            .unwrap()
            .typed_rows()
            .unwrap();
        assert_eq!(typed.len(), 1);
        assert_eq!(typed[0].0, i64::MIN);
        assert!(typed[0].1.is_nan());
        assert_eq!((typed[0].2.as_str(), typed[0].3.len()), ("", 0));
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

fn every_type_round_trips_by_prepared_and_unprepared_statements(runtime: Runtime) {
    every_type(runtime, false, "types");
}

fn every_type_round_trips_with_lz4(runtime: Runtime) {
    every_type(runtime, true, "types_lz4");
}

fn counters_and_a_udt_that_grew_a_field(runtime: Runtime) {
    on_runtime(runtime, "types-extra", || async {
        let s = session(false).await;
        let ks = keyspace("types_extra");
        s.query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap();
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged("CREATE TABLE c (k int PRIMARY KEY, n counter)", &())
            .await
            .unwrap();
        let bump = s
            .prepare("UPDATE c SET n = n + ? WHERE k = ?")
            .await
            .unwrap();
        for delta in [i64::MAX, 1, -2] {
            s.execute_unpaged(&bump, &(delta, 1i32)).await.unwrap();
        }
        s.query_unpaged("UPDATE c SET n = n + ? WHERE k = 2", &(-5i64,))
            .await
            .unwrap();
        let r = s.query_unpaged("SELECT k, n FROM c", &()).await.unwrap();
        let mut counters: Vec<(i32, i64)> = r.typed_rows().unwrap();
        counters.sort();
        // i64::MAX + 1 - 2 wraps as the server's long arithmetic does.
        assert_eq!(
            counters,
            vec![(1, i64::MAX.wrapping_add(1).wrapping_sub(2)), (2, -5)]
        );

        s.query_unpaged("CREATE TYPE v1 (a int)", &())
            .await
            .unwrap();
        s.query_unpaged("CREATE TABLE u (k int PRIMARY KEY, v frozen<v1>)", &())
            .await
            .unwrap();
        s.query_unpaged(
            "INSERT INTO u (k, v) VALUES (1, ?)",
            &Bound(vec![udt(&[("a", Some(CqlValue::Int(5)))])]),
        )
        .await
        .unwrap();
        s.query_unpaged("ALTER TYPE v1 ADD b text", &())
            .await
            .unwrap();
        let r = s
            .query_unpaged("SELECT v FROM u WHERE k = 1", &())
            .await
            .unwrap();
        let row = r
            .rows()
            .unwrap()
            .iter()
            .next()
            .unwrap()
            .unwrap()
            .to_values()
            .unwrap();
        assert_eq!(
            row,
            vec![Some(udt(&[("a", Some(CqlValue::Int(5))), ("b", None)]))],
            "the old value reads back with the new field null"
        );
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    every_type_round_trips_by_prepared_and_unprepared_statements,
    every_type_round_trips_with_lz4,
    counters_and_a_udt_that_grew_a_field,
);
