//! Shards: one pinned executor per core (glommio's or doppio's own io_uring runtime, see
//! [`doppio_rt`]), each owning its state, and the control plane that hands them work.
//!
//! A shard is a thread running one executor pinned to its core. Its state `S` is built **on
//! that thread** (so it may hold `Rc`, `RefCell` and sockets) and lives until shutdown. [`Shards::run_on_shards`] sends a job to every shard and collects each
//! shard's result; jobs run as local tasks beside each other.
//!
//! The control plane (job mailboxes, result hand-back) uses a `Mutex` and a cross-thread wake:
//! it runs once per job, never per request. Nothing on the request path crosses cores.
//!
//! Invariants:
//! - A job is never lost silently: if its shard has stopped or panics, `run_on_shards`
//!   returns an error naming the shard instead of waiting forever.
//! - Shutdown is graceful: shards stop taking jobs, let running ones finish (up to the grace
//!   period), then drop their state (closing its connections) and their threads are joined.

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};
use std::time::Duration;

use doppio_rt::{self as rt, ExecutorHandle, ExecutorSpec, Runtime};

/// A unit of work for one shard: given the shard's state, a future to run there.
type Job<S> = Box<dyn FnOnce(Rc<S>) -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// Why work could not be run on the shards.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// An executor could not be started (bad core number, no io_uring, locked-memory limit).
    #[error("cannot start shard {shard} on core {core} ({runtime} runtime): {cause}")]
    Start {
        /// Shard index.
        shard: usize,
        /// The core it was to be pinned to.
        core: usize,
        /// The runtime asked for.
        runtime: Runtime,
        /// Why.
        #[source]
        cause: doppio_rt::StartFailure,
    },
    /// The shard stopped (shut down, or a job panicked) before finishing the job.
    #[error("shard {shard} stopped before finishing the job (shut down, or a job panicked)")]
    ShardStopped {
        /// Shard index.
        shard: usize,
    },
}

/// How to start the shards.
#[derive(Debug, Clone)]
pub struct ShardOptions {
    /// One shard per entry, on that core.
    pub cores: Vec<usize>,
    /// Pin each shard to its core (false: the kernel places them, for tests sharing a
    /// machine).
    pub pin: bool,
    /// How long shutdown waits for running jobs.
    pub grace: Duration,
    /// The event loop of every shard.
    pub runtime: Runtime,
    /// glommio only: spin this long looking for work before parking. Parking costs glommio
    /// several `io_uring_enter` calls; spinning trades CPU time for fewer of them when events
    /// arrive closer together than the spin.
    pub spin_before_park: Option<Duration>,
    /// doppio's io_uring runtime only: ring and provided-buffer sizes, poll budget.
    pub uring: rt::uring::Config,
}

impl ShardOptions {
    /// glommio shards on `cores`, no spinning.
    pub fn new(cores: &[usize], pin: bool, grace: Duration) -> Self {
        Self {
            cores: cores.to_vec(),
            pin,
            grace,
            runtime: Runtime::default(),
            spin_before_park: None,
            uring: rt::uring::Config::default(),
        }
    }
}

struct MailboxState<S> {
    jobs: VecDeque<Job<S>>,
    waker: Option<Waker>,
    closed: bool,
}

/// The control-plane queue into one shard.
struct Mailbox<S> {
    state: Mutex<MailboxState<S>>,
}

impl<S> Mailbox<S> {
    fn lock(&self) -> MutexGuard<'_, MailboxState<S>> {
        // A panic while holding this lock cannot leave the queue inconsistent (push/pop only).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Closes the mailbox and drops queued jobs (their result senders with them, so their
    /// callers see the shard as stopped).
    fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.jobs.clear();
        if let Some(w) = st.waker.take() {
            w.wake();
        }
    }
}

/// Closes the mailbox when the shard thread ends, by return or by panic.
struct CloseOnExit<S>(Arc<Mailbox<S>>);

impl<S> Drop for CloseOnExit<S> {
    fn drop(&mut self) {
        self.0.close();
    }
}

struct Shard<S> {
    core: usize,
    mailbox: Arc<Mailbox<S>>,
    /// Taken by the first shutdown; a `Mutex` so that shutdown can run from any thread that
    /// shares the `Shards` (control plane only).
    handle: Mutex<Option<ExecutorHandle<()>>>,
}

/// A set of running shards with per-shard state `S`.
pub struct Shards<S> {
    shards: Vec<Shard<S>>,
}

impl<S> std::fmt::Debug for Shards<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cores: Vec<usize> = self.shards.iter().map(|s| s.core).collect();
        f.debug_struct("Shards").field("cores", &cores).finish()
    }
}

impl<S: 'static> Shards<S> {
    #[cfg(feature = "unstable-internals")]
    /// Starts one glommio executor per entry of `cores`, pinned to that core (or unpinned when
    /// `pin` is false, for tests sharing a machine), and builds each shard's state there with
    /// `init(shard_index)`. `grace` bounds how long shutdown waits for running jobs.
    pub fn start<I>(
        cores: &[usize],
        pin: bool,
        grace: Duration,
        init: I,
    ) -> Result<Self, RuntimeError>
    where
        I: Fn(usize) -> S + Send + Sync + 'static,
    {
        Self::start_with(&ShardOptions::new(cores, pin, grace), init)
    }

    /// [`Shards::start`] with every option: the runtime, and glommio's spin before park.
    pub fn start_with<I>(options: &ShardOptions, init: I) -> Result<Self, RuntimeError>
    where
        I: Fn(usize) -> S + Send + Sync + 'static,
    {
        let init = Arc::new(init);
        let grace = options.grace;
        let mut shards = Vec::with_capacity(options.cores.len());
        for (index, &core) in options.cores.iter().enumerate() {
            let mailbox = Arc::new(Mailbox {
                state: Mutex::new(MailboxState {
                    jobs: VecDeque::new(),
                    waker: None,
                    closed: false,
                }),
            });
            let init = init.clone();
            let shard_mailbox = mailbox.clone();
            let spec = ExecutorSpec {
                core: options.pin.then_some(core),
                spin_before_park: options.spin_before_park,
                uring: options.uring,
                ..ExecutorSpec::new(options.runtime, &format!("doppio-shard-{index}"))
            };
            let spawned =
                rt::spawn_executor(spec, move || shard_main(index, grace, shard_mailbox, init));
            match spawned {
                Ok(handle) => shards.push(Shard {
                    core,
                    mailbox,
                    handle: Mutex::new(Some(handle)),
                }),
                Err(e) => {
                    let started = Shards { shards };
                    drop(started); // stops the shards started so far
                    return Err(RuntimeError::Start {
                        shard: index,
                        core,
                        runtime: options.runtime,
                        cause: e.cause,
                    });
                }
            }
        }
        Ok(Self { shards })
    }

    /// Number of shards.
    pub fn len(&self) -> usize {
        self.shards.len()
    }

    #[cfg(feature = "unstable-internals")]
    /// True if there are no shards.
    pub fn is_empty(&self) -> bool {
        self.shards.is_empty()
    }

    /// The core each shard runs on, by shard index.
    pub fn cores(&self) -> Vec<usize> {
        self.shards.iter().map(|s| s.core).collect()
    }

    /// Runs `f(state)` on every shard at once and returns each shard's result, in shard
    /// order. Blocks the calling thread (which must not be a shard) until all are done.
    pub fn run_on_shards<F, Fut, T>(&self, f: F) -> Result<Vec<T>, RuntimeError>
    where
        F: Fn(Rc<S>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = T> + 'static,
        T: Send + 'static,
    {
        let f = Arc::new(f);
        let mut receivers = Vec::with_capacity(self.shards.len());
        for (index, shard) in self.shards.iter().enumerate() {
            let (tx, rx) = mpsc::sync_channel::<T>(1);
            let f = f.clone();
            let job: Job<S> = Box::new(move |state| {
                Box::pin(async move {
                    let out = f(state).await;
                    let _ = tx.send(out);
                })
            });
            let mut st = shard.mailbox.lock();
            if st.closed {
                return Err(RuntimeError::ShardStopped { shard: index });
            }
            st.jobs.push_back(job);
            if let Some(w) = st.waker.take() {
                w.wake();
            }
            drop(st);
            receivers.push(rx);
        }
        receivers
            .into_iter()
            .enumerate()
            .map(|(shard, rx)| rx.recv().map_err(|_| RuntimeError::ShardStopped { shard }))
            .collect()
    }

    /// Stops every shard gracefully and joins its thread: shards take no new job, running
    /// jobs get the grace period to finish, then each shard's state is dropped. Returns the
    /// shards whose thread ended in a panic. Idempotent.
    pub fn shutdown(&self) -> Vec<usize> {
        self.stop_all()
    }

    /// A handle that posts jobs to every shard without waiting for them; `Send + Sync`, so
    /// a shard can hold it (the control connection uses it to hand topology changes to all
    /// shards).
    pub fn poster(&self) -> Poster<S> {
        Poster {
            mailboxes: Arc::new(self.shards.iter().map(|s| s.mailbox.clone()).collect()),
        }
    }
}

/// Posts jobs to every shard, fire-and-forget (control plane only). Jobs to a stopped shard
/// are dropped.
pub struct Poster<S> {
    mailboxes: Arc<Vec<Arc<Mailbox<S>>>>,
}

impl<S> Clone for Poster<S> {
    fn clone(&self) -> Self {
        Self {
            mailboxes: self.mailboxes.clone(),
        }
    }
}

impl<S> std::fmt::Debug for Poster<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poster")
            .field("shards", &self.mailboxes.len())
            .finish()
    }
}

impl<S: 'static> Poster<S> {
    /// Queues `f(state)` on every shard and returns at once.
    pub fn post_all<F, Fut>(&self, f: F)
    where
        F: Fn(Rc<S>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let f = Arc::new(f);
        for mailbox in self.mailboxes.iter() {
            let f = f.clone();
            let job: Job<S> = Box::new(move |state| Box::pin(f(state)));
            let mut st = mailbox.lock();
            if st.closed {
                continue;
            }
            st.jobs.push_back(job);
            if let Some(w) = st.waker.take() {
                w.wake();
            }
        }
    }
}

impl<S> Shards<S> {
    /// Closes every mailbox, then joins every shard thread; returns the shards that panicked.
    fn stop_all(&self) -> Vec<usize> {
        for shard in &self.shards {
            let mut st = shard.mailbox.lock();
            st.closed = true;
            if let Some(w) = st.waker.take() {
                w.wake();
            }
        }
        let mut panicked = Vec::new();
        for (index, shard) in self.shards.iter().enumerate() {
            let handle = shard
                .handle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some(handle) = handle {
                if handle.join().is_err() {
                    panicked.push(index);
                }
            }
        }
        panicked
    }
}

impl<S> Drop for Shards<S> {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// The shard thread's main task: build the state, run jobs until the mailbox closes, wait for
/// running jobs up to `grace`, then drop the state.
async fn shard_main<S: 'static, I: Fn(usize) -> S>(
    index: usize,
    grace: Duration,
    mailbox: Arc<Mailbox<S>>,
    init: Arc<I>,
) {
    let _close_on_exit = CloseOnExit(mailbox.clone());
    let state = Rc::new(init(index));
    let running = Rc::new(std::cell::Cell::new(0usize));
    loop {
        let next = poll_fn(|cx| {
            let mut st = mailbox.lock();
            if let Some(job) = st.jobs.pop_front() {
                return Poll::Ready(Some(job));
            }
            if st.closed {
                return Poll::Ready(None);
            }
            st.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
        let Some(job) = next else { break };
        let future = job(state.clone());
        let running = running.clone();
        running.set(running.get() + 1);
        rt::spawn_local(async move {
            future.await;
            running.set(running.get() - 1);
        })
        .detach();
    }
    // Graceful stop: running jobs get `grace` to finish; then the state (and every connection
    // in it) is dropped, which fails whatever is still in flight with a clear error.
    let deadline = doppio_rt::now() + grace;
    while running.get() > 0 && doppio_rt::now() < deadline {
        rt::sleep(Duration::from_millis(5)).await;
    }
    drop(state);
    // Work still running now sees its requests fail (the state's drop closed what it owned);
    // a short bounded wait lets it return those errors before the executor drops it.
    let unwind = doppio_rt::now() + Duration::from_millis(100);
    while running.get() > 0 && doppio_rt::now() < unwind {
        rt::sleep(Duration::from_millis(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn two_shards(runtime: Runtime) -> Shards<Cell<u32>> {
        let options = ShardOptions {
            runtime,
            ..ShardOptions::new(&[0, 1], false, Duration::from_secs(1))
        };
        Shards::start_with(&options, |_| Cell::new(0)).unwrap()
    }

    fn every_shard_runs_the_job_and_keeps_its_state(runtime: Runtime) {
        let shards = two_shards(runtime);
        assert_eq!(shards.len(), 2);
        for round in 1..=3u32 {
            let out = shards
                .run_on_shards(|state| async move {
                    state.set(state.get() + 1);
                    (state.get(), std::thread::current().name().map(String::from))
                })
                .unwrap();
            assert_eq!(out.len(), 2);
            for (i, (count, name)) in out.iter().enumerate() {
                assert_eq!(*count, round, "shard {i} lost its state");
                // glommio appends its executor id to the name it is given.
                let name = name.clone().unwrap_or_default();
                assert!(name.starts_with(&format!("doppio-shard-{i}")), "{name}");
            }
        }
        assert!(shards.shutdown().is_empty());
    }

    fn a_panicking_job_is_an_error_not_a_hang(runtime: Runtime) {
        let shards = two_shards(runtime);
        let err = shards
            .run_on_shards(|state| async move {
                if state.get() == 0 {
                    panic!("job failed on purpose");
                }
            })
            .unwrap_err();
        assert!(matches!(err, RuntimeError::ShardStopped { .. }), "{err}");
        // The shards are gone; new work is refused rather than queued forever.
        assert!(shards.run_on_shards(|_| async {}).is_err());
    }

    fn shutdown_lets_running_jobs_finish(runtime: Runtime) {
        let shards = Arc::new(two_shards(runtime));
        let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let runner = {
            let (shards, started) = (shards.clone(), started.clone());
            std::thread::spawn(move || {
                shards.run_on_shards(move |state| {
                    let started = started.clone();
                    async move {
                        started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        rt::sleep(Duration::from_millis(200)).await;
                        state.set(7);
                        state.get()
                    }
                })
            })
        };
        // Shut down while the jobs sleep (once both run; a fixed wait raced a busy machine):
        // they finish within the grace period.
        while started.load(std::sync::atomic::Ordering::SeqCst) < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(shards.shutdown().is_empty());
        assert_eq!(runner.join().unwrap().unwrap(), vec![7, 7]);
        assert!(
            shards.run_on_shards(|_| async {}).is_err(),
            "stopped shards refuse work"
        );
        assert!(shards.shutdown().is_empty(), "a second shutdown is a no-op");
    }

    #[test]
    fn on_both_runtimes() {
        for runtime in Runtime::ALL {
            every_shard_runs_the_job_and_keeps_its_state(runtime);
            a_panicking_job_is_an_error_not_a_hang(runtime);
            shutdown_lets_running_jobs_finish(runtime);
        }
    }
}
