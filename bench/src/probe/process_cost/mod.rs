//! What a stretch of work cost this process: CPU time (user and system), context switches,
//! peak RSS, system calls in total and by kind, and io_uring operations.
//!
//! - `meter`: [`Meter`] from start to stop, the [`Cost`] of the stretch and the
//!   [`ApartCost`] of each set of threads set apart.
//! - `counters`: the syscall and io_uring counters: what to count ([`Counting`]), one
//!   counter group per thread, their counts summed by owner.
//! - `kinds`: [`SyscallKind`], one value per kind ([`ByKind`]), [`IoUringOps`].
//! - `perf_event`: tracepoint counters through `perf-event2` (tracepoint ids, open, the
//!   filter ioctl it has no call for, group read).
//! - `cpu`: `getrusage`, `/proc`'s clock ticks and `stat` CPU times, the kernel io_uring
//!   threads.
//!
//! CPU time and context switches come from `getrusage(RUSAGE_SELF)`: every thread of the
//! process, so a backend's runtime threads are charged to it (both backends' threads live in
//! one process; only the one being measured is busy, the other is parked).
//!
//! # The kernel's SQPOLL threads
//!
//! In SQPOLL mode (`doppio-uring-sqpoll`) each ring has a kernel thread, `iou-sqp-<tid>`,
//! that takes the submissions. It is a thread of this process (listed in `/proc/self/task`),
//! so `getrusage(RUSAGE_SELF)` already includes its CPU time: measured on Linux 6.18, a
//! spinning SQ thread's 0.69 s of `/proc/self/task/<tid>/stat` time appeared in the
//! process's `getrusage` over the same 1.5 s (0.745 s, the main thread 0.02 s), and
//! `sqpoll_threads_are_in_getrusage_and_measured_on_their_own` checks it on every run. So
//! the client CPU is not added to; the SQ threads' share of it (utime + stime from their
//! `stat`, in clock ticks of 10 ms, before and after the segment) is reported on its own
//! ([`Cost::sqpoll`]). Their time in a segment is lost from that share (not from the total)
//! if they end during it. The io-wq workers (`iou-wrk-<tid>`, the kernel's threads that run
//! io_uring operations that cannot complete at once) are threads of the process too, measured
//! the same way ([`Cost::io_wq`]); doppio's request path gives them no work. They make no system calls (kernel threads), so the syscall counts
//! stay those of the user threads; the operations they submit fire the io_uring tracepoints
//! on them and are counted with the others (the counters are opened on every thread, theirs
//! included).
//!
//! # Parked backends
//!
//! Backends measured in turn live in one process, and a parked one still wakes now and then:
//! a doppio connection's request sweeper fires once at the deadline of the last request it
//! saw in flight (up to the request timeout after the load stopped), a keepalive probes an
//! idle node, glommio issues a `membarrier`. Counted with everything else, those wake-ups
//! landed on the measured backend's figures (traced on Linux 6.18: one idle doppio-uring
//! shard entered its ring about 1.9 s and 0.95 s after its segments ended, inside scylla's;
//! 8 `io_uring_enter` over scylla's three segments). [`Meter::start_apart`] takes the
//! threads of each parked backend (those that appeared while it connected) and counts them
//! on their own: their syscalls from their own counter groups, their CPU time and context
//! switches from `/proc/self/task/<tid>/` ([`crate::probe::thread_usage`]). The measured cost
//! leaves them out ([`Cost::apart`] holds them), and the report gives each backend what it
//! did while parked.
//!
//! System calls are counted by the kernel with `perf_event_open(2)` on the tracepoint
//! `raw_syscalls:sys_enter`: one counter per thread that exists when measuring starts (from
//! `/proc/self/task`), each with `inherit` so that threads they start later are counted when
//! those end. Nothing is sampled or traced: the kernel only increments counters. When the
//! kernel refuses (no tracefs, `perf_event_paranoid`, no permission, seccomp), the count is
//! `None` and the reason is kept for the report.
//!
//! # Syscalls by kind, io_uring operations
//!
//! Each thread's total counter leads a perf event group that holds, besides it, one more
//! `raw_syscalls:sys_enter` counter per named [`SyscallKind`], narrowed by a tracepoint filter
//! on the syscall number (`PERF_EVENT_IOC_SET_FILTER` with `id == 1 || id == 20 || ...`,
//! numbers from `libc::SYS_*`), and a counter on each of the tracepoints
//! `io_uring:io_uring_submit_req` (operations submitted; `io_uring_submit_sqe` before Linux
//! 5.19) and `io_uring:io_uring_complete` (completions posted). [`SyscallKind::Other`] is the
//! total minus the named kinds. A group is read in one `read` (`PERF_FORMAT_GROUP`), so the
//! counts of one thread's snapshot agree with each other (no kind ever exceeds the total).
//! When the kernel refuses a filter or has no io_uring tracepoints, the total is still counted
//! and the reason for what is missing is kept; a kind or io_uring count missing on any thread
//! is missing as a whole (a partial sum would mislead).
//!
//! Filters rather than the per-syscall tracepoints `syscalls:sys_enter_<name>`, because of
//! what counting costs the measured process. Every event of a thread is scheduled out and in
//! at each of its context switches, and a kind is up to five syscalls: filters need 6 more
//! counters per thread, per-syscall tracepoints 16. Per syscall it goes the other way (every
//! syscall runs the six filters; a per-syscall tracepoint costs only the syscalls it names).
//! Measured on the development VM (Linux 6.18, 2 vCPUs, a C loop; best of 14 runs), the time
//! of a `getppid` (no kind), a `write` to `/dev/null` (a kind), and a futex ping-pong round
//! trip between two threads on one core (two context switches, four `futex` calls):
//!
//! | counters per thread, as one group                   | `getppid` | `write` | round trip |
//! |-----------------------------------------------------|-----------|---------|------------|
//! | none                                                | 197 ns    | 277 ns  | 5.1 us     |
//! | the total alone (before kinds)                      | +188 ns   | +184 ns | +3.1 us    |
//! | total, 6 filtered kinds, 2 io_uring (this design)   | +407 ns   | +415 ns | +6.6 us    |
//! | total, 16 `syscalls:sys_enter_*`, 2 io_uring        | +236 ns   | +332 ns | +9.6 us    |
//!
//! (Not grouped, the round trips cost +8.1 and +13.5 us: a group is scheduled at once.) So a
//! context switch costs about 1.6 us more with per-syscall tracepoints, the price of the
//! filters of 10 to 20 syscalls, and the backends make 5 to 12 syscalls per context switch
//! (`perf/results/2026-11-23-loopback/`). Filters also need only the tracepoint the total
//! already uses, and half the file descriptors. Counting by kind makes measuring dearer than the total alone: about 0.23 us
//! per syscall and 1.3 us per context switch on that VM, which with the loopback study's
//! figures (`perf/results/2026-11-23-loopback/`) is about 3 % of the CPU per request at one
//! request in flight and 0.3 to 2 % from 64 in flight. It is in the CPU figures.

mod counters;
mod cpu;
mod kinds;
mod meter;
mod perf_event;
#[cfg(test)]
mod tests;

pub(crate) use counters::Counting;
pub(crate) use cpu::{children_cpu, clock_ticks, process_cpu, stat_cpu};
pub(crate) use kinds::{ByKind, IoUringOps, SyscallKind};
pub(crate) use meter::{ApartCost, Cost, Meter};
