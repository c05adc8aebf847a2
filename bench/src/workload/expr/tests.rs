//! The expression language's tests: compiling, evaluating, composites, memory.

use super::*;

fn compile(text: &str) -> Expr {
    Expr::compile(text, 1, &|name| match name {
        "rows" => Some(ParamValue::Int(1000)),
        "ratio" => Some(ParamValue::Float(0.5)),
        _ => None,
    })
    .unwrap()
}

#[test]
fn arithmetic_and_parameters() {
    assert_eq!(compile("i * 2 + 1").eval(20).unwrap(), Value::Int(41));
    assert_eq!(compile("-(i - 3) % rows").eval(5).unwrap(), Value::Int(998));
    assert_eq!(compile("i * ratio").eval(3).unwrap(), Value::Float(1.5));
    assert_eq!(compile("10k + 0x10").eval(0).unwrap(), Value::Int(10_016));
    assert_eq!(compile("'abc'").eval(0).unwrap(), Value::Str("abc"));
    assert!(compile("i / 0").eval(1).is_err());
}

#[test]
fn errors_point_at_the_problem() {
    let p = |_: &str| None;
    let e = Expr::compile("i + nope", 0, &p).unwrap_err();
    assert_eq!(e.at, 4);
    assert!(e.message.contains("nope"));
    assert!(Expr::compile("hash(", 0, &p).is_err());
    assert!(Expr::compile("uniform(1)", 0, &p).is_err());
    assert!(Expr::compile("zipf(i, 1.1)", 0, &p).is_err());
    assert!(Expr::compile("1 2", 0, &p).is_err());
}

#[test]
fn generators_are_pure_and_sites_are_independent() {
    let e = compile("uniform(0, 1000000)");
    assert_eq!(e.eval(7).unwrap(), e.eval(7).unwrap());
    assert_ne!(e.eval(7).unwrap(), e.eval(8).unwrap());
    let two = compile("uniform(0, 1000000) - uniform(0, 1000000)");
    let differs = (0..100).any(|i| two.eval(i).unwrap() != Value::Int(0));
    assert!(differs, "two call sites draw different numbers");
    let h = compile("hash(i) % rows");
    for i in 0..1000 {
        let Value::Int(v) = h.eval(i).unwrap() else {
            panic!()
        };
        assert!((0..1000).contains(&v));
    }
}

#[test]
fn distributions_have_their_moments() {
    let n = 200_000u64;
    let u = compile("uniform(10, 20)");
    let mean = (0..n)
        .map(|i| match u.eval(i).unwrap() {
            Value::Int(v) => {
                assert!((10..20).contains(&v));
                v as f64
            }
            _ => panic!(),
        })
        .sum::<f64>()
        / n as f64;
    assert!((mean - 14.5).abs() < 0.05, "{mean}");
    let g = compile("normal(5.0, 2.0)");
    let xs: Vec<f64> = (0..n)
        .map(|i| match g.eval(i).unwrap() {
            Value::Float(v) => v,
            _ => panic!(),
        })
        .collect();
    let m = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
    assert!((m - 5.0).abs() < 0.03, "{m}");
    assert!((var.sqrt() - 2.0).abs() < 0.03, "{}", var.sqrt());
}

#[test]
fn zipf_matches_its_probabilities() {
    // Zipf(10, 1.2): P(k) = k^-1.2 / H where H = sum over 1..=10.
    let z = compile("zipf(10, 1.2)");
    let n = 200_000u64;
    let mut counts = [0u64; 11];
    for i in 0..n {
        match z.eval(i).unwrap() {
            Value::Int(k) => counts[k as usize] += 1,
            _ => panic!(),
        }
    }
    assert_eq!(counts[0], 0);
    let h: f64 = (1..=10).map(|k| (k as f64).powf(-1.2)).sum();
    for (k, &c) in counts.iter().enumerate().skip(1) {
        let expected = (k as f64).powf(-1.2) / h;
        let got = c as f64 / n as f64;
        assert!(
            (got - expected).abs() < 0.005,
            "P({k}) = {got}, expected {expected}"
        );
    }
}

#[test]
fn dist_samples_a_cassandra_stress_distribution() {
    let p = |_: &str| None;
    // Without a source: random per iteration and call site, within the bounds.
    let e = compile("dist('uniform(1..10)') - dist('uniform(1..10)')");
    assert!((0..100).any(|i| e.eval(i).unwrap() != Value::Int(0)));
    let e = compile("dist('GAUSSIAN(1..100,3)')");
    for i in 0..1000 {
        let Value::Int(v) = e.eval(i).unwrap() else {
            panic!()
        };
        assert!((1..=100).contains(&v));
    }
    // SEQ without a source counts with the iteration.
    let e = compile("dist('seq(1..3)')");
    let v: Vec<Value<'_>> = (0..4).map(|i| e.eval(i).unwrap()).collect();
    assert_eq!(
        v,
        [Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(1)]
    );
    // With a source: the same value at every call site, in every expression.
    let a = Expr::compile("dist('exp(1..1k)', i * 7)", 1, &p).unwrap();
    let b = Expr::compile("dist('exp(1..1k)', i * 7) + 0", 99, &p).unwrap();
    assert!((0..100).all(|i| a.eval(i).unwrap() == b.eval(i).unwrap()));
    // The spec may be a string parameter.
    let e = Expr::compile("dist(pop, i)", 0, &|n| {
        (n == "pop").then(|| ParamValue::Str("FIXED(7)".into()))
    })
    .unwrap();
    assert_eq!(e.eval(3).unwrap(), Value::Int(7));
    for bad in ["dist(i)", "dist('zipf(1..3)')", "dist('uniform(3..1)', i)"] {
        assert!(Expr::compile(bad, 0, &p).is_err(), "{bad}");
    }
}

#[test]
fn an_explicit_seed_makes_text_blob_and_uuid_the_same_everywhere() {
    let p = |_: &str| None;
    for text in ["text(8, i, 3)", "blob(8, i, 3)", "uuid(i, 3)"] {
        let a = Expr::compile(text, 1, &p).unwrap();
        let b = Expr::compile(text, 2, &p).unwrap();
        assert_eq!(a.eval(5).unwrap(), b.eval(5).unwrap(), "{text}");
        assert_ne!(a.eval(5).unwrap(), a.eval(6).unwrap(), "{text}");
    }
    let a = Expr::compile("text(8, i, 3)", 1, &p).unwrap();
    let b = Expr::compile("text(8, i, 4)", 1, &p).unwrap();
    assert_ne!(a.eval(5).unwrap(), b.eval(5).unwrap());
    // Without a seed, the call site still tells two places apart (as before).
    let a = Expr::compile("text(8, i)", 1, &p).unwrap();
    let b = Expr::compile("text(8, i)", 2, &p).unwrap();
    assert_ne!(a.eval(5).unwrap(), b.eval(5).unwrap());
}

#[test]
fn remembered_vars_give_the_values_they_would_give_afresh() {
    let p = |_: &str| None;
    // `g` samples with an explicit x: remembered once per iteration, in every scope.
    let g = Expr::compile("dist('GAUSSIAN(1..1000000)', hash(i, 7))", 1, &p).unwrap();
    // `u` draws from its scope's key: remembered per scope (each element its own).
    let u = Expr::compile("dist('UNIFORM(1..1000000)')", 2, &p).unwrap();
    let vars = |n: &str| match n {
        "g" => Some(g.clone()),
        "u" => Some(u.clone()),
        _ => None,
    };
    let twice = Expr::compile_with("g + g", 0, &p, &vars).unwrap();
    let inline = Expr::compile("dist('GAUSSIAN(1..1000000)', hash(i, 7)) * 2", 0, &p).unwrap();
    let list = Expr::compile_with("list(4, g * 1000000 + u)", 3, &p, &vars).unwrap();
    for i in 0..2_000u64 {
        // Other iterations in between replace what the table holds: never a stale value.
        for k in [i, i + 1, i / 2, i] {
            assert_eq!(twice.eval(k).unwrap(), inline.eval(k).unwrap(), "at {k}");
        }
        let elements = |i: u64| -> Vec<Value<'_>> {
            let v = list.eval(i).unwrap();
            let c = composite(v);
            (0..4).map(|j| c.element(j, 0).unwrap()).collect()
        };
        let first = elements(i);
        let Value::Int(g_i) = g.eval(i).unwrap() else {
            panic!()
        };
        let us: Vec<i64> = first
            .iter()
            .map(|v| match v {
                Value::Int(x) => x - g_i * 1_000_000,
                other => panic!("{other:?}"),
            })
            .collect();
        // g is the iteration's inside every element; u differs from element to element.
        assert!(us.iter().all(|x| (1..=1_000_000).contains(x)), "{us:?}");
        assert!(us.windows(2).any(|w| w[0] != w[1]), "{us:?}");
        assert_eq!(elements(i + 1).len(), 4);
        assert_eq!(elements(i), first);
    }
}

#[test]
fn vars_are_inlined_with_their_call_sites() {
    let p = |_: &str| None;
    let r = Expr::compile("uniform(0, 1000000)", 5, &p).unwrap();
    let vars = |n: &str| (n == "r").then(|| r.clone());
    let e = Expr::compile_with("r - r", 0, &p, &vars).unwrap();
    assert!((0..100).all(|i| e.eval(i).unwrap() == Value::Int(0)));
    let e = Expr::compile_with("r", 7, &p, &vars).unwrap();
    assert!((0..100).all(|i| e.eval(i).unwrap() == r.eval(i).unwrap()));
    assert!(Expr::compile_with("q", 0, &p, &vars).is_err());
}

#[test]
fn uuids_text_and_blobs() {
    let u = compile("uuid()");
    let Value::Uuid(v) = u.eval(1).unwrap() else {
        panic!()
    };
    assert_eq!((v >> 76) & 0xf, 4, "version 4");
    assert_eq!((v >> 62) & 0x3, 2, "RFC 4122 variant");
    assert_ne!(u.eval(1).unwrap(), u.eval(2).unwrap());
    assert_eq!(
        compile("uuid(5)").eval(1).unwrap(),
        compile("uuid(5)").eval(2).unwrap(),
        "an explicit source fixes the value"
    );
    assert!(matches!(
        compile("text(12)").eval(3).unwrap(),
        Value::Text { len: 12, .. }
    ));
    assert!(matches!(
        compile("blob(1k)").eval(3).unwrap(),
        Value::Blob { len: 1000, .. }
    ));
    assert!(compile("text(-1)").eval(0).is_err());
}

fn composite(v: Value<'_>) -> Composite<'_> {
    match v {
        Value::Composite(c) => c,
        other => panic!("{other:?}"),
    }
}

#[test]
fn collections_evaluate_their_elements_on_demand() {
    let e = compile("list(3, i * 10 + j)");
    let c = composite(e.eval(4).unwrap());
    assert_eq!((c.kind(), c.len()), (CompositeKind::List, 3));
    assert_eq!(c.element(2, 0).unwrap(), Value::Int(42));
    assert_eq!(c.constant_len(), Some(3));
    let m = compile("map(uniform(1, 5), j, 'v')");
    let c = composite(m.eval(0).unwrap());
    assert_eq!(c.constant_len(), None);
    assert_eq!(c.element(1, 0).unwrap(), Value::Int(1));
    assert_eq!(c.element(1, 1).unwrap(), Value::Str("v"));
    let t = compile("tuple(i, 'a', null)");
    let c = composite(t.eval(8).unwrap());
    assert_eq!((c.kind(), c.len()), (CompositeKind::Tuple, 3));
    assert_eq!(c.element(0, 0).unwrap(), Value::Int(8));
    assert_eq!(c.element(2, 0).unwrap(), Value::Null);
    assert!(c.element(3, 0).is_err());
    assert!(
        compile("list(0 - 1, j)").eval(0).is_err(),
        "a negative count"
    );
    assert!(std::mem::size_of::<Value<'_>>() <= 64, "Value stays small");
}

#[test]
fn j_is_the_innermost_position_and_elements_draw_apart() {
    // The tuple has no j of its own: it sees the list's.
    let e = compile("list(2, tuple(j, list(3, j)))");
    let outer = composite(e.eval(0).unwrap());
    let t = composite(outer.element(1, 0).unwrap());
    assert_eq!(t.element(0, 0).unwrap(), Value::Int(1));
    let inner = composite(t.element(1, 0).unwrap());
    assert_eq!(inner.element(2, 0).unwrap(), Value::Int(2));
    // The count sees the enclosing scope: here the outer position.
    let e = compile("list(3, list(j, 0))");
    let outer = composite(e.eval(0).unwrap());
    assert_eq!(composite(outer.element(2, 0).unwrap()).len(), 2);
    // Random elements differ by position, and by iteration, but not by evaluation.
    let r = compile("list(4, uniform(0, 1000000000))");
    let a = composite(r.eval(1).unwrap());
    let b = composite(r.eval(2).unwrap());
    assert_ne!(a.element(0, 0).unwrap(), a.element(1, 0).unwrap());
    assert_ne!(a.element(0, 0).unwrap(), b.element(0, 0).unwrap());
    assert_eq!(
        a.element(3, 0).unwrap(),
        composite(r.eval(1).unwrap()).element(3, 0).unwrap()
    );
    // `j` outside an element is an error at compile time, pointing at it.
    let p = |_: &str| None;
    let err = Expr::compile("i + j", 0, &p).unwrap_err();
    assert_eq!(err.at, 4);
    assert!(err.message.contains("element"), "{}", err.message);
    assert!(
        Expr::compile("list(j, 1)", 0, &p).is_err(),
        "the count is outside"
    );
    assert!(Expr::compile("tuple(j)", 0, &p).is_err());
    assert!(Expr::compile("map(1, 2)", 0, &p).is_err());
    assert!(Expr::compile("tuple()", 0, &p).is_err());
}
