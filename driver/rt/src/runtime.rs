//! [`Runtime`]: which event loop runs a shard, and which one runs the current thread.

use super::{sim, uring};

/// Which event loop runs a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Runtime {
    /// glommio (the default): io_uring as a readiness poller, socket data by `send`/`recv`.
    #[default]
    Glommio,
    /// doppio's own io_uring runtime: at most one `io_uring_enter` per turn, socket data
    /// through the ring.
    Uring,
    /// The simulated runtime ([`crate::sim`]): one thread, virtual time, in-memory
    /// connections, every choice drawn from a seed. For tests and measurements only.
    Sim,
}

impl Runtime {
    /// Both real runtimes, default first (the simulated one is not among them: it serves
    /// no real node).
    pub const ALL: [Runtime; 2] = [Runtime::Glommio, Runtime::Uring];

    /// Its name on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Glommio => "glommio",
            Runtime::Uring => "uring",
            Runtime::Sim => "sim",
        }
    }

    /// The runtime that runs the current thread: doppio's own or the simulation when its
    /// executor is running here, glommio otherwise.
    #[inline]
    pub fn current() -> Runtime {
        if uring::is_running() {
            Runtime::Uring
        } else if sim::is_running() {
            Runtime::Sim
        } else {
            Runtime::Glommio
        }
    }
}

impl std::fmt::Display for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Runtime {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "glommio" => Ok(Runtime::Glommio),
            "uring" | "io_uring" | "io-uring" => Ok(Runtime::Uring),
            "sim" => Ok(Runtime::Sim),
            other => Err(format!("unknown runtime `{other}` (glommio, uring or sim)")),
        }
    }
}
