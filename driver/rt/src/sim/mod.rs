//! The simulated runtime: one thread, virtual time, in-memory connections, and every choice
//! it makes drawn from a seed. For tests and measurements only, never for a real node.
//!
//! - **Virtual time.** [`now`] reads a clock that stands still while tasks run and jumps to
//!   the next timer's deadline when no task is ready, so an hour of timeouts passes in
//!   microseconds and the same run reads the same times.
//! - **Seeded scheduling.** Which ready task is polled next is drawn from the seed
//!   ([`Config::seed`]); so are the network's delays ([`Config::net_delay`]). The same seed
//!   replays the same interleaving, step for step.
//! - **No kernel.** Connections are the in-memory ones of [`crate::memory`] (a server such as
//!   the stub serves on the same thread through [`crate::TcpListener::bind_memory`]); a
//!   connect to any other address is refused, and nothing here makes a syscall per step.
//! - **A peer apart.** Tasks spawned inside [`as_peer`] (a server such as the stub, and what
//!   it spawns) are polled through their own never-inlined function, the client's through
//!   another: a profile (Callgrind, DHAT) tells the driver's cost from the server's and from
//!   the executor's own (`doppio cost` reads them so).
//! - **Deadlock is an answer.** When no task is ready and no timer is pending, the run ends
//!   with [`SimError::Stalled`] instead of hanging (after [`Config::stall_wait`] of real time
//!   for a wake-up from another thread, zero by default).
//!
//! Parts, each importing only those listed before it: `config` (settings, errors, counters),
//! `clock` (virtual time and its pending wake-ups), `executor` (the task arena, the ready set,
//! the run loop, and the functions that read the running simulation), `handle` (spawning, and
//! spawned tasks' handles), `timer` (timers on virtual time). This file only maps them.
//!
//! The driver runs on it unchanged, through the crate's neutral face
//! ([`crate::Runtime::Sim`]).
//!
//! Invariant: one thread. Wakers are thread-safe (a wake from another thread queues the task
//! under a mutex), but every task, timer and connection lives on the simulation's thread.

mod clock;
mod config;
mod executor;
mod handle;
mod timer;

pub use config::{Config, SimError, Stats};
pub use executor::{as_peer, elapsed, is_running, now, random_u64, run, stats};
pub(crate) use executor::{net_delay, wake_at};
pub use handle::{spawn_local, spawn_scoped_local, ScopedTask, Task};
pub use timer::Timer;

#[cfg(test)]
mod tests {
    use super::*;
    // Runtime-agnostic (a wake of its own waker, then Pending): it yields on a simulation too.
    use crate::uring::yield_now;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    /// The order in which four tasks of three steps each run, on `seed`.
    fn interleaving(seed: u64) -> Vec<u8> {
        run(Config::seeded(seed), async {
            let trace = Rc::new(RefCell::new(Vec::new()));
            let tasks: Vec<_> = (0..4u8)
                .map(|t| {
                    let trace = trace.clone();
                    spawn_local(async move {
                        for _ in 0..3 {
                            trace.borrow_mut().push(t);
                            yield_now().await;
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await;
            }
            let out = trace.borrow().clone();
            out
        })
        .unwrap()
    }

    #[test]
    fn a_seed_replays_its_interleaving_and_seeds_differ() {
        let first = interleaving(7);
        assert_eq!(first.len(), 12);
        assert_eq!(first, interleaving(7), "the same seed, the same order");
        assert!(
            (0..8).any(|seed| interleaving(seed) != first),
            "the order is drawn from the seed"
        );
    }

    #[test]
    fn an_hour_of_timers_passes_in_virtual_time() {
        let real = Instant::now();
        let (elapsed, order) = run(Config::seeded(1), async {
            let order = Rc::new(RefCell::new(Vec::new()));
            let late = {
                let order = order.clone();
                spawn_local(async move {
                    Timer::new(Duration::from_secs(3600)).await;
                    order.borrow_mut().push("hour");
                })
            };
            let early = {
                let order = order.clone();
                spawn_local(async move {
                    Timer::new(Duration::from_millis(5)).await;
                    order.borrow_mut().push("5ms");
                })
            };
            late.await;
            early.await;
            let order = order.borrow().clone();
            (elapsed().unwrap(), order)
        })
        .unwrap();
        assert_eq!(elapsed, Duration::from_secs(3600));
        assert_eq!(order, ["5ms", "hour"]);
        assert!(real.elapsed() < Duration::from_secs(60), "no real wait");
    }

    #[test]
    fn a_run_that_can_never_end_is_a_stall_with_its_seed() {
        let err = run(Config::seeded(42), async {
            let _parked = spawn_local(std::future::pending::<()>());
            Timer::new(Duration::from_secs(2)).await;
            std::future::pending::<()>().await
        })
        .unwrap_err();
        assert_eq!(
            err,
            SimError::Stalled {
                at: Duration::from_secs(2),
                tasks: 1,
                seed: 42
            }
        );
        assert!(err.to_string().contains("seed 42"), "{err}");
        let spin = run(
            Config {
                poll_limit: 1000,
                ..Config::seeded(3)
            },
            async {
                loop {
                    yield_now().await
                }
            },
        );
        assert!(matches!(spin, Err(SimError::PollLimit { seed: 3, .. })));
    }

    /// Dropping a handle drops its task's future; a detached task runs on; the tasks left
    /// when the main task ends are dropped inside the run; a scoped task may borrow.
    #[test]
    fn tasks_are_cancelled_detached_and_dropped_at_the_end() {
        struct Flag(Rc<RefCell<Vec<&'static str>>>, &'static str);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.borrow_mut().push(self.1);
            }
        }
        let log = Rc::new(RefCell::new(Vec::new()));
        let inner = log.clone();
        run(Config::seeded(0), async move {
            let flag = Flag(inner.clone(), "cancelled");
            drop(spawn_local(async move {
                let _flag = flag;
                std::future::pending::<()>().await
            }));
            assert_eq!(*inner.borrow(), ["cancelled"]);
            let (flag, log) = (Flag(inner.clone(), "detached ran"), inner.clone());
            spawn_local(async move {
                Timer::new(Duration::from_millis(1)).await;
                log.borrow_mut().push("detached woke");
                drop(flag);
            })
            .detach();
            let flag = Flag(inner.clone(), "left at the end");
            spawn_local(async move {
                let _flag = flag;
                std::future::pending::<()>().await
            })
            .detach();
            let mut borrowed = 0;
            // SAFETY: awaited here, before `borrowed` goes away.
            unsafe { spawn_scoped_local(async { borrowed += 1 }) }.await;
            assert_eq!(borrowed, 1);
            Timer::new(Duration::from_millis(2)).await;
            assert_eq!(stats().unwrap().spawned, 4);
        })
        .unwrap();
        assert_eq!(
            *log.borrow(),
            [
                "cancelled",
                "detached woke",
                "detached ran",
                "left at the end"
            ]
        );
    }

    /// Tasks spawned inside `as_peer`, and the tasks they spawn, are polled as the peer's;
    /// the rest as the client's.
    #[test]
    fn a_peer_and_its_offspring_are_counted_apart() {
        run(Config::seeded(4), async {
            let peer = as_peer(|| {
                spawn_local(async {
                    yield_now().await;
                    spawn_local(async { yield_now().await }).await;
                })
            });
            let client = spawn_local(async { yield_now().await });
            peer.await;
            client.await;
            let s = stats().unwrap();
            // The peer: 3 polls of its first task (yield, await the child, the child's end)
            // and 2 of its child; the client: 2 of its task and the main task's polls.
            assert_eq!(s.peer_polls, 5, "{s:?}");
            assert!(s.polls >= s.peer_polls + 3, "{s:?}");
        })
        .unwrap();
    }

    /// On a simulation with network delays, each send arrives after its own delay, in
    /// order, and the reader wakes when it does.
    #[test]
    fn in_memory_bytes_arrive_after_seeded_delays_in_order() {
        use crate::memory::MemoryStream;
        let config = Config {
            net_delay: (Duration::from_micros(100), Duration::from_micros(900)),
            ..Config::seeded(9)
        };
        let arrivals = run(config, async {
            let (a, b) = MemoryStream::pair();
            for chunk in [&b"one "[..], b"two ", b"three"] {
                a.send(chunk).unwrap();
            }
            drop(a);
            let mut got = bytes::BytesMut::new();
            let mut arrivals = Vec::new();
            loop {
                let n = std::future::poll_fn(|cx| b.poll_recv(cx, &mut got))
                    .await
                    .unwrap();
                if n == 0 {
                    break;
                }
                arrivals.push(elapsed().unwrap());
            }
            assert_eq!(&got[..], b"one two three");
            arrivals
        })
        .unwrap();
        assert!(!arrivals.is_empty());
        assert!(arrivals[0] >= Duration::from_micros(100), "{arrivals:?}");
        assert!(arrivals.windows(2).all(|w| w[0] < w[1]), "{arrivals:?}");
        assert!(
            *arrivals.last().unwrap() <= Duration::from_micros(900),
            "{arrivals:?}"
        );
    }
}
