//! The anatomy of a request's CPU time: each sampled stack (folded, as `--flamegraph` writes
//! them) is given to the layer of the software that owns it, so that the client's CPU per
//! request splits into codec, driver, runtime, allocator, kernel (io_uring, TCP and sockets,
//! syscall entry and exit, scheduler, the rest), the bench's adapter of the driver, the bench
//! engine and other.
//!
//! Who owns a sample: the frame nearest the leaf that names a layer. Frames that do work on
//! behalf of their caller (`memcpy`, `core::`/`std::` internals, spin-lock releases, a
//! vDSO clock read) name none, so their time goes to the caller's layer; an allocator frame
//! names its own. Stacks that entered the kernel (a syscall or interrupt entry frame, or a
//! kernel thread such as io_uring's SQPOLL thread) are the kernel's from that frame on, and
//! the kernel frame nearest the leaf that names a part decides which part.
//!
//! The rules are data ([`USER_RULES`], [`KERNEL_RULES`]): a frame names a layer when it
//! contains one of its patterns (user frames: the crate path that appears first in the frame
//! wins, so `doppio_bench::backend::doppio::X` is the bench's and `replace<doppio_driver::...>` the
//! driver's) or starts with one (kernel functions). Tested on synthetic folded stacks below.

use std::collections::BTreeMap;

/// Where a sample's CPU time went.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The protocol's encoding and decoding (doppio-proto, scylla-cql).
    Codec,
    /// The driver itself (doppio, scylla-rust-driver), TLS included.
    Driver,
    /// The event loop and task machinery (doppio-rt and the runtimes it adapts, tokio). The
    /// runtimes' own frames are named by doppio-rt's frame that runs them.
    Runtime,
    /// malloc, free and their kin.
    Allocator,
    /// The kernel's io_uring.
    KernelIoUring,
    /// The kernel's TCP/IP and socket layers (loopback included).
    KernelNet,
    /// Entering and leaving the kernel (syscall entry and exit work).
    KernelSyscall,
    /// The kernel's scheduler: switches, wake-ups, futexes.
    KernelScheduler,
    /// Everything else in the kernel (page faults, timers, interrupts).
    KernelOther,
    /// The bench's adapter of the driver (`doppio_bench::backend`): what the bench does per
    /// request to call that driver (binding values, spawning, reading its results).
    Adapter,
    /// The bench engine (schedules, clocks, statistics, workloads).
    Bench,
    /// Frames no rule names (the stack's root, libc, unsymbolised addresses).
    Other,
}

impl Layer {
    /// Every layer, in report order.
    pub const ALL: [Layer; 12] = [
        Layer::Codec,
        Layer::Driver,
        Layer::Runtime,
        Layer::Allocator,
        Layer::KernelIoUring,
        Layer::KernelNet,
        Layer::KernelSyscall,
        Layer::KernelScheduler,
        Layer::KernelOther,
        Layer::Adapter,
        Layer::Bench,
        Layer::Other,
    ];

    /// Its name in reports (short: the text report's label column is narrow).
    pub fn name(self) -> &'static str {
        match self {
            Layer::Codec => "codec",
            Layer::Driver => "driver",
            Layer::Runtime => "runtime",
            Layer::Allocator => "allocator",
            Layer::KernelIoUring => "kernel io_uring",
            Layer::KernelNet => "kernel net",
            Layer::KernelSyscall => "kernel syscall",
            Layer::KernelScheduler => "kernel sched",
            Layer::KernelOther => "kernel other",
            Layer::Adapter => "bench adapter",
            Layer::Bench => "bench engine",
            Layer::Other => "other",
        }
    }
}

/// User-space frames: a frame names the layer of the crate path that appears first in it
/// (of two found at the same place, the rule listed first). Allocator entry points are
/// matched as whole leading names.
pub(crate) const USER_RULES: &[(Layer, &[&str])] = &[
    (Layer::Adapter, &["doppio_bench::backend::"]),
    (Layer::Bench, &["doppio_bench::"]),
    (
        Layer::Codec,
        &["doppio_proto::", "scylla_cql::", "scylla_cql_core::"],
    ),
    (
        Layer::Runtime,
        &["doppio_rt::", "tokio::", "mio::", "futures_lite::"],
    ),
    (
        Layer::Driver,
        &["doppio_driver::", "scylla::", "rustls::", "ring::"],
    ),
    (
        Layer::Allocator,
        &["doppio_alloc_count::", "alloc::alloc::"],
    ),
];

/// Allocator functions of the C library and Rust's allocation shims (leading names).
pub(crate) const ALLOCATOR_FUNCTIONS: &[&str] = &[
    "malloc",
    "free",
    "realloc",
    "calloc",
    "cfree",
    "_int_malloc",
    "_int_free",
    "_int_realloc",
    "__libc_malloc",
    "__libc_free",
    "__libc_realloc",
    "__libc_calloc",
    "malloc_consolidate",
    "tcache_",
    "__rust_alloc",
    "__rust_dealloc",
    "__rust_realloc",
    "__rdl_",
    "__rg_",
];

/// Frames at which a stack enters the kernel (leading names): everything towards the leaf
/// from the first of them is kernel time.
pub(crate) const KERNEL_ENTRIES: &[&str] = &[
    "entry_SYSCALL",
    "do_syscall_64",
    "asm_sysvec_",
    "asm_common_interrupt",
    "asm_exc_",
    "ret_from_fork",
];

/// Kernel frames: a frame names the part whose pattern it starts with (first rule first).
pub(crate) const KERNEL_RULES: &[(Layer, &[&str])] = &[
    (
        Layer::KernelScheduler,
        &[
            "schedule",
            "__schedule",
            "io_schedule",
            "finish_task_switch",
            "try_to_wake_up",
            "ttwu_",
            "wake_up_",
            "__wake_up",
            "pick_next_task",
            "enqueue_task",
            "dequeue_task",
            "__switch_to",
            "update_curr",
            "psi_",
            "futex_",
            "__futex",
            "do_futex",
            "select_task_rq",
            "do_nanosleep",
            "hrtimer_nanosleep",
        ],
    ),
    (
        Layer::KernelIoUring,
        &[
            "io_",
            "__io_",
            "__do_sys_io_uring",
            "__x64_sys_io_uring",
            "tctx_task_work",
        ],
    ),
    (
        Layer::KernelNet,
        &[
            "tcp_",
            "__tcp_",
            "inet_",
            "__inet_",
            "sock_",
            "__sock_",
            "sk_",
            "__sk_",
            "skb_",
            "__skb_",
            "kfree_skb",
            "ip_",
            "__ip_",
            "ipv6_",
            "netif_",
            "__netif_",
            "net_rx_action",
            "napi_",
            "__napi_",
            "process_backlog",
            "loopback_xmit",
            "dev_hard_start_xmit",
            "__dev_queue_xmit",
            "__sys_sendto",
            "__sys_recvfrom",
            "__sys_sendmsg",
            "__sys_recvmsg",
            "lock_sock",
            "release_sock",
            "__release_sock",
            "__x64_sys_sendto",
            "__x64_sys_recvfrom",
            "__x64_sys_sendmsg",
            "__x64_sys_recvmsg",
        ],
    ),
    (
        Layer::KernelSyscall,
        &[
            "syscall_exit",
            "syscall_return",
            "exit_to_user_mode",
            "syscall_enter",
            "__x64_sys_",
            "x64_sys_call",
        ],
    ),
];

/// Threads that run in the kernel only (their comm's leading name): all their time is
/// kernel time, io_uring's for its workers and SQPOLL thread.
pub(crate) const KERNEL_THREADS: &[(&str, Layer)] = &[
    ("iou-sqp-", Layer::KernelIoUring),
    ("iou-wrk-", Layer::KernelIoUring),
    ("ksoftirqd", Layer::KernelNet),
];

/// The layer a user-space frame names, if any: the layer of the pattern that appears
/// earliest in the frame.
fn user_layer(frame: &str) -> Option<Layer> {
    if ALLOCATOR_FUNCTIONS.iter().any(|f| {
        frame
            .strip_prefix(f)
            .is_some_and(|rest| f.ends_with('_') || rest.is_empty() || !is_ident(rest))
    }) {
        return Some(Layer::Allocator);
    }
    USER_RULES
        .iter()
        .flat_map(|(layer, patterns)| patterns.iter().map(move |p| (*layer, *p)))
        .filter_map(|(layer, p)| frame.find(p).map(|at| (at, layer)))
        .min_by_key(|(at, _)| *at)
        .map(|(_, layer)| layer)
}

/// Whether `rest` continues an identifier (so `free` does not match `freelist_pop`).
fn is_ident(rest: &str) -> bool {
    rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

/// The kernel part a kernel frame names, if any.
fn kernel_layer(frame: &str) -> Option<Layer> {
    KERNEL_RULES
        .iter()
        .find(|(_, patterns)| patterns.iter().any(|p| frame.starts_with(p)))
        .map(|(layer, _)| *layer)
}

/// The layer that owns one folded stack (`comm;root;...;leaf`).
pub(crate) fn classify(stack: &str) -> Layer {
    let mut frames = stack.split(';');
    let comm = frames.next().unwrap_or_default();
    let frames: Vec<&str> = frames.collect();
    if let Some((_, layer)) = KERNEL_THREADS.iter().find(|(t, _)| comm.starts_with(t)) {
        return frames
            .iter()
            .rev()
            .find_map(|f| kernel_layer(f))
            .filter(|l| *l != Layer::KernelSyscall)
            .unwrap_or(*layer);
    }
    let entry = frames
        .iter()
        .position(|f| KERNEL_ENTRIES.iter().any(|e| f.starts_with(e)));
    if let Some(entry) = entry {
        // The entry frames themselves name no part (they sit under every syscall): time in
        // their own bodies is entry/exit work, time in unnamed frames above them the rest.
        let kernel = &frames[entry..];
        let in_entry = kernel
            .last()
            .is_some_and(|leaf| KERNEL_ENTRIES.iter().any(|e| leaf.starts_with(e)));
        return kernel
            .iter()
            .rev()
            .find_map(|f| kernel_layer(f))
            .unwrap_or(if in_entry {
                Layer::KernelSyscall
            } else {
                Layer::KernelOther
            });
    }
    frames
        .iter()
        .rev()
        .find_map(|f| user_layer(f))
        .unwrap_or(Layer::Other)
}

/// One line of folded stacks, `comm;frame;...;frame COUNT`, as its stack and count; `None`
/// for a line that is not one.
pub(crate) fn folded_line(line: &str) -> Option<(&str, u64)> {
    let (stack, count) = line.rsplit_once(' ')?;
    Some((stack, count.trim().parse().ok()?))
}

/// Samples by layer over a whole folded profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Anatomy {
    /// Sample weight (perf's count: nanoseconds of cpu-clock) by layer.
    pub by_layer: BTreeMap<Layer, u64>,
    /// Their sum.
    pub total: u64,
    /// Lines that were not `STACK COUNT` (skipped).
    pub skipped_lines: u64,
}

impl Anatomy {
    /// Reads folded stacks (`comm;frame;...;frame COUNT` per line).
    pub(crate) fn from_folded(text: &str) -> Self {
        let mut out = Self::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Some((stack, count)) = folded_line(line) else {
                out.skipped_lines += 1;
                continue;
            };
            *out.by_layer.entry(classify(stack)).or_default() += count;
            out.total += count;
        }
        out
    }

    /// Each layer's share of the samples (0 to 1), in [`Layer::ALL`] order, layers with
    /// none left out.
    pub(crate) fn shares(&self) -> Vec<(Layer, f64)> {
        if self.total == 0 {
            return Vec::new();
        }
        Layer::ALL
            .iter()
            .filter_map(|l| {
                self.by_layer
                    .get(l)
                    .map(|n| (*l, *n as f64 / self.total as f64))
            })
            .collect()
    }

    /// The measured CPU per request split by layer in proportion to the samples, so that
    /// the layers add up to `cpu_per_request` exactly (up to rounding of floats).
    pub(crate) fn per_request(&self, cpu_per_request: f64) -> Vec<(Layer, f64)> {
        self.shares()
            .into_iter()
            .map(|(l, share)| (l, share * cpu_per_request))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str =
        "doppio-shard-0;clone3;start_thread;std::sys::thread::unix::Thread::new::thread_start";

    fn stack(frames: &[&str]) -> String {
        let mut s = ROOT.to_owned();
        for f in frames {
            s.push(';');
            s.push_str(f);
        }
        s
    }

    #[test]
    fn user_frames_go_to_the_crate_that_appears_first() {
        for (frames, want) in [
            (
                &["doppio_rt::uring::executor::Executor::run_tasks", "doppio_driver::session::request::<impl doppio_driver::session::Session>::execute_once::{{closure}}"][..],
                Layer::Driver,
            ),
            (&["doppio_driver::result::result_of", "doppio_proto::frame::FrameDecoder::decode"][..], Layer::Codec),
            // Generic wrappers name their argument's crate.
            (&["replace<doppio_driver::connection::in_flight::SlotState<doppio_proto::frame::Frame>>"][..], Layer::Driver),
            (&["{async_fn#0}<doppio_driver::session::request::{impl#4}::execute_with::{async_fn#0}>"][..], Layer::Driver),
            // The bench's adapter module named `doppio` is the bench's adapter.
            (&["doppio_bench::backend::doppio::DoppioBackend::execute"][..], Layer::Adapter),
            (&["doppio_bench::engine::worker::run", "doppio_bench::backend::scylla_rust_driver::bind"][..], Layer::Adapter),
            (&["doppio_bench::backend::scylla_rust_driver::bind", "doppio_bench::engine::clock::Clock::now"][..], Layer::Bench),
            (&["doppio_bench::engine::clock::Clock::now", "__vdso_clock_gettime"][..], Layer::Bench),
            (&["tokio::runtime::scheduler::multi_thread::worker::run", "scylla::network::connection::Connection::send_request", "scylla_cql::frame::request::execute::Execute::serialize"][..], Layer::Codec),
            // glommio's frames (its executor and reactor) name no layer here (only doppio-rt
            // names glommio: scripts/check-seams.sh); doppio-rt's frame below them does.
            (&["doppio_rt::executor::spawn_executor::{{closure}}", "LocalExecutor::run_task_queues", "poll_io"][..], Layer::Runtime),
        ] {
            assert_eq!(classify(&stack(frames)), want, "{frames:?}");
        }
    }

    #[test]
    fn helpers_work_for_their_caller_and_allocators_for_themselves() {
        let copy = stack(&[
            "doppio_proto::response::decode_body",
            "core::ptr::copy_nonoverlapping",
            "__memcpy_avx512_unaligned_erms",
        ]);
        assert_eq!(classify(&copy), Layer::Codec);
        let alloc = stack(&[
            "scylla::client::session::Session::execute",
            "alloc::raw_vec::RawVec<T>::grow",
            "__rust_alloc",
            "malloc",
            "_int_malloc",
        ]);
        assert_eq!(classify(&alloc), Layer::Allocator);
        let counted = stack(&[
            "doppio_bench::engine::run",
            "doppio_alloc_count::Counting::alloc",
        ]);
        assert_eq!(classify(&counted), Layer::Allocator);
        // `free` is the allocator, `freelist_pop` is not.
        assert_eq!(
            classify(&stack(&["doppio_driver::pool::x", "freelist_pop"])),
            Layer::Driver
        );
        assert_eq!(
            classify(&stack(&["doppio_driver::pool::x", "free"])),
            Layer::Allocator
        );
        // Nothing names a layer: other.
        assert_eq!(classify(&stack(&["[unknown]"])), Layer::Other);
    }

    #[test]
    fn kernel_time_goes_to_its_part_from_the_entry_on() {
        let user = ["doppio_rt::uring::executor::Executor::turn", "syscall"];
        let kernel = |tail: &[&'static str]| {
            let mut f = user.to_vec();
            f.extend_from_slice(&["entry_SYSCALL_64_after_hwframe", "do_syscall_64"]);
            f.extend_from_slice(tail);
            stack(&f)
        };
        assert_eq!(
            classify(&kernel(&[
                "__x64_sys_io_uring_enter",
                "io_submit_sqes",
                "io_issue_sqe"
            ])),
            Layer::KernelIoUring
        );
        assert_eq!(
            classify(&kernel(&[
                "__x64_sys_io_uring_enter",
                "io_submit_sqes",
                "io_send",
                "sock_sendmsg",
                "tcp_sendmsg_locked",
                "_copy_from_iter"
            ])),
            Layer::KernelNet
        );
        assert_eq!(
            classify(&kernel(&[
                "__x64_sys_io_uring_enter",
                "io_cqring_wait",
                "schedule_hrtimeout_range",
                "schedule",
                "__schedule",
                "finish_task_switch.isra.0"
            ])),
            Layer::KernelScheduler
        );
        assert_eq!(
            classify(&kernel(&[
                "__x64_sys_futex",
                "do_futex",
                "futex_wake",
                "_raw_spin_unlock_irqrestore"
            ])),
            Layer::KernelScheduler
        );
        assert_eq!(
            classify(&kernel(&["syscall_exit_to_user_mode"])),
            Layer::KernelSyscall
        );
        // io_uring_enter's own body is io_uring's; another syscall's is entry/exit work.
        assert_eq!(
            classify(&kernel(&["__x64_sys_io_uring_enter"])),
            Layer::KernelIoUring
        );
        assert_eq!(
            classify(&kernel(&["__x64_sys_getrusage"])),
            Layer::KernelSyscall
        );
        assert_eq!(classify(&kernel(&["handle_mm_fault"])), Layer::KernelOther);
        assert_eq!(classify(&kernel(&[])), Layer::KernelSyscall);
        // An interrupt on a user stack: the kernel's, whatever ran above it.
        assert_eq!(
            classify(&stack(&[
                "doppio_driver::x",
                "asm_sysvec_apic_timer_interrupt",
                "hrtimer_interrupt"
            ])),
            Layer::KernelOther
        );
        assert_eq!(
            classify(&stack(&[
                "doppio_driver::x",
                "asm_common_interrupt",
                "net_rx_action",
                "process_backlog"
            ])),
            Layer::KernelNet
        );
        // io_uring's SQPOLL thread and workers are all io_uring, or the part they name.
        assert_eq!(
            classify("iou-sqp-1234;ret_from_fork;io_sq_thread;io_submit_sqes"),
            Layer::KernelIoUring
        );
        assert_eq!(
            classify("iou-sqp-1234;ret_from_fork;io_sq_thread;tcp_sendmsg"),
            Layer::KernelNet
        );
        assert_eq!(
            classify("iou-wrk-1234;ret_from_fork;[unknown]"),
            Layer::KernelIoUring
        );
    }

    #[test]
    fn a_profile_adds_up_and_splits_the_cpu_per_request() {
        let folded = format!(
            "{} 600\n{} 300\n{} 100\nnot a line\n\n",
            stack(&["doppio_driver::session::Session::execute"]),
            stack(&["doppio_proto::frame::FrameDecoder::decode"]),
            stack(&[
                "doppio_driver::x",
                "entry_SYSCALL_64",
                "do_syscall_64",
                "io_submit_sqes"
            ]),
        );
        let a = Anatomy::from_folded(&folded);
        assert_eq!(a.total, 1000);
        assert_eq!(a.skipped_lines, 1);
        assert_eq!(
            a.shares(),
            vec![
                (Layer::Codec, 0.3),
                (Layer::Driver, 0.6),
                (Layer::KernelIoUring, 0.1)
            ]
        );
        let per = a.per_request(0.5);
        let sum: f64 = per.iter().map(|(_, us)| us).sum();
        assert!((sum - 0.5).abs() < 1e-12, "{per:?}");
        assert_eq!(Anatomy::from_folded("").shares(), Vec::new());
    }
}
