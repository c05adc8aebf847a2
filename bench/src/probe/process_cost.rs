//! What a stretch of work cost this process: CPU time (user and system), context switches,
//! peak RSS, system calls in total and by kind, and io_uring operations.
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

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::probe::thread_usage::{threads_usage, used_since, ThreadUsage};

/// The kernel's threads of this process that work for its io_uring rings, by their names'
/// prefix in `/proc/self/task/*/comm`: the SQPOLL threads and the io-wq workers.
const KERNEL_THREADS: [&str; 2] = ["iou-sqp-", "iou-wrk-"];

/// The CPU time (user + system) of each of this process's kernel io_uring threads, by kind
/// ([`KERNEL_THREADS`]) and thread id; empty when there is none (or /proc cannot be read).
fn kernel_threads() -> [Vec<(i32, Duration)>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    let ticks = clock_ticks();
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let Some(kind) = kernel_thread_kind(&comm) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else {
            continue;
        };
        if let Some(cpu) = stat_cpu(&stat, ticks) {
            out[kind].push((tid, cpu));
        }
    }
    out
}

/// Which of [`KERNEL_THREADS`] a thread named `comm` is, if any.
fn kernel_thread_kind(comm: &str) -> Option<usize> {
    KERNEL_THREADS.iter().position(|p| comm.starts_with(p))
}

/// The CPU the threads of one kind used between two readings (a thread that appeared counts
/// from zero; one that ended is lost from the share); `None` when there was none either time.
fn threads_delta(before: &[(i32, Duration)], after: &[(i32, Duration)]) -> Option<Duration> {
    (!after.is_empty() || !before.is_empty()).then(|| {
        after
            .iter()
            .map(|(tid, now)| {
                let was = before.iter().find(|(t, _)| t == tid);
                now.saturating_sub(was.map_or(Duration::ZERO, |(_, d)| *d))
            })
            .sum()
    })
}

/// The kernel's clock ticks per second, the unit of `/proc`'s CPU times (100 when it
/// cannot be read).
pub(crate) fn clock_ticks() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
}

/// utime + stime of a `/proc/<pid>/task/<tid>/stat` line (fields 14 and 15, in clock ticks
/// of `ticks` per second); the name field may hold spaces and parentheses, so fields are
/// counted after its last `)`.
pub(crate) fn stat_cpu(stat: &str, ticks: u64) -> Option<Duration> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut f = rest.split_whitespace().skip(11);
    let utime: u64 = f.next()?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    let t = utime + stime;
    Some(Duration::from_secs(t / ticks) + Duration::from_nanos((t % ticks) * 1_000_000_000 / ticks))
}

/// Counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Usage {
    user: Duration,
    sys: Duration,
    voluntary: u64,
    involuntary: u64,
    max_rss_bytes: u64,
}

fn usage() -> Usage {
    rusage(libc::RUSAGE_SELF)
}

/// User + system CPU time of this process (every thread).
pub(crate) fn process_cpu() -> Duration {
    let u = usage();
    u.user + u.sys
}

/// User + system CPU time of this process's children that have been waited for.
pub(crate) fn children_cpu() -> Duration {
    let u = rusage(libc::RUSAGE_CHILDREN);
    u.user + u.sys
}

/// `getrusage(who)`, zeros if it fails.
fn rusage(who: libc::c_int) -> Usage {
    // SAFETY: `getrusage` writes a `rusage` struct we own; `who` is RUSAGE_SELF or
    // RUSAGE_CHILDREN, both always valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the pointer is to a live, properly aligned `rusage`.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return Usage::default();
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    Usage {
        user: tv(ru.ru_utime),
        sys: tv(ru.ru_stime),
        voluntary: ru.ru_nvcsw.max(0) as u64,
        involuntary: ru.ru_nivcsw.max(0) as u64,
        // Linux reports ru_maxrss in KiB.
        max_rss_bytes: (ru.ru_maxrss.max(0) as u64) * 1024,
    }
}

/// The kinds of system call the report breaks the total into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyscallKind {
    /// `io_uring_enter`: submitting to an io_uring and waiting for its completions.
    IoUringEnter,
    /// The send family: `sendto`, `sendmsg`, `sendmmsg`, `write`, `writev`.
    Send,
    /// The receive family: `recvfrom`, `recvmsg`, `recvmmsg`, `read`, `readv`.
    Recv,
    /// Waiting for readiness: `epoll_wait`, `epoll_pwait`, `epoll_pwait2`.
    Epoll,
    /// `futex`: threads waiting for and waking each other.
    Futex,
    /// `membarrier`: process-wide memory barriers.
    Membarrier,
    /// Every other system call: the total minus the kinds above.
    Other,
}

impl SyscallKind {
    /// Every kind in report order, [`SyscallKind::Other`] last.
    pub const ALL: [SyscallKind; 7] = [
        SyscallKind::IoUringEnter,
        SyscallKind::Send,
        SyscallKind::Recv,
        SyscallKind::Epoll,
        SyscallKind::Futex,
        SyscallKind::Membarrier,
        SyscallKind::Other,
    ];

    /// The kinds the kernel counts (all but `Other`), in report order.
    const NAMED: [SyscallKind; 6] = [
        SyscallKind::IoUringEnter,
        SyscallKind::Send,
        SyscallKind::Recv,
        SyscallKind::Epoll,
        SyscallKind::Futex,
        SyscallKind::Membarrier,
    ];

    /// Its name in reports: the JSON key and the text report's row.
    pub fn name(self) -> &'static str {
        match self {
            SyscallKind::IoUringEnter => "io_uring_enter",
            SyscallKind::Send => "send",
            SyscallKind::Recv => "recv",
            SyscallKind::Epoll => "epoll",
            SyscallKind::Futex => "futex",
            SyscallKind::Membarrier => "membarrier",
            SyscallKind::Other => "other",
        }
    }

    /// The numbers of its system calls on this architecture (none for `Other`).
    pub fn syscalls(self) -> &'static [libc::c_long] {
        match self {
            SyscallKind::IoUringEnter => &[libc::SYS_io_uring_enter],
            SyscallKind::Send => &[
                libc::SYS_sendto,
                libc::SYS_sendmsg,
                libc::SYS_sendmmsg,
                libc::SYS_write,
                libc::SYS_writev,
            ],
            SyscallKind::Recv => &[
                libc::SYS_recvfrom,
                libc::SYS_recvmsg,
                libc::SYS_recvmmsg,
                libc::SYS_read,
                libc::SYS_readv,
            ],
            SyscallKind::Epoll => &[
                // The newer generic architectures (aarch64, riscv64) have only the `p` forms.
                #[cfg(target_arch = "x86_64")]
                libc::SYS_epoll_wait,
                libc::SYS_epoll_pwait,
                libc::SYS_epoll_pwait2,
            ],
            SyscallKind::Futex => &[libc::SYS_futex],
            SyscallKind::Membarrier => &[libc::SYS_membarrier],
            SyscallKind::Other => &[],
        }
    }

    /// The tracepoint filter that keeps this kind's syscalls (`id == 1 || id == 20`).
    fn filter(self) -> String {
        let ids: Vec<String> = self
            .syscalls()
            .iter()
            .map(|n| format!("id == {n}"))
            .collect();
        ids.join(" || ")
    }
}

/// One value per [`SyscallKind`]; in JSON an object with one key per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByKind<T> {
    /// `io_uring_enter`.
    pub io_uring_enter: T,
    /// `sendto`, `sendmsg`, `sendmmsg`, `write`, `writev`.
    pub send: T,
    /// `recvfrom`, `recvmsg`, `recvmmsg`, `read`, `readv`.
    pub recv: T,
    /// `epoll_wait`, `epoll_pwait`, `epoll_pwait2`.
    pub epoll: T,
    /// `futex`.
    pub futex: T,
    /// `membarrier`.
    pub membarrier: T,
    /// Every other system call.
    pub other: T,
}

impl<T: Copy> ByKind<T> {
    /// The value of each kind from `f`.
    pub fn from_fn(mut f: impl FnMut(SyscallKind) -> T) -> Self {
        ByKind {
            io_uring_enter: f(SyscallKind::IoUringEnter),
            send: f(SyscallKind::Send),
            recv: f(SyscallKind::Recv),
            epoll: f(SyscallKind::Epoll),
            futex: f(SyscallKind::Futex),
            membarrier: f(SyscallKind::Membarrier),
            other: f(SyscallKind::Other),
        }
    }

    /// The value of `kind`.
    pub fn get(&self, kind: SyscallKind) -> T {
        match kind {
            SyscallKind::IoUringEnter => self.io_uring_enter,
            SyscallKind::Send => self.send,
            SyscallKind::Recv => self.recv,
            SyscallKind::Epoll => self.epoll,
            SyscallKind::Futex => self.futex,
            SyscallKind::Membarrier => self.membarrier,
            SyscallKind::Other => self.other,
        }
    }

    /// Each value through `f`.
    pub fn map<U: Copy>(&self, mut f: impl FnMut(T) -> U) -> ByKind<U> {
        ByKind::from_fn(|k| f(self.get(k)))
    }

    /// Each kind with its value, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (SyscallKind, T)> + '_ {
        SyscallKind::ALL.into_iter().map(|k| (k, self.get(k)))
    }
}

impl ByKind<u64> {
    /// The sum over every kind: the total.
    pub fn total(&self) -> u64 {
        self.iter().map(|(_, n)| n).sum()
    }

    /// Both counts added kind by kind.
    pub fn plus(&self, other: &Self) -> Self {
        ByKind::from_fn(|k| self.get(k) + other.get(k))
    }
}

/// io_uring operations over a measured stretch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoUringOps {
    /// Operations submitted (`io_uring:io_uring_submit_req`).
    pub submitted: u64,
    /// Completions posted (`io_uring:io_uring_complete`).
    pub completed: u64,
}

impl IoUringOps {
    /// Both counts added.
    pub fn plus(&self, other: &Self) -> Self {
        IoUringOps {
            submitted: self.submitted + other.submitted,
            completed: self.completed + other.completed,
        }
    }
}

/// The tracepoint of `raw_syscalls:sys_enter`, for the total and the kinds.
const SYS_ENTER: &[&str] = &["raw_syscalls/sys_enter"];
/// The tracepoint of an io_uring submission, by its names new and old (before Linux 5.19).
const IO_URING_SUBMIT: &[&str] = &[
    "io_uring/io_uring_submit_req",
    "io_uring/io_uring_submit_sqe",
];
/// The tracepoint of an io_uring completion.
const IO_URING_COMPLETE: &[&str] = &["io_uring/io_uring_complete"];

/// The id of the first of `candidates` (`system/name`) that tracefs has.
fn tracepoint_id(candidates: &[&str]) -> Result<u64, String> {
    let roots = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
    let mut first_error = None;
    // tracefs may be mounted on first access (automount): try twice.
    for _ in 0..2 {
        for root in roots {
            for c in candidates {
                let p = format!("{root}/events/{c}/id");
                match std::fs::read_to_string(&p) {
                    Ok(s) => {
                        return s
                            .trim()
                            .parse()
                            .map_err(|_| format!("{p} does not hold a tracepoint id"))
                    }
                    Err(e) => {
                        first_error.get_or_insert_with(|| format!("{p}: {e}"));
                    }
                }
            }
        }
        let _ = std::fs::read_dir("/sys/kernel/tracing");
    }
    let names: Vec<String> = candidates.iter().map(|c| c.replacen('/', ":", 1)).collect();
    Err(format!(
        "no tracepoint {} in tracefs ({})",
        names.join(" or "),
        first_error.unwrap_or_default()
    ))
}

/// `perf_event_attr` as the kernel reads it (the first 64 bytes of version 0 are what we
/// set; the rest stays zero). Laid out per `include/uapi/linux/perf_event.h`.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
}

const PERF_TYPE_TRACEPOINT: u32 = 2;
/// perf_event_open flag: the new fd is close-on-exec.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// `flags` bits: disabled (bit 0), inherit (bit 1).
const FLAG_INHERIT: u64 = 1 << 1;
/// `read_format`: a read of a group's leader returns every counter of the group,
/// `{ u64 nr; u64 values[nr]; }`, the leader first and the others in the order opened.
const PERF_FORMAT_GROUP: u64 = 1 << 3;
/// `ioctl` PERF_EVENT_IOC_SET_FILTER, `_IOW('$', 6, char *)` in the generic encoding (x86,
/// arm, riscv): direction write (1 << 30), size 8, type `$`, number 6.
const PERF_EVENT_IOC_SET_FILTER: libc::c_ulong = (1 << 30) | (8 << 16) | (0x24 << 8) | 6;

/// Opens a counter of tracepoint `config` on thread `tid`, with `inherit`: a group leader
/// if `leader` is `None`, else a member of `leader`'s group.
fn open_counter(config: u64, tid: i32, leader: Option<&OwnedFd>) -> std::io::Result<OwnedFd> {
    let attr = PerfEventAttr {
        type_: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        read_format: PERF_FORMAT_GROUP,
        flags: FLAG_INHERIT,
        ..PerfEventAttr::default()
    };
    let group_fd = leader.map_or(-1, AsRawFd::as_raw_fd);
    // SAFETY: perf_event_open reads `attr` (a properly sized, initialised struct we own that
    // outlives the call) and returns a new fd or -1; pid = tid, cpu = -1, group_fd is -1 or
    // an open perf event fd borrowed from `leader`.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            tid,
            -1i32,
            group_fd,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this new fd; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Sets a tracepoint filter (`id == 1 || id == 20`) on a counter.
fn set_filter(fd: &OwnedFd, filter: &str) -> std::io::Result<()> {
    let filter = std::ffi::CString::new(filter)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: PERF_EVENT_IOC_SET_FILTER reads a NUL-terminated string, which `filter` is and
    // which outlives the call; `fd` is an open perf event fd.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            PERF_EVENT_IOC_SET_FILTER as _,
            filter.as_ptr(),
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// What a counter of a thread's group counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Every syscall (the leader).
    Total,
    /// The syscalls of `SyscallKind::NAMED[i]`.
    Kind(usize),
    /// io_uring operations submitted.
    Submitted,
    /// io_uring completions posted.
    Completed,
}

/// The most counters in a group: the total, the named kinds, two io_uring tracepoints.
const MAX_SLOTS: usize = 1 + SyscallKind::NAMED.len() + 2;

/// What to count besides the total.
struct Plan {
    /// What to count besides the total.
    counting: Counting,
    /// The tracepoint filter of each named kind, in `SyscallKind::NAMED` order.
    kind_filters: [String; SyscallKind::NAMED.len()],
    /// The io_uring submission tracepoint's possible names (`system/name`).
    io_uring_submit: &'static [&'static str],
    /// The io_uring completion tracepoint's possible names.
    io_uring_complete: &'static [&'static str],
}

impl Plan {
    fn standard() -> Self {
        Plan {
            counting: Counting::ByKind,
            kind_filters: SyscallKind::NAMED.map(SyscallKind::filter),
            io_uring_submit: IO_URING_SUBMIT,
            io_uring_complete: IO_URING_COMPLETE,
        }
    }
}

/// What the syscall counters count (`doppio run --syscalls`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Counting {
    /// The total, each kind, and io_uring operations submitted and completed (the default).
    #[default]
    ByKind,
    /// The total only: one counter per thread, for studies of CPU alone (each counter costs
    /// a little on every syscall and context switch: see the module's table).
    Total,
}

/// A `--syscalls` that is neither `by-kind` nor `total`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown syscall counting `{0}`: by-kind (the total, each kind, io_uring operations) or total"
)]
pub struct UnknownCounting(pub String);

impl Counting {
    /// Reads `by-kind` or `total`.
    pub fn parse(text: &str) -> Result<Self, UnknownCounting> {
        match text {
            "by-kind" => Ok(Counting::ByKind),
            "total" => Ok(Counting::Total),
            other => Err(UnknownCounting(other.to_owned())),
        }
    }

    /// Its name, as `--syscalls` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Counting::ByKind => "by-kind",
            Counting::Total => "total",
        }
    }
}

/// Why a count `--syscalls total` turned off is missing.
const TOTAL_ONLY: &str = "--syscalls total (only the total was counted)";

/// Counts at one moment, summed over threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    total: u64,
    kinds: [u64; SyscallKind::NAMED.len()],
    io_uring: IoUringOps,
}

impl Counts {
    /// What was counted from `before` to `self`.
    fn since(&self, before: &Counts) -> Counts {
        Counts {
            total: self.total.saturating_sub(before.total),
            kinds: std::array::from_fn(|i| self.kinds[i].saturating_sub(before.kinds[i])),
            io_uring: IoUringOps {
                submitted: self
                    .io_uring
                    .submitted
                    .saturating_sub(before.io_uring.submitted),
                completed: self
                    .io_uring
                    .completed
                    .saturating_sub(before.io_uring.completed),
            },
        }
    }

    /// The syscalls by kind, `other` being the total minus the named kinds.
    fn by_kind(&self) -> ByKind<u64> {
        let named: u64 = self.kinds.iter().sum();
        ByKind::from_fn(|k| match SyscallKind::NAMED.iter().position(|n| *n == k) {
            Some(i) => self.kinds[i],
            None => self.total.saturating_sub(named),
        })
    }
}

/// One thread's counters: a group led by the total, read in one `read`.
struct ThreadGroup {
    /// Whose thread: 0 the measured one's (every thread not set apart), `k + 1` the `k`th
    /// set of threads set apart ([`Meter::start_apart`]).
    owner: usize,
    /// The leader (the total) first, then the others in the order opened: the order in
    /// which the kernel returns their counts.
    fds: Vec<OwnedFd>,
    /// What each counter counts.
    slots: Vec<Slot>,
}

impl ThreadGroup {
    /// Adds `fd` counting `slot` to the group.
    fn push(&mut self, fd: OwnedFd, slot: Slot) {
        self.fds.push(fd);
        self.slots.push(slot);
    }
}

/// Why a group member could not be opened.
enum MemberError {
    /// The thread ended since it was listed.
    ThreadGone,
    /// The kernel refused.
    Refused(String),
}

/// Opens a counter of `config` in `group`'s thread, with `filter` if given.
fn open_member(
    group: &ThreadGroup,
    tid: i32,
    config: u64,
    filter: Option<&str>,
    what: &str,
) -> Result<OwnedFd, MemberError> {
    let Some(leader) = group.fds.first() else {
        return Err(MemberError::Refused(format!("{what}: no group leader")));
    };
    let fd = open_counter(config, tid, Some(leader)).and_then(|fd| match filter {
        Some(f) => set_filter(&fd, f).map(|()| fd),
        None => Ok(fd),
    });
    fd.map_err(|e| {
        if e.raw_os_error() == Some(libc::ESRCH) {
            MemberError::ThreadGone
        } else {
            MemberError::Refused(format!("{what}: {e}"))
        }
    })
}

/// Open syscall and io_uring counters, one group per thread present at the start.
struct SyscallCounters {
    groups: Vec<ThreadGroup>,
    /// How many owners the groups are summed into (1 + the sets set apart).
    owners: usize,
    /// Why syscalls are not counted by kind, if they are not.
    kinds_unavailable: Option<String>,
    /// Why io_uring operations are not counted, if they are not.
    io_uring_unavailable: Option<String>,
}

impl SyscallCounters {
    /// Counters on every thread of the process, counting what `counting` asks; the
    /// threads of each set in `apart` summed on their own.
    fn open(counting: Counting, apart: Vec<&[i32]>) -> Result<Self, String> {
        let tids: Vec<(i32, usize)> = crate::probe::thread_usage::thread_ids()
            .map_err(|e| format!("/proc/self/task: {e}"))?
            .into_iter()
            .map(|t| (t, owner_of(t, &apart)))
            .collect();
        Self::open_with(
            &Plan {
                counting,
                ..Plan::standard()
            },
            &tids,
            1 + apart.len(),
        )
    }

    /// Counters on threads `tids` (each with its owner, below `owners`): the total, and
    /// what `plan` says where the kernel lets us.
    fn open_with(plan: &Plan, tids: &[(i32, usize)], owners: usize) -> Result<Self, String> {
        let sys_enter = tracepoint_id(SYS_ENTER)?;
        let mut io_uring_unavailable = None;
        let mut kinds_unavailable = None;
        if plan.counting == Counting::Total {
            io_uring_unavailable = Some(TOTAL_ONLY.to_owned());
            kinds_unavailable = Some(TOTAL_ONLY.to_owned());
        }
        let io_uring = match (
            tracepoint_id(plan.io_uring_submit),
            tracepoint_id(plan.io_uring_complete),
        ) {
            (Ok(submit), Ok(complete)) => Some((submit, complete)),
            (Err(e), _) | (_, Err(e)) => {
                io_uring_unavailable.get_or_insert(e);
                None
            }
        };
        let mut groups = Vec::new();
        'threads: for &(tid, owner) in tids {
            let leader = match open_counter(sys_enter, tid, None) {
                Ok(fd) => fd,
                // A thread that ended since we listed it is not an error.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
                Err(e) => return Err(format!("perf_event_open(raw_syscalls:sys_enter): {e}")),
            };
            let mut group = ThreadGroup {
                owner,
                fds: vec![leader],
                slots: vec![Slot::Total],
            };
            let mut members: Vec<(Slot, u64, Option<&str>, String)> = Vec::new();
            if kinds_unavailable.is_none() {
                for (i, (kind, filter)) in SyscallKind::NAMED
                    .iter()
                    .zip(&plan.kind_filters)
                    .enumerate()
                {
                    let what = format!(
                        "counting {} syscalls (raw_syscalls:sys_enter filtered by `{filter}`)",
                        kind.name()
                    );
                    members.push((Slot::Kind(i), sys_enter, Some(filter), what));
                }
            }
            if let (None, Some((submit, complete))) = (&io_uring_unavailable, io_uring) {
                let what = |what| format!("counting io_uring {what} (perf_event_open)");
                members.push((Slot::Submitted, submit, None, what("submissions")));
                members.push((Slot::Completed, complete, None, what("completions")));
            }
            for (slot, config, filter, what) in members {
                let unavailable = match slot {
                    Slot::Kind(_) => &mut kinds_unavailable,
                    _ => &mut io_uring_unavailable,
                };
                if unavailable.is_some() {
                    continue;
                }
                match open_member(&group, tid, config, filter, &what) {
                    Ok(fd) => group.push(fd, slot),
                    Err(MemberError::ThreadGone) => continue 'threads,
                    Err(MemberError::Refused(why)) => *unavailable = Some(why),
                }
            }
            groups.push(group);
        }
        Ok(Self {
            groups,
            owners,
            kinds_unavailable,
            io_uring_unavailable,
        })
    }

    /// The counts now, summed over each owner's threads (index 0: the measured threads).
    fn read(&self) -> Result<Vec<Counts>, String> {
        let mut all = vec![Counts::default(); self.owners];
        for group in &self.groups {
            let Some(counts) = all.get_mut(group.owner) else {
                continue;
            };
            let Some(leader) = group.fds.first() else {
                continue;
            };
            let mut buf = [0u64; 1 + MAX_SLOTS];
            // SAFETY: `read` writes at most `size_of_val(&buf)` bytes into `buf`, which we
            // own; `leader` is an open perf event fd.
            let n = unsafe {
                libc::read(
                    leader.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    std::mem::size_of_val(&buf),
                )
            };
            if n < 0 {
                return Err(format!(
                    "reading a syscall counter: {}",
                    std::io::Error::last_os_error()
                ));
            }
            let want = group.slots.len();
            if n as usize != 8 * (1 + want) || buf[0] as usize != want {
                return Err(format!(
                    "reading a syscall counter: {n} bytes, {} counters, for {want} counters",
                    buf[0]
                ));
            }
            for (slot, &v) in group.slots.iter().zip(&buf[1..]) {
                match *slot {
                    Slot::Total => counts.total += v,
                    Slot::Kind(i) => counts.kinds[i] += v,
                    Slot::Submitted => counts.io_uring.submitted += v,
                    Slot::Completed => counts.io_uring.completed += v,
                }
            }
        }
        Ok(all)
    }
}

/// Measures the cost of what happens between [`Meter::start`] and [`Meter::stop`].
pub struct Meter {
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
pub struct Cost {
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

/// Which owner thread `tid` has: `k + 1` if it is in the `k`th set of `apart`, else 0.
fn owner_of(tid: i32, apart: &[&[i32]]) -> usize {
    apart
        .iter()
        .position(|set| set.contains(&tid))
        .map_or(0, |k| k + 1)
}

impl Meter {
    /// Starts measuring, syscalls by kind.
    pub fn start() -> Self {
        Self::start_counting(Counting::ByKind)
    }

    /// Starts measuring, syscalls as `counting` asks.
    pub fn start_counting(counting: Counting) -> Self {
        Self::start_apart(counting, &[])
    }

    /// Starts measuring, syscalls as `counting` asks, with each set of threads in `apart`
    /// set apart: their CPU time, context switches and syscalls are left out of the
    /// [`Cost`] and given in [`Cost::apart`] instead. For a backend that sits parked while
    /// another is measured: its executors still wake now and then (a connection's request
    /// sweeper at the deadline of a request answered long ago, a keepalive, a futex), and
    /// those wake-ups are its own, not the measured backend's.
    pub fn start_apart(counting: Counting, apart: &[Vec<i32>]) -> Self {
        // The threads' usage is read from /proc before the counters start, and after they
        // stop (in `stop`): those reads are not counted as the measured stretch's syscalls.
        let apart: Vec<_> = apart
            .iter()
            .map(|set| (set.clone(), threads_usage(set)))
            .collect();
        let syscalls = SyscallCounters::open(counting, apart_sets(&apart)).and_then(|c| {
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
    pub fn stop(self) -> Cost {
        let counted = match &self.syscalls {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::sync::atomic::AtomicU32;

    fn gettid() -> i32 {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::syscall(libc::SYS_gettid) as i32 }
    }

    /// `n` one-byte `write`s to `file`.
    fn writes(file: &File, n: usize) {
        for _ in 0..n {
            // SAFETY: writes one byte from a live buffer to an fd that `file` keeps open.
            let w = unsafe { libc::write(file.as_raw_fd(), b"x".as_ptr().cast(), 1) };
            assert_eq!(w, 1);
        }
    }

    /// `n` `membarrier(MEMBARRIER_CMD_QUERY)` calls.
    fn membarriers(n: usize) {
        for _ in 0..n {
            // SAFETY: MEMBARRIER_CMD_QUERY (0) with flags 0 only returns the supported
            // commands; it touches no memory.
            unsafe {
                libc::syscall(libc::SYS_membarrier, 0, 0);
            }
        }
    }

    /// `n` `futex(FUTEX_WAKE)` calls on `word` (no one waits: each wakes nobody).
    fn futex_wakes(word: &AtomicU32, n: usize) {
        for _ in 0..n {
            // SAFETY: FUTEX_WAKE on a live, aligned 32-bit word that `word` owns; the
            // remaining arguments are unused by FUTEX_WAKE.
            let woken = unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    word.as_ptr(),
                    libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                    1,
                    std::ptr::null::<libc::timespec>(),
                    std::ptr::null::<u32>(),
                    0,
                )
            };
            assert_eq!(woken, 0);
        }
    }

    /// `n` `getppid` calls (a syscall of no named kind).
    fn getppids(n: usize) {
        for _ in 0..n {
            // SAFETY: getppid has no preconditions.
            unsafe {
                libc::getppid();
            }
        }
    }

    #[test]
    fn syscalls_are_counted_when_the_kernel_allows_it() {
        let m = Meter::start();
        getppids(1000);
        let cost = m.stop();
        match (cost.syscalls, &cost.syscalls_unavailable) {
            (Some(n), None) => assert!(n >= 1000, "counted {n}"),
            (None, Some(why)) => eprintln!("syscall counting unavailable here: {why}"),
            other => panic!("inconsistent result {other:?}"),
        }
    }

    /// A parked backend's thread set apart: what it does while another is measured is
    /// counted to it (`Cost::apart`), and none of it is in the measured figures. Checked
    /// against a plain meter over the same stretch (tests run in parallel in this process,
    /// so the measured figures hold other tests' work too: only relations are exact).
    #[test]
    fn a_thread_set_apart_is_counted_apart_and_left_out_of_the_cost() {
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let parked = std::thread::spawn(move || {
            tid_tx.send(gettid()).unwrap();
            go_rx.recv().unwrap();
            getppids(500);
            crate::probe::thread_usage::tests::spin_cpu(Duration::from_millis(40));
            done_tx.send(()).unwrap();
            go_rx.recv().unwrap();
        });
        let tid = tid_rx.recv().unwrap();
        let plain = Meter::start();
        let m = Meter::start_apart(Counting::ByKind, &[vec![tid]]);
        go_tx.send(()).unwrap();
        done_rx.recv().unwrap();
        let cost = m.stop();
        let all = plain.stop();
        go_tx.send(()).unwrap();
        parked.join().unwrap();

        assert_eq!(cost.apart.len(), 1);
        let apart = cost.apart[0];
        assert!(apart.usage.cpu >= Duration::from_millis(30), "{apart:?}");
        // getrusage's figures are rounded to microseconds, per thread: a little slack.
        assert!(
            cost.user + cost.sys + apart.usage.cpu <= all.user + all.sys + Duration::from_millis(2),
            "the parked thread's time is left out: {cost:?} beside {all:?}"
        );
        assert!(cost.voluntary_ctx_switches + apart.usage.voluntary <= all.voluntary_ctx_switches);
        match (cost.syscalls, apart.syscalls, all.syscalls) {
            (Some(measured), Some(theirs), Some(all)) => {
                assert!(theirs >= 500, "the parked thread's calls: {theirs}");
                assert!(
                    measured + theirs <= all,
                    "the parked thread's calls are left out: {measured} + {theirs} > {all}"
                );
                let kinds = apart
                    .syscalls_by_kind
                    .expect("counted by kind with the total");
                assert_eq!(kinds.total(), theirs);
            }
            (None, None, None) => eprintln!(
                "syscall counting unavailable here: {:?}",
                cost.syscalls_unavailable
            ),
            other => panic!("inconsistent result {other:?}"),
        }
    }

    #[test]
    fn total_only_counting_counts_the_total_and_says_why_the_rest_is_missing() {
        let m = Meter::start_counting(Counting::Total);
        getppids(1000);
        let cost = m.stop();
        match (cost.syscalls, &cost.syscalls_unavailable) {
            (Some(n), None) => {
                assert!(n >= 1000, "counted {n}");
                assert_eq!(cost.syscalls_by_kind, None);
                assert_eq!(cost.syscall_kinds_unavailable.as_deref(), Some(TOTAL_ONLY));
                assert_eq!(cost.io_uring, None);
                assert_eq!(cost.io_uring_unavailable.as_deref(), Some(TOTAL_ONLY));
            }
            (None, Some(why)) => eprintln!("syscall counting unavailable here: {why}"),
            other => panic!("inconsistent result {other:?}"),
        }
        for c in [Counting::Total, Counting::ByKind] {
            assert_eq!(Counting::parse(c.name()), Ok(c));
        }
        assert!(Counting::parse("none")
            .unwrap_err()
            .to_string()
            .contains("`none`"));
    }

    #[test]
    fn threads_started_during_the_measurement_are_counted() {
        let m = Meter::start();
        std::thread::spawn(|| getppids(500)).join().unwrap_or(());
        let cost = m.stop();
        if let Some(n) = cost.syscalls {
            assert!(n >= 500, "counted {n}");
        }
    }

    #[test]
    fn syscalls_are_counted_by_kind_on_the_measured_threads() {
        let dev_null = File::options().write(true).open("/dev/null").unwrap();
        let m = Meter::start();
        writes(&dev_null, 1000);
        membarriers(500);
        // Futex wakes and getppid on a thread started during the measurement: its counters
        // are inherited, filters included.
        std::thread::spawn(|| {
            let word = AtomicU32::new(0);
            futex_wakes(&word, 300);
            getppids(200);
        })
        .join()
        .unwrap();
        let cost = m.stop();
        let (Some(total), Some(kinds)) = (cost.syscalls, cost.syscalls_by_kind) else {
            // Only when the kernel refuses the counters, and then it says why.
            let why = cost.syscall_kinds_unavailable.as_deref();
            assert!(why.is_some(), "{cost:?}");
            eprintln!("syscalls by kind unavailable here: {why:?}");
            return;
        };
        eprintln!("total {total}, by kind {kinds:?}");
        // Other tests of this binary run beside this one: at least what we made.
        assert!(kinds.send >= 1000, "{kinds:?}");
        assert!(kinds.membarrier >= 500, "{kinds:?}");
        assert!(kinds.futex >= 300, "{kinds:?}");
        assert!(kinds.other >= 200, "{kinds:?}");
        // `other` is what the named kinds leave of the total: never below zero (the kinds
        // and the total of one thread are read together), so the kinds add up to the total.
        assert_eq!(kinds.total(), total);
        assert!(
            kinds.io_uring_enter
                + kinds.send
                + kinds.recv
                + kinds.epoll
                + kinds.futex
                + kinds.membarrier
                <= total
        );
        assert_eq!(cost.syscall_kinds_unavailable, None);
    }

    #[test]
    fn one_threads_syscalls_are_counted_exactly_by_kind() {
        let tid = gettid();
        let dev_null = File::options().write(true).open("/dev/null").unwrap();
        let word = AtomicU32::new(0);
        let counters = match SyscallCounters::open_with(&Plan::standard(), &[(tid, 0)], 1) {
            Ok(c) => c,
            Err(why) => {
                eprintln!("syscall counting unavailable here: {why}");
                return;
            }
        };
        if let Some(why) = &counters.kinds_unavailable {
            eprintln!("syscalls by kind unavailable here: {why}");
            return;
        }
        let start = counters.read().unwrap();
        writes(&dev_null, 1000);
        membarriers(500);
        futex_wakes(&word, 300);
        getppids(200);
        let d = counters.read().unwrap()[0].since(&start[0]);
        // Each `read` of the counters is counted before it reads them: the first counted
        // itself, the second is the one `recv`.
        let expected = ByKind {
            io_uring_enter: 0,
            send: 1000,
            recv: 1,
            epoll: 0,
            futex: 300,
            membarrier: 500,
            other: 200,
        };
        assert_eq!(d.by_kind(), expected);
        assert_eq!(d.total, 2001);
        assert_eq!(d.kinds.iter().sum::<u64>() + 200, d.total);
        if counters.io_uring_unavailable.is_none() {
            assert_eq!(d.io_uring, IoUringOps::default());
        }
    }

    #[test]
    fn a_refused_filter_leaves_the_total_and_says_why() {
        let mut plan = Plan::standard();
        plan.kind_filters[2] = "no_such_field == 1".into();
        let counters = match SyscallCounters::open_with(&plan, &[(gettid(), 0)], 1) {
            Ok(c) => c,
            Err(why) => {
                eprintln!("syscall counting unavailable here: {why}");
                return;
            }
        };
        let why = counters.kinds_unavailable.as_deref().unwrap();
        assert!(
            why.contains("recv") && why.contains("no_such_field"),
            "{why}"
        );
        let start = counters.read().unwrap();
        getppids(10);
        let d = counters.read().unwrap()[0].since(&start[0]);
        assert_eq!(d.total, 11);
    }

    #[test]
    fn a_missing_io_uring_tracepoint_is_reported_and_the_rest_is_counted() {
        let plan = Plan {
            io_uring_submit: &["io_uring/no_such_tracepoint"],
            ..Plan::standard()
        };
        let counters = match SyscallCounters::open_with(&plan, &[(gettid(), 0)], 1) {
            Ok(c) => c,
            Err(why) => {
                eprintln!("syscall counting unavailable here: {why}");
                return;
            }
        };
        let why = counters.io_uring_unavailable.as_deref().unwrap();
        assert!(why.contains("io_uring:no_such_tracepoint"), "{why}");
        let start = counters.read().unwrap();
        membarriers(10);
        let d = counters.read().unwrap()[0].since(&start[0]);
        assert_eq!(d.total, 11);
        if counters.kinds_unavailable.is_none() {
            assert_eq!(d.by_kind().membarrier, 10);
        }
    }

    #[test]
    fn io_uring_operations_are_counted() {
        let m = Meter::start();
        // A glommio executor (an io_uring per thread, and a timeout operation per sleep)
        // started during the measurement.
        doppio_driver::rt::run_on(
            doppio_driver::rt::Runtime::Glommio,
            "io-uring-ops",
            || async {
                for _ in 0..10 {
                    doppio_driver::rt::sleep(Duration::from_millis(1)).await;
                }
            },
        )
        .unwrap();
        let cost = m.stop();
        let (Some(ops), Some(kinds)) = (cost.io_uring, cost.syscalls_by_kind) else {
            let why = (&cost.io_uring_unavailable, &cost.syscall_kinds_unavailable);
            assert!(why.0.is_some() || why.1.is_some(), "{cost:?}");
            eprintln!("io_uring operations or syscall kinds not counted here: {why:?}");
            return;
        };
        eprintln!("io_uring {ops:?}, syscalls {kinds:?}");
        assert!(ops.submitted >= 10, "{ops:?}");
        assert!(ops.completed >= 10, "{ops:?}");
        assert!(kinds.io_uring_enter > 0, "{kinds:?}");
    }

    #[test]
    fn kinds_name_their_syscalls_and_filters_list_them() {
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(
                SyscallKind::Send.filter(),
                "id == 44 || id == 46 || id == 307 || id == 1 || id == 20"
            );
            assert_eq!(
                SyscallKind::Epoll.filter(),
                "id == 232 || id == 281 || id == 441"
            );
            assert_eq!(SyscallKind::IoUringEnter.filter(), "id == 426");
        }
        assert!(SyscallKind::Other.syscalls().is_empty());
        // The JSON keys are the kinds' names, one per kind.
        let json = serde_json::to_value(ByKind::from_fn(|k| k as u64)).unwrap();
        assert_eq!(json.as_object().unwrap().len(), SyscallKind::ALL.len());
        for k in SyscallKind::ALL {
            assert_eq!(json[k.name()], k as u64, "{json}");
        }
    }

    #[test]
    fn stat_cpu_reads_utime_and_stime_after_the_name() {
        let line = "4242 (iou-sqp-4) x) S 1 4241 4241 0 -1 4194368 0 0 0 0 150 25 0 0 20 0 1";
        assert_eq!(stat_cpu(line, 100), Some(Duration::from_millis(1750)));
        assert_eq!(stat_cpu("garbage", 100), None);
    }

    #[test]
    fn sqpoll_threads_are_in_getrusage_and_measured_on_their_own() {
        use doppio_driver::rt::uring::{Config, SqPoll};
        use doppio_driver::rt::{ExecutorSpec, Runtime};
        // An executor in SQPOLL mode whose kernel thread polls for 2 s after the one
        // submission the executor makes at start (its wake-up read), while the executor
        // itself sleeps: a busy SQ thread beside an idle process.
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let spec = ExecutorSpec {
            uring: Config {
                sqpoll: Some(SqPoll {
                    idle: Duration::from_secs(2),
                    cpu: None,
                }),
                ..Config::default()
            },
            ..ExecutorSpec::new(Runtime::Uring, "sqpoll-meter")
        };
        let handle = doppio_driver::rt::spawn_executor(spec, move || async move {
            let _ = started_tx.send(());
            while stop_rx.try_recv().is_err() {
                doppio_driver::rt::sleep(Duration::from_millis(10)).await;
            }
        })
        .unwrap();
        started_rx.recv().unwrap();
        let m = Meter::start();
        std::thread::sleep(Duration::from_secs(1));
        let cost = m.stop();
        let _ = stop_tx.send(());
        handle.join().unwrap();
        let sq = cost.sqpoll.expect("an SQ thread was there");
        eprintln!(
            "1 s beside a polling SQ thread: getrusage {:?} user + {:?} sys, SQ thread {sq:?}",
            cost.user, cost.sys
        );
        // It polled (clock ticks of 10 ms; a loaded machine may give it far less than the
        // whole second, so only presence is checked).
        assert!(sq >= Duration::from_millis(20), "{cost:?}");
        // getrusage(RUSAGE_SELF) holds it already (one tick of slack per reading).
        assert!(
            cost.user + cost.sys + Duration::from_millis(20) >= sq,
            "getrusage misses the SQ thread: {cost:?}"
        );
    }

    #[test]
    fn kernel_threads_are_told_apart_and_their_time_counts_from_each_reading() {
        assert_eq!(kernel_thread_kind("iou-sqp-4242\n"), Some(0));
        assert_eq!(kernel_thread_kind("iou-wrk-4242\n"), Some(1));
        assert_eq!(kernel_thread_kind("doppio-shard-0\n"), None);
        let ms = Duration::from_millis;
        // A thread that ran on, one that appeared (counted from zero), one that ended (lost).
        let before = [(1, ms(100)), (2, ms(50))];
        let after = [(1, ms(130)), (3, ms(20))];
        assert_eq!(threads_delta(&before, &after), Some(ms(50)));
        assert_eq!(threads_delta(&[], &[]), None);
        assert_eq!(threads_delta(&before, &[]), Some(Duration::ZERO));
    }

    #[test]
    fn a_waited_childs_cpu_is_counted_apart_from_this_process() {
        let before = children_cpu();
        // A child that burns a little CPU, waited for.
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(
            children_cpu() > before,
            "the child's CPU is counted once waited for"
        );
        assert!(process_cpu() > Duration::ZERO);
    }

    #[test]
    fn cpu_time_grows_with_work() {
        let m = Meter::start();
        let mut x = 0u64;
        // Spin until this thread has 20 ms of CPU by its own clock (on a loaded machine that
        // takes longer than 20 ms of wall time); the meter, which counts the whole process,
        // must then show at least as much. The minute only bounds a clock that never moves.
        let own = doppio_driver::bench_internals::thread_cpu_time;
        let (begin, t) = (own(), std::time::Instant::now());
        while own().saturating_sub(begin) < Duration::from_millis(20)
            && t.elapsed() < Duration::from_secs(60)
        {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let cost = m.stop();
        assert!(
            cost.user + cost.sys >= Duration::from_millis(19),
            "{cost:?}"
        );
        assert!(cost.peak_rss_bytes > 0);
    }
}
