//! The node's CPU over each measured segment, when it runs on this machine: whether the
//! client or the server set the pace.
//!
//! On a small machine the node, not the client, is often the bottleneck; its throughput then
//! compares nothing about the drivers. The bench finds the processes that listen on the
//! nodes' addresses (`/proc/net/tcp` and `tcp6` for the listening socket, `/proc/*/fd` for
//! its owner) or takes `--server-pid`, and reads their CPU time (`/proc/PID/stat`) and the
//! machine's idle time (`/proc/stat`) around each segment.
//!
//! The node is **saturated** over a segment when either
//! - it used at least [`SATURATED`] of the cores it may run on (its affinity), or
//! - the machine had less than [`MACHINE_IDLE_LEFT`] of its CPU idle, the node and the
//!   client together did at least [`OURS`] of the machine's work, and the node used more CPU
//!   than the client: it shares the machine with the client and took all that was left.
//!   (On a machine busy with other work, such as a build, nothing is claimed.)
//!
//! A node on another machine is not measured (its CPU is not ours to read).

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use crate::probe::process_cost::{clock_ticks, stat_cpu};

/// The share of its cores at which the node counts as saturated.
pub(crate) const SATURATED: f64 = 0.9;

/// The machine's idle share below which a node that used more CPU than the client counts as
/// saturated.
pub(crate) const MACHINE_IDLE_LEFT: f64 = 0.1;

/// The share of the machine's busy time the node and the client must account for before a
/// full machine counts against the node.
pub(crate) const OURS: f64 = 0.75;

/// Why the node's CPU cannot be measured.
#[derive(Debug, thiserror::Error)]
pub enum ServerCpuError {
    /// `--server-pid` names no process.
    #[error("--server-pid {pid}: no such process (/proc/{pid}/stat: {source})")]
    NoProcess {
        /// The pid.
        pid: u32,
        /// The cause.
        source: std::io::Error,
    },
}

/// The processes serving the nodes, found or given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerProcesses {
    /// Their pids.
    pub pids: Vec<u32>,
    /// The cores they may run on (the union of their affinities).
    pub cores: usize,
}

impl ServerProcesses {
    /// The process `pid` (`--server-pid`).
    pub(crate) fn given(pid: u32) -> Result<Self, ServerCpuError> {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_err(|source| ServerCpuError::NoProcess { pid, source })?;
        Ok(ServerProcesses {
            pids: vec![pid],
            cores: allowed_cores(&[pid]),
        })
    }

    /// The processes listening on `nodes` that are on this machine (a loopback address, or
    /// one of this machine's own); `None` when no node is local or no listener is found
    /// (another user's process, or no permission to read its descriptors).
    pub(crate) fn listening_on(nodes: &[SocketAddr]) -> Option<Self> {
        let local: Vec<SocketAddr> = nodes.iter().copied().filter(is_local).collect();
        if local.is_empty() {
            return None;
        }
        let inodes = listening_inodes(&local);
        if inodes.is_empty() {
            return None;
        }
        let pids = owners(&inodes);
        if pids.is_empty() {
            return None;
        }
        let cores = allowed_cores(&pids);
        Some(ServerProcesses { pids, cores })
    }

    /// Their CPU time and the machine's now.
    pub(crate) fn read(&self) -> CpuReading {
        let ticks = clock_ticks();
        let server = self
            .pids
            .iter()
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                stat_cpu(&stat, ticks)
            })
            .sum();
        CpuReading {
            at: Instant::now(),
            server,
            machine: machine_times(ticks),
        }
    }
}

/// One reading of the node's and the machine's CPU.
#[derive(Debug, Clone, Copy)]
pub struct CpuReading {
    at: Instant,
    server: Duration,
    /// The machine's (busy, idle) time over all cores, when `/proc/stat` was readable.
    machine: Option<(Duration, Duration)>,
}

/// The node's CPU over one measured segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerLoad {
    /// The node's CPU time, seconds.
    pub cpu_s: f64,
    /// Its share of the cores it may run on (1.0: all of them busy).
    pub utilisation: f64,
    /// The machine's idle share over the segment, when known.
    pub machine_idle: Option<f64>,
    /// The machine's busy CPU time over the segment (all cores), seconds, when known.
    pub machine_busy_s: Option<f64>,
}

impl ServerLoad {
    /// The node's load between `before` and `after`, on `cores` cores.
    pub fn between(before: &CpuReading, after: &CpuReading, cores: usize) -> Self {
        let wall = after.at.duration_since(before.at).as_secs_f64();
        let cpu_s = after.server.saturating_sub(before.server).as_secs_f64();
        let utilisation = if wall > 0.0 {
            cpu_s / (wall * cores.max(1) as f64)
        } else {
            0.0
        };
        let (machine_idle, machine_busy_s) = match (before.machine, after.machine) {
            (Some((b0, i0)), Some((b1, i1))) => {
                let busy = b1.saturating_sub(b0).as_secs_f64();
                let idle = i1.saturating_sub(i0).as_secs_f64();
                (
                    (busy + idle > 0.0).then(|| idle / (busy + idle)),
                    Some(busy),
                )
            }
            _ => (None, None),
        };
        ServerLoad {
            cpu_s,
            utilisation,
            machine_idle,
            machine_busy_s,
        }
    }

    /// Whether the node set the pace: it used [`SATURATED`] of its cores, or the machine
    /// had less than [`MACHINE_IDLE_LEFT`] idle, its work was at least [`OURS`] the node's
    /// and the client's (`client_cpu_s`, over the same segment), and the node used more.
    pub fn saturated(&self, client_cpu_s: f64) -> bool {
        let full_machine_taken = match (self.machine_idle, self.machine_busy_s) {
            (Some(idle), Some(busy)) => {
                idle < MACHINE_IDLE_LEFT
                    && self.cpu_s + client_cpu_s >= OURS * busy
                    && self.cpu_s > client_cpu_s
            }
            _ => false,
        };
        self.utilisation >= SATURATED || full_machine_taken
    }
}

/// Whether `addr` is served by this machine: loopback, or an address of its own interfaces
/// (as far as binding to it tells).
fn is_local(addr: &SocketAddr) -> bool {
    let ip = addr.ip();
    ip.is_loopback() || ip.is_unspecified() || std::net::UdpSocket::bind((ip, 0)).is_ok()
}

/// The inodes of the listening TCP sockets bound to one of `addrs` (or to the wildcard
/// address on their port).
fn listening_inodes(addrs: &[SocketAddr]) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            if let Some((local, inode)) = listening_socket(line) {
                let wanted = addrs.iter().any(|a| {
                    a.port() == local.port()
                        && (a.ip() == local.ip() || local.ip().is_unspecified())
                });
                if wanted {
                    out.insert(inode);
                }
            }
        }
    }
    out
}

/// A `/proc/net/tcp{,6}` line's local address and inode, when its socket listens.
fn listening_socket(line: &str) -> Option<(SocketAddr, u64)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
    if *state != "0A" {
        return None;
    }
    let (ip_hex, port_hex) = local.split_once(':')?;
    let port = u16::from_str_radix(port_hex, 16).ok()?;
    let ip = match ip_hex.len() {
        // One little-endian 32-bit word.
        8 => IpAddr::from(
            u32::from_str_radix(ip_hex, 16)
                .ok()?
                .swap_bytes()
                .to_be_bytes(),
        ),
        // Four 32-bit words, each little-endian.
        32 => {
            let mut bytes = [0u8; 16];
            for (k, chunk) in bytes.chunks_mut(4).enumerate() {
                let word = u32::from_str_radix(ip_hex.get(k * 8..k * 8 + 8)?, 16).ok()?;
                chunk.copy_from_slice(&word.swap_bytes().to_be_bytes());
            }
            let v6 = std::net::Ipv6Addr::from(bytes);
            v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)
        }
        _ => return None,
    };
    Some((SocketAddr::new(ip, port), inode.parse().ok()?))
}

/// The processes holding a descriptor of one of `inodes`.
fn owners(inodes: &BTreeSet<u64>) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let owns = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path()).ok().is_some_and(|target| {
                target
                    .to_str()
                    .and_then(|t| t.strip_prefix("socket:["))
                    .and_then(|t| t.strip_suffix(']'))
                    .and_then(|t| t.parse::<u64>().ok())
                    .is_some_and(|inode| inodes.contains(&inode))
            })
        });
        if owns {
            pids.push(pid);
        }
    }
    pids
}

/// The number of cores in the union of `pids`' affinities (`Cpus_allowed_list` of
/// `/proc/PID/status`); the machine's count when none can be read.
fn allowed_cores(pids: &[u32]) -> usize {
    let mut cores = BTreeSet::new();
    for pid in pids {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        if let Some(list) = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        {
            cores.extend(core_list(list.trim()));
        }
    }
    if cores.is_empty() {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        cores.len()
    }
}

/// The cores of a list such as `0-3,8,10-11`.
fn core_list(list: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

/// The machine's busy and idle time over all cores (`/proc/stat`'s first line: idle and
/// iowait are idle; the rest but guest time, already in user, is busy).
fn machine_times(ticks: u64) -> Option<(Duration, Duration)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    machine_times_of(text.lines().next()?, ticks)
}

fn machine_times_of(line: &str, ticks: u64) -> Option<(Duration, Duration)> {
    let mut f = line.split_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = f.take(8).filter_map(|x| x.parse().ok()).collect();
    let [user, nice, system, idle, iowait, irq, softirq, steal] = v[..] else {
        return None;
    };
    let d = |t: u64| Duration::from_secs_f64(t as f64 / ticks as f64);
    Some((
        d(user + nice + system + irq + softirq + steal),
        d(idle + iowait),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_sockets_are_read_from_the_kernels_tables() {
        // 127.0.0.1:9042 listening, and a connected socket that is not.
        let v4 = "   0: 0100007F:2352 00000000:0000 0A 00000000:00000000 00:00000000 00000000  \
                  1000        0 123456 1 0000000000000000 100 0 0 10 0";
        assert_eq!(
            listening_socket(v4),
            Some(("127.0.0.1:9042".parse().unwrap(), 123456))
        );
        let connected = v4.replace(" 0A ", " 01 ");
        assert_eq!(listening_socket(&connected), None);
        // [::]:9042 and ::ffff:127.0.0.2:9042.
        let any6 =
            "   1: 00000000000000000000000000000000:2352 00000000000000000000000000000000:0000 \
                    0A 00000000:00000000 00:00000000 00000000  1000        0 77 1";
        assert_eq!(
            listening_socket(any6),
            Some(("[::]:9042".parse().unwrap(), 77))
        );
        let mapped =
            "   2: 0000000000000000FFFF00000200007F:2352 00000000000000000000000000000000:0000 \
                      0A 00000000:00000000 00:00000000 00000000  1000        0 78 1";
        assert_eq!(
            listening_socket(mapped),
            Some(("127.0.0.2:9042".parse().unwrap(), 78))
        );
        assert_eq!(listening_socket("garbage"), None);
    }

    #[test]
    fn this_process_is_found_listening_and_its_cpu_read() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let found = ServerProcesses::listening_on(&[addr]).expect("our own listener");
        assert_eq!(found.pids, vec![std::process::id()]);
        assert!(found.cores >= 1);
        let before = found.read();
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_millis(200) {
            std::hint::black_box(spin.elapsed());
        }
        let load = ServerLoad::between(&before, &found.read(), found.cores);
        assert!(load.cpu_s > 0.05, "{load:?}");
        // A remote node is not measured.
        assert_eq!(
            ServerProcesses::listening_on(&["192.0.2.1:9042".parse().unwrap()]),
            None
        );
        assert!(ServerProcesses::given(u32::MAX).is_err());
    }

    #[test]
    fn saturation_is_a_node_at_its_cores_or_a_full_machine_it_took() {
        // Over one second of a two-core machine.
        let load = |cpu_s, utilisation, idle: Option<f64>| ServerLoad {
            cpu_s,
            utilisation,
            machine_idle: idle,
            machine_busy_s: idle.map(|i| 2.0 * (1.0 - i)),
        };
        assert!(load(1.8, 0.95, Some(0.2)).saturated(0.1));
        // A node at 60 % of two cores on a machine with nothing idle, using more than the
        // client: it took what was left.
        assert!(load(1.2, 0.6, Some(0.01)).saturated(0.7));
        // The same machine with the client using more: the client set the pace.
        assert!(!load(0.5, 0.25, Some(0.01)).saturated(1.4));
        // A full machine whose work is mostly someone else's (a build): nothing claimed.
        assert!(!load(0.6, 0.3, Some(0.01)).saturated(0.4));
        assert!(!load(0.5, 0.25, Some(0.4)).saturated(0.1));
        assert!(!load(0.5, 0.25, None).saturated(0.1));
    }

    #[test]
    fn core_lists_and_machine_times_are_parsed() {
        assert_eq!(core_list("0-2,5,7-8"), vec![0, 1, 2, 5, 7, 8]);
        assert_eq!(core_list(""), Vec::<usize>::new());
        let (busy, idle) = machine_times_of("cpu  100 5 50 800 20 3 2 0 0 0", 100).unwrap();
        assert_eq!(busy, Duration::from_secs_f64(1.6));
        assert_eq!(idle, Duration::from_secs_f64(8.2));
        assert_eq!(machine_times_of("cpu0 1 2 3 4 5 6 7 8", 100), None);
    }
}
