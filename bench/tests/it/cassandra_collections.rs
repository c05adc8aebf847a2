//! Collection, tuple, user type and vector generators against Cassandra: a table of `list<int>`,
//! `set<text>`, `map<text, bigint>`, `tuple<int, text>`, a frozen and a non-frozen user type,
//! a frozen map of lists, a list of frozen sets and two vectors (`vector<float, 3>`, fixed-size
//! elements; `vector<text, 2>`, vint-prefixed elements of up to 199 bytes), in a keyspace of
//! this test's own:
//!
//! - loaded by each backend in turn (doppio on glommio, doppio on io_uring, scylla-rust-driver:
//!   each one's encoding reaches the server), the table emptied before each load; after each,
//!   `run --validate` on every backend finds every row read equal to what the generators
//!   produce (sets and maps in the server's normalised order, random counts, empty
//!   collections, duplicate set elements and map keys included);
//! - independently of the bench's encoder, a row written by a CQL statement with literal
//!   values validates against a workload whose generators give the same values: the bytes
//!   the bench sends are the ones Cassandra makes of the literals;
//! - after an independent writer (scylla-rust-driver, through `doppio schema`) appends to a
//!   list, adds a map key, changes a vector and a user type's field in four rows, every
//!   backend reports exactly the reads of those rows as `invalid_value`.

#![allow(clippy::unwrap_used)] // tests: a panic is a failed test with its location

use std::path::Path;

use doppio_bench::workload::expr::{Expr, Value};

use crate::support;
use support::{apply_cql, doppio, drop_keyspace, json, scratch_dir, CountedRun, ALL_DRIVERS};

const NODE: &str = "127.0.0.1:9042";
const ROWS: u64 = 100;
const ITERATIONS: u64 = 300;
const DRIVERS: [&str; 3] = ["doppio", "doppio-uring", "scylla"];
/// The rows the independent writer changes.
const CORRUPTED: [u64; 4] = [7, 11, 13, 17];

const SCHEMA: &str = r#"
[schema]
statements = [
    "CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    "CREATE TYPE IF NOT EXISTS ${keyspace}.point (x int, label text, tags frozen<list<text>>)",
    "CREATE TABLE IF NOT EXISTS ${keyspace}.c (id bigint PRIMARY KEY, l list<int>, s set<text>, m map<text, bigint>, t tuple<int, text>, p frozen<point>, q point, n frozen<map<text, list<int>>>, ls list<frozen<set<int>>>, v vector<float, 3>, vt vector<text, 2>)",
]
"#;

/// The generated workload: random counts (0 included), duplicate set elements and map keys.
const WORKLOAD: &str = r#"
name = "collections"

[params]
keyspace = "doppio_collections"
rows = 100

[load]
count = "rows"
statement = "INSERT INTO ${keyspace}.c (id, l, s, m, t, p, q, n, ls, v, vt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
args = [
    "i",
    "list(uniform(0, 5), i * 10 + j)",
    "set(uniform(0, 6), text(2, i * 7 + j % 3))",
    "map(uniform(0, 5), text(1, i + j % 2), uniform(0, 1000000))",
    "tuple(i * 3, text(6))",
    "udt(i % 7, text(5), list(2, text(3)))",
    "udt(i % 5, null, list(uniform(0, 3), text(2)))",
    "map(uniform(1, 4), text(4), list(2, j))",
    "list(uniform(0, 3), set(3, uniform(0, 5)))",
    "vector(3, uniform(-1.0, 1.0))",
    "vector(2, text(uniform(1, 200)))",
]

[[run]]
name = "read"
statement = "SELECT * FROM ${keyspace}.c WHERE id = ?"
args = ["hash(i) % rows"]
validate = "hash(i) % rows"
"#;

/// Row 1000, written by CQL literals (`LITERAL_INSERT`), and generators that give the same
/// values at iteration 0 (its `[load]` is never run: it only says what the row holds).
const LITERAL: &str = r#"
name = "literal"

[params]
keyspace = "doppio_collections"

[load]
count = 1
statement = "INSERT INTO ${keyspace}.c (id, l, s, m, t, p, q, n, ls, v, vt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
args = [
    "1000 + i",
    "list(3, j * 2)",
    "set(4, 2 - j % 3)",
    "map(3, 1 - j % 2, j * 100)",
    "tuple(3, 'abc')",
    "udt(7, 'pt', list(2, j))",
    "udt(1, null, list(1, 'z'))",
    "map(2, 1 - j, list(2, j + 10))",
    "list(2, set(2, 1 - j))",
    "vector(3, j * 0.5 - 0.25)",
    "vector(2, 'ab')",
]

[[run]]
statement = "SELECT * FROM ${keyspace}.c WHERE id = ?"
args = ["1000"]
validate = "0"
"#;

const LITERAL_INSERT: &str =
    "INSERT INTO doppio_collections.c (id, l, s, m, t, p, q, n, ls, v, vt) \
     VALUES (1000, [0, 2, 4], {'0', '1', '2'}, {'0': 100, '1': 200}, (3, 'abc'), \
     {x: 7, label: 'pt', tags: ['0', '1']}, {x: 1, label: null, tags: ['z']}, \
     {'0': [10, 11], '1': [10, 11]}, [{0, 1}, {0, 1}], [-0.25, 0.25, 0.75], ['ab', 'ab'])";

/// A workload of schema statements only (run with `doppio schema`).
fn schema(workload: &str, driver: &str) {
    let out = doppio(&["schema", NODE, "--driver", driver, "-w", workload]);
    assert!(out.status.success(), "schema {workload}");
}

/// `run --validate` of `workload` on every backend; the exit code and the JSON report.
fn validate(workload: &str, iterations: u64, report: &Path) -> (Option<i32>, serde_json::Value) {
    let out = CountedRun::new(NODE, ALL_DRIVERS, iterations, 8, report)
        .args(&["-w", workload, "--validate"])
        .run();
    (out.status.code(), json(report))
}

fn assert_clean(j: &serde_json::Value, iterations: u64, what: &str) {
    assert!(j["fatal_error"].is_null(), "{what}: {}", j["fatal_error"]);
    for d in DRIVERS {
        let b = &j["backends"][d];
        assert_eq!(b["requests"], iterations, "{what}: {d}");
        assert_eq!(
            b["errors"], 0,
            "{what}: {d}: {} {}",
            b["errors_by_kind"], b["first_errors"]
        );
        assert_eq!(b["rows"], iterations, "{what}: {d}: one row per read");
    }
}

/// How many of iterations 0..ITERATIONS read one of `keys` (`hash(i) % rows`).
fn reads_of(keys: &[u64]) -> u64 {
    let e = Expr::compile(&format!("hash(i) % {ROWS}"), 0, &|_| None).unwrap();
    (0..ITERATIONS)
        .filter(|&i| {
            keys.iter()
                .any(|&k| e.eval(i).unwrap() == Value::Int(k as i64))
        })
        .count() as u64
}

#[test]
fn collections_tuples_user_types_and_vectors_round_trip_and_validate_on_every_backend() {
    let _turn = doppio_test_support::file_turn(module_path!());
    // A machine where the shared node does not answer runs no Cassandra tests: skipped
    // there (outside CI) with a message.
    if doppio_test_support::CASSANDRA.answering().is_none() {
        return;
    }
    let dir = scratch_dir("collections");
    let workload = dir.join("collections.toml");
    std::fs::write(&workload, format!("{WORKLOAD}{SCHEMA}")).unwrap();
    let workload = workload.to_str().unwrap();
    let literal = dir.join("literal.toml");
    std::fs::write(&literal, format!("{LITERAL}{SCHEMA}")).unwrap();
    let literal = literal.to_str().unwrap();

    drop_keyspace(NODE, &dir, "doppio_collections");
    schema(workload, "doppio");

    // Each backend loads the table alone, and every backend validates what it wrote.
    for loader in DRIVERS {
        apply_cql(
            NODE,
            "doppio",
            &dir,
            "truncate.toml",
            &["TRUNCATE doppio_collections.c"],
        );
        let out = doppio(&["load", NODE, "-w", workload, "--driver", loader, "-q"]);
        assert!(out.status.success(), "load by {loader}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("loaded {ROWS} rows")) && text.contains(" 0 errors"),
            "load by {loader}: {text}"
        );
        let report = dir.join(format!("after-{loader}.json"));
        let (code, j) = validate(workload, ITERATIONS, &report);
        assert_eq!(code, Some(0), "validated after the load by {loader}");
        assert_clean(&j, ITERATIONS, &format!("after the load by {loader}"));
        assert_eq!(j["config"]["validated"], serde_json::json!(["read"]));
    }

    // The bench's bytes are the server's own for the same values written as CQL literals.
    apply_cql(
        NODE,
        "scylla",
        &dir,
        "literal-insert.toml",
        &[LITERAL_INSERT],
    );
    let (code, j) = validate(literal, 20, &dir.join("literal.json"));
    assert_eq!(code, Some(0), "the literal row validates");
    assert_clean(&j, 20, "the literal row");

    // An independent writer changes one element in four rows.
    apply_cql(
        NODE,
        "scylla",
        &dir,
        "corrupt.toml",
        &[
            "UPDATE doppio_collections.c SET l = l + [999999] WHERE id = 7",
            "UPDATE doppio_collections.c SET m['!'] = 1 WHERE id = 11",
            "UPDATE doppio_collections.c SET v = [0.5, 0.5, 0.5] WHERE id = 13",
            "UPDATE doppio_collections.c SET q.x = 12345 WHERE id = 17",
        ],
    );
    let (code, j) = validate(workload, ITERATIONS, &dir.join("corrupted.json"));
    assert_eq!(code, Some(1), "validation failures fail the run");
    let changed = reads_of(&CORRUPTED);
    eprintln!("iterations reading a changed row: {changed}");
    assert!(changed > 0);
    for d in DRIVERS {
        let b = &j["backends"][d];
        assert_eq!(b["errors_by_kind"]["invalid_value"], changed, "{d}");
        assert_eq!(b["errors"], changed, "{d}: nothing else");
        assert_eq!(
            b["rows"],
            ITERATIONS - changed,
            "{d}: the failed reads count none"
        );
    }
    // The first message of each backend names a changed row and its changed column.
    for d in DRIVERS {
        let first = j["backends"][d]["first_errors"]["invalid_value"]
            .as_str()
            .unwrap();
        assert!(
            [(7, "l"), (11, "m"), (13, "v"), (17, "q")]
                .iter()
                .any(|(key, column)| first.contains(&format!(
                    "column `{column}` of the row of load iteration {key}:"
                ))),
            "{d}: {first}"
        );
    }
}
