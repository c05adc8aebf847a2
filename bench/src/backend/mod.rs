//! The backends behind one interface: doppio (one shard per core, on glommio or on doppio's
//! own io_uring runtime, the latter also in SQPOLL mode: the same driver on two event loops)
//! and scylla-rust-driver (a tokio runtime), and the null backend (no driver: the engine's own
//! floor). The engine ([`crate::engine`]) runs the same workload on any, and drives a phase
//! on one ([`crate::engine::drive`]) through the [`PhaseRunner`] each backend implements;
//! this folder holds only that interface ([`Backend`]) and its adapters.
//!
//! Children: [`doppio`] (doppio on glommio or on its own io_uring runtime, one shard per
//! core) and [`scylla`] (scylla-rust-driver on a tokio runtime); each maps the bench's
//! neutral types (consistency, values, outcomes) to its driver's. [`null`]: requests that
//! complete at once without I/O, on doppio's io_uring runtime (what the engine itself costs
//! per request). [`settings`]: the driver
//! settings both take (serial consistency, compression, retry backoff, data center and
//! rack), and the refusal of one a backend cannot honour.
//!
//! Fairness of cores: every backend's threads that do request work are pinned to the same
//! cores, [`ConnectOptions::pinned_cores`] (0..threads), unless `--no-pin`.

pub mod doppio;
pub mod null;
pub mod scylla;
pub mod settings;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::phase::{BackendError, PhaseRunner};
pub use settings::{
    Compression, Locality, RetryBackoff, SerialConsistency, SettingError, TlsOptions,
};

/// Which driver runs the workload.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Driver {
    /// doppio on glommio.
    #[serde(rename = "doppio")]
    Doppio,
    /// doppio on its own io_uring runtime.
    #[serde(rename = "doppio-uring")]
    DoppioUring,
    /// doppio on its own io_uring runtime in SQPOLL mode (a kernel thread per shard takes
    /// the submissions; see [`SqPollOptions`]).
    #[serde(rename = "doppio-uring-sqpoll")]
    DoppioUringSqpoll,
    /// scylla-rust-driver on tokio.
    #[serde(rename = "scylla")]
    Scylla,
    /// No driver: requests complete at once without I/O (the engine's own cost).
    #[serde(rename = "null")]
    Null,
}

impl Driver {
    /// Its name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Doppio => "doppio",
            Driver::DoppioUring => "doppio-uring",
            Driver::DoppioUringSqpoll => "doppio-uring-sqpoll",
            Driver::Scylla => "scylla",
            Driver::Null => "null",
        }
    }

    /// Parses `doppio`, `doppio-uring`, `doppio-uring-sqpoll`, `scylla` or `null`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "doppio" => Ok(Driver::Doppio),
            "doppio-uring" => Ok(Driver::DoppioUring),
            "doppio-uring-sqpoll" => Ok(Driver::DoppioUringSqpoll),
            "scylla" => Ok(Driver::Scylla),
            "null" => Ok(Driver::Null),
            other => Err(format!(
                "unknown driver `{other}` (doppio, doppio-uring, doppio-uring-sqpoll, scylla \
                 or null)"
            )),
        }
    }
}

/// The SQPOLL mode of `doppio-uring-sqpoll` (`--sqpoll-idle`, `--sqpoll-cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SqPollOptions {
    /// How long each shard's kernel submission thread polls an empty queue before it
    /// sleeps.
    pub idle: Duration,
    /// The core those threads are pinned to (`None`: the kernel places them on any online
    /// core).
    pub cpu: Option<u32>,
}

/// A consistency level, parsed once for every backend (each maps it to its driver's type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Consistency {
    /// `ANY`.
    Any,
    /// `ONE`.
    One,
    /// `TWO`.
    Two,
    /// `THREE`.
    Three,
    /// `QUORUM`.
    Quorum,
    /// `ALL`.
    All,
    /// `LOCAL_QUORUM`.
    LocalQuorum,
    /// `EACH_QUORUM`.
    EachQuorum,
    /// `LOCAL_ONE`.
    LocalOne,
}

impl Consistency {
    /// Every level, in the order the protocol numbers them.
    pub const ALL: [Consistency; 9] = [
        Consistency::Any,
        Consistency::One,
        Consistency::Two,
        Consistency::Three,
        Consistency::Quorum,
        Consistency::All,
        Consistency::LocalQuorum,
        Consistency::EachQuorum,
        Consistency::LocalOne,
    ];

    /// Its name as CQL spells it (`LOCAL_ONE`).
    pub fn name(self) -> &'static str {
        match self {
            Consistency::Any => "ANY",
            Consistency::One => "ONE",
            Consistency::Two => "TWO",
            Consistency::Three => "THREE",
            Consistency::Quorum => "QUORUM",
            Consistency::All => "ALL",
            Consistency::LocalQuorum => "LOCAL_QUORUM",
            Consistency::EachQuorum => "EACH_QUORUM",
            Consistency::LocalOne => "LOCAL_ONE",
        }
    }

    /// Parses a name in any case (`local_one`, `LOCAL_ONE`).
    pub fn parse(name: &str) -> Result<Self, UnknownConsistency> {
        let wanted = name.trim().to_ascii_uppercase();
        Self::ALL
            .into_iter()
            .find(|c| c.name() == wanted)
            .ok_or_else(|| UnknownConsistency(name.to_owned()))
    }
}

/// A consistency level's name that is none of [`Consistency::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown consistency `{0}` ({names})", names = Consistency::ALL.map(Consistency::name).join(", "))]
pub struct UnknownConsistency(pub String);

/// How to connect, shared by both backends.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ConnectOptions {
    /// Nodes to connect to.
    pub nodes: Vec<SocketAddr>,
    /// Worker threads (doppio: shards, one per core; scylla: tokio worker threads).
    pub threads: usize,
    /// Connections per node (doppio: per shard; scylla: per node, its pool size).
    pub connections: usize,
    /// Consistency level.
    pub consistency: Consistency,
    /// Request timeout.
    pub request_timeout: Duration,
    /// Retries per request on errors the retry policy allows.
    pub retries: u32,
    /// Compression of frame bodies.
    pub compression: Compression,
    /// User name, if the cluster wants credentials.
    pub username: Option<String>,
    /// Password (never written to reports).
    #[serde(skip)]
    pub password: Option<crate::secret::Secret>,
    /// Pin every backend's threads that do request work to cores 0..threads (doppio's
    /// shards, scylla's tokio workers and bench workers).
    pub pin: bool,
    /// doppio: spin this long before parking an idle shard.
    pub spin_before_park: Option<Duration>,
    /// Rows per result page, the same for every backend (a longer result is paged through).
    pub page_size: i32,
    /// Neither iterate nor decode result rows: only count them (protocol-overhead studies).
    pub discard_results: bool,
    /// Serial consistency sent with every request.
    pub serial_consistency: SerialConsistency,
    /// Local data center and preferred rack of the load-balancing policy.
    pub locality: Locality,
    /// Delay before each retry (`None`: each driver retries at once).
    pub retry_backoff: Option<RetryBackoff>,
    /// The CQL protocol version asked for (4 or 5; `None`: each backend's newest the node
    /// offers).
    pub protocol: Option<u8>,
    /// TLS to the nodes (`None`: plaintext).
    pub tls: Option<TlsOptions>,
    /// The SQPOLL mode of `doppio-uring-sqpoll` (the other backends ignore it).
    pub sqpoll: SqPollOptions,
}

impl ConnectOptions {
    /// The core of each worker, in worker order: 0..threads (doppio runs one shard per
    /// entry, pinned or not).
    pub fn worker_cores(&self) -> Vec<usize> {
        (0..self.threads.max(1)).collect()
    }

    /// The cores every backend pins its request threads to: [`Self::worker_cores`], or none
    /// with `--no-pin`.
    pub fn pinned_cores(&self) -> Vec<usize> {
        if self.pin {
            self.worker_cores()
        } else {
            Vec::new()
        }
    }
}

/// Refuses the settings `driver` cannot honour (before anything connects), naming the
/// backend and the option.
pub fn check_settings(driver: Driver, options: &ConnectOptions) -> Result<(), SettingError> {
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => {
            doppio::check_settings(driver, options)
        }
        Driver::Scylla => scylla::check_settings(options),
        // Nothing is sent: every driver setting is moot, none is refused.
        Driver::Null => Ok(()),
    }
}

/// The newest CQL protocol version `driver` speaks (`None`: it speaks none, the null
/// backend).
pub fn newest_protocol(driver: Driver) -> Option<u8> {
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => Some(5),
        Driver::Scylla => Some(4),
        Driver::Null => None,
    }
}

/// The version a run of `drivers` pins when `--protocol` is not given: the newest that all
/// of them speak when they differ (v4 when scylla-rust-driver is among them), so that every
/// backend of a comparison does the same framing work; `None` (each backend negotiates the
/// newest the node offers) when they agree.
pub fn common_protocol(drivers: &[Driver]) -> Option<u8> {
    let newest = drivers.iter().filter_map(|&d| newest_protocol(d));
    let (oldest, most) = (newest.clone().min()?, newest.max()?);
    (oldest < most).then_some(oldest)
}

/// The page size of commands without `--page-size` (`schema`, `load`), and its default.
pub const DEFAULT_PAGE_SIZE: i32 = 5000;

/// Driver-side counters of a backend (doppio only: scylla-rust-driver does not expose them).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DriverCounters {
    /// Requests written.
    pub requests: u64,
    /// Flushes (one write of coalesced frames each).
    pub flushes: u64,
    /// Reads from the sockets.
    pub reads: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Retries the retry policy asked for (each request counted once however many).
    #[serde(default)]
    pub retries: u64,
    /// Statements prepared again on a node that had forgotten them (UNPREPARED).
    #[serde(default)]
    pub reprepares: u64,
    /// Requests sent to each node (address), retries and speculative ones included.
    #[serde(default)]
    pub nodes: BTreeMap<String, u64>,
    /// Requests sent to each ScyllaDB shard of each node (address: one count per shard),
    /// from the driver's per-connection counters grouped by the shard each connection
    /// landed on; empty for nodes without ScyllaDB shards (Cassandra).
    #[serde(default)]
    pub scylla_shards: BTreeMap<String, Vec<u64>>,
    /// doppio on its own io_uring runtime: its shards' `io_uring_enter` calls by reason
    /// (`None` on glommio).
    #[serde(default)]
    pub uring_enters: Option<UringEnters>,
}

/// `io_uring_enter` calls of doppio's own runtime (every shard), by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UringEnters {
    /// Every enter (at most one per loop turn).
    pub total: u64,
    /// Enters that waited: the shard had nothing to run (or, under SQPOLL, waited for room
    /// in a full submission queue).
    pub waiting: u64,
    /// Enters that woke the SQPOLL thread (it slept with submissions queued); a waiting
    /// enter may carry it too.
    pub sq_wakeup: u64,
    /// Enters that did not wait, made to flush a completion-queue overflow.
    pub cq_overflow: u64,
}

impl UringEnters {
    /// What was counted from `before` to `self`.
    pub fn since(&self, before: &UringEnters) -> UringEnters {
        UringEnters {
            total: self.total.saturating_sub(before.total),
            waiting: self.waiting.saturating_sub(before.waiting),
            sq_wakeup: self.sq_wakeup.saturating_sub(before.sq_wakeup),
            cq_overflow: self.cq_overflow.saturating_sub(before.cq_overflow),
        }
    }

    /// Both counts added.
    pub fn plus(&self, o: &UringEnters) -> UringEnters {
        UringEnters {
            total: self.total + o.total,
            waiting: self.waiting + o.waiting,
            sq_wakeup: self.sq_wakeup + o.sq_wakeup,
            cq_overflow: self.cq_overflow + o.cq_overflow,
        }
    }
}

/// Adds `counts` to `total` element by element (growing it as needed).
pub fn add_counts(total: &mut Vec<u64>, counts: &[u64]) {
    if total.len() < counts.len() {
        total.resize(counts.len(), 0);
    }
    for (t, n) in total.iter_mut().zip(counts) {
        *t += n;
    }
}

/// A connected backend.
/// What the engine needs to run a phase on it ([`PhaseRunner`]: its workers, preparing and
/// running a phase) comes with it.
pub trait Backend: PhaseRunner {
    /// Which driver.
    fn driver(&self) -> Driver;
    /// Runs statements one after another (schema), failing on the first error.
    fn execute_all(&self, statements: &[String]) -> Result<(), BackendError>;
    /// Driver-side counters so far, if the driver has them.
    fn counters(&self) -> Option<DriverCounters>;
    /// The cores this backend's request threads are pinned to (empty: not pinned).
    fn thread_cores(&self) -> Vec<usize>;
    /// The CQL protocol version the backend's connections speak, if known.
    fn protocol_version(&self) -> Option<u8>;
    /// The io_uring setup flags of doppio's own runtime's rings (`SQPOLL|SINGLE_ISSUER|...`);
    /// `None` for other event loops.
    fn uring_setup_flags(&self) -> Option<String> {
        None
    }
    /// Closes connections and stops threads.
    fn shutdown(&self);
}

/// Connects the chosen backend.
pub fn connect(driver: Driver, options: &ConnectOptions) -> Result<Arc<dyn Backend>, BackendError> {
    // The engine's clock calibrates once per process (up to 200 ms): here, before any phase
    // is measured.
    crate::engine::clock::calibrate();
    match driver {
        Driver::Doppio | Driver::DoppioUring | Driver::DoppioUringSqpoll => {
            Ok(Arc::new(doppio::DoppioBackend::connect(options, driver)?))
        }
        Driver::Scylla => Ok(Arc::new(scylla::ScyllaBackend::connect(options)?)),
        Driver::Null => Ok(Arc::new(null::NullBackend::connect(options)?)),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn backends_compared_in_one_run_speak_the_newest_protocol_they_all_speak() {
        use Driver::*;
        assert_eq!(common_protocol(&[Doppio, DoppioUring, Scylla]), Some(4));
        assert_eq!(common_protocol(&[DoppioUring, Scylla]), Some(4));
        assert_eq!(common_protocol(&[Doppio, DoppioUring]), None);
        assert_eq!(common_protocol(&[Scylla]), None);
        assert_eq!(common_protocol(&[]), None);
        // The null backend speaks no protocol: it changes nothing.
        assert_eq!(common_protocol(&[Null, Scylla, Doppio]), Some(4));
        assert_eq!(common_protocol(&[Null, Doppio]), None);
    }

    /// Connection options for tests: one unpinned thread, every setting at its default.
    pub(crate) fn options() -> ConnectOptions {
        ConnectOptions {
            nodes: vec![SocketAddr::from(([127, 0, 0, 1], 9042))],
            threads: 1,
            connections: 1,
            consistency: Consistency::LocalOne,
            request_timeout: Duration::from_secs(5),
            retries: 0,
            compression: Compression::None,
            username: None,
            password: None,
            pin: false,
            spin_before_park: None,
            page_size: DEFAULT_PAGE_SIZE,
            discard_results: false,
            serial_consistency: SerialConsistency::LocalSerial,
            locality: Locality::default(),
            retry_backoff: None,
            protocol: None,
            tls: None,
            sqpoll: SqPollOptions {
                idle: crate::cli::DEFAULT_SQPOLL_IDLE,
                cpu: None,
            },
        }
    }

    #[test]
    fn consistency_names_parse_in_any_case_and_round_trip() {
        for c in Consistency::ALL {
            assert_eq!(Consistency::parse(c.name()), Ok(c));
            assert_eq!(Consistency::parse(&c.name().to_ascii_lowercase()), Ok(c));
        }
        assert_eq!(Consistency::parse(" local_one "), Ok(Consistency::LocalOne));
        let e = Consistency::parse("SOME").unwrap_err().to_string();
        assert!(
            e.contains("unknown consistency `SOME`") && e.contains("LOCAL_QUORUM"),
            "{e}"
        );
    }
}
