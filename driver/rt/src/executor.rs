//! Executor threads: one per shard, pinned to its core, running one runtime's event loop.
//!
//! Start-up is synchronous: [`spawn_executor`] returns only once the executor is running on
//! its thread, or with the reason it could not start (a core that does not exist, io_uring
//! refused by the kernel), never a thread that dies later without a word.

use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;

use super::runtime::Runtime;
use super::{glommio_rt, uring};

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
        }
    }
}

/// Why an executor could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot start a {runtime} executor{}: {message}", core.map(|c| format!(" on core {c}")).unwrap_or_default())]
pub struct StartError {
    /// The runtime asked for.
    pub runtime: Runtime,
    /// The core asked for.
    pub core: Option<usize>,
    /// The reason, in one sentence.
    pub message: String,
}

/// A running executor thread.
pub struct ExecutorHandle<T: Send + 'static>(HandleInner<T>);

enum HandleInner<T: Send + 'static> {
    Glommio(glommio_rt::ExecutorJoinHandle<T>),
    Uring(std::thread::JoinHandle<T>),
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
            HandleInner::Uring(h) => h.join(),
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
    let fail = |message: String| StartError {
        runtime: spec.runtime,
        core: spec.core,
        message,
    };
    match spec.runtime {
        Runtime::Glommio => {
            glommio_rt::spawn_executor(&spec.name, spec.core, spec.spin_before_park, f)
                .map(|h| ExecutorHandle(HandleInner::Glommio(h)))
                .map_err(|e| fail(e.to_string()))
        }
        Runtime::Uring => {
            let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), String>>(1);
            let core = spec.core;
            let config = spec.uring;
            let thread = std::thread::Builder::new()
                .name(spec.name.clone())
                .spawn(move || {
                    if let Some(core) = core {
                        if let Err(e) = pin_current_thread(core) {
                            let _ = ready_tx.send(Err(e.clone()));
                            // The caller has the reason; end the thread without running `f`
                            // (resume_unwind: no panic message, the caller reports it).
                            std::panic::resume_unwind(Box::new(e));
                        }
                    }
                    let tx = ready_tx.clone();
                    let out = uring::run(config, async move {
                        let _ = tx.send(Ok(()));
                        f().await
                    });
                    match out {
                        Ok(out) => out,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e.to_string()));
                            std::panic::resume_unwind(Box::new(e.to_string()))
                        }
                    }
                })
                .map_err(|e| fail(format!("cannot start a thread: {e}")))?;
            match ready_rx.recv() {
                Ok(Ok(())) => Ok(ExecutorHandle(HandleInner::Uring(thread))),
                Ok(Err(message)) => {
                    let _ = thread.join();
                    Err(fail(message))
                }
                Err(_) => {
                    let _ = thread.join();
                    Err(fail("the executor thread ended before it started".into()))
                }
            }
        }
    }
}

/// Pins the calling thread to `core`.
fn pin_current_thread(core: usize) -> Result<(), String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if core >= libc::CPU_SETSIZE as usize {
        return Err(format!("core {core} does not exist ({cores} cores here)"));
    }
    // SAFETY: an all-zero cpu_set_t is a valid empty set; CPU_SET writes inside it (core is
    // below CPU_SETSIZE, checked above).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::CPU_SET(core, &mut set) };
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!(
            "cannot pin to core {core} ({cores} cores here): {e}"
        ));
    }
    Ok(())
}
