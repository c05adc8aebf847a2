//! Where and how to connect, and which workload ([`Connect`], every subcommand that talks to
//! a node): its options, the SQPOLL options' parsers, and the checks made once clap has
//! parsed them ([`ConnectError`]).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use clap::Args as ClapArgs;

use crate::backend::{
    Compression, Consistency, Driver, RetryBackoff, SerialConsistency, SqPollOptions, UnknownDriver,
};
use crate::secret::Secret;
use crate::units;

use super::duration::parse_duration;
use super::limits;

/// Where and how to connect, and which workload.
#[derive(Debug, Clone, ClapArgs)]
pub struct Connect {
    /// Node addresses (host or host:port; default 127.0.0.1:9042).
    #[arg(value_name = "NODE")]
    pub(crate) nodes: Vec<String>,
    /// Workload: a built-in (read, write, mixed, empty, timeseries, widerow) or a TOML file.
    #[arg(short = 'w', long, default_value = "read")]
    pub(crate) workload: String,
    /// A cassandra-stress user profile (YAML) to run instead of `-w`, converted in memory as
    /// `doppio profile convert` prints it; its parameters (`population`, `ops_NAME`) take
    /// `-P` (bench/PROFILES.md). Several, comma-separated, run together (`a.yaml,b.yaml`:
    /// weights `ops_SPECNAME_OP`).
    #[arg(long, value_name = "PROFILE.yaml", conflicts_with = "workload")]
    pub(crate) profile: Option<String>,
    /// Workload parameter overrides, NAME=VALUE (repeatable).
    #[arg(short = 'P', long = "param", value_name = "NAME=VALUE")]
    pub(crate) params: Vec<String>,
    /// Driver(s): doppio (glommio), doppio-uring (doppio's own io_uring runtime),
    /// doppio-uring-sqpoll (the same in SQPOLL mode: a kernel thread per shard takes the
    /// submissions, see --sqpoll-idle and --sqpoll-cpu), scylla, or a list such as
    /// doppio,doppio-uring,scylla to run them alternately (`run`, `curve`; `findmax` searches
    /// each). `null` is no driver: requests complete at once without I/O on doppio's io_uring
    /// runtime, so the report's OVERHEAD is the bench engine's own cost per request (its
    /// floor; nodes are ignored, no rows are returned; see bench/REPORT.md).
    #[arg(long, default_value = "doppio")]
    pub(crate) driver: String,
    /// Threads: doppio shards (one per core) or tokio worker threads (1 to 1024).
    #[arg(short = 't', long, default_value_t = 1, value_parser = limits::threads)]
    pub(crate) threads: usize,
    /// Connections per node (per ScyllaDB shard on a ScyllaDB node) per thread, 1 to 256:
    /// each doppio shard holds its own; scylla's one pool holds -c times -t, so that every
    /// backend holds the same connections (CONFIG counts them).
    #[arg(short = 'c', long, default_value_t = 1, value_parser = limits::connections)]
    pub(crate) connections: usize,
    /// Consistency level.
    #[arg(long, default_value = "LOCAL_ONE", value_parser = Consistency::parse)]
    pub(crate) consistency: Consistency,
    /// Request timeout (1ms to 1h).
    #[arg(long, default_value = "5s", value_parser = limits::request_timeout)]
    pub(crate) timeout: Duration,
    /// Stop (exit code 1, report still written) when for this long no request succeeded and
    /// every failure was a lost connection: the node went away. 0s never stops.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub(crate) max_outage: Duration,
    /// Retries per request on errors that allow it (0: none; at most 100); every backend
    /// makes doppio's retry decisions.
    #[arg(long, default_value_t = 0, value_parser = limits::retries)]
    pub(crate) retries: u32,
    /// Compression of frame bodies: lz4 or none (every backend).
    #[arg(long, default_value = "none", value_name = "lz4|none", value_parser = Compression::parse)]
    pub(crate) compression: Compression,
    /// User name (PasswordAuthenticator).
    #[arg(long)]
    pub(crate) user: Option<String>,
    /// Password (or DOPPIO_PASSWORD); never written to reports.
    #[arg(long, env = "DOPPIO_PASSWORD", hide_env_values = true)]
    pub(crate) password: Option<Secret>,
    /// Do not pin the threads that do request work to cores 0..threads (doppio's shards,
    /// scylla's tokio workers and bench workers: every backend).
    #[arg(long)]
    pub(crate) no_pin: bool,
    /// doppio: let an idle shard spin this long (e.g. 50us) before it parks, trading CPU
    /// time for fewer io_uring_enter calls.
    #[arg(long, value_parser = parse_duration)]
    pub(crate) spin: Option<Duration>,
    /// doppio-uring: how late a shard's timer may fire so that timers due close together fire
    /// in one wake-up (never early); 0 to 100ms. Default: the runtime's (50us).
    #[arg(long, value_name = "DURATION", value_parser = limits::timer_slack)]
    pub(crate) timer_slack: Option<Duration>,
    /// doppio-uring: with several answers awaited, an idle shard waits for all of them at most
    /// this long, then wakes at the first (answers that trickle in are served several per
    /// wake-up, each at most this late); 0 (off) to 10ms. Default: the runtime's.
    #[arg(long, value_name = "DURATION", value_parser = limits::batch_wait)]
    pub(crate) batch_wait: Option<Duration>,
    /// doppio-uring: do the batched wait in user space (two waits where the kernel's minimum
    /// wait needs one), as on a kernel before Linux 6.12, even where the kernel has it.
    #[arg(long)]
    pub(crate) user_batch_wait: bool,
    /// doppio-uring-sqpoll: how long each shard's kernel submission thread polls an empty
    /// queue before it sleeps (whole milliseconds, 1ms to 10s; default 10ms). While it polls
    /// it uses a whole core; its CPU time is counted in the client's and shown on its own.
    #[arg(long, value_name = "DURATION", value_parser = parse_sqpoll_idle)]
    pub(crate) sqpoll_idle: Option<Duration>,
    /// doppio-uring-sqpoll: the core its kernel submission threads are pinned to, or `none`
    /// (the kernel places them on any core). Default: the first core after the shards'
    /// (0..threads), when the machine has one, else none. Every shard's thread goes there.
    #[arg(long, value_name = "CORE|none", value_parser = parse_sqpoll_cpu)]
    pub(crate) sqpoll_cpu: Option<SqPollCpu>,
    /// No progress output on stderr.
    #[arg(short = 'q', long)]
    pub(crate) quiet: bool,
    /// When stderr is not a terminal: a progress line this often (of phase time; at least
    /// 100ms).
    #[arg(long, default_value = "10s", value_parser = limits::progress_every, value_name = "DURATION")]
    pub(crate) progress_every: Duration,
    /// Serial consistency of conditional statements, sent by every backend.
    #[arg(long, default_value = "LOCAL_SERIAL", value_name = "SERIAL|LOCAL_SERIAL",
          value_parser = SerialConsistency::parse)]
    pub(crate) serial_consistency: SerialConsistency,
    /// The local data center of every backend's load-balancing policy (default: doppio
    /// the contact point's, scylla none preferred).
    #[arg(long, value_name = "DC")]
    pub(crate) datacenter: Option<String>,
    /// A rack to prefer within --datacenter (scylla only: doppio refuses it).
    #[arg(long, value_name = "RACK")]
    pub(crate) rack: Option<String>,
    /// Delay before each retry: exponential from BASE up to CAP (default BASE), full jitter.
    /// doppio only: scylla-rust-driver cannot delay a retry and refuses it.
    #[arg(long, value_name = "BASE[,CAP]", value_parser = RetryBackoff::parse)]
    pub(crate) retry_backoff: Option<RetryBackoff>,
    /// The CQL protocol version: 4 or 5 (default: backends compared in one run speak the
    /// newest all of them speak, so v4 when scylla-rust-driver, which speaks v4 only and
    /// refuses 5, is among them; a backend alone speaks the newest the node offers: doppio
    /// v5 with Cassandra 4.0+ and the stub).
    #[arg(long, value_name = "4|5", value_parser = clap::value_parser!(u8).range(4..=5))]
    pub(crate) protocol: Option<u8>,
    /// A workload given as TOML text rather than by name (`doppio stress` writes the one
    /// of cassandra-stress's legacy commands); not an option of the command line.
    #[arg(skip)]
    pub(crate) inline_workload: Option<InlineWorkload>,
    /// Speak TLS to the nodes (every backend; rustls with the ring provider). Needs --ca.
    #[arg(long, requires = "ca")]
    pub(crate) tls: bool,
    /// With --tls: the PEM file of the CA(s) the nodes' certificates must chain to.
    #[arg(long, value_name = "FILE", requires = "tls")]
    pub(crate) ca: Option<std::path::PathBuf>,
    /// With --tls: a client certificate chain (PEM) to show nodes that require one; needs
    /// --key.
    #[arg(long, value_name = "FILE", requires_all = ["tls", "key"])]
    pub(crate) cert: Option<std::path::PathBuf>,
    /// With --tls: the private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires_all = ["tls", "cert"])]
    pub(crate) key: Option<std::path::PathBuf>,
    /// With --tls: the name the nodes' certificates must carry (default: each node's IP
    /// address). doppio only: scylla-rust-driver always checks the IP address and refuses it.
    #[arg(long, value_name = "NAME", requires = "tls")]
    pub(crate) tls_server_name: Option<String>,
}

/// A workload as TOML text, with the name errors give it (`doppio stress`'s legacy commands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InlineWorkload {
    /// Its origin in errors, e.g. `stress-write`.
    pub(crate) name: String,
    /// The TOML.
    pub(crate) toml: String,
}

impl Connect {
    /// The TLS options, if `--tls` was given.
    pub(crate) fn tls_options(&self) -> Option<crate::backend::TlsOptions> {
        let ca = self.ca.clone().filter(|_| self.tls)?;
        Some(crate::backend::TlsOptions {
            ca,
            client_cert: self.cert.clone().zip(self.key.clone()),
            server_name: self.tls_server_name.clone(),
        })
    }
}

/// The default of `--sqpoll-idle`.
pub(crate) const DEFAULT_SQPOLL_IDLE: Duration = Duration::from_millis(10);

/// `--sqpoll-idle`: a duration the kernel takes as an SQPOLL idle time (whole milliseconds,
/// 1 ms to 10 s).
pub(crate) fn parse_sqpoll_idle(text: &str) -> Result<Duration, limits::OptionError> {
    let idle = units::duration(text)?;
    doppio_driver::rt::uring::SqPoll { idle, cpu: None }
        .validate()
        .map_err(|_| limits::OptionError::SqPollIdle {
            max_secs: doppio_driver::rt::uring::SqPoll::MAX_IDLE.as_secs(),
        })?;
    Ok(idle)
}

/// `--sqpoll-cpu`: a core, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SqPollCpu {
    /// Pinned to this core.
    Core(u32),
    /// Not pinned.
    None,
}

/// Parses `--sqpoll-cpu`: a core number or `none`.
pub(crate) fn parse_sqpoll_cpu(text: &str) -> Result<SqPollCpu, limits::OptionError> {
    match text.trim() {
        "none" => Ok(SqPollCpu::None),
        t => t
            .parse()
            .map(SqPollCpu::Core)
            .map_err(|_| limits::OptionError::NotACore {
                text: text.to_owned(),
            }),
    }
}

/// The number of online cores (not the cores this process may run on: the kernel's
/// submission thread is not bound by the bench's own pinning).
pub(crate) fn online_cores() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(1)
}

impl Connect {
    /// Whether the threads `-t` asks for can be pinned as they will be (to cores
    /// 0..threads, unless `--no-pin`): every one of those cores online. Refused before
    /// anything starts; otherwise a shard's executor would fail to start on the missing core.
    pub(crate) fn check_pinning(&self) -> Result<(), ConnectError> {
        let cores = online_cores();
        if !self.no_pin && self.threads > cores {
            return Err(ConnectError::TooManyPinnedThreads {
                threads: self.threads,
                cores,
            });
        }
        Ok(())
    }

    /// The SQPOLL mode `--sqpoll-idle` and `--sqpoll-cpu` ask for (defaults resolved), checked
    /// against `drivers`: either option without `doppio-uring-sqpoll` among them, or a core
    /// the machine does not have online, is refused before anything starts.
    pub(crate) fn sqpoll_options(&self, drivers: &[Driver]) -> Result<SqPollOptions, ConnectError> {
        let sqpoll = drivers.contains(&Driver::DoppioUringSqpoll);
        if !sqpoll && (self.sqpoll_idle.is_some() || self.sqpoll_cpu.is_some()) {
            return Err(ConnectError::SqPollWithoutDriver);
        }
        let cores = online_cores();
        let cpu = match self.sqpoll_cpu {
            Some(SqPollCpu::Core(c)) if c as usize >= cores => {
                return Err(ConnectError::SqPollCpuOffline {
                    core: c,
                    last: cores - 1,
                })
            }
            Some(SqPollCpu::Core(c)) => Some(c),
            Some(SqPollCpu::None) => None,
            None => u32::try_from(self.threads.max(1))
                .ok()
                .filter(|&c| (c as usize) < cores),
        };
        Ok(SqPollOptions {
            idle: self.sqpoll_idle.unwrap_or(DEFAULT_SQPOLL_IDLE),
            cpu,
        })
    }

    /// How doppio's own runtime waits (`--timer-slack`, `--batch-wait`, `--user-batch-wait`),
    /// checked against `drivers`: any of them without a doppio-uring backend among them does
    /// nothing, and is refused before anything starts.
    pub(crate) fn uring_wait(
        &self,
        drivers: &[Driver],
    ) -> Result<crate::backend::UringWait, ConnectError> {
        let uring = drivers
            .iter()
            .any(|d| matches!(d, Driver::DoppioUring | Driver::DoppioUringSqpoll));
        let asked = self.timer_slack.is_some() || self.batch_wait.is_some() || self.user_batch_wait;
        if asked && !uring {
            return Err(ConnectError::UringWaitWithoutDriver);
        }
        Ok(crate::backend::UringWait {
            timer_slack: self.timer_slack,
            batch_wait: self.batch_wait,
            user_space: self.user_batch_wait,
        })
    }

    /// `--max-outage` as the engine takes it (`None` for 0: never stop).
    pub(crate) fn outage_limit(&self) -> Option<Duration> {
        (!self.max_outage.is_zero()).then_some(self.max_outage)
    }

    /// The node addresses, resolved (port 9042 when none is given).
    pub(crate) fn node_addrs(&self) -> Result<Vec<SocketAddr>, ConnectError> {
        if self.nodes.is_empty() {
            return Ok(vec![SocketAddr::from(([127, 0, 0, 1], 9042))]);
        }
        let mut out = Vec::new();
        for n in &self.nodes {
            let with_port = if n.contains(':') {
                n.clone()
            } else {
                format!("{n}:9042")
            };
            let addr = with_port
                .to_socket_addrs()
                .map_err(|source| ConnectError::Resolve {
                    node: n.clone(),
                    source,
                })?
                .next()
                .ok_or_else(|| ConnectError::NoAddress { node: n.clone() })?;
            out.push(addr);
        }
        Ok(out)
    }

    /// The drivers named by `--driver`, in order, without repeats.
    pub(crate) fn drivers(&self) -> Result<Vec<Driver>, UnknownDriver> {
        let mut out = Vec::new();
        for d in self.driver.split(',') {
            let d = Driver::parse(d)?;
            if !out.contains(&d) {
                out.push(d);
            }
        }
        Ok(out)
    }

    /// The `-P` overrides as pairs.
    pub(crate) fn param_pairs(&self) -> Result<Vec<(String, String)>, ConnectError> {
        self.params
            .iter()
            .map(|p| {
                p.split_once('=')
                    .map(|(k, v)| (k.trim().to_owned(), v.to_owned()))
                    .ok_or_else(|| ConnectError::Param { text: p.clone() })
            })
            .collect()
    }
}

/// Why the connection options (the `NODE`s, `-P`, `--sqpoll-idle`, `--sqpoll-cpu`) cannot
/// be used as given: found once clap has parsed them, before anything starts.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// `--sqpoll-idle` or `--sqpoll-cpu` without `doppio-uring-sqpoll` among the drivers.
    #[error(
        "--sqpoll-idle and --sqpoll-cpu apply to --driver doppio-uring-sqpoll only (add it to \
         --driver, or leave them out)"
    )]
    SqPollWithoutDriver,
    /// `--timer-slack`, `--batch-wait` or `--user-batch-wait` without a doppio-uring backend.
    #[error(
        "--timer-slack, --batch-wait and --user-batch-wait apply to doppio's own runtime only \
         (add doppio-uring to --driver, or leave them out)"
    )]
    UringWaitWithoutDriver,
    /// A `--sqpoll-cpu` core that is not online.
    #[error(
        "--sqpoll-cpu {core}: this machine has cores 0 to {last} online (give one of them, or \
         `none` to let the kernel place the threads)"
    )]
    SqPollCpuOffline {
        /// The core given.
        core: u32,
        /// The machine's last online core.
        last: usize,
    },
    /// More pinned threads than the machine has cores online.
    #[error(
        "--threads {threads}: the threads are pinned to cores 0 to {}, but this machine has \
         {cores} core(s) online; give -t {cores} or less, or --no-pin to let the kernel place \
         them",
        threads - 1
    )]
    TooManyPinnedThreads {
        /// The threads asked for.
        threads: usize,
        /// The machine's cores online.
        cores: usize,
    },
    /// A node name that does not resolve.
    #[error("node {node}: {source}")]
    Resolve {
        /// The node as given.
        node: String,
        /// Why it does not resolve.
        #[source]
        source: std::io::Error,
    },
    /// A node name that resolves to no address.
    #[error("node {node}: no address")]
    NoAddress {
        /// The node as given.
        node: String,
    },
    /// A `-P` without `=`.
    #[error("-P {text}: expected NAME=VALUE (such as -P rows=1000)")]
    Param {
        /// The text given.
        text: String,
    },
}
