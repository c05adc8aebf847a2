//! How to connect, shared by every backend ([`ConnectOptions`]): the nodes, threads and
//! connections, the consistency level ([`Consistency`]), the SQPOLL mode of
//! `doppio-uring-sqpoll` ([`SqPollOptions`]) and the other settings each backend maps to its
//! driver's.

use std::net::SocketAddr;
use std::time::Duration;

use super::settings::{Compression, Locality, RetryBackoff, SerialConsistency, TlsOptions};

/// The SQPOLL mode of `doppio-uring-sqpoll` (`--sqpoll-idle`, `--sqpoll-cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SqPollOptions {
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
pub(crate) enum Consistency {
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
    pub(crate) const ALL: [Consistency; 9] = [
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
    pub(crate) fn name(self) -> &'static str {
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
    pub(crate) fn parse(name: &str) -> Result<Self, UnknownConsistency> {
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
pub(crate) struct UnknownConsistency(pub String);

/// How to connect, shared by both backends.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct ConnectOptions {
    /// Nodes to connect to.
    pub nodes: Vec<SocketAddr>,
    /// Worker threads (doppio: shards, one per core; scylla: tokio worker threads).
    pub threads: usize,
    /// Connections per node, per ScyllaDB shard on a ScyllaDB node, per thread (doppio: in
    /// each doppio shard's pool; scylla: its one pool holds `connections * threads`,
    /// `PoolSize::PerShard`).
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
    /// doppio-uring: how an idle shard waits (timer slack, batched wait).
    pub uring_wait: UringWait,
    /// Rows per result page, the same for every backend (a longer result is paged through).
    pub page_size: i32,
    /// Neither iterate nor decode result rows: only count them (protocol-overhead studies).
    pub discard_results: bool,
    /// `--waterfall N`: doppio times one request in N stage by stage (`None`: none).
    pub waterfall_every: Option<u64>,
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
    pub(crate) fn worker_cores(&self) -> Vec<usize> {
        (0..self.threads.max(1)).collect()
    }

    /// The cores every backend pins its request threads to: [`Self::worker_cores`], or none
    /// with `--no-pin`.
    pub(crate) fn pinned_cores(&self) -> Vec<usize> {
        if self.pin {
            self.worker_cores()
        } else {
            Vec::new()
        }
    }
}

/// The page size of commands without `--page-size` (`schema`, `load`), and its default.
pub(crate) const DEFAULT_PAGE_SIZE: i32 = 5000;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

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
            uring_wait: UringWait::default(),
            page_size: DEFAULT_PAGE_SIZE,
            discard_results: false,
            waterfall_every: None,
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

/// How an idle shard of doppio's own runtime waits (`--timer-slack`, `--batch-wait`,
/// `--user-batch-wait`); `None`: the runtime's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct UringWait {
    /// The timer slack.
    pub timer_slack: Option<Duration>,
    /// The batched wait (zero: off).
    pub batch_wait: Option<Duration>,
    /// The batched wait in user space even where the kernel has a minimum wait.
    pub user_space: bool,
}

impl UringWait {
    /// `config` with these settings.
    pub(crate) fn applied_to(
        &self,
        config: doppio_driver::rt::uring::Config,
    ) -> doppio_driver::rt::uring::Config {
        doppio_driver::rt::uring::Config {
            timer_slack: self.timer_slack.unwrap_or(config.timer_slack),
            batch_wait: self.batch_wait.unwrap_or(config.batch_wait),
            kernel_min_wait: config.kernel_min_wait && !self.user_space,
            ..config
        }
    }
}
