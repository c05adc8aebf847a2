//! The workload's tests: built-ins, vars, parameters, groups, validation, binding.

use super::builtin::BUILT_INS;
use super::encode::CqlType;
use super::expr::ParamValue;
use super::model::is_conditional;
use super::params::parse_param_value;
use super::*;

#[test]
fn every_built_in_compiles() {
    for (name, _) in BUILT_INS {
        let w = Workload::resolve(name, &[]).unwrap();
        assert_eq!(&w.name, name);
        assert!(!w.run.is_empty());
    }
    let read = Workload::resolve("read", &[("rows".into(), "10k".into())]).unwrap();
    assert_eq!(read.load.as_ref().unwrap().count, 10_000);
    assert!(
        read.schema[0].contains("'replication_factor': 1}"),
        "{}",
        read.schema[0]
    );
    assert!(read.schema[1].starts_with("CREATE TABLE IF NOT EXISTS doppio_bench.kv"));
}

#[test]
fn vars_name_shared_sub_expressions() {
    let text = r#"
            [params]
            rows = 100
            [vars]
            b = "a * 2"
            a = "hash(i) % rows"
            r = "uniform(0, 1000000)"
            [[run]]
            statement = "SELECT * FROM t WHERE a = ? AND b = ? AND c = ?"
            args = ["a", "b", "r - r"]
        "#;
    let w = Workload::from_toml("t", text, &[]).unwrap();
    let args = &w.run[0].args;
    for i in 0..100 {
        let (expr::Value::Int(a), expr::Value::Int(b)) =
            (args[0].eval(i).unwrap(), args[1].eval(i).unwrap())
        else {
            panic!()
        };
        assert!((0..100).contains(&a) && b == 2 * a);
        assert_eq!(args[2].eval(i).unwrap(), expr::Value::Int(0));
    }
    let circle = "[vars]\na = \"b\"\nb = \"a + 1\"\n[[run]]\nstatement = \"x\"\n";
    let e = Workload::from_toml("t", circle, &[]).unwrap_err();
    assert!(e.to_string().contains("names itself"), "{e}");
    let clash = "[params]\nrows = 1\n[vars]\nrows = \"2\"\n[[run]]\nstatement = \"x\"\n";
    let e = Workload::from_toml("t", clash, &[]).unwrap_err();
    assert!(e.to_string().contains("already a parameter"), "{e}");
    let bad = "[vars]\na = \"nope + 1\"\n[[run]]\nstatement = \"x\"\n";
    let e = Workload::from_toml("t", bad, &[]).unwrap_err();
    assert!(
        e.to_string().contains("line 2") && e.to_string().contains("nope"),
        "{e}"
    );
}

#[test]
fn parameters_are_checked() {
    let e = Workload::resolve("read", &[("rowz".into(), "1".into())]).unwrap_err();
    assert!(e.to_string().contains("rowz"), "{e}");
    let text = r#"
            [[run]]
            statement = "SELECT * FROM ${nope}.t"
        "#;
    let e = Workload::from_toml("t", text, &[]).unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    let bad_field = "[[run]]\nstatement = \"x\"\nwieght = 2\n";
    assert!(
        Workload::from_toml("t", bad_field, &[]).is_err(),
        "typos are errors"
    );
}

#[test]
fn written_by_names_the_run_statement_whose_rows_a_read_validates() {
    let text = r#"
            [load]
            count = 10
            statement = "INSERT INTO t (p, c) VALUES (?, ?)"
            args = ["i", "0"]
            [[run]]
            name = "fill"
            batch = "unlogged"
            repeat = 4
            statement = "INSERT INTO t (p, c, v) VALUES (?, ?, ?)"
            args = ["i / 4", "i % 4", "blob(8)"]
            [[run]]
            name = "check"
            statement = "SELECT * FROM t WHERE p = ? AND c = ?"
            args = ["i / 4", "i % 4"]
            validate = "i"
            written_by = "fill"
            [[run]]
            name = "old"
            statement = "SELECT * FROM t WHERE p = ? AND c = 0"
            args = ["i"]
            validate = "i"
        "#;
    let w = Workload::from_toml("t", text, &[]).unwrap();
    let named = |n: &str| w.run.iter().find(|s| s.name == n).unwrap();
    assert_eq!(w.writer_of(named("check")).unwrap().name, "fill");
    assert_eq!(w.writer_of(named("old")).unwrap().name, "load");
    // Without a [load], a run statement may still be the writer.
    let from = text.find("[[run]]").unwrap();
    let to = text.find("[[run]]\n            name = \"old\"").unwrap();
    let w = Workload::from_toml("t", &text[from..to], &[]).unwrap();
    assert!(w.load.is_none());
    assert_eq!(w.writer_of(&w.run[1]).unwrap().name, "fill");

    let fails = |text: &str, wanted: &[&str]| {
        let e = Workload::from_toml("t", text, &[]).unwrap_err().to_string();
        for w in wanted {
            assert!(e.contains(w), "{e:?} lacks {w:?}");
        }
    };
    let read = |extra: &str| {
        format!(
            "[[run]]\nname = \"fill\"\nstatement = \"INSERT INTO t (p) VALUES (?)\"\n\
                 args = [\"i\"]\n[[run]]\nname = \"check\"\n\
                 statement = \"SELECT * FROM t WHERE p = ?\"\nargs = [\"i\"]\n{extra}"
        )
    };
    fails(
        &read("validate = \"i\"\nwritten_by = \"fil\"\n"),
        &[
            "line 10",
            "written_by = \"fil\" is no run statement",
            "\"fill\"",
        ],
    );
    fails(
        &read("validate = \"i\"\nwritten_by = \"check\"\n"),
        &["names the statement itself"],
    );
    fails(
        &read("written_by = \"fill\"\n"),
        &["check has no `validate`"],
    );
    fails(
        &read("validate = \"i\"\n"),
        &["no [load] section", "written_by"],
    );
    fails(
        "[[run]]\nwritten_by = \"x\"\n[[run.step]]\nstatement = \"SELECT 1\"\n",
        &["`written_by` belong to each [[run.step]]"],
    );
}

#[test]
fn the_key_space_is_the_load_count_else_the_rows_parameter() {
    let rows = [("rows".to_owned(), "10k".to_owned())];
    assert_eq!(
        Workload::resolve("read", &rows).unwrap().key_space(),
        Some(10_000)
    );
    assert_eq!(
        Workload::resolve("write", &rows).unwrap().key_space(),
        Some(10_000)
    );
    assert_eq!(Workload::resolve("empty", &[]).unwrap().key_space(), None);
}

#[test]
fn weights_pick_statements_in_proportion() {
    let w = Workload::resolve("mixed", &[("read_ratio".into(), "0.25".into())]).unwrap();
    let n = 100_000u64;
    let reads = (0..n).filter(|&i| w.pick(i) == 0).count() as f64 / n as f64;
    assert!((reads - 0.25).abs() < 0.01, "{reads}");
    assert_eq!(w.pick(42), w.pick(42));
}

#[test]
fn sequences_and_batches_compile_into_groups_and_entries() {
    let text = r#"
            [[run]]
            name = "read"
            statement = "SELECT * FROM t WHERE k = ?"
            args = ["i"]
            weight = 3

            [[run]]
            name = "order"
            idempotent = true
            [[run.step]]
            name = "insert"
            statement = "INSERT INTO t (k) VALUES (?) IF NOT EXISTS"
            args = ["i"]
            [[run.step]]
            name = "read"
            statement = "SELECT * FROM t WHERE k = ?"
            args = ["i"]
            idempotent = false

            [[run]]
            name = "fill"
            batch = "unlogged"
            repeat = 10
            statement = "INSERT INTO t (k) VALUES (?)"
            args = ["i"]
        "#;
    let w = Workload::from_toml("t", text, &[]).unwrap();
    assert_eq!(w.run.len(), 4);
    assert_eq!(w.groups.len(), 3);
    assert_eq!(w.groups[1].mode, RunMode::Sequence);
    assert_eq!(w.groups[1].statements, 1..3);
    assert_eq!(w.groups[2].mode, RunMode::Batch(BatchKind::Unlogged));
    assert_eq!((w.groups[2].repeat, w.groups[2].entry), (10, 4));
    assert!(
        w.run[1].idempotent && !w.run[2].idempotent,
        "a step overrides"
    );
    assert!(w.run[1].conditional && !w.run[2].conditional);
    let names: Vec<(String, EntryKind)> =
        w.entries().into_iter().map(|e| (e.name, e.kind)).collect();
    assert_eq!(
        names,
        vec![
            ("read".into(), EntryKind::Statement),
            ("order.insert".into(), EntryKind::Statement),
            ("order.read".into(), EntryKind::Statement),
            ("order".into(), EntryKind::Sequence),
            ("fill".into(), EntryKind::Batch(BatchKind::Unlogged)),
        ]
    );
    assert_eq!(w.weight(1), Some((1.0, 0.2)));
    // Bad ones name the line.
    let bad = "[[run]]\nbatch = \"atomic\"\nstatement = \"x\"\n";
    let e = Workload::from_toml("t", bad, &[]).unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("atomic"), "{e}");
    let bad = "[[run]]\nstatement = \"x\"\nrepeat = 3\n";
    let e = Workload::from_toml("t", bad, &[]).unwrap_err().to_string();
    assert!(e.contains("line 3") && e.contains("batch"), "{e}");
    let bad = "[[run]]\nstatement = \"x\"\n[[run.step]]\nstatement = \"y\"\n";
    let e = Workload::from_toml("t", bad, &[]).unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("steps"), "{e}");
    // `repeat` may be an expression of parameters, as `weight` and `count` are.
    let param = "[params]\nn = 4\n[[run]]\nbatch = \"unlogged\"\nrepeat = \"n * 2\"\n\
                     statement = \"x\"\n";
    let w = Workload::from_toml("t", param, &[]).unwrap();
    assert_eq!(w.groups[0].repeat, 8);
    let w = Workload::from_toml("t", param, &[("n".into(), "3".into())]).unwrap();
    assert_eq!(w.groups[0].repeat, 6);
    for bad in ["0", "0.75", "-1"] {
        let o = [("n".to_owned(), bad.to_owned())];
        let e = Workload::from_toml("t", param, &o).unwrap_err().to_string();
        assert!(e.contains("line 5") && e.contains("not between 1"), "{e}");
    }
}

#[test]
fn conditional_statements_are_recognised() {
    assert!(is_conditional("INSERT INTO t (k) VALUES (?) IF NOT EXISTS"));
    assert!(is_conditional("UPDATE t SET v = ? WHERE k = ? if v = ?"));
    assert!(is_conditional("DELETE FROM t WHERE k = ? IF EXISTS"));
    assert!(!is_conditional("INSERT INTO t (k, v) VALUES (?, 'IF')"));
    assert!(!is_conditional("SELECT diff FROM t WHERE k = ?"));
}

#[test]
fn param_values_parse_by_shape() {
    assert_eq!(parse_param_value("1_000"), ParamValue::Int(1000));
    assert_eq!(parse_param_value("5M"), ParamValue::Int(5_000_000));
    assert_eq!(parse_param_value("0.5"), ParamValue::Float(0.5));
    assert_eq!(parse_param_value("250ms"), ParamValue::Int(250));
    assert_eq!(parse_param_value("2s"), ParamValue::Int(2000));
    assert_eq!(parse_param_value("1m"), ParamValue::Int(60_000));
    assert_eq!(parse_param_value("1h"), ParamValue::Int(3_600_000));
    assert_eq!(parse_param_value("1.5ms"), ParamValue::Int(2));
    assert_eq!(parse_param_value("-5k"), ParamValue::Int(-5000));
    assert_eq!(parse_param_value("1.5k"), ParamValue::Int(1500));
    assert_eq!(parse_param_value("1e3"), ParamValue::Float(1000.0));
    assert_eq!(parse_param_value("ks1"), ParamValue::Str("ks1".into()));
}

#[test]
fn binding_checks_counts_and_types() {
    use self::encode::CqlKind;
    let w = Workload::resolve("read", &[]).unwrap();
    let load = &w.load.as_ref().unwrap().statement;
    let t = |k: CqlKind| CqlType::Scalar(k);
    assert!(BoundArgs::bind("read", load, &[t(CqlKind::BigInt), t(CqlKind::Blob)]).is_ok());
    let e = BoundArgs::bind("read", load, &[t(CqlKind::BigInt)]).unwrap_err();
    assert!(e.to_string().contains("2 args"), "{e}");
    let e = BoundArgs::bind("read", load, &[t(CqlKind::Uuid), t(CqlKind::Blob)]).unwrap_err();
    assert!(e.to_string().contains("uuid"), "{e}");
}
