//! What each node's gossip says of its peers, read from its log: a cluster counts as started
//! only when every node sees every other UP.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::error::{Error, Result};
use super::layout::Cluster;
use super::programs::log;

/// A log's view of the peers: the last verdict (`UP`, `DOWN`) on each address since gossip
/// last started (a verdict from an earlier boot is not its view), by address.
pub(crate) fn gossip_view_of(log_text: &str) -> BTreeMap<String, String> {
    let mut seen = BTreeMap::new();
    for line in log_text.lines() {
        if line.contains("Starting up server gossip") {
            seen.clear();
            continue;
        }
        if !is_verdict(line) {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let addr = fields.iter().rev().find_map(|f| {
            let a = f.strip_prefix('/')?.strip_suffix(":7000")?;
            (!a.is_empty() && a.chars().all(|c| c.is_ascii_digit() || c == '.')).then_some(a)
        });
        if let (Some(a), Some(verdict)) = (addr, fields.last()) {
            seen.insert(a.to_owned(), (*verdict).to_owned());
        }
    }
    seen
}

/// Whether `line` holds `InetAddress /A.B.C.D:7000 is now UP` (or `DOWN`).
fn is_verdict(line: &str) -> bool {
    line.match_indices("InetAddress /").any(|(at, m)| {
        let rest = &line[at + m.len()..];
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        digits > 0
            && rest[digits..]
                .strip_prefix(":7000 is now ")
                .is_some_and(|v| v.starts_with("UP") || v.starts_with("DOWN"))
    })
}

impl Cluster {
    /// Node `i`'s view of its peers (nothing when it has no log).
    pub(crate) fn gossip_view(&self, i: u32) -> BTreeMap<String, String> {
        std::fs::read(self.log_file(i))
            .map(|b| gossip_view_of(&String::from_utf8_lossy(&b)))
            .unwrap_or_default()
    }

    /// Waits until every node of `n` that has not left sees every other UP. Node 1's view
    /// alone is not enough: the last node to start answers CQL a second or two before it has
    /// gossiped with the others, and a schema change it coordinates then waits for no peer.
    pub(crate) fn wait_for_gossip(&self, n: u32, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        loop {
            let mut missing = String::new();
            for j in (1..=n).filter(|&j| !self.left(j)) {
                let view = self.gossip_view(j);
                for i in (1..=n).filter(|&i| i != j && !self.left(i)) {
                    if view.get(&self.addr(i)).map(String::as_str) != Some("UP") {
                        missing.push_str(&format!(" {}->{}", self.addr(j), self.addr(i)));
                    }
                }
            }
            if missing.is_empty() {
                log(&format!("all {n} nodes see each other up"));
                return Ok(());
            }
            if start.elapsed().as_secs() > timeout.as_secs() {
                log(&format!(
                    "not seen as up after {}s (seer->seen):{missing}",
                    timeout.as_secs()
                ));
                return Err(Error::Failed(format!(
                    "the nodes did not see each other up within {}s",
                    timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_is_the_last_verdict_since_gossip_started() {
        let log = "\
INFO  [main] 2026-01-01 Gossiper.java:1 - InetAddress /127.0.0.9:7000 is now UP
INFO  [main] 2026-01-01 Gossiper.java:1 - Starting up server gossip
INFO  [GossipStage:1] 2026-01-01 Gossiper.java:1 - InetAddress /127.0.0.22:7000 is now UP
INFO  [GossipStage:1] 2026-01-01 Gossiper.java:1 - InetAddress /127.0.0.23:7000 is now UP
INFO  [GossipStage:1] 2026-01-01 Gossiper.java:1 - InetAddress /127.0.0.22:7000 is now DOWN
INFO  [main] 2026-01-01 Other.java:1 - nothing about /127.0.0.24:7000 here
";
        let view = gossip_view_of(log);
        let expected: Vec<(&str, &str)> = vec![("127.0.0.22", "DOWN"), ("127.0.0.23", "UP")];
        let got: Vec<(&str, &str)> = view.iter().map(|(a, v)| (a.as_str(), v.as_str())).collect();
        assert_eq!(got, expected);
    }
}
