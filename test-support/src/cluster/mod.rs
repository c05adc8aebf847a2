//! A local Apache Cassandra 5.0 cluster from Maven Central jars (no Docker, no tarball), as
//! `scripts/cassandra.sh` (`xtask cassandra`) and the tests that manage a cluster of their own
//! run it.
//!
//! Nodes listen on 127.0.0.K, 127.0.0.(K+1), ... (K from 1 to 99) with the usual ports (CQL
//! 9042, storage 7000, JMX 7200 + the last octet); a cluster's state (yaml, data, logs, pid
//! files) lives in one folder, the jars in `$DOPPIO_CACHE`. Java, Maven, openssl, setsid and
//! nodetool are run as outside programs.
//!
//! Files: `layout` (settings and paths), `install` (Java, Maven, the jars), `config`
//! (cassandra.yaml), `tls` (CA and certificates), `tokens` (Murmur3 arithmetic), `process`
//! (launch, wait, stop), `gossip` (who sees whom), `lifecycle` (start, add, decommission),
//! `manage` (stop, kill, pause, resume, status, nodetool, logs, wipe), `programs` (outside programs, log
//! lines), `error`.

mod config;
mod error;
mod gossip;
mod install;
mod layout;
mod lifecycle;
mod manage;
mod process;
mod programs;
mod tls;
mod tokens;

pub use error::{Error, Result};
pub use layout::{Cluster, CASSANDRA_VERSION, CQL_PORT};
pub use lifecycle::{Add, Start};

/// Prints one `[cassandra.sh]` line on stderr, as the cluster control's own messages are.
pub fn log(message: &str) {
    programs::log(message);
}
