//! Hardware counters of the client over a measured stretch: instructions, cycles and cache
//! misses of every thread of the process (user and kernel), through `perf_event_open` (the
//! `perf-event2` crate), so that a report gives instructions and cycles per request and the
//! IPC beside the CPU time. Many machines have none to give (virtual machines without a
//! virtual PMU, containers refused by `perf_event_paranoid`): then the report says why,
//! once, instead of a figure ([`Unavailable`]).
//!
//! Counters are opened per thread (`pid` = the thread's id, any CPU) for the threads alive
//! when the stretch starts: the backends' threads all are. Threads started during the
//! stretch (io_uring's io-wq workers) are not counted. A counter the kernel had to
//! time-share is scaled by its enabled over running time.

use perf_event::events::Hardware;
use perf_event::{Builder, Counter};

/// The events counted, by their names in reports.
pub(crate) const EVENTS: [(&str, Hardware); 3] = [
    ("instructions", Hardware::INSTRUCTIONS),
    ("cycles", Hardware::CPU_CYCLES),
    ("cache_misses", Hardware::CACHE_MISSES),
];

/// Why there are no hardware counters here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unavailable(pub String);

/// Counts of one stretch, every thread added up.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HwCounts {
    /// Instructions retired.
    pub instructions: f64,
    /// CPU cycles.
    pub cycles: f64,
    /// Cache misses (the CPU's last-level cache, as the kernel maps the generic event).
    pub cache_misses: f64,
}

impl HwCounts {
    /// The sum of two stretches.
    pub fn add(&mut self, other: &HwCounts) {
        self.instructions += other.instructions;
        self.cycles += other.cycles;
        self.cache_misses += other.cache_misses;
    }
}

/// The counter set-up for one event of one thread: user and kernel, not the hypervisor,
/// disabled until the stretch starts, with the times that scale a time-shared count.
pub(crate) fn builder(event: Hardware, tid: libc::pid_t) -> Builder<'static> {
    let mut b = Builder::new(event);
    b.observe_pid(tid)
        .any_cpu()
        .exclude_kernel(false)
        .exclude_hv(true)
        .inherit(false)
        .enabled(false);
    b
}

/// Counters running over a stretch.
pub(crate) struct HwCounting {
    counters: Vec<[Counter; 3]>,
}

/// What an error of `perf_event_open` means here.
fn reason(e: &std::io::Error) -> String {
    let why = match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            "this CPU exposes no hardware counters (a virtual machine without a virtual PMU?)"
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "counting is not permitted (kernel.perf_event_paranoid, or no CAP_PERFMON)"
        }
        Some(libc::ENOSYS) => "the kernel has no perf_event_open",
        _ => "perf_event_open failed",
    };
    format!("not available here: {why} (perf_event_open: {e})")
}

/// This process's threads.
fn threads() -> Result<Vec<libc::pid_t>, Unavailable> {
    let entries = std::fs::read_dir("/proc/self/task")
        .map_err(|e| Unavailable(format!("cannot list this process's threads: {e}")))?;
    Ok(entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect())
}

impl HwCounting {
    /// Opens and starts the counters of every thread of this process.
    pub(crate) fn start() -> Result<Self, Unavailable> {
        let mut counters = Vec::new();
        for tid in threads()? {
            let open = |event| builder(event, tid).build();
            let set = match (open(EVENTS[0].1), open(EVENTS[1].1), open(EVENTS[2].1)) {
                (Ok(a), Ok(b), Ok(c)) => [a, b, c],
                // A thread that ended meanwhile.
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e))
                    if e.raw_os_error() == Some(libc::ESRCH) =>
                {
                    continue
                }
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                    return Err(Unavailable(reason(&e)))
                }
            };
            counters.push(set);
        }
        for set in &mut counters {
            for c in set.iter_mut() {
                c.enable().map_err(|e| Unavailable(reason(&e)))?;
            }
        }
        Ok(HwCounting { counters })
    }

    /// Stops the counters and adds them up (each scaled by its enabled over running time).
    pub(crate) fn stop(mut self) -> Result<HwCounts, Unavailable> {
        let mut sums = [0.0f64; 3];
        for set in &mut self.counters {
            for (k, c) in set.iter_mut().enumerate() {
                c.disable().map_err(|e| Unavailable(reason(&e)))?;
                let read = c
                    .read_count_and_time()
                    .map_err(|e| Unavailable(reason(&e)))?;
                sums[k] += scaled(read.count, read.time_enabled, read.time_running);
            }
        }
        Ok(HwCounts {
            instructions: sums[0],
            cycles: sums[1],
            cache_misses: sums[2],
        })
    }
}

/// A count scaled up by the share of its enabled time the counter actually ran.
fn scaled(count: u64, enabled: u64, running: u64) -> f64 {
    if running == 0 {
        0.0
    } else {
        count as f64 * enabled as f64 / running as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_counter_counts_one_thread_user_and_kernel_from_when_it_is_enabled() {
        // linux/perf_event.h: PERF_TYPE_HARDWARE is 0; PERF_COUNT_HW_CPU_CYCLES 0,
        // _INSTRUCTIONS 1, _CACHE_MISSES 3.
        for ((name, event), config) in EVENTS.into_iter().zip([1, 0, 3]) {
            let b = builder(event, 4242);
            let a = b.attrs();
            assert_eq!(a.type_, 0, "{name}");
            assert_eq!(a.config, config, "{name}");
            assert_eq!(a.disabled(), 1, "{name}: disabled until the stretch starts");
            assert_eq!(
                a.exclude_kernel(),
                0,
                "{name}: the kernel's work for the client counts"
            );
            assert_eq!(a.exclude_hv(), 1, "{name}");
            assert_eq!(a.inherit(), 0, "{name}: one counter per thread");
        }
        // Time-shared counts are scaled; one that never ran counts nothing.
        assert_eq!(scaled(1000, 200, 100), 2000.0);
        assert_eq!(scaled(1000, 100, 100), 1000.0);
        assert_eq!(scaled(1000, 100, 0), 0.0);
    }

    #[test]
    fn counting_gives_counts_or_says_why_not() {
        match HwCounting::start() {
            Ok(c) => {
                // Some work between start and stop.
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
                }
                std::hint::black_box(x);
                let counts = c.stop().unwrap();
                assert!(counts.instructions > 1e6, "{counts:?}");
                assert!(counts.cycles > 0.0, "{counts:?}");
            }
            Err(Unavailable(why)) => {
                // This machine (no virtual PMU): the reason is the report's.
                assert!(why.starts_with("not available here: "), "{why}");
                assert!(why.contains("perf_event_open: "), "{why}");
            }
        }
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert!(
            reason(&e).contains("no hardware counters"),
            "{}",
            reason(&e)
        );
        let e = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(reason(&e).contains("perf_event_paranoid"), "{}", reason(&e));
    }
}
