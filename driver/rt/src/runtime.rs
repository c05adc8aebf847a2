//! [`Runtime`]: which event loop runs a shard, and which one runs the current thread.

use super::uring;

/// Which event loop runs a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Runtime {
    /// glommio (the default): io_uring as a readiness poller, socket data by `send`/`recv`.
    #[default]
    Glommio,
    /// doppio's own io_uring runtime: at most one `io_uring_enter` per turn, socket data
    /// through the ring.
    Uring,
}

impl Runtime {
    /// Both runtimes, default first.
    pub const ALL: [Runtime; 2] = [Runtime::Glommio, Runtime::Uring];

    /// Its name on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Glommio => "glommio",
            Runtime::Uring => "uring",
        }
    }

    /// The runtime that runs the current thread: doppio's own when its executor is running
    /// here, glommio otherwise.
    #[inline]
    pub fn current() -> Runtime {
        if uring::is_running() {
            Runtime::Uring
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
            other => Err(format!("unknown runtime `{other}` (glommio or uring)")),
        }
    }
}
