//! The commands that look at or stop a cluster without changing its ring: `stop`, `kill`,
//! `pause`, `resume`, `status`, `nodetool`, `logs`, `wipe`.

use std::io::Write;
use std::process::ExitStatus;

use super::error::{Error, Result};
use super::layout::{Cluster, CQL_PORT};
use super::process::{port_open, JVM17_FLAGS};
use super::programs::{log, pgrep, pid_alive, pid_stopped, send_signal};

impl Cluster {
    /// An error unless node `i` has a folder.
    pub(crate) fn require_node(&self, i: u32) -> Result<()> {
        if self.node_dir(i).is_dir() {
            Ok(())
        } else {
            Err(Error::Invalid(format!("no node {i}")))
        }
    }

    /// Stops node `node` (SIGTERM, then SIGKILL after 30 s), or every node and then any stray
    /// JVM of this state folder whose pid file was lost.
    pub fn stop(&self, node: Option<u32>) -> Result<()> {
        if let Some(i) = node {
            self.require_node(i)?;
            return self.stop_node(i, "TERM");
        }
        for i in self.known_nodes() {
            self.stop_node(i, "TERM")?;
        }
        let strays = pgrep(&format!("-Ddoppio.node={}/node", self.state.display()));
        if !strays.is_empty() {
            let list: Vec<String> = strays.iter().map(u32::to_string).collect();
            log(&format!("stopping stray nodes: {}", list.join(" ")));
            for pid in strays {
                send_signal(pid, "KILL");
            }
        }
        Ok(())
    }

    /// SIGKILLs node `i` (fault tests).
    pub fn kill(&self, i: u32) -> Result<()> {
        self.require_node(i)?;
        let pid = self.pid(i);
        let Some(p) = pid.filter(|_| pid_alive(pid)) else {
            return Err(Error::Invalid(format!("node {i} is not running")));
        };
        if !send_signal(p, "KILL") {
            return Err(Error::Failed(format!("cannot kill node {i} (pid {p})")));
        }
        let file = self.node_dir(i).join("pid");
        std::fs::remove_file(&file).map_err(Error::io(format!("remove {}", file.display())))?;
        log(&format!("node {i} killed (pid {p}, SIGKILL)"));
        Ok(())
    }

    /// SIGSTOPs node `i` (fault tests): its process and connections stay, it answers nothing
    /// until [`Cluster::resume`].
    pub fn pause(&self, i: u32) -> Result<()> {
        let p = self.running_pid(i)?;
        if !send_signal(p, "STOP") {
            return Err(Error::Failed(format!("cannot pause node {i} (pid {p})")));
        }
        log(&format!("node {i} paused (pid {p}, SIGSTOP)"));
        Ok(())
    }

    /// SIGCONTs node `i`, paused by [`Cluster::pause`] (a node that is not paused is left
    /// as it is: resuming twice is no error).
    pub fn resume(&self, i: u32) -> Result<()> {
        let p = self.running_pid(i)?;
        if !send_signal(p, "CONT") {
            return Err(Error::Failed(format!("cannot resume node {i} (pid {p})")));
        }
        log(&format!("node {i} resumed (pid {p}, SIGCONT)"));
        Ok(())
    }

    /// Node `i`'s pid, or an error if it has no folder or no live process.
    fn running_pid(&self, i: u32) -> Result<u32> {
        self.require_node(i)?;
        let pid = self.pid(i);
        pid.filter(|_| pid_alive(pid))
            .ok_or_else(|| Error::Invalid(format!("node {i} is not running")))
    }

    /// Writes one line per node to `out` (and, with several nodes, node 1's gossip view);
    /// whether every node is up (a node that left counts as up; no nodes at all is not).
    pub fn status(&self, out: &mut dyn Write) -> Result<bool> {
        let nodes = self.known_nodes();
        let put = |out: &mut dyn Write, line: String| {
            writeln!(out, "{line}").map_err(Error::io("write the status"))
        };
        if nodes.is_empty() {
            put(
                out,
                format!(
                    "no nodes (state directory {} is empty)",
                    self.state.display()
                ),
            )?;
            return Ok(false);
        }
        let mut all_up = true;
        for &i in &nodes {
            let pid = self.pid(i);
            let addr = self.addr(i);
            let state = if self.left(i) {
                "LEFT (decommissioned)"
            } else if pid_stopped(pid) {
                all_up = false;
                "PAUSED (SIGSTOP; resume NODE)"
            } else if pid_alive(pid) && port_open(&addr, CQL_PORT) {
                "UP"
            } else if pid_alive(pid) {
                all_up = false;
                "STARTING (process alive, CQL port closed)"
            } else {
                all_up = false;
                "DOWN"
            };
            let pid_text = self
                .pid_text(i)
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "-".to_owned());
            let on = |name: &str| if self.flag(i, name) { "on" } else { "off" };
            put(
                out,
                format!(
                    "node{i}  {addr:<10}  pid {pid_text:<8}  auth {:<3}  tls {:<3}  {state}",
                    on("auth"),
                    on("tls")
                ),
            )?;
        }
        if nodes.len() > 1 && pid_alive(self.pid(1)) && self.log_file(1).is_file() {
            let seen: String = self
                .gossip_view(1)
                .iter()
                .map(|(a, v)| format!("{a} {v}  "))
                .collect();
            put(out, format!("gossip seen by node1: {seen}"))?;
        }
        Ok(all_up)
    }

    /// Runs Cassandra's NodeTool (same jars) against node `i`'s JMX port with `args`, its
    /// output on this process's; its exit status.
    pub fn nodetool(&self, i: u32, args: &[String]) -> Result<ExitStatus> {
        self.require_node(i)?;
        let tools = super::install::ensure_java_and_maven()?;
        let Some(classpath) = self.complete_classpath() else {
            return Err(Error::Invalid(
                "Cassandra is not installed (scripts/cassandra.sh install)".to_owned(),
            ));
        };
        tools
            .command("java")
            .arg("-Xmx128m")
            .args(JVM17_FLAGS)
            .arg(format!(
                "-Dlogback.configurationFile={}/logback.xml",
                self.node_dir(i).display()
            ))
            .args([
                "-cp",
                &classpath,
                "org.apache.cassandra.tools.NodeTool",
                "-h",
                "127.0.0.1",
                "-p",
            ])
            .arg(self.jmx_port(i).to_string())
            .args(args)
            .status()
            .map_err(Error::io("run java (nodetool)"))
    }

    /// Writes the last `lines` lines of node `i`'s log to `out`.
    pub fn logs(&self, i: u32, lines: usize, out: &mut dyn Write) -> Result<()> {
        let file = self.log_file(i);
        if !file.is_file() {
            return Err(Error::Invalid(format!(
                "no log for node {i} ({})",
                file.display()
            )));
        }
        let bytes = std::fs::read(&file).map_err(Error::io(format!("read {}", file.display())))?;
        let text = String::from_utf8_lossy(&bytes);
        let all: Vec<&str> = text.lines().collect();
        for line in &all[all.len().saturating_sub(lines)..] {
            writeln!(out, "{line}").map_err(Error::io("write the log"))?;
        }
        Ok(())
    }

    /// Stops every node, then deletes the state folder.
    pub fn wipe(&self) -> Result<()> {
        self.stop(None)?;
        if self.state.exists() {
            std::fs::remove_dir_all(&self.state)
                .map_err(Error::io(format!("remove {}", self.state.display())))?;
        }
        log(&format!("wiped {}", self.state.display()));
        Ok(())
    }
}
