//! cassandra-stress user profiles (YAML): read as cassandra-stress reads them and converted
//! into a doppio TOML workload (bench/PROFILES.md: each key, and each choice where
//! cassandra-stress's meaning had to be read one way).
//!
//! Children: `error`, what can be wrong, each naming the key or line; `model`, the
//! profile typed, with cassandra-stress's defaults; `read`, the YAML read into it;
//! `cql`, the CQL a conversion reads without a server (a CREATE TABLE's key, which column
//! each bind marker stands for, statements qualified with the keyspace); [`convert`], the
//! profile as TOML. Everything is checked before anything connects.

pub mod convert;
pub(crate) mod cql;
pub(crate) mod error;
pub(crate) mod model;
pub(crate) mod read;

pub(crate) use self::convert::to_toml_all;
pub(crate) use self::error::ProfileError;
pub(crate) use self::model::Profile;

#[cfg(test)]
mod tests {
    use super::convert::to_toml;
    use super::error::ProfileError;
    use super::*;
    use crate::workload::expr::Value;
    use crate::workload::{RunMode, Workload};

    const CLASSIC: &str = include_str!("../../../profiles/classic.yaml");
    const TIMESERIES: &str = include_str!("../../../profiles/timeseries.yaml");

    fn convert(name: &str, text: &str, overrides: &[(&str, &str)]) -> Workload {
        let p = Profile::from_yaml(name, text).unwrap();
        let (toml, _) = to_toml(&p).unwrap();
        let o: Vec<(String, String)> = overrides
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Workload::from_toml(name, &toml, &o).unwrap_or_else(|e| panic!("{e}\n{toml}"))
    }

    fn ints(args: &[crate::workload::expr::Expr], i: u64) -> Vec<Value<'_>> {
        args.iter().map(|a| a.eval(i).unwrap()).collect()
    }

    /// Each argument's value at `i`, encoded as its natural type (composites compare by
    /// their elements).
    fn bytes(args: &[crate::workload::expr::Expr], i: u64) -> Vec<Vec<u8>> {
        use crate::workload::encode::{encode, natural_type};
        args.iter()
            .map(|a| {
                let v = a.eval(i).unwrap();
                let mut out = Vec::new();
                encode(v, &natural_type(&v), &mut out).unwrap();
                out
            })
            .collect()
    }

    #[test]
    fn the_classic_profile_reads_and_converts() {
        let p = Profile::from_yaml("classic.yaml", CLASSIC).unwrap();
        assert_eq!(p.specname, "classic");
        assert_eq!(p.columns.len(), 6);
        assert_eq!(p.queries.len(), 2);
        assert_eq!(p.token_range_queries[0].page_size, 500);
        assert_eq!(p.insert.batchtype, Some(model::BatchType::Unlogged));
        let (toml, notes) = to_toml(&p).unwrap();
        assert!(notes.iter().any(|n| n.contains("LOCAL_ONE")), "{notes:?}");
        let w = convert("classic.yaml", CLASSIC, &[]);
        assert_eq!(w.schema.len(), 2);
        assert!(
            w.schema[1].starts_with("CREATE TABLE IF NOT EXISTS doppio_profile_classic.mixedtypes")
        );
        let names: Vec<&str> = w.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["insert", "by_owner", "since", "ring", "validate"]);
        // Rows per partition: 12.5 * 2 * 2 on average, select 5.5 / 20 of them: 14.
        assert_eq!(
            w.groups[0].mode,
            RunMode::Batch(crate::workload::BatchKind::Unlogged)
        );
        assert_eq!(w.groups[0].repeat, 14);
        assert!(w.run[0].cql.starts_with(
            "UPDATE doppio_profile_classic.mixedtypes SET payload = ? WHERE owner = ?"
        ));
        assert!(w.run[3].cql.contains("token(owner, active) > ?"), "{toml}");
        // Only the insert runs unless asked: ops_insert = 1, the rest 0.
        let w = convert(
            "classic.yaml",
            CLASSIC,
            &[("ops_insert", "0"), ("ops_by_owner", "1")],
        );
        assert_eq!(w.groups[1].name, "by_owner");
    }

    /// Every column follows its columnspec: sizes within bounds, the population's count of
    /// distinct values, a SEQ clock counting within a partition.
    #[test]
    fn generated_values_follow_the_columnspec() {
        let w = convert("timeseries.yaml", TIMESERIES, &[]);
        let insert = &w.run[0];
        assert!(insert.cql.starts_with(
            "UPDATE doppio_profile_ts.readings SET value = ?, quality = ?, tags = tags + ? WHERE sensor = ? AND day = ? AND at = ?"
        ), "{}", insert.cql);
        assert_eq!(w.groups[0].repeat, 50);
        let mut days = std::collections::BTreeSet::new();
        let mut quality = Vec::new();
        for b in 0..400u64 {
            let mut ats = Vec::new();
            for c in 0..50 {
                let v = ints(&insert.args, b * 50 + c);
                let (Value::Int(q), Value::Composite(tags), Value::Int(day), Value::Int(at)) =
                    (v[1], v[2], v[4], v[5])
                else {
                    panic!("{v:?}")
                };
                assert!((0..=3).contains(&tags.len()));
                assert!((1..=30).contains(&day) && (1..=1000).contains(&at));
                days.insert(day);
                quality.push(q);
                // One partition per batch: the same sensor and day in every copy.
                assert_eq!(ints(&insert.args, b * 50)[3..5], v[3..5]);
                ats.push(at);
            }
            // 50 consecutive readings (wrapping at the partition's 1000).
            for pair in ats.windows(2) {
                assert!(
                    pair[1] == pair[0] + 1 || (pair[0] == 1000 && pair[1] == 1),
                    "{ats:?}"
                );
            }
        }
        assert_eq!(days.len(), 30);
        // ~exp(0..100): q >= 50 when the exponential sample X < 51, X of mean 100 / ln 10.
        let high = quality.iter().filter(|&&q| q >= 50).count() as f64 / quality.len() as f64;
        let p = 1.0 - (-51.0 / (100.0 / 10f64.ln())).exp();
        let se = (p * (1.0 - p) / quality.len() as f64).sqrt();
        assert!((high - p).abs() < 5.0 * se, "{high} against {p}");
    }

    /// A samerow query binds exactly the values an insert wrote to the row it names.
    #[test]
    fn queries_bind_what_the_insert_wrote() {
        // Every operation on one partition, so that insert and query meet.
        let w = convert("classic.yaml", CLASSIC, &[("population", "FIXED(7)")]);
        let insert = &w.run[0];
        let by_owner = &w.run[1];
        let since = &w.run[2];
        let mut keys = std::collections::BTreeSet::new();
        let mut created = std::collections::BTreeSet::new();
        for i in 0..3000u64 {
            let v = ints(&insert.args, i);
            keys.insert(format!("{:?}", &v[1..3]));
            created.insert(format!("{:?}", v[3]));
        }
        assert_eq!(keys.len(), 1, "one partition");
        for i in 0..200u64 {
            let q = ints(&by_owner.args, i);
            assert!(keys.contains(&format!("{:?}", &q[..2])));
            let q = ints(&since.args, i);
            assert!(created.contains(&format!("{:?}", q[2])), "{q:?}");
        }
    }

    /// The added `validate` operation reads, at iteration `i`, the row that the insert's
    /// copy `i % repeat` of operation `i / repeat` wrote, and selects every column a second
    /// write leaves as it was (not a counter, not a list the insert appends to).
    #[test]
    fn the_validate_operation_reads_back_the_row_each_insert_row_wrote() {
        for (name, text, selected) in [
            (
                "classic.yaml",
                CLASSIC,
                "owner, active, created, score, rank, slot, id, payload",
            ),
            (
                "timeseries.yaml",
                TIMESERIES,
                "sensor, day, at, value, quality, tags",
            ),
        ] {
            let w = convert(name, text, &[]);
            let insert = &w.run[0];
            let (k, validate) = w
                .run
                .iter()
                .enumerate()
                .find(|(_, s)| s.name == "validate")
                .unwrap();
            assert_eq!(w.writer_of(validate).unwrap().name, "insert");
            assert_eq!(
                w.weight(w.groups.len() - 1),
                Some((0.0, 0.0)),
                "off by default"
            );
            assert!(
                validate
                    .cql
                    .starts_with(&format!("SELECT {selected} FROM ")),
                "{}",
                validate.cql
            );
            let keys = insert.args.len() - validate.args.len();
            for i in [0, 1, 13, 14, 49, 50, 777, 1_000_003] {
                assert_eq!(
                    ints(&validate.args, i),
                    ints(&insert.args, i)[keys..],
                    "{name}: iteration {i}"
                );
                assert_eq!(
                    validate.validate.as_ref().unwrap().eval(i).unwrap(),
                    Value::Int(i as i64)
                );
            }
            assert_eq!(k, w.run.len() - 1);
        }
        // Counters and appended lists are left out; a frozen list is set whole, so kept.
        let p = Profile::from_yaml(
            "p.yaml",
            "keyspace: ks\ntable: t\ntable_definition: CREATE TABLE t (k int PRIMARY KEY, \
             l list<int>, f frozen<list<int>>, s set<int>, m map<int, int>)\n",
        )
        .unwrap();
        let (toml, _) = to_toml(&p).unwrap();
        assert!(
            toml.contains("SELECT k, f, s, m FROM ks.t WHERE k = ?"),
            "{toml}"
        );
        let p = Profile::from_yaml(
            "p.yaml",
            "keyspace: ks\ntable: t\ntable_definition: CREATE TABLE t (k int PRIMARY KEY, \
             n counter)\n",
        )
        .unwrap();
        let (toml, _) = to_toml(&p).unwrap();
        assert!(toml.contains("SELECT k FROM ks.t WHERE k = ?"), "{toml}");
        // An operation of the profile named `validate` keeps its name; none is added.
        let p = Profile::from_yaml(
            "p.yaml",
            &format!("{HEAD}queries:\n  validate:\n    cql: SELECT * FROM t WHERE k = ?\n"),
        )
        .unwrap();
        let (toml, notes) = to_toml(&p).unwrap();
        assert_eq!(toml.matches("name = \"validate\"").count(), 1, "{toml}");
        assert!(!toml.contains("written_by"), "{toml}");
        assert!(
            notes.iter().any(|n| n.contains("no `validate` operation")),
            "{notes:?}"
        );
    }

    const USERS: &str = include_str!("../../../profiles/users.yaml");
    const ORDERS: &str = include_str!("../../../profiles/orders.yaml");

    /// Several profiles convert into one workload: operations and weights named by specname,
    /// each keyspace created once, every value as the profile alone makes it.
    #[test]
    fn profiles_run_together_under_their_specnames() {
        let users = Profile::from_yaml("users.yaml", USERS).unwrap();
        let orders = Profile::from_yaml("orders.yaml", ORDERS).unwrap();
        let (toml, notes) = to_toml_all(&[users.clone(), orders.clone()]).unwrap();
        assert!(notes.iter().all(|n| n.starts_with("orders: ")), "{notes:?}");
        let w = Workload::from_toml("shop", &toml, &[]).unwrap_or_else(|e| panic!("{e}\n{toml}"));
        assert_eq!(w.name, "users+orders");
        let names: Vec<&str> = w.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "users.insert",
                "users.by_id",
                "users.validate",
                "orders.insert",
                "orders.recent",
                "orders.since",
                "orders.validate"
            ]
        );
        // The keyspace once, then each table.
        assert_eq!(w.schema.len(), 3, "{:?}", w.schema);
        assert!(w.schema[2].contains("doppio_profile_shop.orders"));
        // Both inserts run by default, with equal weight; the rest are off.
        let weights: Vec<f64> = (0..names.len()).map(|k| w.weight(k).unwrap().0).collect();
        assert_eq!(weights, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        let named = |n: &str| w.run.iter().find(|s| s.name == n).unwrap();
        assert_eq!(
            w.writer_of(named("orders.validate")).unwrap().name,
            "orders.insert"
        );
        // users' insert is one statement; the validate read leaves out its appended list.
        assert_eq!(w.groups[0].mode, RunMode::Single);
        assert!(named("users.validate")
            .cql
            .starts_with("SELECT user_id, name, emails, prefs, joined FROM"));
        // Scoped, every statement sends what it sends alone.
        let alone = convert("orders.yaml", ORDERS, &[]);
        for (op, scoped) in [("insert", "orders.insert"), ("since", "orders.since")] {
            let a = alone.run.iter().find(|s| s.name == op).unwrap();
            let b = named(scoped);
            assert_eq!(a.cql, b.cql);
            for i in [0, 7, 8, 1234] {
                assert_eq!(bytes(&a.args, i), bytes(&b.args, i), "{op} at {i}");
            }
        }
        // Weights by parameter: ops_SPECNAME_OP.
        let w = Workload::from_toml(
            "shop",
            &toml,
            &[
                ("ops_users_insert".into(), "0".into()),
                ("ops_orders_recent".into(), "3".into()),
            ],
        )
        .unwrap();
        assert_eq!(w.weight(4).unwrap().0, 3.0);
        assert_eq!(w.weight(0).unwrap().0, 0.0);
        // Two profiles of one specname cannot be told apart.
        let e = to_toml_all(&[orders.clone(), orders]).unwrap_err();
        assert!(matches!(e, ProfileError::SameSpecname { .. }), "{e}");
        assert!(e.to_string().contains("both specname orders"), "{e}");
        let e = Profile::read_all("a.yaml,").unwrap_err();
        assert!(matches!(e, ProfileError::EmptyPath { .. }), "{e}");
    }

    /// The round trip: what `doppio profile convert` prints, run with `-w`, sends the
    /// statements and values that `--profile` sends, for every shipped profile and the pair
    /// that runs together.
    #[test]
    fn the_printed_toml_sends_what_the_profile_sends() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/profiles");
        let overrides = [("population".to_owned(), "UNIFORM(1..50)".to_owned())];
        for files in ["classic.yaml", "timeseries.yaml", "users.yaml,orders.yaml"] {
            let paths: Vec<String> = files.split(',').map(|f| format!("{dir}/{f}")).collect();
            let paths = paths.join(",");
            let profiles = Profile::read_all(&paths).unwrap();
            let (toml, _) = to_toml_all(&profiles).unwrap();
            let printed = Workload::from_toml("printed.toml", &toml, &overrides).unwrap();
            let direct = Workload::from_profile(&paths, &overrides).unwrap();
            assert_eq!(printed.schema, direct.schema, "{files}");
            assert_eq!(printed.run.len(), direct.run.len(), "{files}");
            for (a, b) in printed.run.iter().zip(&direct.run) {
                assert_eq!((&a.name, &a.cql), (&b.name, &b.cql), "{files}");
                for i in (0..5_000u64).step_by(7) {
                    assert_eq!(
                        bytes(&a.args, i),
                        bytes(&b.args, i),
                        "{files} {} at {i}",
                        a.name
                    );
                }
            }
            for i in 0..5_000u64 {
                assert_eq!(printed.pick(i), direct.pick(i), "{files} at {i}");
            }
        }
    }

    fn error(text: &str) -> ProfileError {
        match Profile::from_yaml("p.yaml", text) {
            Err(e) => e,
            Ok(p) => to_toml(&p)
                .err()
                .unwrap_or_else(|| panic!("no error for:\n{text}")),
        }
    }

    const HEAD: &str = "keyspace: ks\ntable: t\ntable_definition: CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))\n";

    #[test]
    fn bad_input_is_a_typed_error_naming_its_place() {
        let e = error(&format!("{HEAD}colunmspec: []\n"));
        assert!(
            matches!(e, ProfileError::Yaml { .. }) && e.to_string().contains("colunmspec"),
            "{e}"
        );
        assert!(e.to_string().contains("line 4"), "{e}");

        let e = error(&format!(
            "{HEAD}columnspec:\n  - name: v\n    sise: fixed(3)\n"
        ));
        assert!(matches!(e, ProfileError::UnknownKey { line: 6, .. }), "{e}");
        assert!(e.to_string().contains("`sise`"), "{e}");

        let e = error(&format!(
            "{HEAD}columnspec:\n  - name: v\n    size: uniform(9..1)\n"
        ));
        assert!(
            matches!(e, ProfileError::Distribution { line: 6, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("v.size"), "{e}");

        let e = error(&format!("{HEAD}insert:\n  partitions: zipf(1..3)\n"));
        assert!(
            matches!(e, ProfileError::Distribution { line: 5, .. }),
            "{e}"
        );
        let e = error(&format!("{HEAD}insert:\n  select: fixed(1)\n"));
        assert!(e.to_string().contains("DIST/divisor"), "{e}");
        let e = error(&format!("{HEAD}insert:\n  batchtype: SOMETIMES\n"));
        assert!(matches!(e, ProfileError::Value { line: 5, .. }), "{e}");
        let e = error(&format!("{HEAD}insert:\n  partitons: fixed(1)\n"));
        assert!(matches!(e, ProfileError::UnknownKey { line: 5, .. }), "{e}");

        // Bind markers that match no column, or a column the table lacks.
        let q = |cql: &str, fields: &str| {
            error(&format!(
                "{HEAD}queries:\n  q1:\n    cql: {cql}\n    fields: {fields}\n"
            ))
        };
        let e = q("SELECT * FROM t WHERE k = ? LIMIT ?", "samerow");
        assert!(matches!(e, ProfileError::Query { line: 6, .. }), "{e}");
        assert!(e.to_string().contains("bind marker 2"), "{e}");
        let e = q("SELECT * FROM t WHERE nope = ?", "samerow");
        assert!(e.to_string().contains("nope, which is not a column"), "{e}");
        let e = q("SELECT * FROM t WHERE k = ?", "somerows");
        assert!(matches!(e, ProfileError::Value { line: 7, .. }), "{e}");
        let e = error(&format!(
            "{HEAD}queries:\n  q1:\n    cql: SELECT 1\n    consistencyLevel: MOST\n"
        ));
        assert!(e.to_string().contains("MOST"), "{e}");
        let e = error(&format!("{HEAD}queries:\n  q1:\n    sql: SELECT 1\n"));
        assert!(matches!(e, ProfileError::UnknownKey { line: 6, .. }), "{e}");

        // Missing keys and files.
        let e = error("table: t\n");
        assert!(
            matches!(
                e,
                ProfileError::Missing {
                    key: "keyspace",
                    ..
                }
            ),
            "{e}"
        );
        let e = error("keyspace: ks\ntable: t\n");
        assert!(
            e.to_string()
                .contains("table_definition is required to convert"),
            "{e}"
        );
        let e = Profile::read("/nonexistent/p.yaml").unwrap_err();
        assert!(
            matches!(e, ProfileError::Io { .. }) && e.to_string().contains("/nonexistent/p.yaml"),
            "{e}"
        );

        // A table whose name is not `table`, a columnspec for no column, a type with no generator.
        let e =
            error("keyspace: ks\ntable: t\ntable_definition: CREATE TABLE u (k int PRIMARY KEY)\n");
        assert!(matches!(e, ProfileError::Table { .. }), "{e}");
        let e = error(&format!("{HEAD}columnspec:\n  - name: z\n"));
        assert!(e.to_string().contains("z, which is not a column"), "{e}");
        let e = error("keyspace: ks\ntable: t\ntable_definition: CREATE TABLE t (k int PRIMARY KEY, a inet)\n");
        assert!(
            matches!(e, ProfileError::Column { .. }) && e.to_string().contains("inet"),
            "{e}"
        );
    }
}
