//! Executor threads: one per shard, pinned to its core, running one runtime's event loop.
//!
//! Start-up is synchronous: [`spawn_executor`] returns only once the executor is running on
//! its thread, or with the reason it could not start (a core that does not exist, io_uring
//! refused by the kernel), never a thread that dies later without a word.

use std::future::Future;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use super::runtime::Runtime;
use super::{glommio_rt, sim, uring};

/// How to start one executor thread.
#[derive(Debug, Clone)]
pub struct ExecutorSpec {
    /// Which event loop.
    pub runtime: Runtime,
    /// The thread's name.
    pub name: String,
    /// The core to pin the thread to (`None`: the kernel places it).
    pub core: Option<usize>,
    /// glommio only: spin this long looking for work before parking.
    pub spin_before_park: Option<Duration>,
    /// The io_uring runtime's ring and buffer sizes.
    pub uring: uring::Config,
    /// The simulation's seed and settings (its stall wait counts from here: other threads
    /// may wake an executor's tasks).
    pub sim: sim::Config,
}

impl ExecutorSpec {
    /// An unpinned executor of `runtime` with default settings.
    pub fn new(runtime: Runtime, name: &str) -> Self {
        Self {
            runtime,
            name: name.to_owned(),
            core: None,
            spin_before_park: None,
            uring: uring::Config::default(),
            sim: sim::Config {
                stall_wait: Duration::from_secs(10),
                ..sim::Config::default()
            },
        }
    }
}

/// Why an executor could not start.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot start a {runtime} executor{}: {cause}", core.map(|c| format!(" on core {c}")).unwrap_or_default())]
pub struct StartError {
    /// The runtime asked for.
    pub runtime: Runtime,
    /// The core asked for.
    pub core: Option<usize>,
    /// Why.
    #[source]
    pub cause: StartFailure,
}

/// What stopped an executor from starting. `Clone` (the causes' `io::Error`s are shared),
/// so that one failure can be reported by every shard that waits on it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StartFailure {
    /// The core is past what a CPU set can name.
    #[error("core {core} does not exist ({cores} cores here)")]
    NoSuchCore {
        /// The core asked for.
        core: usize,
        /// The cores this machine has.
        cores: usize,
    },
    /// The kernel refused to pin the thread to the core (one this machine or this
    /// process's CPU set does not have).
    #[error("cannot pin to core {core} ({cores} cores here): {source}")]
    Pin {
        /// The core asked for.
        core: usize,
        /// The cores this machine has.
        cores: usize,
        /// `sched_setaffinity`'s error.
        source: Arc<std::io::Error>,
    },
    /// No thread could be started.
    #[error("cannot start a thread: {0}")]
    Thread(#[source] Arc<std::io::Error>),
    /// glommio refused to start its executor.
    #[error("{0}")]
    Glommio(#[source] Arc<std::io::Error>),
    /// io_uring cannot be set up as asked.
    #[error(transparent)]
    Uring(#[from] uring::UringError),
    /// The simulation ended before its main task did (it stalled or hit its poll limit).
    #[error(transparent)]
    Sim(#[from] sim::SimError),
    /// The thread ended before its executor reported it was running.
    #[error("the executor thread ended before it started")]
    EndedEarly,
}

/// A running executor thread.
pub struct ExecutorHandle<T: Send + 'static>(HandleInner<T>);

enum HandleInner<T: Send + 'static> {
    Glommio(glommio_rt::ExecutorJoinHandle<T>),
    /// doppio's own runtime or a simulation, each on a plain thread.
    Thread(std::thread::JoinHandle<T>),
}

impl<T: Send + 'static> std::fmt::Debug for ExecutorHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExecutorHandle")
    }
}

impl<T: Send + 'static> ExecutorHandle<T> {
    /// Waits for the thread to end: its output, or the panic that ended it.
    pub fn join(self) -> std::thread::Result<T> {
        match self.0 {
            HandleInner::Glommio(h) => glommio_rt::join(h),
            HandleInner::Thread(h) => h.join(),
        }
    }
}

/// Starts an executor thread as `spec` says and runs `f()` on it as its main task; the
/// thread ends when that task completes (other tasks it spawned are dropped then).
pub fn spawn_executor<T, F, Fut>(spec: ExecutorSpec, f: F) -> Result<ExecutorHandle<T>, StartError>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    let fail = |cause: StartFailure| StartError {
        runtime: spec.runtime,
        core: spec.core,
        cause,
    };
    match spec.runtime {
        Runtime::Glommio => {
            glommio_rt::spawn_executor(&spec.name, spec.core, spec.spin_before_park, f)
                .map(|h| ExecutorHandle(HandleInner::Glommio(h)))
                .map_err(|e| fail(StartFailure::Glommio(Arc::new(e))))
        }
        Runtime::Uring | Runtime::Sim => {
            let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), StartFailure>>(1);
            let (runtime, core) = (spec.runtime, spec.core);
            let (uring_config, sim_config) = (spec.uring, spec.sim);
            let thread = std::thread::Builder::new()
                .name(spec.name.clone())
                .spawn(move || {
                    if let Some(core) = core {
                        if let Err(e) = pin_current_thread(core) {
                            let _ = ready_tx.send(Err(e.clone()));
                            // The caller has the reason; end the thread without running `f`
                            // (resume_unwind: no panic message, the caller reports it).
                            std::panic::resume_unwind(Box::new(e.to_string()));
                        }
                    }
                    let tx = ready_tx.clone();
                    let main = async move {
                        let _ = tx.send(Ok(()));
                        f().await
                    };
                    let out = match runtime {
                        Runtime::Sim => sim::run(sim_config, main).map_err(StartFailure::Sim),
                        _ => uring::run(uring_config, main).map_err(StartFailure::Uring),
                    };
                    match out {
                        Ok(out) => out,
                        Err(e) => {
                            // Before the start: the caller reports it. After (a simulation
                            // that stalled): the join reports it, as the thread's panic.
                            let text = e.to_string();
                            let _ = ready_tx.send(Err(e));
                            std::panic::resume_unwind(Box::new(text))
                        }
                    }
                })
                .map_err(|e| fail(StartFailure::Thread(Arc::new(e))))?;
            match ready_rx.recv() {
                Ok(Ok(())) => Ok(ExecutorHandle(HandleInner::Thread(thread))),
                Ok(Err(cause)) => {
                    let _ = thread.join();
                    Err(fail(cause))
                }
                Err(_) => {
                    let _ = thread.join();
                    Err(fail(StartFailure::EndedEarly))
                }
            }
        }
    }
}

/// Pins the calling thread to `core`.
fn pin_current_thread(core: usize) -> Result<(), StartFailure> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if core >= libc::CPU_SETSIZE as usize {
        return Err(StartFailure::NoSuchCore { core, cores });
    }
    // SAFETY: an all-zero cpu_set_t is a valid empty set; CPU_SET writes inside it (core is
    // below CPU_SETSIZE, checked above).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::CPU_SET(core, &mut set) };
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(StartFailure::Pin {
            core,
            cores,
            source: Arc::new(std::io::Error::last_os_error()),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start_on(runtime: Runtime, core: usize) -> Result<ExecutorHandle<()>, StartError> {
        let mut spec = ExecutorSpec::new(runtime, "start-test");
        spec.core = Some(core);
        spawn_executor(spec, || async {})
    }

    /// A core past what a CPU set names is refused before the kernel is asked; one inside
    /// it that this machine lacks is refused by `sched_setaffinity` (the unsafe call, on its
    /// failing path), with the OS error kept as the source. Neither panics nor hangs, on
    /// either runtime, and the error names the runtime and the core.
    #[test]
    fn a_core_this_machine_lacks_is_a_typed_start_error_on_both_runtimes() {
        for runtime in [Runtime::Glommio, Runtime::Uring] {
            let e = start_on(runtime, 100_000).unwrap_err();
            assert_eq!((e.runtime, e.core), (runtime, Some(100_000)));
            let text = e.to_string();
            assert!(text.contains("core 100000"), "{text}");
            if runtime == Runtime::Uring {
                assert!(
                    matches!(e.cause, StartFailure::NoSuchCore { core: 100_000, .. }),
                    "{e:?}"
                );
            }
        }
        // Inside a CPU set (1024 cores) but not on this machine.
        let e = start_on(Runtime::Uring, 1000).unwrap_err();
        match &e.cause {
            StartFailure::Pin { core, source, .. } => {
                assert_eq!(*core, 1000);
                assert_eq!(source.raw_os_error(), Some(libc::EINVAL), "{source}");
            }
            other => panic!("{other:?}"),
        }
        assert!(std::error::Error::source(&e).is_some(), "the cause is kept");
        let e = start_on(Runtime::Glommio, 1000).unwrap_err();
        assert!(matches!(e.cause, StartFailure::Glommio(_)), "{e:?}");
        // Pinning to a core that exists works (core 0 is always here).
        start_on(Runtime::Uring, 0).unwrap().join().unwrap();
    }
}
