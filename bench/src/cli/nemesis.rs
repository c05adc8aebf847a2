//! The options of `nemesis`: the cluster and how to reach it, the workload, the fault
//! schedule's seed and shape, and where the history and report go.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args as ClapArgs;

use super::limits;

/// Options of `nemesis`.
#[derive(Debug, Clone, ClapArgs)]
pub struct NemesisArgs {
    /// A contact point of the cluster (host:port; port 9042 when none is given).
    #[arg(long, default_value = "127.0.0.21:9042")]
    pub(crate) node: String,
    /// The backend that runs the workload: doppio (glommio) or doppio-uring.
    #[arg(long, default_value = "doppio")]
    pub(crate) driver: String,
    /// The seed of the fault schedule: one seed, one schedule (printed and in the report).
    #[arg(long)]
    pub(crate) seed: u64,
    /// How long the writers run and the faults last (10s to 24h); healing and the
    /// read-back come after.
    #[arg(short = 'd', long, value_parser = limits::nemesis_duration)]
    pub(crate) duration: Duration,
    /// Writes in flight at once (1 to 1,000,000).
    #[arg(short = 'p', long, default_value_t = 64, value_parser = limits::concurrency)]
    pub(crate) concurrency: usize,
    /// The keys the written values are spread over (1 to 1,000,000); each is read back at
    /// ALL after the run.
    #[arg(long, default_value_t = 100, value_parser = limits::nemesis_keys)]
    pub(crate) keys: i64,
    /// The cluster's nodes, numbered from 1 as the cluster script numbers them (1 to 9).
    #[arg(long, default_value_t = 3, value_parser = limits::nemesis_nodes)]
    pub(crate) nodes: usize,
    /// The keyspace's replication factor (created with it if absent): at most
    /// (RF - 1) / 2 nodes are down at once, so that QUORUM stays available.
    #[arg(long, default_value_t = 3, value_parser = limits::nemesis_nodes)]
    pub(crate) replication_factor: usize,
    /// The keyspace; each run writes a table of its own in it.
    #[arg(long, default_value = "doppio_nemesis")]
    pub(crate) keyspace: String,
    /// The kinds of fault drawn from, comma-separated: kill (SIGKILL, then a restart),
    /// pause (SIGSTOP, then SIGCONT), stop (a graceful stop, then a start).
    #[arg(long, default_value = "kill,pause")]
    pub(crate) faults: String,
    /// The mean time from one fault's start to the next's (1s to 1h).
    #[arg(long, default_value = "20s", value_parser = limits::nemesis_interval)]
    pub(crate) mean_gap: Duration,
    /// The shortest fault, start to heal (1s to 1h).
    #[arg(long, default_value = "5s", value_parser = limits::nemesis_interval)]
    pub(crate) fault_min: Duration,
    /// The longest fault (1s to 1h, at least --fault-min).
    #[arg(long, default_value = "15s", value_parser = limits::nemesis_interval)]
    pub(crate) fault_max: Duration,
    /// How long a healed node still counts as down, so that no fault takes another node
    /// while it recovers (0 to 1h).
    #[arg(long, default_value = "10s", value_parser = limits::nemesis_settle)]
    pub(crate) settle: Duration,
    /// Each request's timeout (1ms to 1h).
    #[arg(long, default_value = "5s", value_parser = limits::request_timeout)]
    pub(crate) timeout: Duration,
    /// The cluster control script that kills, pauses, stops, restarts and resumes nodes
    /// (`scripts/cassandra.sh`'s commands).
    #[arg(
        long,
        default_value = "scripts/cassandra-cluster.sh",
        value_name = "PATH"
    )]
    pub(crate) cluster_script: PathBuf,
    /// The folder (it must exist) that receives history.jsonl and nemesis.json.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub(crate) out: PathBuf,
}
