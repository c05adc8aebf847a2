//! Where a cluster lives: its settings ([`Cluster`]: state folder, first address, racks,
//! extra yaml, jar cache) and what follows from them (each node's folder, address, JMX port,
//! pid file, `left` marker, the nodes that exist).

use std::path::{Path, PathBuf};

use super::error::{Error, Result};

/// The Cassandra release whose jars are run.
pub const CASSANDRA_VERSION: &str = "5.0.6";
/// Every node's CQL port.
pub const CQL_PORT: u16 = 9042;

/// One local cluster: nodes on 127.0.0.K, 127.0.0.(K+1), ..., their state in one folder.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub(crate) state: PathBuf,
    pub(crate) first_ip: u8,
    pub(crate) racks: Vec<String>,
    pub(crate) extra_yaml: Option<String>,
    pub(crate) cache_root: PathBuf,
}

impl Cluster {
    /// A cluster whose state is in `state` and whose node 1 is 127.0.0.`first_ip` (1 to 99); the
    /// jar cache is `$DOPPIO_CACHE` (default `~/.cache/doppio`). No racks, no extra yaml.
    pub fn new(state: impl Into<PathBuf>, first_ip: u8) -> Result<Cluster> {
        if !(1..=99).contains(&first_ip) {
            return Err(Error::Invalid(
                "DOPPIO_CASSANDRA_FIRST_IP must be 1 to 99".to_owned(),
            ));
        }
        let cache_root = match std::env::var_os("DOPPIO_CACHE") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => {
                let home = std::env::var_os("HOME").unwrap_or_default();
                PathBuf::from(home).join(".cache/doppio")
            }
        };
        Ok(Cluster {
            state: state.into(),
            first_ip,
            racks: Vec::new(),
            extra_yaml: None,
            cache_root,
        })
    }

    /// The cluster the environment describes, as `scripts/cassandra.sh` reads it:
    /// `DOPPIO_CASSANDRA_STATE` (default `default_state`), `DOPPIO_CASSANDRA_FIRST_IP` (1 to 99,
    /// default 1), `DOPPIO_CASSANDRA_RACKS`, `DOPPIO_CASSANDRA_EXTRA_YAML`, `DOPPIO_CACHE`.
    pub fn from_env(default_state: &Path) -> Result<Cluster> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let first_ip = match var("DOPPIO_CASSANDRA_FIRST_IP") {
            None => 1,
            Some(text) => parse_first_ip(&text)?,
        };
        let state =
            var("DOPPIO_CASSANDRA_STATE").map_or_else(|| default_state.to_owned(), PathBuf::from);
        let mut cluster = Cluster::new(state, first_ip)?;
        if let Some(racks) = var("DOPPIO_CASSANDRA_RACKS") {
            cluster = cluster.with_racks(racks.split(',').map(str::to_owned).collect());
        }
        if let Some(yaml) = var("DOPPIO_CASSANDRA_EXTRA_YAML") {
            cluster = cluster.with_extra_yaml(yaml);
        }
        Ok(cluster)
    }

    /// Node i in the i-th rack of data center "datacenter1" (the last rack for the nodes past
    /// the list), with GossipingPropertyFileSnitch; empty: SimpleSnitch. Fixed at first boot.
    pub fn with_racks(mut self, racks: Vec<String>) -> Cluster {
        self.racks = racks;
        self
    }

    /// Lines appended to each node's cassandra.yaml when it starts.
    pub fn with_extra_yaml(mut self, yaml: impl Into<String>) -> Cluster {
        self.extra_yaml = Some(yaml.into()).filter(|y| !y.is_empty());
        self
    }

    /// The state folder.
    pub fn state(&self) -> &Path {
        &self.state
    }

    /// The cluster's name: clusters on other addresses get their own, so that they can never
    /// gossip with each other.
    pub fn name(&self) -> String {
        if self.first_ip == 1 {
            "doppio-test".to_owned()
        } else {
            format!("doppio-test-{}", self.first_ip)
        }
    }

    /// Node `i`'s address, 127.0.0.(K+i-1).
    pub fn addr(&self, i: u32) -> String {
        format!("127.0.0.{}", u32::from(self.first_ip) + i - 1)
    }

    /// Node `i`'s JMX port on loopback: 7200 + the last octet of its address.
    pub fn jmx_port(&self, i: u32) -> u32 {
        7200 + u32::from(self.first_ip) + i - 1
    }

    /// Node `i`'s folder (yaml, data, logs, pid).
    pub fn node_dir(&self, i: u32) -> PathBuf {
        self.state.join(format!("node{i}"))
    }

    /// Node `i`'s log.
    pub fn log_file(&self, i: u32) -> PathBuf {
        self.node_dir(i).join("logs/system.log")
    }

    /// The folder of the jars and their class path.
    pub(crate) fn cache(&self) -> PathBuf {
        self.cache_root
            .join(format!("cassandra-{CASSANDRA_VERSION}"))
    }

    /// The file holding the class path (jars joined by `:`).
    pub(crate) fn classpath_file(&self) -> PathBuf {
        self.cache().join("classpath.txt")
    }

    /// Whether node `i` left the ring (decommission): its folder keeps its logs and this marker.
    pub fn left(&self, i: u32) -> bool {
        self.node_dir(i).join("left").is_file()
    }

    /// What node `i`'s pid file says (its text), if it has one.
    pub(crate) fn pid_text(&self, i: u32) -> Option<String> {
        std::fs::read_to_string(self.node_dir(i).join("pid"))
            .ok()
            .map(|t| t.trim_end_matches('\n').to_owned())
    }

    /// Node `i`'s pid, if its pid file holds one.
    pub(crate) fn pid(&self, i: u32) -> Option<u32> {
        self.pid_text(i)?.trim().parse().ok()
    }

    /// The nodes that have a folder, in order.
    pub fn known_nodes(&self) -> Vec<u32> {
        let mut nodes: Vec<u32> = std::fs::read_dir(&self.state)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
            .collect();
        nodes.sort_unstable();
        nodes
    }

    /// The rack of node `i` (none without racks).
    pub(crate) fn rack(&self, i: u32) -> Option<&str> {
        let index = usize::try_from(i).ok()?.checked_sub(1)?;
        self.racks
            .get(index)
            .or(self.racks.last())
            .map(String::as_str)
    }

    /// The node count the state was written for (`$STATE/nodes`).
    pub(crate) fn recorded_nodes(&self) -> Option<String> {
        std::fs::read_to_string(self.state.join("nodes"))
            .ok()
            .map(|t| t.trim_end_matches('\n').to_owned())
    }

    /// A one-line flag file of node `i` (`auth`, `tls`): whether it says 1.
    pub(crate) fn flag(&self, i: u32, name: &str) -> bool {
        std::fs::read_to_string(self.node_dir(i).join(name))
            .is_ok_and(|t| t.trim_end_matches('\n') == "1")
    }
}

/// `DOPPIO_CASSANDRA_FIRST_IP`: 1 to 99, no leading zero.
fn parse_first_ip(text: &str) -> Result<u8> {
    let ok = !text.starts_with('0') && (1..=2).contains(&text.len());
    match text.parse::<u8>() {
        Ok(ip) if ok => Ok(ip),
        _ => Err(Error::Invalid(
            "DOPPIO_CASSANDRA_FIRST_IP must be 1 to 99".to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_ports_follow_the_first_ip() {
        let c = Cluster::new("/tmp/x", 21).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.addr(3), "127.0.0.23");
        assert_eq!(c.jmx_port(1), 7221);
        assert_eq!(c.name(), "doppio-test-21");
        assert_eq!(
            Cluster::new("/tmp/x", 1).map(|c| c.name()).ok().as_deref(),
            Some("doppio-test")
        );
        assert!(Cluster::new("/tmp/x", 0).is_err());
        assert!(parse_first_ip("07").is_err() && parse_first_ip("100").is_err());
        assert_eq!(parse_first_ip("99").ok(), Some(99));
        let racked = c.with_racks(vec!["r1".into(), "r2".into()]);
        assert_eq!(
            (racked.rack(1), racked.rack(2), racked.rack(5)),
            (Some("r1"), Some("r2"), Some("r2"))
        );
    }
}
