//! The outside programs the cluster control runs (java, mvn, openssl, apt-get, kill, pgrep,
//! setsid, nproc): finding them on `PATH`, running them as root for apt-get, and the one-line
//! progress messages on stderr.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::{Error, Result};

/// One progress line on stderr, `[cassandra.sh] ...` as the shell version wrote them.
pub(crate) fn log(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "[cassandra.sh] {message}");
}

/// The `PATH` the programs are looked up in and run with: the process's own, with Java 17's
/// folder put first when the default `java` is another version.
#[derive(Debug, Clone)]
pub(crate) struct Tools {
    pub(crate) path: OsString,
}

impl Tools {
    /// The process's `PATH`.
    pub(crate) fn from_env() -> Tools {
        Tools {
            path: std::env::var_os("PATH").unwrap_or_default(),
        }
    }

    /// `folder` put first.
    pub(crate) fn prepend(&mut self, folder: &Path) {
        let mut paths = vec![folder.to_owned()];
        paths.extend(std::env::split_paths(&self.path));
        if let Ok(joined) = std::env::join_paths(paths) {
            self.path = joined;
        }
    }

    /// `name`'s file on the `PATH`, if it is there and executable (`command -v`).
    pub(crate) fn find(&self, name: &str) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        std::env::split_paths(&self.path)
            .map(|dir| dir.join(name))
            .find(|f| {
                f.metadata()
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    }

    /// A command for `program`, run with this `PATH`.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("PATH", &self.path);
        command
    }
}

/// Stderr as a child's stdout or stderr (the shell version's `>&2`).
pub(crate) fn to_stderr() -> Stdio {
    use std::os::fd::AsFd;
    std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_or_else(|_| Stdio::inherit(), Stdio::from)
}

/// Runs `command` and waits for it: `Ok(true)` if it exited 0.
pub(crate) fn succeeds(command: &mut Command, what: &str) -> Result<bool> {
    command
        .status()
        .map(|s| s.success())
        .map_err(Error::io(format!("run {what}")))
}

/// Whether this process runs as root (`id -u` says 0).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `argv` as root: directly when root, else through sudo.
fn as_root(tools: &Tools, argv: &[&str]) -> Command {
    let mut command = if is_root() {
        tools.command(argv[0])
    } else {
        let mut sudo = tools.command("sudo");
        sudo.arg(argv[0]);
        sudo
    };
    command.args(&argv[1..]);
    command
}

/// Whether apt-get's package lists were updated by this process.
static APT_UPDATED: AtomicBool = AtomicBool::new(false);

/// Installs Debian `packages` (apt-get update first, once per process), output on stderr.
pub(crate) fn apt_install(tools: &Tools, packages: &[&str]) -> Result<()> {
    if !APT_UPDATED.load(Ordering::Relaxed) {
        let mut update = as_root(tools, &["apt-get", "update", "-q"]);
        if !succeeds(update.stdout(to_stderr()), "apt-get update")? {
            return Err(Error::Failed("apt-get update failed".to_owned()));
        }
        APT_UPDATED.store(true, Ordering::Relaxed);
    }
    let mut argv = vec!["apt-get", "install", "-y", "-q", "--no-install-recommends"];
    argv.extend_from_slice(packages);
    let mut install = as_root(tools, &argv);
    install
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(to_stderr());
    if succeeds(&mut install, "apt-get install")? {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "apt-get install {} failed",
            packages.join(" ")
        )))
    }
}

/// Sends `signal` (`TERM`, `KILL`) to `pid` with kill(1); whether it was delivered.
pub(crate) fn send_signal(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether process `pid` exists and is not a zombie (from /proc).
pub(crate) fn pid_alive(pid: Option<u32>) -> bool {
    let Some(pid) = pid else { return false };
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the command name's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Whether process `pid` is stopped by a signal (`SIGSTOP`: state `T` in /proc).
pub(crate) fn pid_stopped(pid: Option<u32>) -> bool {
    let Some(pid) = pid else { return false };
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "T")
    })
}

/// The processes whose command line matches `pattern` (`pgrep -f`).
pub(crate) fn pgrep(pattern: &str) -> Vec<u32> {
    Command::new("pgrep")
        .args(["-f", "--", pattern])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The number of processors this process may use (`nproc`).
pub(crate) fn nproc() -> String {
    Command::new("nproc")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| {
            std::thread::available_parallelism().map_or_else(|_| "1".to_owned(), |n| n.to_string())
        })
}
