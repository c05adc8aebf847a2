//! A node's JVM: launched in a session of its own (it outlives the command that started it),
//! waited for until its CQL port answers, stopped (SIGTERM, then SIGKILL after 30 s).

use std::fs::File;
use std::net::{SocketAddr, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::error::{Error, Result};
use super::layout::{Cluster, CQL_PORT};
use super::programs::{log, nproc, pid_alive, send_signal, Tools};

/// The JVM options Cassandra needs on Java 17 (the nodes' and nodetool's).
pub(crate) const JVM17_FLAGS: &[&str] = &[
    "-Djdk.attach.allowAttachSelf=true",
    "--add-exports",
    "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports",
    "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports",
    "java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports",
    "java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports",
    "java.sql/java.sql=ALL-UNNAMED",
    "--add-exports",
    "java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports",
    "jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens",
    "jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens",
    "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.io=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.util=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
];

/// Whether a TCP connection to `addr:port` opens.
pub(crate) fn port_open(addr: &str, port: u16) -> bool {
    format!("{addr}:{port}")
        .parse::<SocketAddr>()
        .is_ok_and(|a| TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok())
}

/// The last `n` of `lines`.
fn last<T>(lines: &[T], n: usize) -> &[T] {
    &lines[lines.len().saturating_sub(n)..]
}

impl Cluster {
    /// Launches node `i` of an `n`-node cluster with `heap` (`-Xms` and `-Xmx`); a cluster of
    /// several nodes waits `ring_delay_ms` for the ring. Writes its pid file.
    pub(crate) fn launch(
        &self,
        tools: &Tools,
        classpath: &str,
        i: u32,
        n: u32,
        heap: &str,
        ring_delay_ms: u32,
    ) -> Result<()> {
        let dir = self.node_dir(i);
        let d = dir.display();
        let log_path = self.log_file(i);
        let log_file =
            File::create(&log_path).map_err(Error::io(format!("create {}", log_path.display())))?;
        let log_err = log_file
            .try_clone()
            .map_err(Error::io(format!("open {}", log_path.display())))?;
        let mut gossip = Vec::new();
        if n > 1 {
            gossip.push(format!("-Dcassandra.ring_delay_ms={ring_delay_ms}"));
        }
        if dir.join("cassandra-rackdc.properties").is_file() {
            gossip.push(format!(
                "-Dcassandra-rackdc.properties=file://{d}/cassandra-rackdc.properties"
            ));
        }
        // setsid: the node outlives this process and is not hit by its terminal's signals.
        // -Ddoppio.node marks the process as ours, so that `stop` can find strays.
        let mut java = tools.command("setsid");
        java.arg("java")
            .args([format!("-Xms{heap}"), format!("-Xmx{heap}")])
            .args([
                "-Xss512k",
                "-XX:+UseG1GC",
                "-XX:+HeapDumpOnOutOfMemoryError",
                "-XX:+ExitOnOutOfMemoryError",
            ])
            .arg(format!("-XX:HeapDumpPath={d}/logs"))
            .arg(format!("-XX:ErrorFile={d}/logs/hs_err_%p.log"))
            .arg(format!("-XX:ActiveProcessorCount={}", nproc()))
            .args(JVM17_FLAGS)
            .arg("-Djava.net.preferIPv4Stack=true")
            .arg(format!("-Dcassandra.config=file://{d}/cassandra.yaml"))
            .arg(format!("-Dlogback.configurationFile={d}/logback.xml"))
            .arg(format!("-Dcassandra.logdir={d}/logs"))
            .arg(format!("-Dcassandra.triggers_dir={d}/triggers"))
            .arg(format!("-Dcassandra.storagedir={d}/data"))
            .args([
                "-Dcassandra-foreground=yes",
                "-Dcassandra.skip_wait_for_gossip_to_settle=0",
                "-Dcassandra.superuser_setup_delay_ms=0",
                "-Dcassandra.disable_auth_caches_remote_configuration=true",
            ])
            .args(gossip)
            .arg(format!("-Dcassandra.jmx.local.port={}", self.jmx_port(i)))
            .arg(format!("-Ddoppio.node={d}"))
            .args([
                "-cp",
                classpath,
                "org.apache.cassandra.service.CassandraDaemon",
            ])
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err);
        let mut child = java.spawn().map_err(Error::io("run setsid java"))?;
        let pid = child.id();
        // Reaped when it ends, so that a long-lived caller (a test) sees it gone, not a zombie.
        std::thread::spawn(move || child.wait());
        super::config::write(&dir.join("pid"), &format!("{pid}\n"))
    }

    /// Waits until node `i` answers on its CQL port: an error if it dies first (its errors and
    /// last log lines on stderr) or does not answer within `timeout`.
    pub(crate) fn wait_for_node(&self, i: u32, timeout: Duration) -> Result<()> {
        let (addr, pid, start) = (self.addr(i), self.pid(i), Instant::now());
        let pid_text = pid.map_or_else(String::new, |p| p.to_string());
        let log_path = self.log_file(i);
        let read_log = || {
            std::fs::read(&log_path)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        while !port_open(&addr, CQL_PORT) {
            if !pid_alive(pid) {
                log(&format!(
                    "node {i} (pid {pid_text}) died during start-up; its errors, then the last lines of {}:",
                    log_path.display()
                ));
                let text = read_log();
                let lines: Vec<&str> = text.lines().collect();
                let errors: Vec<&&str> = lines
                    .iter()
                    .filter(|l| {
                        l.starts_with("ERROR") || l.starts_with("WARN") || l.contains("Exception")
                    })
                    .collect();
                for l in last(&errors, 20) {
                    eprintln!("{l}");
                }
                for l in last(&lines, 15) {
                    eprintln!("{l}");
                }
                return Err(Error::Failed(format!("node {i} died during start-up")));
            }
            if start.elapsed().as_secs() > timeout.as_secs() {
                log(&format!(
                    "node {i} did not answer on {addr}:{CQL_PORT} within {}s; last lines of its log:",
                    timeout.as_secs()
                ));
                let text = read_log();
                let lines: Vec<&str> = text.lines().collect();
                for l in last(&lines, 40) {
                    eprintln!("{l}");
                }
                return Err(Error::Failed(format!(
                    "node {i} did not answer within {}s",
                    timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        log(&format!(
            "node {i} up: CQL on {addr}:{CQL_PORT} after {}s (pid {pid_text})",
            start.elapsed().as_secs()
        ));
        Ok(())
    }

    /// Stops node `i` with `signal` (SIGKILL if it ignores it for 30 s; a paused node is
    /// resumed to take it) and removes its pid file.
    pub(crate) fn stop_node(&self, i: u32, signal: &str) -> Result<()> {
        let pid = self.pid(i);
        if let (Some(p), true) = (pid, pid_alive(pid)) {
            send_signal(p, signal);
            // A paused node (SIGSTOP) takes the signal only once it runs again.
            send_signal(p, "CONT");
            for _ in 0..60 {
                if !pid_alive(pid) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            if pid_alive(pid) {
                log(&format!(
                    "node {i} (pid {p}) ignored SIG{signal} for 30s; sending SIGKILL"
                ));
                send_signal(p, "KILL");
                std::thread::sleep(Duration::from_millis(500));
            }
            log(&format!("node {i} stopped (pid {p}, SIG{signal})"));
        }
        let file = self.node_dir(i).join("pid");
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io(format!("remove {}", file.display()))(e))
            }
            _ => Ok(()),
        }
    }
}
