//! Helpers shared by the bench's test files: running the `doppio` binary and reading its
//! JSON reports.

#![allow(clippy::unwrap_used, dead_code)] // tests; not every helper is used by the tests built

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The in-process stub (its default runtime, unpinned, the default tables) with fault
/// `rules` (TOML, see perf/stub/README.md), its rule log off.
pub(crate) fn stub_with_rules(rules: &str) -> doppio_stub::StubHandle {
    doppio_stub::Stub::start(doppio_stub::StubConfig {
        rules: doppio_stub::Rules::parse(rules).unwrap(),
        log_rules: false,
        ..doppio_stub::StubConfig::default()
    })
    .unwrap()
}

/// Runs the `doppio` binary with `args`, echoing the command and its output to stderr (shown
/// when a test fails).
pub(crate) fn doppio(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_doppio"))
        .args(args)
        .output()
        .expect("run the doppio binary");
    eprintln!(
        "$ doppio {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every backend, as `--driver` names them.
pub(crate) const ALL_DRIVERS: &str = "doppio,doppio-uring,scylla";

/// A counted `doppio run` against `node`: `drivers` (comma-separated) each run `iterations`
/// requests in one segment with no warm-up, from `concurrency` fibers, quietly, the JSON report
/// written to `report`; a test adds its own options (workload, parameters, validation) with
/// [`CountedRun::args`] before [`CountedRun::run`].
pub(crate) struct CountedRun {
    args: Vec<String>,
}

impl CountedRun {
    pub(crate) fn new(
        node: &str,
        drivers: &str,
        iterations: u64,
        concurrency: u32,
        report: &Path,
    ) -> Self {
        let iterations = iterations.to_string();
        let concurrency = concurrency.to_string();
        let report = report.to_str().unwrap();
        let args = [
            "run",
            node,
            "--driver",
            drivers,
            "-d",
            &iterations,
            "--segments",
            "1",
            "--warmup",
            "0",
            "-p",
            &concurrency,
            "-q",
            "-o",
            report,
        ];
        CountedRun {
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    /// Adds options to the command line.
    pub(crate) fn args<S: AsRef<str>>(mut self, args: &[S]) -> Self {
        self.args.extend(args.iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Runs it ([`doppio`]).
    pub(crate) fn run(&self) -> Output {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        doppio(&args)
    }
}

/// The turn of a test that must not run beside the others of its file (it measures CPU,
/// latency or memory): `lock` is the file's own; a test that failed while holding it does
/// not stop the rest.
pub(crate) fn one_at_a_time(
    lock: &'static std::sync::Mutex<()>,
) -> std::sync::MutexGuard<'static, ()> {
    lock.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A JSON report.
pub(crate) fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A fresh scratch folder for one test, unique to this process and to the calling file (the
/// files of this one test binary may use the same `test` name).
#[track_caller]
pub(crate) fn scratch_dir(test: &str) -> PathBuf {
    let file = Path::new(std::panic::Location::caller().file())
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("test");
    let dir =
        std::env::temp_dir().join(format!("doppio-bench-{file}-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `by-key.toml` in `dir`: one run statement reading `ks.t` by a key hashed from the
/// iteration (so that requests spread over tokens, nodes and shards), and returns its path.
pub(crate) fn by_key_workload(dir: &Path) -> PathBuf {
    let workload = dir.join("by-key.toml");
    std::fs::write(
        &workload,
        "name = \"by-key\"\n[[run]]\nstatement = \"SELECT v FROM ks.t WHERE k = ?\"\nargs = [\"hash(i)\"]\n",
    )
    .unwrap();
    workload
}

/// One `error:` line on stderr, no panic or backtrace, and exit code 2.
pub(crate) fn assert_input_error(out: &Output, expect: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit code 2: {err}");
    let errors: Vec<_> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one sentence: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    for e in expect {
        assert!(errors[0].contains(e), "`{e}` in: {}", errors[0]);
    }
}

/// The data polylines of an SVG (drawn 2 px wide through three points or more: the mesh is
/// 1 px, a legend sample has two points; a dashed or dotted line is many short polylines,
/// of which those that turn a corner have three) and its text elements' contents (a legend
/// names every line, whatever its stroke).
pub(crate) fn svg_lines_and_texts(svg: &str) -> (usize, Vec<String>) {
    let lines = svg
        .split("<polyline")
        .skip(1)
        .filter(|p| {
            p.split_once('>').is_some_and(|(attrs, _)| {
                let points = attrs.split_once("points=\"").map_or(0, |(_, rest)| {
                    rest.split('"')
                        .next()
                        .unwrap_or("")
                        .split_whitespace()
                        .count()
                });
                attrs.contains("stroke-width=\"2\"") && points >= 3
            })
        })
        .count();
    let texts = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split_once("</text>")?.0.trim().to_owned())
        })
        .collect();
    (lines, texts)
}

/// The repository's root (the bench crate's parent folder).
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A Cassandra cluster of a test's own (`doppio_test_support::cluster`, the library behind
/// `scripts/cassandra.sh`): its state in `state` (a folder of the repository), its first node
/// on 127.0.0.`first_ip`.
pub(crate) fn own_cluster(state: &str, first_ip: u8) -> doppio_test_support::cluster::Cluster {
    doppio_test_support::cluster::Cluster::new(repo_root().join(state), first_ip).unwrap()
}

/// Whether a cluster command succeeded; its error on stderr if not.
pub(crate) fn succeeded<T>(what: &str, result: doppio_test_support::cluster::Result<T>) -> bool {
    match result {
        Ok(_) => true,
        Err(e) => {
            eprintln!("{what}: {e}");
            false
        }
    }
}

/// Applies the CQL statements `cql` in order on `node` with `driver`, through `doppio schema`
/// of a workload that holds only them (written as `dir/name`); asserts that they succeed.
pub(crate) fn apply_cql(node: &str, driver: &str, dir: &Path, name: &str, cql: &[&str]) {
    let path = dir.join(name);
    let list: Vec<String> = cql.iter().map(|s| format!("{s:?}")).collect();
    std::fs::write(
        &path,
        format!(
            "[schema]\nstatements = [\n{}\n]\n\
             [[run]]\nstatement = \"SELECT now() FROM system.local\"\n",
            list.join(",\n")
        ),
    )
    .unwrap();
    let out = doppio(&[
        "schema",
        node,
        "--driver",
        driver,
        "-w",
        path.to_str().unwrap(),
        "-q",
    ]);
    assert!(out.status.success(), "{cql:?} on {node} by {driver}");
}

/// Drops `keyspace` on `node` (if it exists), so that a test starts from empty tables.
pub(crate) fn drop_keyspace(node: &str, dir: &Path, keyspace: &str) {
    let drop = format!("DROP KEYSPACE IF EXISTS {keyspace}");
    apply_cql(
        node,
        "doppio",
        dir,
        &format!("drop-{keyspace}.toml"),
        &[&drop],
    );
}
