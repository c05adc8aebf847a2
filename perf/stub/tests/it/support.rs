//! Helpers shared by the stub's test files: a stub with rules, and an executor of either
//! runtime to run a client on.

#![allow(clippy::unwrap_used)]
// tests: a panic is a failed test with its location

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStdout, Command, Stdio};

use doppio_driver::rt::Runtime;
use doppio_stub::{Rules, Shape, Stub, StubConfig, StubHandle};

/// A stub on `runtime`, on an ephemeral port with these TOML `rules` and result `shape`,
/// rules not logged.
pub(crate) fn stub(runtime: Runtime, rules: &str, shape: Shape) -> StubHandle {
    Stub::start(StubConfig {
        runtime,
        shape,
        rules: Rules::parse(rules).unwrap(),
        log_rules: false,
        ..StubConfig::default()
    })
    .unwrap()
}

/// Runs `f` on a fresh executor of `runtime`.
pub(crate) fn on_runtime<F, Fut>(runtime: Runtime, f: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    doppio_driver::rt::run_on(runtime, &format!("stub-test-{runtime}"), f).unwrap()
}

/// One `#[test]` per runtime for each named `fn name(runtime: Runtime)`.
pub(crate) use doppio_driver::rt::runtime_tests;

/// The `doppio-stub` binary, running, and what it said first.
pub(crate) struct StubProcess {
    /// The process.
    pub child: Child,
    /// Its standard output, past the first line.
    pub out: BufReader<ChildStdout>,
    /// Where its first line says it listens.
    pub addr: SocketAddr,
}

/// Starts the `doppio-stub` binary on `runtime` (on an ephemeral loopback port, unpinned)
/// with `args` added, and reads its first line, `listening on ADDR`.
pub(crate) fn spawn_binary(runtime: Runtime, args: &[&str]) -> StubProcess {
    let mut child = Command::new(env!("CARGO_BIN_EXE_doppio-stub"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--no-pin",
            "--runtime",
            runtime.name(),
        ])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr: SocketAddr = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .trim()
        .parse()
        .unwrap();
    StubProcess { child, out, addr }
}

/// Runs `f` with a scylla-rust-driver session to `addr` (its default builder) on a
/// current-thread tokio runtime.
pub(crate) fn on_scylla<F, Fut>(addr: SocketAddr, f: F)
where
    F: FnOnce(scylla::client::session::Session) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let s = scylla::client::session_builder::SessionBuilder::new()
            .known_node_addr(addr)
            .build()
            .await
            .unwrap();
        f(s).await;
    });
}
