//! The fault schedule of a nemesis run, drawn from a seed: which nodes fail, how, when, and
//! when they heal. Pure data: nothing here touches a process; the runner (to come) carries
//! the schedule out and the report keeps it.
//!
//! Faults: a node killed (`SIGKILL`) and restarted, paused (`SIGSTOP`) and resumed
//! (`SIGCONT`), or stopped gracefully and started. One fault may take several nodes at once.
//! The bound that keeps `QUORUM` available: with replication factor `RF`, a quorum is
//! `RF / 2 + 1` replicas, so at most `(RF - 1) / 2` nodes may be down at once (RF 3: one);
//! `allow_quorum_loss` allows one more (RF 3: two), to see the errors and the recovery. A
//! node counts as down from its fault's start until `settle` after its heal (a restarted
//! node takes a while to serve again), and is not chosen again before then. Every fault heals
//! within the run, so the read-back after it sees every node up.
//!
//! The draw: a gap (uniform in `0..=2 * mean_gap`, so of mean `mean_gap`) after the previous
//! fault's start, or after the earliest recovery when the bound leaves no node to take;
//! then how many nodes (up to what the bound leaves), which (uniform among those up), the
//! kind (uniform among `kinds`) and the duration (uniform in `min_fault..=max_fault`). The
//! draws use integers only (no floating point), so a seed gives the same schedule on every
//! machine with the same `fastrand` (a 2.x release; the workspace's lock file fixes it).

use serde::{Deserialize, Serialize};

/// What a fault does to its nodes, and how it heals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FaultKind {
    /// `SIGKILL`, then a restart: the node loses what it had not written to disk.
    Kill,
    /// `SIGSTOP`, then `SIGCONT`: the node holds its connections but answers nothing.
    Pause,
    /// A graceful stop (the node drains and says goodbye), then a start.
    Stop,
}

/// What a schedule is drawn from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ScheduleOptions {
    /// The seed of every draw.
    pub(crate) seed: u64,
    /// The run's length (nanoseconds): every fault heals by then.
    pub(crate) run_ns: u64,
    /// The cluster's nodes, numbered from 1 as `scripts/cassandra-cluster.sh` numbers them.
    pub(crate) nodes: usize,
    /// The keyspace's replication factor.
    pub(crate) replication_factor: usize,
    /// The mean gap between one fault's start and the next's (nanoseconds).
    pub(crate) mean_gap_ns: u64,
    /// The shortest fault (start to heal, nanoseconds).
    pub(crate) min_fault_ns: u64,
    /// The longest fault.
    pub(crate) max_fault_ns: u64,
    /// How long a healed node still counts as down (nanoseconds).
    pub(crate) settle_ns: u64,
    /// Whether one more node than a quorum spares may be down.
    pub(crate) allow_quorum_loss: bool,
    /// The kinds of fault drawn from.
    pub(crate) kinds: Vec<FaultKind>,
}

/// One fault: its nodes go down at `start_ns` and are brought back at `heal_ns`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Fault {
    /// What it does.
    pub(crate) kind: FaultKind,
    /// Its nodes (numbered from 1), ascending.
    pub(crate) nodes: Vec<usize>,
    /// When it starts (nanoseconds from the run's start).
    pub(crate) start_ns: u64,
    /// When its nodes are brought back.
    pub(crate) heal_ns: u64,
}

/// A run's faults, in order of their start, and what they were drawn from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Schedule {
    /// What the schedule was drawn from.
    pub(crate) options: ScheduleOptions,
    /// At most this many nodes are down at once.
    pub(crate) max_down: usize,
    /// The faults.
    pub(crate) faults: Vec<Fault>,
}

/// Why no schedule can be drawn from the options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The replication factor is 0 or more than the nodes.
    #[error("a replication factor of {replication_factor} on {nodes} nodes")]
    ReplicationFactor {
        /// The replication factor.
        replication_factor: usize,
        /// The nodes.
        nodes: usize,
    },
    /// The bound allows no node down (a replication factor of 1 or 2 without
    /// `allow_quorum_loss`, or a single node).
    #[error(
        "no node may go down: replication factor {replication_factor} on {nodes} nodes \
         (allow quorum loss: {allow_quorum_loss})"
    )]
    NoNodeMayFail {
        /// The replication factor.
        replication_factor: usize,
        /// The nodes.
        nodes: usize,
        /// Whether the options allowed one more.
        allow_quorum_loss: bool,
    },
    /// A duration is 0 where it must not be, or the shortest fault is longer than the
    /// longest.
    #[error(
        "durations: a run of {run_ns} ns, mean gap {mean_gap_ns} ns, faults of {min_fault_ns} \
         to {max_fault_ns} ns (the run, the gap and the shortest fault must be above 0)"
    )]
    Durations {
        /// The run's length.
        run_ns: u64,
        /// The mean gap.
        mean_gap_ns: u64,
        /// The shortest fault.
        min_fault_ns: u64,
        /// The longest fault.
        max_fault_ns: u64,
    },
    /// No kind of fault to draw from.
    #[error("no kind of fault to draw from")]
    NoKinds,
}

impl ScheduleOptions {
    /// How many nodes may be down at once.
    pub(crate) fn max_down(&self) -> Result<usize, ScheduleError> {
        let (replication_factor, nodes) = (self.replication_factor, self.nodes);
        if replication_factor == 0 || replication_factor > nodes {
            return Err(ScheduleError::ReplicationFactor {
                replication_factor,
                nodes,
            });
        }
        let spared = (replication_factor - 1) / 2 + usize::from(self.allow_quorum_loss);
        let max_down = spared.min(nodes - 1);
        if max_down == 0 {
            return Err(ScheduleError::NoNodeMayFail {
                replication_factor,
                nodes,
                allow_quorum_loss: self.allow_quorum_loss,
            });
        }
        Ok(max_down)
    }

    fn check(&self) -> Result<usize, ScheduleError> {
        let max_down = self.max_down()?;
        if self.run_ns == 0
            || self.mean_gap_ns == 0
            || self.min_fault_ns == 0
            || self.min_fault_ns > self.max_fault_ns
        {
            return Err(ScheduleError::Durations {
                run_ns: self.run_ns,
                mean_gap_ns: self.mean_gap_ns,
                min_fault_ns: self.min_fault_ns,
                max_fault_ns: self.max_fault_ns,
            });
        }
        if self.kinds.is_empty() {
            return Err(ScheduleError::NoKinds);
        }
        Ok(max_down)
    }
}

impl Schedule {
    /// Draws the schedule `options` describe.
    pub(crate) fn draw(options: ScheduleOptions) -> Result<Self, ScheduleError> {
        let max_down = options.check()?;
        let mut rng = fastrand::Rng::with_seed(options.seed);
        // When each node is up again (its last fault's heal plus the settle; 0: never down),
        // node n at n - 1.
        let mut up_at = vec![0_u64; options.nodes];
        let mut faults = Vec::new();
        let mut t = 0_u64;
        loop {
            t = t.saturating_add(rng.u64(0..=options.mean_gap_ns.saturating_mul(2)));
            let down = up_at.iter().filter(|&&up| up > t).count();
            if down >= max_down {
                // Wait for the earliest recovery, then a gap again.
                t = up_at
                    .iter()
                    .copied()
                    .filter(|&up| up > t)
                    .min()
                    .unwrap_or(t);
                continue;
            }
            let duration = rng.u64(options.min_fault_ns..=options.max_fault_ns);
            let heal = t.saturating_add(duration);
            if heal > options.run_ns {
                break;
            }
            let mut free: Vec<usize> = (1..=options.nodes)
                .filter(|&node| up_at[node - 1] <= t)
                .collect();
            rng.shuffle(&mut free);
            let take = rng.usize(1..=(max_down - down).min(free.len()));
            let mut nodes = free[..take].to_vec();
            nodes.sort_unstable();
            let kind = options.kinds[rng.usize(0..options.kinds.len())];
            for &node in &nodes {
                up_at[node - 1] = heal.saturating_add(options.settle_ns);
            }
            faults.push(Fault {
                kind,
                nodes,
                start_ns: t,
                heal_ns: heal,
            });
        }
        Ok(Self {
            options,
            max_down,
            faults,
        })
    }

    /// How many nodes count as down at `t` (nanoseconds from the run's start): those of a
    /// fault started by `t` and not yet healed and settled.
    pub(crate) fn down_at(&self, t: u64) -> usize {
        self.faults
            .iter()
            .filter(|fault| {
                fault.start_ns <= t && t < fault.heal_ns.saturating_add(self.options.settle_ns)
            })
            .map(|fault| fault.nodes.len())
            .sum()
    }
}

#[cfg(test)]
mod tests;
