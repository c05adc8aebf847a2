//! The derives on doppio-proto's own types, without a server: rows built as a RESULT holds
//! them, values bound as EXECUTE writes them, UDT values both ways; the typed errors of what
//! does not fit; and the allocations of reading and binding (none per row or per bind for
//! scalars and borrowed strings). Against Cassandra: driver/tests/it/cassandra_derive.rs.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use bytes::{Bytes, BytesMut};
use doppio_alloc_count::{measure, CountingAlloc};
use doppio_macros::{DeserializeValue, FromRow, SerializeRow, SerializeValue};
use doppio_proto::deserialize::{DeserializeValue as _, FromRow as _};
use doppio_proto::metadata::{ColumnSpec, RowsMetadata};
use doppio_proto::rows::Rows;
use doppio_proto::serialize::{write_value, SerializeRow as _, SerializeValue as _};
use doppio_proto::types::ColumnType;
use doppio_proto::value::{CqlValue, Unset};
use doppio_proto::values::QueryValues;
use doppio_proto::{ProtoError, ValueError};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

fn spec(name: &str, typ: ColumnType) -> ColumnSpec {
    ColumnSpec::new("ks", "t", name, typ)
}

/// A RESULT's rows of `columns`, each row the values written by `row` (with their types).
fn rows_of(columns: Vec<ColumnSpec>, rows: &[&dyn QueryValues]) -> Rows {
    let mut content = BytesMut::new();
    for row in rows {
        row.write_values(Some(&columns), &mut content).unwrap();
    }
    Rows {
        metadata: RowsMetadata {
            columns_count: columns.len(),
            paging_state: None,
            columns,
            no_metadata: false,
            new_metadata_id: None,
        },
        rows_count: rows.len(),
        content: content.freeze(),
    }
}

fn value_error(e: &ProtoError) -> (&str, &ValueError) {
    match e {
        ProtoError::Value { column, reason } => (column, reason),
        other => panic!("not a column's error: {other:?}"),
    }
}

#[derive(Debug, PartialEq, FromRow, SerializeRow)]
#[doppio(crate = ::doppio_proto)]
struct User<'a> {
    id: i32,
    #[doppio(rename = "user name")]
    name: &'a str,
    email: Option<String>,
    score: i64,
}

fn user_columns() -> Vec<ColumnSpec> {
    // Not the struct's order: the layout maps them once.
    vec![
        spec("score", ColumnType::Bigint),
        spec("user name", ColumnType::Varchar),
        spec("id", ColumnType::Int),
        spec("email", ColumnType::Varchar),
    ]
}

#[test]
fn rows_read_by_name_in_any_order_with_nulls_and_borrowed_strings() {
    let rows = rows_of(
        user_columns(),
        &[
            &(9i64, "ann", 1i32, Some("a@x")),
            &(7i64, "bob", 2i32, None::<&str>),
        ],
    );
    let users: Vec<User<'_>> = rows.typed().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        users,
        [
            User {
                id: 1,
                name: "ann",
                email: Some("a@x".into()),
                score: 9
            },
            User {
                id: 2,
                name: "bob",
                email: None,
                score: 7
            },
        ]
    );
    // The borrowed name points into the result's bytes, not a copy.
    let range = rows.content.as_ptr_range();
    assert!(range.contains(&users[0].name.as_ptr()));
    // from_row alone (no layout) finds the columns by name too.
    let cells: Vec<Option<&[u8]>> = rows.iter().next().unwrap().unwrap().cells().collect();
    assert_eq!(User::from_row(rows.columns(), &cells).unwrap(), users[0]);
}

#[derive(Debug, PartialEq, FromRow)]
#[doppio(crate = ::doppio_proto, by_position)]
struct Pair {
    left: i32,
    right: Option<String>,
}

#[test]
fn rows_read_by_position_ignore_names_and_check_the_count() {
    let rows = rows_of(
        vec![spec("a", ColumnType::Int), spec("b", ColumnType::Varchar)],
        &[&(1i32, "x")],
    );
    let got: Vec<Pair> = rows.typed().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        got,
        [Pair {
            left: 1,
            right: Some("x".into())
        }]
    );
    let three = rows_of(
        vec![
            spec("a", ColumnType::Int),
            spec("b", ColumnType::Varchar),
            spec("c", ColumnType::Int),
        ],
        &[],
    );
    let err = three.typed::<Pair>().unwrap_err();
    assert_eq!(
        value_error(&err).1,
        &ValueError::ColumnCount { columns: 3, row: 2 }
    );
}

#[derive(Debug, FromRow)]
#[doppio(crate = ::doppio_proto, allow_extra_columns)]
struct JustId {
    id: i32,
}

#[test]
fn row_errors_are_typed_and_name_the_column() {
    // A column the struct reads and the result lacks.
    let mut cols = user_columns();
    cols.remove(3);
    let err = rows_of(cols, &[]).typed::<User<'_>>().unwrap_err();
    assert_eq!(
        value_error(&err),
        (
            "`email`",
            &ValueError::MissingColumn {
                name: "email".into()
            }
        )
    );
    assert_eq!(
        err.to_string(),
        "column `email`: no column `email` in the result, which the row type reads"
    );
    // A column no field reads; allowed with allow_extra_columns.
    let mut cols = user_columns();
    cols.push(spec("extra", ColumnType::Int));
    let rows = rows_of(cols, &[&(1i64, "n", 5i32, None::<&str>, 0i32)]);
    let err = rows.typed::<User<'_>>().unwrap_err();
    assert_eq!(
        value_error(&err),
        ("4 `extra`", &ValueError::NoFieldForColumn)
    );
    let ids: Vec<JustId> = rows.typed().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(ids[0].id, 5);
    // A column of another type: once, at the check.
    let mut cols = user_columns();
    cols[2] = spec("id", ColumnType::Bigint);
    let err = rows_of(cols, &[]).typed::<User<'_>>().unwrap_err();
    assert!(matches!(
        value_error(&err),
        ("2 `id`", ValueError::CannotDeserialize { rust: "i32", .. })
    ));
    // A null into a field that cannot hold one: that row's error.
    let rows = rows_of(user_columns(), &[&(1i64, None::<&str>, 1i32, None::<&str>)]);
    let err = rows
        .typed::<User<'_>>()
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(matches!(
        value_error(&err),
        ("1 `user name`", ValueError::Null { .. })
    ));
}

#[test]
fn reading_rows_of_scalars_and_borrowed_strings_allocates_nothing_per_row() {
    let row: &dyn QueryValues = &(9i64, "a name", 1i32, None::<&str>);
    let rows = rows_of(user_columns(), &[row; 200]);
    let mut typed = rows.typed::<User<'_>>().unwrap();
    let (sum, stats) = measure(|| typed.by_ref().map(|u| u.unwrap().score).sum::<i64>());
    assert_eq!(sum, 9 * 200);
    assert_eq!(stats.count, 0, "200 rows out of order: {stats:?}");
    // The layout itself: one allocation per result when the fields are out of order.
    let (_, stats) = measure(|| rows.typed::<User<'_>>().unwrap());
    assert!(stats.count <= 1, "{stats:?}");
}

/// Twenty columns: wider than the row reader's cells on the stack.
#[derive(Debug, FromRow)]
#[allow(dead_code)] // read by the derive; a few are looked at
#[doppio(crate = ::doppio_proto)]
struct Wide<'a> {
    c0: i32,
    c1: i32,
    c2: i32,
    c3: i32,
    c4: i32,
    c5: i32,
    c6: i32,
    c7: i32,
    c8: i32,
    c9: i32,
    c10: i32,
    c11: i32,
    c12: i32,
    c13: i32,
    c14: i32,
    c15: i32,
    c16: i32,
    c17: i32,
    c18: i32,
    c19: &'a str,
}

#[test]
fn rows_wider_than_sixteen_columns_read_with_one_buffer_per_result() {
    let columns: Vec<ColumnSpec> = (0..20)
        .map(|i| {
            spec(
                &format!("c{i}"),
                if i == 19 {
                    ColumnType::Varchar
                } else {
                    ColumnType::Int
                },
            )
        })
        .collect();
    let mut values: Vec<CqlValue> = (0..19).map(CqlValue::Int).collect();
    values.push(CqlValue::Text("last".into()));
    let rows = rows_of(columns, &[&values, &values, &values]);
    let mut typed = rows.typed::<Wide<'_>>().unwrap();
    let first = typed.next().unwrap().unwrap();
    assert_eq!((first.c0, first.c18, first.c19), (0, 18, "last"));
    let (n, stats) = measure(|| {
        typed
            .by_ref()
            .map(|w| w.unwrap().c7)
            .filter(|&c| c == 7)
            .count()
    });
    assert_eq!(n, 2);
    assert_eq!(stats.count, 0, "the buffer is reused: {stats:?}");
}

fn markers() -> Vec<ColumnSpec> {
    vec![
        spec("score", ColumnType::Bigint),
        spec("id", ColumnType::Int),
        spec("user name", ColumnType::Varchar),
        spec("email", ColumnType::Varchar),
    ]
}

#[test]
fn structs_bind_by_marker_name_or_in_order_without_markers() {
    let user = User {
        id: 3,
        name: "cy",
        email: None,
        score: 11,
    };
    assert_eq!((user.count(), user.has_names()), (4, false));
    let mut by_name = BytesMut::new();
    user.write_values(Some(&markers()), &mut by_name).unwrap();
    let mut expected = BytesMut::new();
    (11i64, 3i32, "cy", None::<&str>)
        .write_values(Some(&markers()), &mut expected)
        .unwrap();
    assert_eq!(by_name, expected);
    let mut natural = BytesMut::new();
    user.serialize_row(None, &mut natural).unwrap();
    let mut expected = BytesMut::new();
    (3i32, "cy", None::<&str>, 11i64)
        .write_values(None, &mut expected)
        .unwrap();
    assert_eq!(natural, expected);
    // Binding into a reused buffer allocates nothing, markers matched by name.
    let m = markers();
    let (_, stats) = measure(|| {
        for _ in 0..100 {
            by_name.clear();
            user.write_values(Some(&m), &mut by_name).unwrap();
        }
    });
    assert_eq!(stats.count, 0, "{stats:?}");
}

#[derive(SerializeRow)]
#[doppio(crate = ::doppio_proto, by_position)]
struct Positional {
    a: i32,
    b: &'static str,
}

#[test]
fn binding_errors_are_typed_and_name_the_column_or_field() {
    let user = User {
        id: 3,
        name: "cy",
        email: None,
        score: 11,
    };
    // A marker no field has.
    let mut m = markers();
    m[3] = spec("phone", ColumnType::Varchar);
    let err = user
        .write_values(Some(&m), &mut BytesMut::new())
        .unwrap_err();
    assert_eq!(
        value_error(&err),
        ("3 `phone`", &ValueError::NoFieldForColumn)
    );
    // A field no marker has.
    let m = &markers()[..3];
    let err = user
        .write_values(Some(m), &mut BytesMut::new())
        .unwrap_err();
    assert_eq!(value_error(&err), ("`email`", &ValueError::NoBindMarker));
    // A field whose type does not fit its marker.
    let mut m = markers();
    m[1] = spec("id", ColumnType::Varchar);
    let err = user
        .write_values(Some(&m), &mut BytesMut::new())
        .unwrap_err();
    assert!(matches!(
        value_error(&err),
        ("1 `id`", ValueError::CannotSerialize { rust: "i32", .. })
    ));
    // A name twice among the markers.
    let mut m = markers();
    m.push(spec("id", ColumnType::Int));
    assert!(matches!(
        user.write_values(Some(&m), &mut BytesMut::new())
            .unwrap_err(),
        ProtoError::InvalidValue {
            what: "bound values",
            ..
        }
    ));
    // By position: names unused, the count checked.
    let p = Positional { a: 1, b: "x" };
    let cols = [spec("x", ColumnType::Int), spec("y", ColumnType::Varchar)];
    p.write_values(Some(&cols), &mut BytesMut::new()).unwrap();
    assert!(p
        .write_values(Some(&cols[..1]), &mut BytesMut::new())
        .is_err());
}

#[derive(Debug, PartialEq, Clone, DeserializeValue, SerializeValue)]
#[doppio(crate = ::doppio_proto)]
struct Point<'a> {
    x: i32,
    y: Option<i32>,
    #[doppio(rename = "label")]
    name: Option<&'a str>,
}

fn point_type(fields: &[&str]) -> ColumnType {
    let typ = |f: &str| match f {
        "label" | "note" => ColumnType::Varchar,
        _ => ColumnType::Int,
    };
    ColumnType::Udt {
        keyspace: "ks".into(),
        name: "point".into(),
        fields: fields.iter().map(|f| ((*f).to_owned(), typ(f))).collect(),
    }
}

fn encode<T: doppio_proto::serialize::SerializeValue>(v: &T, typ: &ColumnType) -> Bytes {
    let mut buf = BytesMut::new();
    write_value(v, Some(typ), &mut buf).unwrap();
    buf.split_off(4).freeze()
}

#[test]
fn udts_round_trip_by_field_name_in_the_types_order() {
    let p = Point {
        x: 1,
        y: None,
        name: Some("p"),
    };
    // The type's order differs from the struct's.
    let typ = point_type(&["label", "x", "y"]);
    let bytes = encode(&p, &typ);
    let dynamic = CqlValue::decode(&typ, &bytes).unwrap();
    assert_eq!(
        dynamic,
        CqlValue::Udt(vec![
            ("label".into(), Some(CqlValue::Text("p".into()))),
            ("x".into(), Some(CqlValue::Int(1))),
            ("y".into(), None),
        ])
    );
    Point::type_check(&typ).unwrap();
    assert_eq!(Point::deserialize(&typ, Some(&bytes)).unwrap(), p);
    // In a collection and as an optional value.
    let list = ColumnType::List(Box::new(typ.clone()));
    let bytes = encode(&vec![p.clone(), p.clone()], &list);
    Vec::<Point<'_>>::type_check(&list).unwrap();
    assert_eq!(
        Vec::<Point<'_>>::deserialize(&list, Some(&bytes)).unwrap(),
        [p.clone(), p.clone()]
    );
    assert_eq!(Option::<Point<'_>>::deserialize(&typ, None).unwrap(), None);
    // Without a type (unprepared): the fields in declaration order.
    let natural = p.natural_type();
    let bytes = encode(&p, &natural);
    assert_eq!(
        Point::deserialize(&point_type(&["x", "y", "label"]), Some(&bytes)).unwrap(),
        p
    );
}

#[test]
fn udts_that_grew_fields_read_and_write() {
    let p = Point {
        x: 1,
        y: Some(2),
        name: None,
    };
    // A value written before `note` was added (shorter than the type) reads it as null; the
    // struct, which has no `note`, skips it.
    let old = encode(&p, &point_type(&["x", "y", "label"]));
    let grown = point_type(&["x", "y", "label", "note"]);
    Point::type_check(&grown).unwrap();
    assert_eq!(Point::deserialize(&grown, Some(&old)).unwrap(), p);
    // Written for the grown type, the trailing field the struct lacks is left out.
    assert_eq!(encode(&p, &grown), old);
    // One the struct lacks before its last field is written null.
    let middle = point_type(&["x", "note", "y", "label"]);
    let bytes = encode(&p, &middle);
    assert_eq!(
        CqlValue::decode(&middle, &bytes).unwrap(),
        CqlValue::Udt(vec![
            ("x".into(), Some(CqlValue::Int(1))),
            ("note".into(), None),
            ("y".into(), Some(CqlValue::Int(2))),
            ("label".into(), None),
        ])
    );
    assert_eq!(Point::deserialize(&middle, Some(&bytes)).unwrap(), p);
}

#[derive(Debug, SerializeValue)]
#[doppio(crate = ::doppio_proto)]
struct WithUnset {
    x: Unset,
}

#[test]
fn udt_errors_are_typed() {
    let p = Point {
        x: 1,
        y: None,
        name: None,
    };
    let small = point_type(&["x", "y"]);
    let no_label = ValueError::NoSuchField {
        udt: "point".into(),
        field: "label".into(),
    };
    assert_eq!(Point::type_check(&small).unwrap_err(), no_label);
    let mut buf = BytesMut::new();
    assert_eq!(
        write_value(&p, Some(&small), &mut buf).unwrap_err(),
        no_label
    );
    assert!(buf.is_empty(), "a refused value leaves nothing behind");
    assert!(matches!(
        Point::type_check(&ColumnType::Int).unwrap_err(),
        ValueError::CannotDeserialize { .. }
    ));
    assert!(matches!(
        write_value(&p, Some(&ColumnType::Int), &mut buf).unwrap_err(),
        ValueError::CannotSerialize { .. }
    ));
    assert!(matches!(
        Point::deserialize(&small, None).unwrap_err(),
        ValueError::Null { .. }
    ));
    // A field of another type; trailing bytes; a field cut short.
    let wrong = ColumnType::Udt {
        keyspace: "ks".into(),
        name: "point".into(),
        fields: vec![
            ("x".into(), ColumnType::Varchar),
            ("y".into(), ColumnType::Int),
            ("label".into(), ColumnType::Varchar),
        ],
    };
    assert!(matches!(
        Point::type_check(&wrong).unwrap_err(),
        ValueError::CannotDeserialize { rust: "i32", .. }
    ));
    let typ = point_type(&["x", "y", "label"]);
    let mut bytes = encode(&p, &typ).to_vec();
    bytes.push(0);
    assert!(Point::deserialize(&typ, Some(&bytes)).is_err());
    assert!(Point::deserialize(&typ, Some(&[0, 0, 0, 4, 0])).is_err());
    let ty = ColumnType::Udt {
        keyspace: "k".into(),
        name: "u".into(),
        fields: vec![("x".into(), ColumnType::Int)],
    };
    assert_eq!(
        write_value(&WithUnset { x: Unset }, Some(&ty), &mut buf).unwrap_err(),
        ValueError::UnsetUdtField
    );
}

#[derive(Debug, PartialEq, FromRow, SerializeRow, DeserializeValue, SerializeValue)]
#[doppio(crate = ::doppio_proto)]
struct Generic<T> {
    value: T,
    r#type: String,
}

#[test]
fn generic_structs_and_raw_identifiers() {
    let cols = vec![
        spec("value", ColumnType::Int),
        spec("type", ColumnType::Varchar),
    ];
    let g = Generic {
        value: 5i32,
        r#type: "t".into(),
    };
    let rows = rows_of(cols, &[&g]);
    let got: Vec<Generic<i32>> = rows.typed().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, [g]);
}
