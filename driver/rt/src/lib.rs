//! `doppio-rt`: the runtimes doppio runs on, behind one thread-per-core API.
//!
//! doppio runs on one of two runtimes, chosen per `Cluster` (or per thread, for a `Session`
//! used alone), and so can the stub server:
//! - [`Runtime::Glommio`] (the default): glommio's executor and sockets, through the thin
//!   adapter [`glommio_rt`].
//! - [`Runtime::Uring`]: doppio's own io_uring runtime ([`uring`]): one ring per thread, at
//!   most one `io_uring_enter` per loop turn, socket data through the ring (send operations
//!   and a multishot receive over a provided-buffer ring), timers in user space.
//!
//! The driver (connections, pools, the control connection, sessions, shards) and the stub are
//! written once against this crate's neutral face: [`spawn_local`], [`Timer`], [`sleep`],
//! [`Sleeper`], [`timeout`], [`TcpStream`], [`TcpListener`] and [`spawn_executor`]. Each call
//! dispatches on the runtime that runs the current thread (a thread-local flag: no atomic, no
//! allocation), and each type is an enum over the two adapters' own types (no boxing).
//!
//! Modules: [`glommio_rt`] (the glommio adapter), [`uring`] (the own runtime), [`memory`]
//! (in-process connections with no kernel in between, for measurements and tests), `task`
//! (spawning), `time` (timers), `net` (TCP), `source_port` (connecting from a chosen local
//! port, for ScyllaDB's shard-aware port), `executor` (executor threads, pinning).
//!
//! Seam (checked by `scripts/check-seams.sh`): in the whole workspace only
//! `driver/rt/src/glommio_rt.rs` names the glommio crate and only `driver/rt/src/uring/`
//! names the io-uring crate.

pub mod glommio_rt;
pub mod memory;
pub mod uring;

mod executor;
mod net;
mod source_port;
mod task;
mod time;

pub use executor::{spawn_executor, ExecutorHandle, ExecutorSpec, StartError};
pub use net::{TcpListener, TcpStream};
pub use task::{spawn_local, spawn_scoped_local, ScopedTask, Task};
pub use time::{sleep, timeout, Elapsed, Sleeper, Timer};

/// Declares one `#[test]` per runtime for each named function `fn name(runtime: Runtime)`:
/// `glommio::name` and `uring::name`, so that a test written once runs on both event loops
/// (doppio's own tests use it for every driver and stub test).
///
/// ```
/// fn connects(runtime: doppio_rt::Runtime) {
///     assert!(!runtime.name().is_empty()); // a test body, run once per runtime
/// }
/// doppio_rt::runtime_tests!(connects); // tests glommio::connects and uring::connects
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! runtime_tests {
    ($($name:ident),* $(,)?) => {
        mod glommio {
            $(#[test]
            fn $name() {
                super::$name($crate::Runtime::Glommio)
            })*
        }
        mod uring {
            $(#[test]
            fn $name() {
                super::$name($crate::Runtime::Uring)
            })*
        }
    };
}

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

/// Runs `f` to completion on a fresh, unpinned executor of `runtime` on a new thread and
/// returns its output (for tests and tools; a panic inside is resumed on the caller).
pub fn run_on<T, F, Fut>(runtime: Runtime, name: &str, f: F) -> Result<T, StartError>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T> + 'static,
{
    let handle = spawn_executor(ExecutorSpec::new(runtime, name), f)?;
    match handle.join() {
        Ok(out) => Ok(out),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
