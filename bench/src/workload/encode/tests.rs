//! Encoding's tests: scalars, composites, vectors, and shapes that do not fit.

use std::sync::Arc;

use super::scalar::ALNUM;
use super::value::encoded_len;
use super::*;
use crate::workload::expr::Value;

fn enc(v: Value<'_>, k: CqlKind) -> Vec<u8> {
    let mut out = Vec::new();
    encode(v, &k.into(), &mut out).unwrap();
    out
}

#[test]
fn a_generators_natural_type_takes_its_values() {
    use super::super::expr::Expr;
    let p = |name: &str| (name == "rows").then_some(super::super::expr::ParamValue::Int(10));
    let natural = |text: &str| {
        let e = Expr::compile(text, 1, &p).unwrap();
        let t = natural_type(&e.eval(3).unwrap());
        compatible(&e.eval(3).unwrap(), &t).unwrap();
        t.to_string()
    };
    assert_eq!(natural("hash(i) % rows"), "bigint");
    assert_eq!(natural("i * 0.5"), "double");
    assert_eq!(natural("text(8)"), "text");
    assert_eq!(natural("'x'"), "text");
    assert_eq!(natural("blob(64)"), "blob");
    assert_eq!(natural("uuid()"), "uuid");
    assert_eq!(natural("list(3, i)"), "list<bigint>");
    assert_eq!(natural("set(2, text(4))"), "set<text>");
    assert_eq!(natural("map(2, j, 1.5)"), "map<bigint, double>");
    assert_eq!(natural("vector(3, 0.5)"), "vector<double, 3>");
    assert_eq!(
        natural("tuple(i, 'a', blob(2))"),
        "tuple<bigint, text, blob>"
    );
}

#[test]
fn integers_take_the_column_width() {
    assert_eq!(enc(Value::Int(-2), CqlKind::TinyInt), vec![0xfe]);
    assert_eq!(enc(Value::Int(258), CqlKind::SmallInt), vec![1, 2]);
    assert_eq!(enc(Value::Int(1), CqlKind::Int), vec![0, 0, 0, 1]);
    assert_eq!(
        enc(Value::Int(i64::MIN), CqlKind::BigInt),
        i64::MIN.to_be_bytes()
    );
    assert_eq!(enc(Value::Int(0), CqlKind::Date), vec![0x80, 0, 0, 0]);
    assert_eq!(enc(Value::Int(-1234), CqlKind::Text), b"-1234");
    assert_eq!(enc(Value::Int(0), CqlKind::Text), b"0");
    assert_eq!(enc(Value::Float(0.5), CqlKind::Text), b"0.5");
}

#[test]
fn varints_are_minimal() {
    assert_eq!(enc(Value::Int(0), CqlKind::Varint), vec![0]);
    assert_eq!(enc(Value::Int(127), CqlKind::Varint), vec![0x7f]);
    assert_eq!(enc(Value::Int(128), CqlKind::Varint), vec![0, 0x80]);
    assert_eq!(enc(Value::Int(-1), CqlKind::Varint), vec![0xff]);
    assert_eq!(enc(Value::Int(-129), CqlKind::Varint), vec![0xff, 0x7f]);
}

#[test]
fn text_is_deterministic_alphanumeric_of_the_asked_length() {
    let a = enc(Value::Text { seed: 9, len: 21 }, CqlKind::Text);
    assert_eq!(a.len(), 21);
    assert!(a.iter().all(|b| ALNUM.contains(b)));
    assert_eq!(a, enc(Value::Text { seed: 9, len: 21 }, CqlKind::Text));
    assert_ne!(a, enc(Value::Text { seed: 10, len: 21 }, CqlKind::Text));
    assert!(enc(Value::Text { seed: 1, len: 0 }, CqlKind::Blob).is_empty());
}

#[test]
fn uuids_and_mismatches() {
    let u = 0x0123_4567_89ab_4def_8123_4567_89ab_cdefu128;
    assert_eq!(
        enc(Value::Uuid(u), CqlKind::Text),
        b"01234567-89ab-4def-8123-456789abcdef"
    );
    let t = enc(Value::Uuid(u), CqlKind::TimeUuid);
    assert_eq!(t[6] >> 4, 1, "version 1");
    let mut out = Vec::new();
    let t = |k: CqlKind| CqlType::Scalar(k);
    assert!(encode(Value::Bool(true), &t(CqlKind::Int), &mut out).is_err());
    assert!(encode(Value::Uuid(u), &t(CqlKind::Int), &mut out).is_err());
    assert_eq!(
        encode(Value::Null, &t(CqlKind::Other), &mut out).unwrap(),
        Encoded::Null
    );
    assert!(compatible(&Value::Int(1), &t(CqlKind::Text)).is_ok());
    assert!(compatible(&Value::Bool(true), &t(CqlKind::Text)).is_err());
}

use crate::workload::expr::Expr;

fn int() -> CqlType {
    CqlKind::Int.into()
}

fn text() -> CqlType {
    CqlKind::Text.into()
}

fn list(e: CqlType) -> CqlType {
    CqlType::List(Arc::new(e))
}

fn expr(text: &str) -> Expr {
    Expr::compile(text, 3, &|_| None).unwrap()
}

/// An append-only sink, as scylla's cell builder is: lengths are counted first.
struct AppendOnly(Vec<u8>);

impl Sink for AppendOnly {
    fn put(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

/// The bytes of `text` at iteration `i` for `ty`, checked to be the same through a
/// patching sink and an append-only one, and to fit by `compatible`.
fn bytes(text: &str, ty: &CqlType, i: u64) -> Vec<u8> {
    let e = expr(text);
    compatible(&e.eval(0).unwrap(), ty).unwrap();
    let mut patched = Vec::new();
    encode(e.eval(i).unwrap(), ty, &mut patched).unwrap();
    let mut appended = AppendOnly(Vec::new());
    encode(e.eval(i).unwrap(), ty, &mut appended).unwrap();
    assert_eq!(
        patched, appended.0,
        "{text}: both sinks write the same bytes"
    );
    assert_eq!(encoded_len(e.eval(i).unwrap(), ty).unwrap(), patched.len());
    patched
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn lists_sets_and_maps_are_counted_cells() {
    assert_eq!(
        bytes("list(3, j * 2)", &list(int()), 0),
        cat(&[
            &[0, 0, 0, 3],
            &[0, 0, 0, 4, 0, 0, 0, 0],
            &[0, 0, 0, 4, 0, 0, 0, 2],
            &[0, 0, 0, 4, 0, 0, 0, 4]
        ])
    );
    assert_eq!(
        bytes("set(2, 'ab')", &CqlType::Set(Arc::new(text())), 0),
        cat(&[&[0, 0, 0, 2], &[0, 0, 0, 2], b"ab", &[0, 0, 0, 2], b"ab"])
    );
    let map = CqlType::Map(Arc::new((text(), CqlKind::BigInt.into())));
    assert_eq!(
        bytes("map(1, 'k', i + j)", &map, 5),
        cat(&[
            &[0, 0, 0, 1],
            &[0, 0, 0, 1],
            b"k",
            &[0, 0, 0, 8],
            &5i64.to_be_bytes()
        ])
    );
    // Empty, and null elements (the server refuses those, but they encode).
    assert_eq!(bytes("list(0, j)", &list(int()), 0), vec![0, 0, 0, 0]);
    assert_eq!(
        bytes("list(2, null)", &list(int()), 0),
        vec![0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
    );
    // The count is evaluated per iteration.
    let n = |i| bytes("list(i % 4, 1)", &list(int()), i)[3];
    assert_eq!((n(0), n(1), n(6)), (0, 1, 2));
}

#[test]
fn tuples_and_user_types_are_fields_in_order() {
    let tuple = CqlType::Tuple(Arc::from([int(), text()]));
    assert_eq!(
        bytes("tuple(7, 'x')", &tuple, 0),
        cat(&[&[0, 0, 0, 4, 0, 0, 0, 7], &[0, 0, 0, 1], b"x"])
    );
    assert_eq!(
        bytes("tuple(i, null)", &tuple, 1),
        vec![0, 0, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]
    );
    let udt = CqlType::Udt(Arc::new(UdtType {
        name: "point".into(),
        fields: vec![("x".into(), int()), ("label".into(), text())],
    }));
    assert_eq!(
        bytes("udt(7, 'x')", &udt, 0),
        bytes("tuple(7, 'x')", &tuple, 0)
    );
}

#[test]
fn nested_composites_recurse_with_their_own_positions() {
    // list<frozen<tuple<int, text>>>: j is the list's position inside the tuple.
    let t = list(CqlType::Tuple(Arc::from([int(), text()])));
    assert_eq!(
        bytes("list(2, tuple(j, 'x'))", &t, 0),
        cat(&[
            &[0, 0, 0, 2],
            &[0, 0, 0, 13, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1],
            b"x",
            &[0, 0, 0, 13, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1],
            b"x",
        ])
    );
    // map<text, frozen<list<int>>>: the inner j is the inner list's position.
    let m = CqlType::Map(Arc::new((text(), list(int()))));
    let b = bytes("map(2, text(4), list(2, j + 10))", &m, 9);
    let inner = cat(&[
        &[0, 0, 0, 2],
        &[0, 0, 0, 4, 0, 0, 0, 10],
        &[0, 0, 0, 4, 0, 0, 0, 11],
    ]);
    assert_eq!(b.len(), 4 + 2 * (4 + 4 + 4 + inner.len()));
    assert_eq!(&b[12..16], &(inner.len() as u32).to_be_bytes());
    assert_eq!(&b[16..16 + inner.len()], inner.as_slice());
    assert_ne!(
        &b[8..12],
        &b[16 + inner.len() + 4..16 + inner.len() + 8],
        "keys differ"
    );
}

#[test]
fn vectors_have_no_count_and_prefix_only_variable_size_elements() {
    let floats = CqlType::Vector(Arc::new(CqlKind::Float.into()), 3);
    assert_eq!(
        bytes("vector(3, j * 0.5)", &floats, 0),
        cat(&[
            &0f32.to_be_bytes(),
            &0.5f32.to_be_bytes(),
            &1f32.to_be_bytes()
        ])
    );
    let texts = CqlType::Vector(Arc::new(text()), 2);
    assert_eq!(bytes("vector(2, 'ab')", &texts, 0), b"\x02ab\x02ab");
    let long = bytes("vector(2, text(300))", &texts, 0);
    assert_eq!(&long[..2], &[0x81, 0x2c], "300 as a two-byte unsigned vint");
    assert_eq!(long.len(), 2 * 302);
    let mut out = Vec::new();
    let e = expr("vector(i, 1.0)");
    assert!(
        encode(e.eval(2).unwrap(), &floats, &mut out).is_err(),
        "2 of 3"
    );
    assert!(encode(expr("vector(3, null)").eval(0).unwrap(), &floats, &mut out).is_err());
}

#[test]
fn composites_are_pure_and_their_elements_differ() {
    let t = list(CqlType::Tuple(Arc::from([text(), CqlKind::Uuid.into()])));
    let e = "list(uniform(1, 8), tuple(text(6), uuid()))";
    for i in 0..50 {
        assert_eq!(bytes(e, &t, i), bytes(e, &t, i));
    }
    assert_ne!(bytes(e, &t, 1), bytes(e, &t, 2));
    // Ten random elements of one iteration: all different.
    let b = bytes("list(10, uniform(0, 1000000000))", &list(int()), 4);
    let mut elems: Vec<&[u8]> = b[4..].chunks(8).collect();
    elems.sort();
    elems.dedup();
    assert_eq!(elems.len(), 10);
}

#[test]
fn shapes_that_do_not_fit_are_errors_naming_what_differs() {
    let check = |text: &str, ty: &CqlType| {
        compatible(&expr(text).eval(0).unwrap(), ty).map_err(|e| e.to_string())
    };
    let set = CqlType::Set(Arc::new(text()));
    let e = check("list(3, 'a')", &set).unwrap_err();
    assert!(e.contains("list") && e.contains("set<text>"), "{e}");
    let e = check("set(3, true)", &set).unwrap_err();
    assert!(e.starts_with("element: a boolean"), "{e}");
    let tuple = CqlType::Tuple(Arc::from([int(), text()]));
    let e = check("tuple(1, 'a', 2)", &tuple).unwrap_err();
    assert!(e.contains("tuple of 3") && e.contains("of 2"), "{e}");
    let e = check("tuple(1, true)", &tuple).unwrap_err();
    assert!(e.starts_with("field 2"), "{e}");
    let floats = CqlType::Vector(Arc::new(CqlKind::Float.into()), 3);
    let e = check("vector(4, 1.0)", &floats).unwrap_err();
    assert!(e.contains("vector<float, 3>"), "{e}");
    assert!(
        check("vector(uniform(3, 4), 1.0)", &floats).is_ok(),
        "checked per request"
    );
    assert!(check("7", &list(int())).is_err());
    assert!(check("list(1, 7)", &int()).is_err());
    let map = CqlType::Map(Arc::new((text(), int())));
    let e = check("map(2, 'k', uuid())", &map).unwrap_err();
    assert!(e.starts_with("value: a uuid"), "{e}");
    assert!(check("null", &map).is_ok());
    // At run time too, a shape that does not fit is an error, never a panic.
    let mut out = Vec::new();
    assert!(encode(expr("list(1, 1)").eval(0).unwrap(), &set, &mut out).is_err());
    assert!(encode(Value::Int(1), &set, &mut out).is_err());
}
