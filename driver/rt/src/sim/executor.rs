//! The simulation's executor: a task arena, the set of tasks woken, and the run loop that
//! polls one of them (drawn from the seed) at a time and moves the clock when none is ready.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use super::clock::Clock;
use super::config::{Config, SimError, Stats};

/// A task's place in the arena: its slot and the slot's generation when it was spawned (a
/// wake-up for a slot reused since is dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TaskId {
    pub(super) index: u32,
    pub(super) generation: u32,
}

/// The main future's id in the ready set (never a slot).
const MAIN: TaskId = TaskId {
    index: u32::MAX,
    generation: 0,
};

/// Tasks woken and not yet polled; shared with wakers, which may be woken from anywhere.
#[derive(Default)]
struct ReadySet {
    ids: Mutex<Vec<TaskId>>,
    /// Signalled by a wake-up, for a run waiting on other threads ([`Config::stall_wait`]).
    woken: Condvar,
}

/// A task's waker: queues its id once until it is polled.
struct TaskWaker {
    id: TaskId,
    queued: AtomicBool,
    ready: Arc<ReadySet>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            // A poisoned lock means a panic in another wake: the run is unwinding anyway.
            if let Ok(mut ids) = self.ready.ids.lock() {
                ids.push(self.id);
            }
            self.ready.woken.notify_one();
        }
    }
}

type BoxedTask = Pin<Box<dyn Future<Output = ()>>>;

/// A slot of the arena.
struct Slot {
    generation: u32,
    /// The task's future: `None` while it is being polled or once the slot is free.
    future: Option<BoxedTask>,
    waker: Option<Arc<TaskWaker>>,
    /// Cancelled while being polled: drop it when the poll returns.
    cancelled: bool,
    /// A task of the peer (spawned inside [`as_peer`], or by such a task), not the client's.
    peer: bool,
}

/// A running simulation (one per thread).
pub(super) struct Sim {
    pub(super) config: Config,
    pub(super) clock: Clock,
    pub(super) rng: RefCell<fastrand::Rng>,
    slots: RefCell<Vec<Slot>>,
    free: RefCell<Vec<u32>>,
    live: Cell<usize>,
    ready: Arc<ReadySet>,
    polls: Cell<u64>,
    peer_polls: Cell<u64>,
    spawned: Cell<u64>,
    time_jumps: Cell<u64>,
    /// The task being polled is a peer's (so is anything it spawns).
    in_peer: Cell<bool>,
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<Sim>>> = const { RefCell::new(None) };
    /// Whether a simulation runs here: read by every dispatch on the current runtime, so kept
    /// apart from `CURRENT` (one byte, no reference count).
    static RUNNING: Cell<bool> = const { Cell::new(false) };
}

/// Calls `f` with this thread's simulation (`None` when there is none).
pub(super) fn with<R>(f: impl FnOnce(&Sim) -> R) -> Option<R> {
    if !is_running() {
        return None;
    }
    let sim = CURRENT.with(|c| c.borrow().clone())?;
    Some(f(&sim))
}

impl Sim {
    fn new(config: Config) -> Self {
        Self {
            rng: RefCell::new(fastrand::Rng::with_seed(config.seed)),
            config,
            clock: Clock::new(),
            slots: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
            live: Cell::new(0),
            ready: Arc::new(ReadySet::default()),
            polls: Cell::new(0),
            peer_polls: Cell::new(0),
            spawned: Cell::new(0),
            time_jumps: Cell::new(0),
            in_peer: Cell::new(false),
        }
    }

    pub(super) fn stats(&self) -> Stats {
        Stats {
            polls: self.polls.get(),
            peer_polls: self.peer_polls.get(),
            spawned: self.spawned.get(),
            time_jumps: self.time_jumps.get(),
            elapsed: self.clock.elapsed(),
        }
    }

    pub(super) fn net_delay(&self) -> Option<Duration> {
        let (lo, hi) = self.config.net_delay;
        if hi.is_zero() {
            return None;
        }
        let (lo, hi) = (lo.min(hi).as_nanos() as u64, hi.as_nanos() as u64);
        Some(Duration::from_nanos(self.rng.borrow_mut().u64(lo..=hi)))
    }

    /// Puts `future` in the arena and queues it to be polled.
    pub(super) fn spawn(&self, future: BoxedTask) -> TaskId {
        let index = self.free.borrow_mut().pop();
        let mut slots = self.slots.borrow_mut();
        let index = index.unwrap_or_else(|| {
            slots.push(Slot {
                generation: 0,
                future: None,
                waker: None,
                cancelled: false,
                peer: false,
            });
            (slots.len() - 1) as u32
        });
        let slot = &mut slots[index as usize];
        let id = TaskId {
            index,
            generation: slot.generation,
        };
        let waker = Arc::new(TaskWaker {
            id,
            queued: AtomicBool::new(false),
            ready: self.ready.clone(),
        });
        slot.future = Some(future);
        slot.waker = Some(waker.clone());
        slot.cancelled = false;
        slot.peer = self.in_peer.get();
        drop(slots);
        self.live.set(self.live.get() + 1);
        self.spawned.set(self.spawned.get() + 1);
        waker.wake_by_ref();
        id
    }

    /// Drops task `id`'s future (now, or when its poll in progress returns).
    pub(super) fn cancel(&self, id: TaskId) {
        let future = {
            let mut slots = self.slots.borrow_mut();
            let Some(slot) = slots.get_mut(id.index as usize) else {
                return;
            };
            if slot.generation != id.generation {
                return; // ended already
            }
            match slot.future.take() {
                Some(f) => {
                    self.release(slot, id.index);
                    f
                }
                None => {
                    slot.cancelled = true; // being polled: dropped when the poll returns
                    return;
                }
            }
        };
        // Dropped outside the borrow: its drop may spawn or cancel other tasks.
        drop(future);
    }

    fn release(&self, slot: &mut Slot, index: u32) {
        slot.generation = slot.generation.wrapping_add(1);
        slot.waker = None;
        slot.cancelled = false;
        self.free.borrow_mut().push(index);
        self.live.set(self.live.get() - 1);
    }

    /// Takes one woken id, drawn from the seed.
    fn pick(&self) -> Option<TaskId> {
        let mut ids = self.ready.ids.lock().ok()?;
        if ids.is_empty() {
            return None;
        }
        let i = self.rng.borrow_mut().usize(..ids.len());
        Some(ids.swap_remove(i))
    }

    /// Polls task `id` once, if it is still alive.
    fn poll_task(&self, id: TaskId) {
        let (mut future, waker, peer) = {
            let mut slots = self.slots.borrow_mut();
            let Some(slot) = slots.get_mut(id.index as usize) else {
                return;
            };
            if slot.generation != id.generation {
                return;
            }
            let (Some(future), Some(waker)) = (slot.future.take(), slot.waker.clone()) else {
                return;
            };
            waker.queued.store(false, Ordering::Release);
            (future, waker, slot.peer)
        };
        self.polls.set(self.polls.get() + 1);
        let w = Waker::from(waker);
        let mut cx = Context::from_waker(&w);
        let done = if peer {
            self.peer_polls.set(self.peer_polls.get() + 1);
            self.in_peer.set(true);
            let done = poll_peer_task(&mut future, &mut cx);
            self.in_peer.set(false);
            done
        } else {
            poll_client_task(&mut future, &mut cx)
        };
        let mut slots = self.slots.borrow_mut();
        let slot = &mut slots[id.index as usize];
        if done || slot.cancelled {
            self.release(slot, id.index);
            drop(slots);
            drop(future); // outside the borrow, as in `cancel`
        } else {
            slot.future = Some(future);
        }
    }

    /// Drops every task left (when the main future has ended).
    fn drop_all(&self) {
        loop {
            let next = {
                let mut slots = self.slots.borrow_mut();
                let mut found = None;
                for (index, slot) in slots.iter_mut().enumerate() {
                    if let Some(f) = slot.future.take() {
                        self.release(slot, index as u32);
                        found = Some(f);
                        break;
                    }
                }
                found
            };
            match next {
                Some(f) => drop(f),
                None => return,
            }
        }
    }
}

/// Runs `fut` to completion on a simulation on this thread and returns its output; the tasks
/// it spawned and left running are dropped when it ends.
///
/// # Panics
/// If this thread already runs a simulation or doppio's io_uring executor.
pub fn run<T>(config: Config, fut: impl Future<Output = T>) -> Result<T, SimError> {
    assert!(
        !crate::uring::is_running() && !is_running(),
        "doppio_rt::sim::run called on a thread that already runs an executor"
    );
    run_loop(config, fut)
}

/// Whether a simulation runs this thread.
#[inline]
pub fn is_running() -> bool {
    RUNNING.with(Cell::get)
}

/// Virtual now (the real monotonic clock's reading when the run began, plus the virtual time
/// passed since). Only meaningful on a simulation's thread; the real clock elsewhere.
pub fn now() -> Instant {
    with(|sim| sim.clock.now()).unwrap_or_else(Instant::now)
}

/// Virtual time since the run began, on a simulation's thread (`None` elsewhere).
#[inline]
pub fn elapsed() -> Option<Duration> {
    with(|sim| sim.clock.elapsed())
}

/// This run's counters so far (`None` off a simulation).
pub fn stats() -> Option<Stats> {
    with(|sim| sim.stats())
}

/// A value drawn from the run's seed (`None` off a simulation): for a peer or a fault
/// schedule that must replay with the run.
pub fn random_u64() -> Option<u64> {
    with(|sim| sim.rng.borrow_mut().u64(..))
}

/// The delay of the next send through an in-memory connection (`None`: at once, and always
/// off a simulation).
pub(crate) fn net_delay() -> Option<Duration> {
    with(|sim| sim.net_delay()).flatten()
}

/// Wakes `waker` at virtual time `at` (at once if it has passed).
pub(crate) fn wake_at(at: Instant, waker: std::task::Waker) {
    if with(|sim| sim.clock.wake_at(at, waker.clone())).is_none() {
        waker.wake();
    }
}

/// Polls a client task (anything not spawned as the peer's). Never inlined, so that a
/// profile of a simulation (Callgrind's inclusive cost of this function) tells the client's
/// work from the peer's and from the executor's own.
///
/// Each poll function ends by touching its own constant: the optimiser cannot then merge the
/// two (identical bodies are folded into one under LTO, and a profile would name only one),
/// and the poll is not a tail call (whose frame would be missing from a heap profile's
/// stacks).
#[inline(never)]
fn poll_client_task(future: &mut BoxedTask, cx: &mut Context<'_>) -> bool {
    let ready = future.as_mut().poll(cx).is_ready();
    std::hint::black_box(CLIENT_SIDE);
    ready
}

/// What the client's poll functions touch last (see [`poll_client_task`]).
const CLIENT_SIDE: u8 = 1;
/// What the peer's poll function touches last.
const PEER_SIDE: u8 = 2;

/// Polls the main future, the client's too; never inlined, as [`poll_client_task`].
#[inline(never)]
fn poll_client_main<F: Future>(main: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<F::Output> {
    let out = main.poll(cx);
    std::hint::black_box(CLIENT_SIDE);
    out
}

/// Polls a peer task (see [`as_peer`]); never inlined, as [`poll_client_task`].
#[inline(never)]
fn poll_peer_task(future: &mut BoxedTask, cx: &mut Context<'_>) -> bool {
    let ready = future.as_mut().poll(cx).is_ready();
    std::hint::black_box(PEER_SIDE);
    ready
}

/// Runs `f` (on a simulation's thread) with every task it spawns marked as the peer's: a
/// server such as the stub, whose work a measurement of the client must leave out. Tasks a
/// peer task spawns are the peer's too. Off a simulation, just runs `f`.
pub fn as_peer<R>(f: impl FnOnce() -> R) -> R {
    let Some(sim) = CURRENT.with(|c| c.borrow().clone()) else {
        return f();
    };
    let was = sim.in_peer.replace(true);
    let out = f();
    sim.in_peer.set(was);
    out
}

/// Clears the thread's simulation when the run ends, also when a task's panic unwinds
/// through it, after dropping the tasks left (their drops may still use the simulation).
struct Running(Rc<Sim>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.drop_all();
        RUNNING.with(|r| r.set(false));
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

fn run_loop<T>(config: Config, fut: impl Future<Output = T>) -> Result<T, SimError> {
    let sim = Rc::new(Sim::new(config));
    CURRENT.with(|c| *c.borrow_mut() = Some(sim.clone()));
    RUNNING.with(|r| r.set(true));
    let running = Running(sim);
    let sim = &running.0;
    let mut main = std::pin::pin!(fut);
    let main_waker = Arc::new(TaskWaker {
        id: MAIN,
        queued: AtomicBool::new(false),
        ready: sim.ready.clone(),
    });
    main_waker.wake_by_ref();
    let waker = Waker::from(main_waker.clone());
    let seed = sim.config.seed;
    loop {
        if let Some(id) = sim.pick() {
            if sim.polls.get() >= sim.config.poll_limit {
                return Err(SimError::PollLimit {
                    polls: sim.polls.get(),
                    seed,
                });
            }
            if id == MAIN {
                main_waker.queued.store(false, Ordering::Release);
                sim.polls.set(sim.polls.get() + 1);
                if let Poll::Ready(out) =
                    poll_client_main(main.as_mut(), &mut Context::from_waker(&waker))
                {
                    return Ok(out);
                }
            } else {
                sim.poll_task(id);
            }
            continue;
        }
        if sim.clock.advance() {
            sim.time_jumps.set(sim.time_jumps.get() + 1);
            continue;
        }
        if !sim.config.stall_wait.is_zero() && wait_for_wake(sim) {
            continue;
        }
        return Err(SimError::Stalled {
            at: sim.clock.elapsed(),
            tasks: sim.live.get(),
            seed,
        });
    }
}

/// Waits up to the configured stall wait for a wake-up from another thread.
fn wait_for_wake(sim: &Sim) -> bool {
    let Ok(ids) = sim.ready.ids.lock() else {
        return false;
    };
    match sim
        .ready
        .woken
        .wait_timeout_while(ids, sim.config.stall_wait, |ids| ids.is_empty())
    {
        Ok((ids, _)) => !ids.is_empty(),
        Err(_) => false,
    }
}
