//! The derives against a real Cassandra 5.0: a struct with a field of every CQL type the
//! codec supports (cassandra_types.rs's table, plus a list of UDTs) written by bind-marker
//! name and read back by column name, in an order of fields that is neither the table's nor
//! the SELECT's; a row of nulls; a struct bound and read by position through unprepared
//! statements; borrowed `&str` fields; UDT structs in a row, in a UDT and in collections,
//! and a UDT that grew a field (`ALTER TYPE ... ADD`) read and written by the struct that
//! predates it; counters; and the run-time errors, asserted by their typed variants.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use doppio_driver::proto::consistency::Consistency;
use doppio_driver::proto::value::{
    CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlUuid, CqlValue, CqlVarint,
};
use doppio_driver::proto::{ProtoError, ValueError};
use doppio_driver::rt::Runtime;
use doppio_driver::{
    DeserializeValue, Error, FromRow, SerializeRow, SerializeValue, Session, SessionConfig,
};

use crate::support;

use support::{cassandra, create_keyspace_cql, keyspace, on_runtime};

const TABLE: &str = "CREATE TABLE t (k int PRIMARY KEY, asci ascii, big bigint, bl blob, \
    bo boolean, dat date, dec decimal, dou double, dur duration, flo float, ine inet, i int, \
    sm smallint, te text, ti time, ts timestamp, tu timeuuid, tiny tinyint, u uuid, vi varint, \
    li list<int>, se set<text>, ma map<text, int>, nested frozen<list<map<int, text>>>, \
    ms map<text, frozen<set<int>>>, tup tuple<int, text, double>, ud frozen<point>, \
    outer_u frozen<shape>, pts list<frozen<point>>, vf vector<float, 3>, vt vector<text, 2>)";

/// The table's columns but `k`, in the table's order.
const COLUMNS: &str = "asci, big, bl, bo, dat, dec, dou, dur, flo, ine, i, sm, te, ti, ts, tu, \
                       tiny, u, vi, li, se, ma, nested, ms, tup, ud, outer_u, pts, vf, vt";

/// `point (x int, y int, label text)`, both ways, fields by name.
#[derive(Debug, Clone, PartialEq, DeserializeValue, SerializeValue)]
struct Point {
    // Not the type's order.
    label: Option<String>,
    x: Option<i32>,
    y: Option<i32>,
}

/// `shape (name text, corner frozen<point>, corners list<frozen<point>>)`: a UDT in a UDT and
/// in a collection inside a UDT.
#[derive(Debug, Clone, PartialEq, DeserializeValue, SerializeValue)]
struct Shape {
    name: Option<String>,
    corner: Option<Point>,
    corners: Option<Vec<Point>>,
}

/// One field of every CQL type; every field may be null. Fields in neither the table's
/// order nor the SELECT's, two renamed, the text columns borrowed from the result.
#[derive(Debug, Clone, PartialEq, FromRow, SerializeRow)]
struct Every<'a> {
    tup: Option<(i32, Option<String>, f64)>,
    #[doppio(rename = "asci")]
    ascii: Option<&'a str>,
    big: Option<i64>,
    bl: Option<Vec<u8>>,
    bo: Option<bool>,
    dat: Option<CqlDate>,
    dec: Option<CqlDecimal>,
    dou: Option<f64>,
    dur: Option<CqlDuration>,
    flo: Option<f32>,
    ine: Option<IpAddr>,
    i: Option<i32>,
    sm: Option<i16>,
    #[doppio(rename = "te")]
    text: Option<&'a str>,
    ti: Option<CqlTime>,
    ts: Option<CqlTimestamp>,
    tu: Option<CqlUuid>,
    tiny: Option<i8>,
    u: Option<CqlUuid>,
    vi: Option<CqlVarint>,
    li: Option<Vec<i32>>,
    se: Option<BTreeSet<String>>,
    ma: Option<BTreeMap<String, i32>>,
    nested: Option<Vec<BTreeMap<i32, String>>>,
    ms: Option<BTreeMap<String, BTreeSet<i32>>>,
    ud: Option<Point>,
    outer_u: Option<Shape>,
    pts: Option<Vec<Point>>,
    vf: Option<Vec<f32>>,
    vt: Option<Vec<String>>,
    k: i32,
}

/// A version-1 (time-based) UUID, as timeuuid columns require.
fn timeuuid(seed: u8) -> CqlUuid {
    let mut b = [seed; 16];
    b[6] = 0x11; // version 1
    b[8] = 0x80 | (seed & 0x3f); // RFC 4122 variant
    CqlUuid(b)
}

fn point(x: i32, label: Option<&str>) -> Point {
    Point {
        label: label.map(str::to_owned),
        x: Some(x),
        y: None,
    }
}

fn typical(k: i32) -> Every<'static> {
    Every {
        tup: Some((1, None, 2.5)),
        ascii: Some("plain ascii"),
        big: Some(i64::MIN),
        bl: Some(vec![0, 1, 2, 0xff]),
        bo: Some(true),
        dat: Some(CqlDate::from_days_since_epoch(19_000)),
        dec: Some(CqlDecimal::new(-123_456_789, 4)),
        dou: Some(std::f64::consts::PI),
        dur: Some(CqlDuration::new(1, 2, 3_000_000_000).unwrap()),
        flo: Some(-1.5),
        ine: Some("::1".parse().unwrap()),
        i: Some(i32::MIN),
        sm: Some(-300),
        text: Some("héllo wörld ☕ 字"),
        ti: Some(CqlTime(13 * 3600 * 1_000_000_000 + 5)),
        ts: Some(CqlTimestamp(1_700_000_000_123)),
        tu: Some(timeuuid(7)),
        tiny: Some(i8::MIN),
        u: Some(CqlUuid([0x42; 16])),
        vi: Some(CqlVarint::from_signed_bytes_be(&i128::MAX.to_be_bytes())),
        li: Some(vec![3, 1, 3]),
        se: Some(["a".to_owned(), "b".to_owned()].into()),
        ma: Some([("one".to_owned(), 1), ("two".to_owned(), 2)].into()),
        nested: Some(vec![[(1, "x".to_owned())].into(), BTreeMap::new()]),
        ms: Some([("s".to_owned(), [1, 2].into())].into()),
        ud: Some(point(1, Some("p"))),
        outer_u: Some(Shape {
            name: Some("square".into()),
            corner: Some(point(0, None)),
            corners: Some(vec![point(1, Some("c")), point(2, None)]),
        }),
        pts: Some(vec![point(5, Some("q")), point(6, None)]),
        vf: Some(vec![1.0, -2.5, 3.25]),
        vt: Some(vec!["variable".into(), String::new()]),
        k,
    }
}

fn nulls(k: i32) -> Every<'static> {
    Every {
        tup: None,
        ascii: None,
        big: None,
        bl: None,
        bo: None,
        dat: None,
        dec: None,
        dou: None,
        dur: None,
        flo: None,
        ine: None,
        i: None,
        sm: None,
        text: None,
        ti: None,
        ts: None,
        tu: None,
        tiny: None,
        u: None,
        vi: None,
        li: None,
        se: None,
        ma: None,
        nested: None,
        ms: None,
        ud: None,
        outer_u: None,
        pts: None,
        vf: None,
        vt: None,
        k,
    }
}

/// Read by position through unprepared statements: names differ from the columns'.
#[derive(Debug, PartialEq, FromRow, SerializeRow)]
#[doppio(by_position)]
struct Positional<'a> {
    key: i32,
    number: Option<i64>,
    words: Option<&'a str>,
    at: Option<Point>,
    many: Option<Vec<Point>>,
}

async fn session() -> Session {
    let mut c = SessionConfig::new(cassandra());
    c.consistency = Consistency::One;
    Session::connect(c).await.unwrap()
}

async fn setup(s: &Session, test: &str) -> String {
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
    ks
}

/// The typed value error inside a driver error (`Serialization` or `Deserialization`), with
/// the column it names.
fn value_error(e: &Error) -> (&str, &ValueError) {
    match e {
        Error::Serialization(ProtoError::Value { column, reason })
        | Error::Deserialization(ProtoError::Value { column, reason }) => {
            (column.as_str(), &**reason)
        }
        other => panic!("not a value error: {other:?}"),
    }
}

fn every_type_by_name(runtime: Runtime) {
    on_runtime(runtime, "derive-every", || async {
        let s = session().await;
        let ks = setup(&s, "derive_every").await;
        let insert = s
            .prepare(&format!(
                "INSERT INTO t (k, {COLUMNS}) VALUES (?{})",
                ", ?".repeat(30)
            ))
            .await
            .unwrap();
        // The columns in another order again (the struct reads them by name).
        let select = s
            .prepare(
                &format!("SELECT {COLUMNS}, k FROM t WHERE k = ?")
                    .replace("asci, big", "big, asci"),
            )
            .await
            .unwrap();
        for row in [typical(1), nulls(2)] {
            s.execute_unpaged(&insert, &row).await.unwrap();
            let got = s.execute_unpaged(&select, &(row.k,)).await.unwrap();
            let read: Vec<Every<'_>> = got.typed_rows().unwrap();
            assert_eq!(read, std::slice::from_ref(&row), "prepared, by name");
            // The borrowed fields point into the result's frame, not into copies.
            if let Some(text) = read[0].text {
                let frame = got.rows().unwrap().rows().content.as_ptr_range();
                assert!(frame.contains(&text.as_ptr()));
            }
            // Unprepared, the SELECT the same (the columns come with the result).
            let got = s
                .query_unpaged(&format!("SELECT * FROM t WHERE k = {}", row.k), &())
                .await
                .unwrap();
            let read: Vec<Every<'_>> = got.typed_rows().unwrap();
            assert_eq!(read, [row], "SELECT *, by name");
        }
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

fn by_position_through_unprepared_statements(runtime: Runtime) {
    on_runtime(runtime, "derive-position", || async {
        let s = session().await;
        let ks = setup(&s, "derive_position").await;
        let row = Positional {
            key: 7,
            number: Some(-1),
            words: Some("borrowed"),
            at: Some(point(3, Some("here"))),
            many: Some(vec![point(4, None)]),
        };
        // Prepared: field `i` binds marker `i` (the UDT fields still go by name).
        let insert = "INSERT INTO t (k, big, te, ud, pts) VALUES (?, ?, ?, ?, ?)";
        let prepared = s.prepare(insert).await.unwrap();
        s.execute_unpaged(&prepared, &row).await.unwrap();
        let got = s
            .query_unpaged("SELECT k, big, te, ud, pts FROM t WHERE k = 7", &())
            .await
            .unwrap();
        let read: Vec<Positional<'_>> = got.typed_rows().unwrap();
        assert_eq!(read, [row]);
        // Unprepared, no markers known: each field as its natural type, which for these
        // scalars is the column's (a UDT struct's natural type lists its fields in
        // declaration order, which Point's are not: a prepared statement maps those).
        let scalars = Positional {
            key: 8,
            number: None,
            words: Some("unprepared"),
            at: None,
            many: None,
        };
        s.query_unpaged(insert, &scalars).await.unwrap();
        let got = s
            .query_unpaged("SELECT k, big, te, ud, pts FROM t WHERE k = 8", &())
            .await
            .unwrap();
        assert_eq!(got.typed_rows::<Positional<'_>>().unwrap(), [scalars]);
        // Positional reads check the count.
        let got = s
            .query_unpaged("SELECT k, big FROM t WHERE k = 8", &())
            .await
            .unwrap();
        let err = got.typed_rows::<Positional<'_>>().unwrap_err();
        assert_eq!(
            value_error(&err).1,
            &ValueError::ColumnCount { columns: 2, row: 5 }
        );
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

#[derive(Debug, FromRow)]
struct WrongType {
    #[allow(dead_code)] // the read is what fails
    big: i32,
}

#[derive(Debug, FromRow)]
struct NeedsMissing {
    #[allow(dead_code)]
    big: Option<i64>,
    #[allow(dead_code)]
    absent: Option<i32>,
}

#[derive(Debug, SerializeRow)]
struct TooFew {
    k: i32,
}

#[derive(Debug, SerializeRow)]
struct Mistyped {
    k: i32,
    big: String,
}

/// A struct with a field the UDT does not have.
#[derive(Debug, DeserializeValue, SerializeValue)]
struct NotAPoint {
    x: Option<i32>,
    z: Option<i32>,
}

#[derive(Debug, FromRow, SerializeRow)]
struct WithNotAPoint {
    k: i32,
    ud: Option<NotAPoint>,
}

fn run_time_errors_are_typed(runtime: Runtime) {
    on_runtime(runtime, "derive-errors", || async {
        let s = session().await;
        let ks = setup(&s, "derive_errors").await;
        s.query_unpaged("INSERT INTO t (k, big) VALUES (1, 5)", &())
            .await
            .unwrap();
        // Reading: a column of another type, a column the result lacks, a null.
        let got = s
            .query_unpaged("SELECT big FROM t WHERE k = 1", &())
            .await
            .unwrap();
        let err = got.typed_rows::<WrongType>().unwrap_err();
        assert!(matches!(
            value_error(&err),
            ("0 `big`", ValueError::CannotDeserialize { rust: "i32", .. })
        ));
        let err = got.typed_rows::<NeedsMissing>().unwrap_err();
        assert_eq!(
            value_error(&err),
            (
                "`absent`",
                &ValueError::MissingColumn {
                    name: "absent".into()
                }
            )
        );
        let got = s
            .query_unpaged("SELECT k, ud FROM t WHERE k = 1", &())
            .await
            .unwrap();
        let err = got.typed_rows::<WithNotAPoint>().unwrap_err();
        assert_eq!(
            value_error(&err).1,
            &ValueError::NoSuchField {
                udt: "point".into(),
                field: "z".into()
            }
        );
        // Binding: a marker no field has, a field no marker has, a type that does not fit.
        let insert = s
            .prepare("INSERT INTO t (k, big) VALUES (?, ?)")
            .await
            .unwrap();
        let err = s
            .execute_unpaged(&insert, &TooFew { k: 1 })
            .await
            .unwrap_err();
        assert_eq!(
            value_error(&err),
            ("1 `big`", &ValueError::NoFieldForColumn)
        );
        let only_k = s.prepare("INSERT INTO t (k) VALUES (?)").await.unwrap();
        let err = s
            .execute_unpaged(
                &only_k,
                &Mistyped {
                    k: 1,
                    big: "x".into(),
                },
            )
            .await
            .unwrap_err();
        assert_eq!(value_error(&err), ("`big`", &ValueError::NoBindMarker));
        let err = s
            .execute_unpaged(
                &insert,
                &Mistyped {
                    k: 1,
                    big: "x".into(),
                },
            )
            .await
            .unwrap_err();
        assert!(matches!(
            value_error(&err),
            ("1 `big`", ValueError::CannotSerialize { .. })
        ));
        let with_ud = s
            .prepare("INSERT INTO t (k, ud) VALUES (?, ?)")
            .await
            .unwrap();
        let err = s
            .execute_unpaged(
                &with_ud,
                &WithNotAPoint {
                    k: 2,
                    ud: Some(NotAPoint {
                        x: None,
                        z: Some(1),
                    }),
                },
            )
            .await
            .unwrap_err();
        assert_eq!(
            value_error(&err),
            (
                "1 `ud`",
                &ValueError::NoSuchField {
                    udt: "point".into(),
                    field: "z".into()
                }
            )
        );
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

/// `v1 (a int)` as first written; the type then grows a field `b`.
#[derive(Debug, Clone, PartialEq, DeserializeValue, SerializeValue)]
struct V1 {
    a: Option<i32>,
}

#[derive(Debug, PartialEq, FromRow, SerializeRow)]
struct URow {
    k: i32,
    v: Option<V1>,
}

#[derive(Debug, PartialEq, FromRow, SerializeRow)]
struct Bump {
    n: i64,
    k: i32,
}

#[derive(Debug, PartialEq, FromRow)]
struct Count {
    k: i32,
    n: i64,
}

fn grown_udts_and_counters(runtime: Runtime) {
    on_runtime(runtime, "derive-grown", || async {
        let s = session().await;
        let ks = keyspace("derive_grown");
        s.query_unpaged(&create_keyspace_cql(&ks), &())
            .await
            .unwrap();
        s.use_keyspace(&ks).await.unwrap();
        s.query_unpaged("CREATE TYPE v1 (a int)", &())
            .await
            .unwrap();
        s.query_unpaged("CREATE TABLE u (k int PRIMARY KEY, v frozen<v1>)", &())
            .await
            .unwrap();
        let old = URow {
            k: 1,
            v: Some(V1 { a: Some(5) }),
        };
        s.query_unpaged("INSERT INTO u (k, v) VALUES (?, ?)", &old)
            .await
            .unwrap();
        s.query_unpaged("ALTER TYPE v1 ADD b text", &())
            .await
            .unwrap();
        // The struct that predates `b` reads the value written before, and one written now.
        let insert = s
            .prepare("INSERT INTO u (k, v) VALUES (?, ?)")
            .await
            .unwrap();
        let new = URow {
            k: 2,
            v: Some(V1 { a: Some(6) }),
        };
        s.execute_unpaged(&insert, &new).await.unwrap();
        s.query_unpaged("INSERT INTO u (k, v) VALUES (3, {a: 7, b: 'seven'})", &())
            .await
            .unwrap();
        let got = s.query_unpaged("SELECT k, v FROM u", &()).await.unwrap();
        let mut rows: Vec<URow> = got.typed_rows().unwrap();
        rows.sort_by_key(|r| r.k);
        let seven = URow {
            k: 3,
            v: Some(V1 { a: Some(7) }),
        };
        assert_eq!(rows, [old, new, seven]);
        // What the struct wrote for the grown type: `b` left out, so null.
        let got = s
            .query_unpaged("SELECT v FROM u WHERE k = 2", &())
            .await
            .unwrap();
        let row = got
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
            [Some(CqlValue::Udt(vec![
                ("a".into(), Some(CqlValue::Int(6))),
                ("b".into(), None)
            ]))]
        );
        // Counters, bound and read by name.
        s.query_unpaged("CREATE TABLE c (k int PRIMARY KEY, n counter)", &())
            .await
            .unwrap();
        let bump = s
            .prepare("UPDATE c SET n = n + ? WHERE k = ?")
            .await
            .unwrap();
        for n in [i64::MAX, 1, -2] {
            s.execute_unpaged(&bump, &Bump { n, k: 1 }).await.unwrap();
        }
        let got = s.query_unpaged("SELECT k, n FROM c", &()).await.unwrap();
        assert_eq!(
            got.typed_rows::<Count>().unwrap(),
            [Count {
                k: 1,
                n: i64::MAX.wrapping_add(1).wrapping_sub(2)
            }]
        );
        s.query_unpaged(&format!("DROP KEYSPACE {ks}"), &())
            .await
            .unwrap();
    });
}

support::cassandra_runtime_tests!(
    CASSANDRA;
    every_type_by_name,
    by_position_through_unprepared_statements,
    run_time_errors_are_typed,
    grown_udts_and_counters,
);
