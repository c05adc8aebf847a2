//! The kinds of system call the report breaks the total into ([`SyscallKind`], with their
//! syscall numbers and tracepoint filters), one value per kind ([`ByKind`]), and io_uring
//! operations submitted and completed ([`IoUringOps`]).

use serde::{Deserialize, Serialize};

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
    pub(super) const NAMED: [SyscallKind; 6] = [
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
    pub(super) fn filter(self) -> String {
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
