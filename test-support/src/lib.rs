//! `doppio-test-support`: what the workspace's tests share (a dev-dependency only).
//!
//! Three concerns. First, **tests that need a real Cassandra**. Their files are named
//! `cassandra_*.rs` (in `driver/tests`, `bench/tests/it` and `protocol-tests/tests/it`), and
//! each such test first asks [`Node::answering`] for its node:
//! - the node answers: the test runs;
//! - it does not, outside CI: the test returns at once (counted as passed by libtest) after
//!   printing one `skipped:` line that names the node, the variable that sets its address
//!   and the script that starts it (printed straight to stderr, past libtest's capture);
//! - it does not, in CI (`CI` set, as `.ci/run` and CI services do): the test fails with
//!   the same sentence, since CI must run every test.
//!
//! The nodes are the four `scripts/test.sh` starts: [`CASSANDRA`], [`CASSANDRA_AUTH`],
//! [`CASSANDRA_CLUSTER`], [`CASSANDRA_TLS`]. Whether a node answers is asked once per test binary (a TCP
//! connect with a short timeout) and remembered, so that a test that stops a node of the
//! cluster does not make the tests after it skip.
//!
//! Second, **test binaries that hold many files' tests** (a crate's `tests/it/`):
//! [`file_turn`] runs one file's tests at a time, as when each file was its own binary.
//!
//! Third, **the local Cassandra clusters** ([`cluster`]): install, start, stop, kill, add and
//! decommission nodes, with TLS or authentication; `scripts/cassandra.sh` (`xtask cassandra`)
//! is its command line, and the tests that manage a cluster of their own call it directly.

use std::collections::HashMap;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::Duration;

pub mod cluster;
mod turn;
pub use turn::{file_turn, FileTurn};

/// A Cassandra node (or cluster, by its first node) that some tests need.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// What it is, for messages ("the Cassandra with authentication").
    pub what: &'static str,
    /// The environment variable with its `ADDR:PORT`.
    pub var: &'static str,
    /// Its address when the variable is not set.
    pub default: &'static str,
    /// The command that starts it.
    pub start: &'static str,
}

/// The single node most tests use (`scripts/cassandra.sh`).
pub const CASSANDRA: Node = Node {
    what: "the Cassandra",
    var: "DOPPIO_CASSANDRA",
    default: "127.0.0.1:9042",
    start: "scripts/cassandra.sh start",
};

/// The node with PasswordAuthenticator, user cassandra / cassandra (`scripts/cassandra-auth.sh`).
pub const CASSANDRA_AUTH: Node = Node {
    what: "the Cassandra with authentication",
    var: "DOPPIO_CASSANDRA_AUTH",
    default: "127.0.0.11:9042",
    start: "scripts/cassandra-auth.sh start",
};

/// The three-node cluster, by its first node (`scripts/cassandra-cluster.sh`: .21-.23).
pub const CASSANDRA_CLUSTER: Node = Node {
    what: "the three-node Cassandra cluster",
    var: "DOPPIO_CLUSTER",
    default: "127.0.0.21:9042",
    start: "scripts/cassandra-cluster.sh start",
};

/// The node whose native port speaks TLS only (`scripts/cassandra-tls.sh`); the CA its
/// certificate chains to is [`cassandra_tls_ca`].
pub const CASSANDRA_TLS: Node = Node {
    what: "the Cassandra with TLS",
    var: "DOPPIO_CASSANDRA_TLS",
    default: "127.0.0.41:9042",
    start: "scripts/cassandra-tls.sh start",
};

/// The CA file of [`CASSANDRA_TLS`]: `DOPPIO_CASSANDRA_TLS_CA`, or the one
/// `scripts/cassandra-tls.sh` makes (`.cassandra-tls/tls/ca.pem` in the repository).
pub fn cassandra_tls_ca() -> std::path::PathBuf {
    std::env::var_os("DOPPIO_CASSANDRA_TLS_CA").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cassandra-tls/tls/ca.pem"),
        std::path::PathBuf::from,
    )
}

/// How long the probe waits for a TCP connection.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether each address answered, asked once per process.
static ANSWERED: Mutex<Option<HashMap<SocketAddr, bool>>> = Mutex::new(None);

impl Node {
    /// Its address: the variable's value, or the default. Panics with a clear message on a
    /// value that is not `ADDR:PORT` (a mistake in the test setup, not a missing node).
    pub fn addr(&self) -> SocketAddr {
        let text = std::env::var(self.var).unwrap_or_else(|_| self.default.to_owned());
        text.parse()
            .unwrap_or_else(|e| panic!("{}={text:?} is not an ADDR:PORT: {e}", self.var))
    }

    /// Its address if it answers. If it does not: in CI a panic (the calling test fails),
    /// elsewhere `None` after one `skipped:` line on stderr; the caller then returns.
    pub fn answering(&self) -> Option<SocketAddr> {
        let addr = self.addr();
        if answers(addr) {
            return Some(addr);
        }
        let why = format!(
            "no answer from {} at {addr} (`{}`; start it with `{}`, or run scripts/test.sh, \
             which starts every node the tests use)",
            self.what, self.var, self.start
        );
        if in_ci() {
            panic!("{why}; CI is set, so a Cassandra test may not be skipped");
        }
        let test = std::thread::current()
            .name()
            .map_or_else(|| "a test".to_owned(), |n| format!("test {n}"));
        // Straight to stderr: libtest captures print! and eprint!, not the stream itself, and
        // a skip must be seen.
        let _ = writeln!(std::io::stderr().lock(), "skipped: {test}: {why}");
        None
    }
}

/// Whether a TCP connection to `addr` opens (asked once per address per process).
fn answers(addr: SocketAddr) -> bool {
    let mut known = ANSWERED.lock().unwrap_or_else(|p| p.into_inner());
    *known
        .get_or_insert_with(HashMap::new)
        .entry(addr)
        .or_insert_with(|| TcpStream::connect_timeout(&addr, PROBE_TIMEOUT).is_ok())
}

/// True when running in CI: `CI` is set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_that_does_not_answer_is_skipped_outside_ci_and_fails_in_ci() {
        // Port 1 on loopback: refused at once.
        let nobody = Node {
            what: "a test node",
            var: "DOPPIO_TEST_SUPPORT_NOBODY",
            default: "127.0.0.1:1",
            start: "nothing",
        };
        if in_ci() {
            assert!(std::panic::catch_unwind(|| nobody.answering()).is_err());
        } else {
            assert_eq!(nobody.answering(), None);
        }
    }

    #[test]
    fn a_listening_address_answers() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        assert!(answers(addr));
    }
}
