//! What a stretch of work cost this process: CPU time (user and system), context switches,
//! peak RSS, and system calls.
//!
//! CPU time and context switches come from `getrusage(RUSAGE_SELF)`: every thread of the
//! process, so a backend's runtime threads are charged to it (both backends' threads live in
//! one process; only the one being measured is busy, the other is parked).
//!
//! System calls are counted by the kernel with `perf_event_open(2)` on the tracepoint
//! `raw_syscalls:sys_enter`: one counter per thread that exists when measuring starts (from
//! `/proc/self/task`), each with `inherit` so that threads they start later are counted when
//! those end. Nothing is sampled or traced: the kernel only increments counters. When the
//! kernel refuses (no tracefs, `perf_event_paranoid`, no permission, seccomp), the count is
//! `None` and the reason is kept for the report.

use std::time::Duration;

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
    // SAFETY: `getrusage` writes a `rusage` struct we own; RUSAGE_SELF is always valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the pointer is to a live, properly aligned `rusage`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
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

/// The id of the `raw_syscalls:sys_enter` tracepoint, from tracefs.
fn sys_enter_tracepoint_id() -> Result<u64, String> {
    let paths = [
        "/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
        "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
    ];
    let mut last = String::new();
    // tracefs may be mounted on first access (automount): try twice.
    for _ in 0..2 {
        for p in paths {
            match std::fs::read_to_string(p) {
                Ok(s) => {
                    return s
                        .trim()
                        .parse()
                        .map_err(|_| format!("{p} does not hold a tracepoint id"))
                }
                Err(e) => last = format!("{p}: {e}"),
            }
        }
        let _ = std::fs::read_dir("/sys/kernel/tracing");
    }
    Err(format!(
        "no tracefs with the raw_syscalls tracepoint ({last})"
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

/// Open syscall counters, one per thread present at the start.
struct SyscallCounters {
    fds: Vec<i32>,
}

impl SyscallCounters {
    fn open() -> Result<Self, String> {
        let id = sys_enter_tracepoint_id()?;
        let tasks =
            std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?;
        let mut fds = Vec::new();
        let mut first_error = None;
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let attr = PerfEventAttr {
                type_: PERF_TYPE_TRACEPOINT,
                size: std::mem::size_of::<PerfEventAttr>() as u32,
                config: id,
                flags: FLAG_INHERIT,
                ..PerfEventAttr::default()
            };
            // SAFETY: perf_event_open reads `attr` (a properly sized, initialised struct we
            // own) and returns a new fd or -1; pid = tid, cpu = -1, no group, no flags.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_perf_event_open,
                    &attr as *const PerfEventAttr,
                    tid,
                    -1i32,
                    -1i32,
                    PERF_FLAG_FD_CLOEXEC,
                )
            };
            if fd < 0 {
                let e = std::io::Error::last_os_error();
                // A thread that ended since we listed it is not an error.
                if e.raw_os_error() != Some(libc::ESRCH) && first_error.is_none() {
                    first_error = Some(format!("perf_event_open(raw_syscalls:sys_enter): {e}"));
                }
                continue;
            }
            fds.push(fd as i32);
        }
        if let Some(e) = first_error {
            let c = Self { fds };
            drop(c);
            return Err(e);
        }
        Ok(Self { fds })
    }

    fn read(&self) -> Result<u64, String> {
        let mut total = 0u64;
        for &fd in &self.fds {
            let mut v = 0u64;
            // SAFETY: reading 8 bytes into a u64 we own from a perf fd we opened.
            let n = unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
            if n != 8 {
                return Err(format!(
                    "reading a syscall counter: {}",
                    std::io::Error::last_os_error()
                ));
            }
            total += v;
        }
        Ok(total)
    }
}

impl Drop for SyscallCounters {
    fn drop(&mut self) {
        for &fd in &self.fds {
            // SAFETY: closing fds this struct opened and owns.
            unsafe {
                libc::close(fd);
            }
        }
    }
}

/// Measures the cost of what happens between [`Meter::start`] and [`Meter::stop`].
pub struct Meter {
    before: Usage,
    allocations: Option<u64>,
    syscalls: Result<(SyscallCounters, u64), String>,
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
    /// Voluntary context switches (waits).
    pub voluntary_ctx_switches: u64,
    /// Involuntary context switches (preemptions).
    pub involuntary_ctx_switches: u64,
    /// The process's peak resident set size so far, bytes.
    pub peak_rss_bytes: u64,
    /// Heap allocations, when the bench is built with the `alloc-count` feature.
    pub allocations: Option<u64>,
}

impl Meter {
    /// Starts measuring.
    pub fn start() -> Self {
        let syscalls = SyscallCounters::open().and_then(|c| {
            let n = c.read()?;
            Ok((c, n))
        });
        Self {
            before: usage(),
            allocations: crate::alloc_count::allocations(),
            syscalls,
        }
    }

    /// Stops and returns the cost since `start`.
    pub fn stop(self) -> Cost {
        let after = usage();
        let (syscalls, syscalls_unavailable) = match &self.syscalls {
            Ok((c, start)) => match c.read() {
                Ok(n) => (Some(n.saturating_sub(*start)), None),
                Err(e) => (None, Some(e)),
            },
            Err(e) => (None, Some(e.clone())),
        };
        Cost {
            user: after.user.saturating_sub(self.before.user),
            sys: after.sys.saturating_sub(self.before.sys),
            syscalls,
            syscalls_unavailable,
            voluntary_ctx_switches: after.voluntary.saturating_sub(self.before.voluntary),
            involuntary_ctx_switches: after.involuntary.saturating_sub(self.before.involuntary),
            peak_rss_bytes: after.max_rss_bytes,
            allocations: match (self.allocations, crate::alloc_count::allocations()) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscalls_are_counted_when_the_kernel_allows_it() {
        let m = Meter::start();
        for _ in 0..1000 {
            // SAFETY: getppid has no preconditions.
            unsafe {
                libc::getppid();
            }
        }
        let cost = m.stop();
        match (cost.syscalls, &cost.syscalls_unavailable) {
            (Some(n), None) => assert!(n >= 1000, "counted {n}"),
            (None, Some(why)) => eprintln!("syscall counting unavailable here: {why}"),
            other => panic!("inconsistent result {other:?}"),
        }
    }

    #[test]
    fn threads_started_during_the_measurement_are_counted() {
        let m = Meter::start();
        std::thread::spawn(|| {
            for _ in 0..500 {
                // SAFETY: getppid has no preconditions.
                unsafe {
                    libc::getppid();
                }
            }
        })
        .join()
        .unwrap_or(());
        let cost = m.stop();
        if let Some(n) = cost.syscalls {
            assert!(n >= 500, "counted {n}");
        }
    }

    #[test]
    fn cpu_time_grows_with_work() {
        let m = Meter::start();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_millis(50) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let cost = m.stop();
        assert!(
            cost.user + cost.sys >= Duration::from_millis(20),
            "{cost:?}"
        );
        assert!(cost.peak_rss_bytes > 0);
    }
}
