//! The commands that grow or shrink a cluster: `start` (fresh or restarted nodes), `add` (one
//! more node bootstraps into the running ring) and `decommission` (a node streams its data
//! away and leaves).

use std::time::{Duration, Instant};

use super::config::{write, NodeConfig};
use super::error::{Error, Result};
use super::layout::Cluster;
use super::programs::{log, pid_alive};
use super::tokens::widest_gap_middle;

/// `start`'s options.
#[derive(Debug, Clone)]
pub struct Start {
    /// The cluster size, 1 to 9.
    pub nodes: u32,
    /// PasswordAuthenticator on (user cassandra / cassandra).
    pub auth: bool,
    /// The native port speaks TLS only.
    pub tls: bool,
    /// Each node's heap (`-Xms`, `-Xmx`); default 1G for one node, 768M each for more.
    pub heap: Option<String>,
    /// How long each node, then gossip, may take.
    pub timeout: Duration,
}

impl Default for Start {
    fn default() -> Start {
        Start {
            nodes: 1,
            auth: false,
            tls: false,
            heap: None,
            timeout: Duration::from_secs(240),
        }
    }
}

/// `add`'s options.
#[derive(Debug, Clone)]
pub struct Add {
    /// The new node's token; default the middle of the widest gap in the ring.
    pub token: Option<i64>,
    /// Its heap.
    pub heap: String,
    /// How long its bootstrap may take until its CQL port answers.
    pub timeout: Duration,
}

impl Default for Add {
    fn default() -> Add {
        Add {
            token: None,
            heap: "768M".to_owned(),
            timeout: Duration::from_secs(300),
        }
    }
}

/// Writes a `0`/`1` flag file.
fn write_flag(path: &std::path::Path, on: bool) -> Result<()> {
    write(path, if on { "1\n" } else { "0\n" })
}

impl Cluster {
    /// Starts every node of an `o.nodes`-node cluster that is not running (a node already
    /// running is waited for; a node that left is skipped), then waits until they all see
    /// each other. State written for another size is wiped first (tokens and peers are fixed
    /// at a node's first boot).
    pub fn start(&self, o: &Start) -> Result<()> {
        if !(1..=9).contains(&o.nodes) {
            return Err(Error::Invalid("--nodes must be 1 to 9".to_owned()));
        }
        let n = o.nodes;
        let heap = o
            .heap
            .clone()
            .unwrap_or_else(|| if n == 1 { "1G" } else { "768M" }.to_owned());
        let (tools, classpath) = self.installed()?;
        if let Some(recorded) = self.recorded_nodes().filter(|r| *r != n.to_string()) {
            log(&format!(
                "state is for a {recorded}-node cluster, {n} requested: wiping it"
            ));
            self.wipe()?;
        }
        std::fs::create_dir_all(&self.state)
            .map_err(Error::io(format!("create {}", self.state.display())))?;
        write(&self.state.join("nodes"), &format!("{n}\n"))?;
        for i in 1..=n {
            if self.left(i) {
                log(&format!(
                    "node {i} left the ring (decommissioned): not started"
                ));
                continue;
            }
            if pid_alive(self.pid(i)) {
                log(&format!(
                    "node {i} already running (pid {})",
                    self.pid_text(i).unwrap_or_default()
                ));
                self.wait_for_node(i, o.timeout)?;
                continue;
            }
            let config = NodeConfig {
                i,
                n,
                auth: o.auth,
                tls: o.tls,
                bootstrap: false,
            };
            self.write_node_config(config, &tools)?;
            write_flag(&self.node_dir(i).join("auth"), o.auth)?;
            write_flag(&self.node_dir(i).join("tls"), o.tls)?;
            log(&format!(
                "starting node {i} of {n} on {} (heap {heap}{}{})",
                self.addr(i),
                if o.auth { ", auth on" } else { "" },
                if o.tls { ", TLS only" } else { "" }
            ));
            self.launch(&tools, &classpath, i, n, &heap, 1000)?;
            self.wait_for_node(i, o.timeout)?;
        }
        if n > 1 {
            self.wait_for_gossip(n, o.timeout)?;
        }
        Ok(())
    }

    /// The tokens of the nodes in the ring (their yaml's `initial_token`), sorted.
    pub(crate) fn ring_tokens(&self) -> Vec<i64> {
        let mut tokens: Vec<i64> = self
            .known_nodes()
            .into_iter()
            .filter(|&i| !self.left(i))
            .filter_map(|i| std::fs::read_to_string(self.node_dir(i).join("cassandra.yaml")).ok())
            .flat_map(|yaml| {
                let tokens: Vec<i64> = yaml
                    .lines()
                    .filter_map(|l| l.strip_prefix("initial_token: ")?.trim().parse().ok())
                    .collect();
                tokens
            })
            .collect();
        tokens.sort_unstable();
        tokens
    }

    /// Bootstraps node n+1 into the running cluster: it streams its share of the data from
    /// the others, then opens its CQL port; the cluster then counts n+1 nodes. Returns its
    /// number.
    pub fn add(&self, o: &Add) -> Result<u32> {
        let Some(recorded) = self.recorded_nodes() else {
            return Err(Error::Invalid(format!(
                "no cluster in {}: start one first",
                self.state.display()
            )));
        };
        if !pid_alive(self.pid(1)) {
            return Err(Error::Invalid(
                "node 1 (the seed) is not running".to_owned(),
            ));
        }
        let n: u32 = recorded.trim().parse().map_err(|_| {
            Error::Invalid(format!(
                "{}/nodes holds no node count",
                self.state.display()
            ))
        })?;
        let i = n + 1;
        if i > 9 {
            return Err(Error::Invalid("a cluster has at most 9 nodes".to_owned()));
        }
        let token = o
            .token
            .unwrap_or_else(|| widest_gap_middle(&self.ring_tokens()));
        let (tools, classpath) = self.installed()?;
        let dir = self.node_dir(i);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(Error::io(format!("remove {}", dir.display())))?;
        }
        std::fs::create_dir_all(&dir).map_err(Error::io(format!("create {}", dir.display())))?;
        write(&dir.join("token"), &format!("{token}\n"))?;
        let (auth, tls) = (self.flag(1, "auth"), self.flag(1, "tls"));
        self.write_node_config(
            NodeConfig {
                i,
                n: i,
                auth,
                tls,
                bootstrap: true,
            },
            &tools,
        )?;
        write_flag(&dir.join("auth"), auth)?;
        write_flag(&dir.join("tls"), tls)?;
        write(&self.state.join("nodes"), &format!("{i}\n"))?;
        log(&format!(
            "adding node {i} on {} with token {token} (bootstrap, heap {})",
            self.addr(i),
            o.heap
        ));
        // A joining node waits RING_DELAY to learn the ring and the nodes it streams from; the
        // 1 s a fresh test cluster starts with was too short once on a loaded machine (the
        // node gave up its bootstrap), so a joining node waits 10 s.
        self.launch(&tools, &classpath, i, i, &o.heap, 10_000)?;
        self.wait_for_node(i, o.timeout)?;
        Ok(i)
    }

    /// Decommissions node `i`: it streams its ranges to the nodes that take them over and
    /// leaves the ring (nodetool's decommission, which returns when it is done); then its
    /// process is stopped and it is marked as gone (`start` skips it, `status` says LEFT).
    pub fn decommission(&self, i: u32) -> Result<()> {
        self.require_node(i)?;
        if self.left(i) {
            return Err(Error::Invalid(format!("node {i} already left the ring")));
        }
        if !pid_alive(self.pid(i)) {
            return Err(Error::Invalid(format!("node {i} is not running")));
        }
        log(&format!("decommissioning node {i} ({})", self.addr(i)));
        let start = Instant::now();
        let status = self.nodetool(i, &["decommission".to_owned()])?;
        if !status.success() {
            return Err(Error::Failed(format!(
                "nodetool decommission of node {i} failed"
            )));
        }
        write(&self.node_dir(i).join("left"), "")?;
        log(&format!(
            "node {i} left the ring after {}s",
            start.elapsed().as_secs()
        ));
        self.stop_node(i, "TERM")
    }
}
