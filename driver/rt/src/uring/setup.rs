//! Building an executor's ring: ask for the best setup flags, fall back flag by flag.
//!
//! First `SINGLE_ISSUER | DEFER_TASKRUN | TASKRUN_FLAG | SUBMIT_ALL`; when the kernel refuses
//! (`EINVAL`), `DEFER_TASKRUN` is replaced by `COOP_TASKRUN`, then `SUBMIT_ALL`, the task-run
//! flags and `SINGLE_ISSUER` are dropped in turn. Any other error (`ENOSYS`, `EPERM`,
//! `ENOMEM`) ends the attempts. The completion queue is four times the submission queue.
//!
//! Invariants: the ring is created on the thread that will enter it (`SINGLE_ISSUER`
//! requires it); the flags recorded are exactly those of the ring that was built; the ring
//! must offer `IORING_FEAT_EXT_ARG` (5.11+), since the executor's one wait per turn passes
//! its timeout that way. A kernel that refuses `SINGLE_ISSUER` but builds a ring without it
//! is older than 6.0 and has no multishot receive: that is reported as unavailable too (the
//! attempts without the flag still tell a bad size, refused by every kernel, apart).

use io_uring::IoUring;

use super::error::UringError;
use super::stats::SetupFlags;

/// Flag sets to try, best first.
const ATTEMPTS: [SetupFlags; 5] = [
    SetupFlags {
        single_issuer: true,
        defer_taskrun: true,
        taskrun_flag: true,
        submit_all: true,
        coop_taskrun: false,
    },
    SetupFlags {
        single_issuer: true,
        defer_taskrun: false,
        taskrun_flag: true,
        submit_all: true,
        coop_taskrun: true,
    },
    SetupFlags {
        single_issuer: true,
        defer_taskrun: false,
        taskrun_flag: true,
        submit_all: false,
        coop_taskrun: true,
    },
    SetupFlags {
        single_issuer: true,
        defer_taskrun: false,
        taskrun_flag: false,
        submit_all: false,
        coop_taskrun: false,
    },
    SetupFlags {
        single_issuer: false,
        defer_taskrun: false,
        taskrun_flag: false,
        submit_all: false,
        coop_taskrun: false,
    },
];

/// Builds a ring of `entries` SQ entries with the best flags the kernel accepts.
pub(crate) fn build_ring(entries: u32) -> Result<(IoUring, SetupFlags), UringError> {
    let cq = entries.saturating_mul(4).clamp(1, 65536);
    let mut last = None;
    for flags in ATTEMPTS.iter() {
        let mut b = IoUring::builder();
        b.setup_cqsize(cq);
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
                    return Err(UringError::unavailable(
                        "the kernel lacks IORING_FEAT_EXT_ARG (kernel too old: Linux 5.11+)",
                    ));
                }
                if !flags.single_issuer {
                    return Err(UringError::unavailable(
                        "the kernel refuses IORING_SETUP_SINGLE_ISSUER, so it has no multishot \
                         receive either (kernel too old: Linux 6.0+)",
                    ));
                }
                return Ok((ring, *flags));
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(UringError::os("io_uring_setup", &e)),
        }
    }
    let e = last.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL));
    Err(UringError::os("io_uring_setup", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_with_the_best_flags_and_refuses_zero_entries() {
        let (_ring, flags) = build_ring(8).expect("io_uring");
        eprintln!("setup flags accepted: {flags}");
        assert!(flags.single_issuer);
        let e = build_ring(0).err().expect("refused");
        assert!(
            e.to_string().starts_with("io_uring is not usable here"),
            "{e}"
        );
    }
}
