//! The tracepoint counters' use of `perf_event_open(2)`: tracepoint ids from tracefs, opening
//! a tracepoint counter (with `inherit`, alone or in a group) through the `perf-event2`
//! crate, the one thing it has no call for (a tracepoint filter, the
//! `PERF_EVENT_IOC_SET_FILTER` ioctl on the counter's fd), and reading a group in one `read`
//! (`PERF_FORMAT_GROUP`).
//!
//! `perf-event2` (0.7) builds the `perf_event_attr` and makes the system call for these
//! counters as for the hardware ones ([`crate::probe::hw_counters`]), so `perf_event_open`
//! is written once, in that crate. Its builder defaults differ from what a tracepoint
//! counter needs and are set here: enabled at once (it opens disabled), kernel events
//! included (it excludes them, and a syscall tracepoint fires in the kernel, so it would
//! count nothing), `inherit`. Its group read asks for `PERF_FORMAT_ID` beside
//! `PERF_FORMAT_GROUP` (each value comes with its counter's id, which it matches counters
//! by) and reads into a buffer it allocates: still one `read` per group. It also asks the
//! kernel for each new counter's id (`PERF_EVENT_IOC_ID`): one `ioctl` more per counter
//! opened (9 per thread counted by kind), made before the first reading and so in no
//! measured stretch, only in the process's total.

use std::os::fd::AsRawFd;

use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter, GroupData, ReadFormat};

/// The id of the first of `candidates` (`system/name`) that tracefs has.
pub(super) fn tracepoint_id(candidates: &[&str]) -> Result<u64, String> {
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

/// `ioctl` PERF_EVENT_IOC_SET_FILTER, `_IOW('$', 6, char *)` in the generic encoding (x86,
/// arm, riscv): direction write (1 << 30), size 8, type `$`, number 6. `perf-event2` 0.7
/// wraps this ioctl only in its test hooks (the `hooks` feature), not as a call on a
/// `Counter`, so it is made here on the counter's fd.
const PERF_EVENT_IOC_SET_FILTER: libc::c_ulong = (1 << 30) | (8 << 16) | (0x24 << 8) | 6;

/// Opens a counter of tracepoint `config` on thread `tid`, counting at once, with
/// `inherit` and a group read: a group leader if `leader` is `None`, else a member of
/// `leader`'s group.
pub(super) fn open_counter(
    config: u64,
    tid: i32,
    leader: Option<&mut Counter>,
) -> std::io::Result<Counter> {
    let mut b = Builder::new(Tracepoint::with_id(config));
    b.observe_pid(tid)
        .any_cpu()
        .exclude_kernel(false)
        .exclude_hv(false)
        .inherit(true)
        .enabled(true)
        .read_format(ReadFormat::GROUP);
    match leader {
        None => b.build(),
        Some(leader) => b.build_with_group(leader),
    }
}

/// Sets a tracepoint filter (`id == 1 || id == 20`) on a counter.
pub(super) fn set_filter(counter: &Counter, filter: &str) -> std::io::Result<()> {
    let filter = std::ffi::CString::new(filter)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: PERF_EVENT_IOC_SET_FILTER reads a NUL-terminated string, which `filter` is and
    // which outlives the call; `counter` holds an open perf event fd.
    let rc = unsafe {
        libc::ioctl(
            counter.as_raw_fd(),
            PERF_EVENT_IOC_SET_FILTER as _,
            filter.as_ptr(),
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Reads every counter of `leader`'s group in one `read` (`PERF_FORMAT_GROUP`).
pub(super) fn read_group(leader: &mut Counter) -> std::io::Result<GroupData> {
    leader.read_group()
}
