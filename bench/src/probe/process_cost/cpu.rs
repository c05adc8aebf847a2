//! CPU time of the process and of its kernel io_uring threads: `getrusage` (self and waited
//! children), the clock ticks of `/proc`, utime + stime of a `/proc/.../stat` line, and the
//! SQPOLL threads and io-wq workers found in `/proc/self/task`.

use std::time::Duration;

/// The kernel's threads of this process that work for its io_uring rings, by their names'
/// prefix in `/proc/self/task/*/comm`: the SQPOLL threads and the io-wq workers.
const KERNEL_THREADS: [&str; 2] = ["iou-sqp-", "iou-wrk-"];

/// The CPU time (user + system) of each of this process's kernel io_uring threads, by kind
/// ([`KERNEL_THREADS`]) and thread id; empty when there is none (or /proc cannot be read).
pub(super) fn kernel_threads() -> [Vec<(i32, Duration)>; 2] {
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
pub(super) fn kernel_thread_kind(comm: &str) -> Option<usize> {
    KERNEL_THREADS.iter().position(|p| comm.starts_with(p))
}

/// The CPU the threads of one kind used between two readings (a thread that appeared counts
/// from zero; one that ended is lost from the share); `None` when there was none either time.
pub(super) fn threads_delta(
    before: &[(i32, Duration)],
    after: &[(i32, Duration)],
) -> Option<Duration> {
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
pub(super) struct Usage {
    pub(super) user: Duration,
    pub(super) sys: Duration,
    pub(super) voluntary: u64,
    pub(super) involuntary: u64,
    pub(super) max_rss_bytes: u64,
}

pub(super) fn usage() -> Usage {
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
