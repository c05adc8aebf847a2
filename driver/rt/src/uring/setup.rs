//! Building an executor's ring: ask for the best setup flags, fall back flag by flag.
//!
//! First `SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG | SUBMIT_ALL`; when the kernel refuses
//! (`EINVAL`), `DEFER_TASKRUN` is replaced by `COOP_TASKRUN`, then `SUBMIT_ALL`, the task-run
//! flags and `SINGLE_ISSUER` are dropped in turn. Any other error (`ENOSYS`, `EPERM`,
//! `ENOMEM`) ends the attempts. The completion queue is four times the submission queue.
//!
//! In SQPOLL mode ([`super::config::SqPoll`]) every attempt carries `SQPOLL` (and `SQ_AFF`
//! with the CPU asked for), and the task-run flags are never asked for: the kernel refuses
//! `DEFER_TASKRUN`, `COOP_TASKRUN` and `TASKRUN_FLAG` beside `SQPOLL` (task work runs on the
//! polling thread). So: `SINGLE_ISSUER | SUBMIT_ALL`, then without `SUBMIT_ALL`, then
//! without `SINGLE_ISSUER`. When every attempt with `SQ_AFF` is refused with `EINVAL`, one
//! more without it tells a CPU the kernel will not pin to (offline, or outside the
//! process's cpuset) from a kernel without SQPOLL.
//!
//! Invariants: the ring is created on the thread that will enter it (`SINGLE_ISSUER`
//! requires it); the flags recorded are exactly those of the ring that was built; the ring
//! must offer `IORING_FEAT_EXT_ARG` (5.11+), since the executor's one wait per turn passes
//! its timeout that way. A kernel that refuses `SINGLE_ISSUER` but builds a ring without it
//! is older than 6.0 and has no multishot receive: that is reported as unavailable too (the
//! attempts without the flag still tell a bad size, refused by every kernel, apart).

use io_uring::IoUring;

use super::config::SqPoll;
use super::error::UringError;
use super::stats::SetupFlags;

/// No flag: the base of the attempts below.
const NONE: SetupFlags = SetupFlags {
    single_issuer: false,
    defer_taskrun: false,
    taskrun_flag: false,
    submit_all: false,
    coop_taskrun: false,
    sqpoll: false,
    sq_aff: false,
    min_timeout: false,
};

/// Flag sets to try in SQPOLL mode, best first (`sqpoll` and `sq_aff` are added per config).
const SQPOLL_ATTEMPTS: [SetupFlags; 3] = [
    SetupFlags {
        single_issuer: true,
        submit_all: true,
        ..NONE
    },
    SetupFlags {
        single_issuer: true,
        ..NONE
    },
    NONE,
];

/// Flag sets to try, best first.
const ATTEMPTS: [SetupFlags; 5] = [
    SetupFlags {
        single_issuer: true,
        defer_taskrun: true,
        taskrun_flag: true,
        submit_all: true,
        coop_taskrun: false,
        ..NONE
    },
    SetupFlags {
        single_issuer: true,
        defer_taskrun: false,
        taskrun_flag: true,
        submit_all: true,
        coop_taskrun: true,
        ..NONE
    },
    SetupFlags {
        single_issuer: true,
        defer_taskrun: false,
        taskrun_flag: true,
        submit_all: false,
        coop_taskrun: true,
        ..NONE
    },
    SetupFlags {
        single_issuer: true,
        defer_taskrun: false,
        taskrun_flag: false,
        submit_all: false,
        coop_taskrun: false,
        ..NONE
    },
    SetupFlags {
        single_issuer: false,
        defer_taskrun: false,
        taskrun_flag: false,
        submit_all: false,
        coop_taskrun: false,
        ..NONE
    },
];

/// Builds a ring of `entries` SQ entries with the best flags the kernel accepts, in SQPOLL
/// mode when `sqpoll` is given.
pub(crate) fn build_ring(
    entries: u32,
    sqpoll: Option<&SqPoll>,
) -> Result<(IoUring, SetupFlags), UringError> {
    let attempts: &[SetupFlags] = match sqpoll {
        Some(_) => &SQPOLL_ATTEMPTS,
        None => &ATTEMPTS,
    };
    match try_flags(entries, attempts, sqpoll) {
        Err(Refused::Einval(e)) => {
            if let Some((sq, cpu)) = sqpoll.and_then(|s| Some((s, s.cpu?))) {
                // Was it the CPU? Try once without pinning (that ring is dropped at once).
                let unpinned = SqPoll { cpu: None, ..*sq };
                if try_flags(entries, &SQPOLL_ATTEMPTS, Some(&unpinned)).is_ok() {
                    return Err(UringError::unavailable(format!(
                        "io_uring_setup refused IORING_SETUP_SQ_AFF on CPU {cpu} (not online, \
                         or outside this process's cpuset)"
                    )));
                }
            }
            Err(UringError::os("io_uring_setup", &e))
        }
        Err(Refused::Other(e)) => Err(e),
        Ok(built) => Ok(built),
    }
}

/// Why no attempt built a ring.
enum Refused {
    /// Every attempt was refused with `EINVAL` (the last error).
    Einval(std::io::Error),
    /// Something else: the attempts stopped there.
    Other(UringError),
}

/// Tries `attempts` in order (with `SQPOLL` and `SQ_AFF` as `sqpoll` says).
fn try_flags(
    entries: u32,
    attempts: &[SetupFlags],
    sqpoll: Option<&SqPoll>,
) -> Result<(IoUring, SetupFlags), Refused> {
    let cq = entries.saturating_mul(4).clamp(1, 65536);
    let mut last = None;
    for base in attempts {
        let mut flags = *base;
        let mut b = IoUring::builder();
        b.setup_cqsize(cq);
        if let Some(sq) = sqpoll {
            b.setup_sqpoll(sq.idle_ms());
            flags.sqpoll = true;
            if let Some(cpu) = sq.cpu {
                b.setup_sqpoll_cpu(cpu);
                flags.sq_aff = true;
            }
        }
        if flags.single_issuer {
            b.setup_single_issuer();
        }
        if flags.defer_taskrun {
            b.setup_defer_taskrun();
        }
        if flags.taskrun_flag {
            b.setup_taskrun_flag();
        }
        if flags.submit_all {
            b.setup_submit_all();
        }
        if flags.coop_taskrun {
            b.setup_coop_taskrun();
        }
        match b.build(entries) {
            Ok(ring) => {
                if !ring.params().is_feature_ext_arg() {
                    return Err(Refused::Other(UringError::unavailable(
                        "the kernel lacks IORING_FEAT_EXT_ARG (kernel too old: Linux 5.11+)",
                    )));
                }
                if !flags.single_issuer {
                    return Err(Refused::Other(UringError::unavailable(
                        "the kernel refuses IORING_SETUP_SINGLE_ISSUER, so it has no multishot \
                         receive either (kernel too old: Linux 6.0+)",
                    )));
                }
                flags.min_timeout = ring.params().is_feature_min_timeout();
                return Ok((ring, flags));
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(Refused::Other(UringError::os("io_uring_setup", &e))),
        }
    }
    Err(Refused::Einval(last.unwrap_or_else(|| {
        std::io::Error::from_raw_os_error(libc::EINVAL)
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_with_the_best_flags_and_refuses_zero_entries() {
        let (_ring, flags) = build_ring(8, None).expect("io_uring");
        eprintln!("setup flags accepted: {flags}");
        assert!(flags.single_issuer);
        assert!(!flags.sqpoll && !flags.sq_aff);
        let e = build_ring(0, None).err().expect("refused");
        assert!(
            e.to_string().starts_with("io_uring is not usable here"),
            "{e}"
        );
    }

    #[test]
    fn sqpoll_asks_for_no_task_run_flag_and_pins_when_asked() {
        let sq = |cpu| SqPoll {
            idle: std::time::Duration::from_millis(5),
            cpu,
        };
        let (ring, flags) = build_ring(8, Some(&sq(None))).expect("SQPOLL ring");
        eprintln!("SQPOLL setup flags accepted: {flags}");
        assert!(ring.params().is_setup_sqpoll());
        assert!(flags.sqpoll && flags.single_issuer && !flags.sq_aff);
        assert!(!flags.defer_taskrun && !flags.coop_taskrun && !flags.taskrun_flag);
        drop(ring);
        let (_ring, flags) = build_ring(8, Some(&sq(Some(0)))).expect("pinned SQPOLL ring");
        assert!(flags.sqpoll && flags.sq_aff, "{flags}");
        // A CPU that is not online: refused, and said so.
        let e = build_ring(8, Some(&sq(Some(1000)))).err().expect("refused");
        let text = e.to_string();
        assert!(text.contains("SQ_AFF on CPU 1000"), "{text}");
    }
}
