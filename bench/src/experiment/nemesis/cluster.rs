//! The nemesis's hand on the cluster: the cluster script (`scripts/cassandra-cluster.sh`,
//! `scripts/cassandra.sh`'s commands) run to apply a fault (kill, pause, stop a node), heal
//! it (start, resume), and to make the whole cluster answer again at the end.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::nemesis::schedule::{Fault, FaultKind};

/// The cluster script and the cluster's size.
#[derive(Debug, Clone)]
pub(crate) struct ClusterScript {
    /// The script.
    pub(crate) path: PathBuf,
    /// The cluster's nodes, numbered from 1.
    pub(crate) nodes: usize,
}

impl ClusterScript {
    /// Runs the script with `args`; its output (both streams) in the error if it fails.
    pub(crate) fn run(&self, args: &[String]) -> Result<(), String> {
        let out = Command::new(&self.path)
            .args(args)
            .output()
            .map_err(|e| format!("run {} {}: {e}", self.path.display(), args.join(" ")))?;
        if out.status.success() {
            return Ok(());
        }
        Err(format!(
            "{} {} failed ({}): {}{}",
            self.path.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }

    /// Brings `fault`'s nodes down.
    pub(crate) fn apply(&self, fault: &Fault) -> Result<(), String> {
        let verb = match fault.kind {
            FaultKind::Kill => "kill",
            FaultKind::Pause => "pause",
            FaultKind::Stop => "stop",
        };
        for node in &fault.nodes {
            self.run(&[verb.to_owned(), node.to_string()])?;
        }
        Ok(())
    }

    /// Brings `fault`'s nodes back: resumed, or started (the script's `start` starts every
    /// node that is down and waits until it answers and the nodes see each other).
    pub(crate) fn heal(&self, fault: &Fault) -> Result<(), String> {
        match fault.kind {
            FaultKind::Pause => {
                for node in &fault.nodes {
                    self.run(&["resume".to_owned(), node.to_string()])?;
                }
                Ok(())
            }
            FaultKind::Kill | FaultKind::Stop => self.run(&["start".to_owned()]),
        }
    }

    /// Makes the cluster whole: every node resumed (a node not paused is left as it is; one
    /// not running is started next), every node down started, then `status` asked until
    /// every node answers, for at most `within`.
    pub(crate) fn heal_all(&self, within: Duration) -> Result<(), String> {
        for node in 1..=self.nodes {
            // A node that is not running cannot be resumed: `start` below starts it.
            let _ = self.run(&["resume".to_owned(), node.to_string()]);
        }
        let deadline = Instant::now() + within;
        let mut last;
        loop {
            last = self
                .run(&["start".to_owned()])
                .and_then(|()| self.run(&["status".to_owned()]));
            if last.is_ok() || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_secs(2));
        }
        last.map_err(|e| format!("the cluster is not whole after {within:?}: {e}"))
    }
}
