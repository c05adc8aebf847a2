//! The `perf_event_open(2)` FFI of the syscall counters, in one place: tracepoint ids from
//! tracefs, the `perf_event_attr` struct, opening a tracepoint counter (with `inherit`, alone
//! or in a group), setting its filter (`PERF_EVENT_IOC_SET_FILTER`), and reading a group in
//! one `read` (`PERF_FORMAT_GROUP`).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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
pub(super) fn open_counter(
    config: u64,
    tid: i32,
    leader: Option<&OwnedFd>,
) -> std::io::Result<OwnedFd> {
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
pub(super) fn set_filter(fd: &OwnedFd, filter: &str) -> std::io::Result<()> {
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

/// Reads every counter of `leader`'s group in one `read` into `buf` (`PERF_FORMAT_GROUP`:
/// `{ u64 nr; u64 values[nr]; }`, the leader first); returns the bytes read.
pub(super) fn read_group(leader: &OwnedFd, buf: &mut [u64]) -> std::io::Result<usize> {
    // SAFETY: `read` writes at most `size_of_val(buf)` bytes into `buf`, which we
    // own; `leader` is an open perf event fd.
    let n = unsafe {
        libc::read(
            leader.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            std::mem::size_of_val(buf),
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}
