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
//! [`Sleeper`], [`timeout`], [`now`], [`TcpStream`], [`TcpListener`] and [`spawn_executor`].
//!
//! A third runtime, [`Runtime::Sim`] ([`sim`]), runs the same code for tests and
//! measurements: one thread, virtual time, in-memory connections, every choice drawn from a
//! seed, no syscall per step. Each call
//! dispatches on the runtime that runs the current thread (a thread-local flag: no atomic, no
//! allocation), and each type is an enum over the two adapters' own types (no boxing).
//!
//! Modules: [`glommio_rt`] (the glommio adapter), [`uring`] (the own runtime), [`sim`] (the
//! simulated runtime), [`memory`]
//! (in-process connections with no kernel in between, for measurements and tests), `runtime`
//! ([`Runtime`]: which event loop runs this thread), `task` (spawning), `time` (timers), `net`
//! (TCP), `source_port` (connecting from a chosen local port, for ScyllaDB's shard-aware
//! port), `executor` (executor threads, pinning). This file is the map: it declares and
//! re-exports, and defines only [`run_on`] and [`runtime_tests!`], which nothing inside the
//! crate uses (no file imports one above it: `scripts/import-graph.sh --files driver/rt`).
//!
//! Seam (checked by `scripts/check-seams.sh`): in the whole workspace only
//! `driver/rt/src/glommio_rt.rs` names the glommio crate and only `driver/rt/src/uring/`
//! names the io-uring crate.
//!
//! Linux only (io_uring). Cargo features: none (both runtimes and the simulation are always
//! built).

pub mod glommio_rt;
pub mod memory;
pub mod sim;
pub mod uring;

mod executor;
mod net;
mod runtime;
mod source_port;
mod task;
mod time;

pub use executor::{spawn_executor, ExecutorHandle, ExecutorSpec, StartError, StartFailure};
pub use net::{TcpListener, TcpStream};
pub use runtime::Runtime;
pub use task::{spawn_local, spawn_scoped_local, ScopedTask, Task};
pub use time::{now, sleep, timeout, Elapsed, Sleeper, Timer};

/// Declares one `#[test]` per runtime for each named function `fn name(runtime: Runtime)`:
/// `glommio::name` and `uring::name`, so that a test written once runs on both event loops
/// (doppio's own tests use it for every driver and stub test). The names after `and_sim:`
/// also get `sim::name` on the simulated runtime ([`Runtime::Sim`]): for tests that need no
/// real socket (their peers are in-memory listeners on the test's own thread).
///
/// A leading `guard: path;` makes each generated test first call `path(module_path!())` and
/// hold what it returns until the test ends (doppio's driver tests take their file's turn in
/// a test binary that holds many files this way). The path is resolved inside the generated
/// modules: a crate's path, or `super::name` for a function beside the invocation.
///
/// ```
/// fn connects(runtime: doppio_rt::Runtime) {
///     assert!(!runtime.name().is_empty()); // a test body, run once per runtime
/// }
/// fn counts(runtime: doppio_rt::Runtime) {
///     assert!(!runtime.name().is_empty());
/// }
/// // glommio::connects, uring::connects, and counts on glommio, uring and sim
/// doppio_rt::runtime_tests!(connects; and_sim: counts);
///
/// mod guarded {
///     fn hold(module: &'static str) -> &'static str {
///         module // a lock guard, a turn, a scratch folder: dropped when the test ends
///     }
///     fn reads(runtime: doppio_rt::Runtime) {
///         assert!(!runtime.name().is_empty());
///     }
///     doppio_rt::runtime_tests!(guard: super::hold; reads);
/// }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! runtime_tests {
    (guard: $guard:path; $($name:ident),* $(,)?) => {
        $crate::runtime_tests!(guard: $guard; $($name),*; and_sim:);
    };
    (guard: $guard:path; $($name:ident),* $(,)? ; and_sim: $($sim:ident),* $(,)?) => {
        mod glommio {
            $(#[test]
            fn $name() {
                let _guard = $guard(module_path!());
                super::$name($crate::Runtime::Glommio)
            })*
            $(#[test]
            fn $sim() {
                let _guard = $guard(module_path!());
                super::$sim($crate::Runtime::Glommio)
            })*
        }
        mod uring {
            $(#[test]
            fn $name() {
                let _guard = $guard(module_path!());
                super::$name($crate::Runtime::Uring)
            })*
            $(#[test]
            fn $sim() {
                let _guard = $guard(module_path!());
                super::$sim($crate::Runtime::Uring)
            })*
        }
        mod sim {
            $(#[test]
            fn $sim() {
                let _guard = $guard(module_path!());
                super::$sim($crate::Runtime::Sim)
            })*
        }
    };
    ($($name:ident),* $(,)?) => {
        $crate::runtime_tests!(guard: $crate::no_guard; $($name),*; and_sim:);
    };
    ($($name:ident),* $(,)? ; and_sim: $($sim:ident),* $(,)?) => {
        $crate::runtime_tests!(guard: $crate::no_guard; $($name),*; and_sim: $($sim),*);
    };
}

/// The guard of [`runtime_tests!`] when none is named: holds nothing.
#[doc(hidden)]
pub fn no_guard(_module: &'static str) -> NoGuard {
    NoGuard
}

/// What [`no_guard`] returns.
#[doc(hidden)]
#[derive(Debug)]
pub struct NoGuard;

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
