//! The meter of a measured stretch: [`Meter`] reads CPU time, context switches, peak RSS,
//! allocations and the syscall counters at the start and at the stop, and gives the
//! difference as a [`Cost`], with what each set of threads set apart did as an [`ApartCost`].

use std::time::Duration;

use crate::probe::thread_usage::{threads_usage, used_since, ThreadUsage};

use super::counters::{Counting, Counts, SyscallCounters};
use super::cpu::{kernel_threads, threads_delta, usage, Usage};
use super::kinds::{ByKind, IoUringOps};

/// Measures the cost of what happens between [`Meter::start_apart`] and [`Meter::stop`].
pub(crate) struct Meter {
    before: Usage,
    /// The kernel's io_uring threads' CPU at the start (SQPOLL threads, io-wq workers).
    kernel_threads: [Vec<(i32, Duration)>; 2],
    allocations: Option<u64>,
    /// The counters and their first reading, by owner.
    syscalls: Result<(SyscallCounters, Vec<Counts>), String>,
    /// Each set of threads set apart, with their usage at the start.
    apart: Vec<ApartThreads>,
}

impl std::fmt::Debug for Meter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meter")
            .field("before", &self.before)
            .field("syscalls", &self.syscalls.as_ref().map(|(_, n)| n))
            .finish()
    }
}

/// What the measured stretch cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cost {
    /// Wall-independent user CPU time of all threads.
    pub user: Duration,
    /// System CPU time of all threads.
    pub sys: Duration,
    /// System calls made, if the kernel let us count them.
    pub syscalls: Option<u64>,
    /// Why system calls were not counted.
    pub syscalls_unavailable: Option<String>,
    /// System calls by kind (they add up to `syscalls`), if the kernel let us count them.
    pub syscalls_by_kind: Option<ByKind<u64>>,
    /// Why system calls were not counted by kind.
    pub syscall_kinds_unavailable: Option<String>,
    /// io_uring operations submitted and completions posted, if the kernel let us count them.
    pub io_uring: Option<IoUringOps>,
    /// Why io_uring operations were not counted.
    pub io_uring_unavailable: Option<String>,
    /// Voluntary context switches (waits).
    pub voluntary_ctx_switches: u64,
    /// Involuntary context switches (preemptions).
    pub involuntary_ctx_switches: u64,
    /// The process's peak resident set size so far, bytes.
    pub peak_rss_bytes: u64,
    /// Heap allocations, when the bench is built with the `alloc-count` feature.
    pub allocations: Option<u64>,
    /// The CPU time of the process's SQPOLL threads (kernel submission threads of
    /// `doppio-uring-sqpoll`), already part of `user` and `sys`; `None` when there was none.
    pub sqpoll: Option<Duration>,
    /// The CPU time of the process's io-wq workers (`iou-wrk-*`: the kernel's threads that
    /// run io_uring operations which cannot complete at once), already part of `user` and
    /// `sys`; `None` when there was none.
    pub io_wq: Option<Duration>,
    /// What each set of threads set apart did ([`Meter::start_apart`]), in the order given:
    /// none of it is in the figures above.
    pub apart: Vec<ApartCost>,
}

/// What a set of threads set apart from a measurement did over it (a parked backend's
/// threads while another backend's segment ran).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApartCost {
    /// Their CPU time (user and system, `/proc/self/task/<tid>/schedstat`) and context
    /// switches.
    pub usage: ThreadUsage,
    /// Their system calls, when the measured ones were counted.
    pub syscalls: Option<u64>,
    /// Their system calls by kind, when the measured ones were counted so.
    pub syscalls_by_kind: Option<ByKind<u64>>,
    /// Their io_uring operations, when the measured ones were counted.
    pub io_uring: Option<IoUringOps>,
}

impl ApartCost {
    /// Both added (a count missing from either is missing).
    pub fn plus(&self, other: &ApartCost) -> ApartCost {
        ApartCost {
            usage: self.usage.plus(&other.usage),
            syscalls: self.syscalls.zip(other.syscalls).map(|(a, b)| a + b),
            syscalls_by_kind: self
                .syscalls_by_kind
                .zip(other.syscalls_by_kind)
                .map(|(a, b)| a.plus(&b)),
            io_uring: self.io_uring.zip(other.io_uring).map(|(a, b)| a.plus(&b)),
        }
    }
}

/// A set of threads set apart, with each one's usage when measuring started.
type ApartThreads = (Vec<i32>, Vec<(i32, ThreadUsage)>);

/// The sets of threads of a meter's `apart` list.
fn apart_sets(apart: &[ApartThreads]) -> Vec<&[i32]> {
    apart.iter().map(|(set, _)| set.as_slice()).collect()
}

impl Meter {
    /// Starts measuring, syscalls by kind (the tests' shorthand).
    #[cfg(test)]
    pub(crate) fn start() -> Self {
        Self::start_counting(Counting::ByKind)
    }

    /// Starts measuring, syscalls as `counting` asks (the tests' shorthand).
    #[cfg(test)]
    pub(crate) fn start_counting(counting: Counting) -> Self {
        Self::start_apart(counting, &[])
    }

    /// Starts measuring, syscalls as `counting` asks, with each set of threads in `apart`
    /// set apart: their CPU time, context switches and syscalls are left out of the
    /// [`Cost`] and given in [`Cost::apart`] instead. For a backend that sits parked while
    /// another is measured: its executors still wake now and then (a connection's request
    /// sweeper at the deadline of a request answered long ago, a keepalive, a futex), and
    /// those wake-ups are its own, not the measured backend's.
    pub(crate) fn start_apart(counting: Counting, apart: &[Vec<i32>]) -> Self {
        // The threads' usage is read from /proc before the counters start, and after they
        // stop (in `stop`): those reads are not counted as the measured stretch's syscalls.
        let apart: Vec<_> = apart
            .iter()
            .map(|set| (set.clone(), threads_usage(set)))
            .collect();
        let syscalls = SyscallCounters::open(counting, apart_sets(&apart)).and_then(|mut c| {
            let n = c.read()?;
            Ok((c, n))
        });
        Self {
            apart,
            kernel_threads: kernel_threads(),
            before: usage(),
            allocations: crate::probe::alloc_count::allocations(),
            syscalls,
        }
    }

    /// Stops and returns the cost since `start`.
    pub(crate) fn stop(mut self) -> Cost {
        let counted = match &mut self.syscalls {
            Ok((c, start)) => c.read().map(|now| {
                let d: Vec<Counts> = now.iter().zip(start).map(|(n, s)| n.since(s)).collect();
                (c, d)
            }),
            Err(e) => Err(e.clone()),
        };
        let after = usage();
        // A parked backend's SQ threads and io-wq workers are its own too.
        let [sqpoll, io_wq] = kernel_threads().map(|mut threads| {
            threads.retain(|(tid, _)| self.apart.iter().all(|(set, _)| !set.contains(tid)));
            threads
        });
        let [sqpoll_before, io_wq_before] = &self.kernel_threads;
        let mut cost = Cost {
            sqpoll: threads_delta(sqpoll_before, &sqpoll),
            io_wq: threads_delta(io_wq_before, &io_wq),
            user: after.user.saturating_sub(self.before.user),
            sys: after.sys.saturating_sub(self.before.sys),
            voluntary_ctx_switches: after.voluntary.saturating_sub(self.before.voluntary),
            involuntary_ctx_switches: after.involuntary.saturating_sub(self.before.involuntary),
            peak_rss_bytes: after.max_rss_bytes,
            allocations: match (self.allocations, crate::probe::alloc_count::allocations()) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            },
            ..Cost::default()
        };
        let mut apart: Vec<ApartCost> = self
            .apart
            .iter()
            .map(|(set, before)| ApartCost {
                usage: used_since(before, &threads_usage(set)),
                ..ApartCost::default()
            })
            .collect();
        for a in &apart {
            cost.set_apart(a);
        }
        match counted {
            Ok((c, by_owner)) => {
                let d = by_owner.first().copied().unwrap_or_default();
                for (a, d) in apart.iter_mut().zip(by_owner.iter().skip(1)) {
                    a.syscalls = Some(d.total);
                    a.syscalls_by_kind = c.kinds_unavailable.is_none().then(|| d.by_kind());
                    a.io_uring = c.io_uring_unavailable.is_none().then_some(d.io_uring);
                }
                cost.syscalls = Some(d.total);
                match &c.kinds_unavailable {
                    None => cost.syscalls_by_kind = Some(d.by_kind()),
                    Some(why) => cost.syscall_kinds_unavailable = Some(why.clone()),
                }
                match &c.io_uring_unavailable {
                    None => cost.io_uring = Some(d.io_uring),
                    Some(why) => cost.io_uring_unavailable = Some(why.clone()),
                }
            }
            // Nothing was counted: every count says why.
            Err(why) => {
                cost.syscalls_unavailable = Some(why.clone());
                cost.syscall_kinds_unavailable = Some(why.clone());
                cost.io_uring_unavailable = Some(why);
            }
        }
        cost.apart = apart;
        cost
    }
}

impl Cost {
    /// Leaves out of this cost what threads set apart used (`a`): their context switches,
    /// and their CPU time from the system share first, then the user share. A parked
    /// executor runs only to wait again (its wake-up returns from a waiting syscall, it
    /// finds nothing due and enters the next wait), so its time is kernel time in practice;
    /// the total, which the comparisons use, is exact either way.
    fn set_apart(&mut self, a: &ApartCost) {
        let u = &a.usage;
        let from_sys = u.cpu.min(self.sys);
        self.sys -= from_sys;
        self.user = self.user.saturating_sub(u.cpu - from_sys);
        self.voluntary_ctx_switches = self.voluntary_ctx_switches.saturating_sub(u.voluntary);
        self.involuntary_ctx_switches = self.involuntary_ctx_switches.saturating_sub(u.involuntary);
    }
}
