//! What single threads of this process used, read from `/proc/self/task/<tid>/`: CPU time to
//! the nanosecond (`schedstat`: the scheduler's run time, user and system together) and
//! context switches (`status`), and which threads there are. [`crate::probe::process_cost`] uses it to
//! set apart the threads of a backend that sits parked while another one is measured
//! ([`crate::probe::process_cost::Meter::start_apart`]).

use std::time::Duration;

/// The ids of this process's threads now, sorted.
pub(crate) fn thread_ids() -> std::io::Result<Vec<i32>> {
    let mut tids: Vec<i32> = std::fs::read_dir("/proc/self/task")?
        .flatten()
        .filter_map(|t| t.file_name().to_str().and_then(|s| s.parse().ok()))
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// The threads in `after` that are not in `before` (both sorted, as [`thread_ids`] gives).
pub(crate) fn started_between(before: &[i32], after: &[i32]) -> Vec<i32> {
    after
        .iter()
        .copied()
        .filter(|t| before.binary_search(t).is_err())
        .collect()
}

/// One thread's CPU time and context switches so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadUsage {
    /// Time on a CPU, user and system.
    pub cpu: Duration,
    /// Voluntary context switches (it waited).
    pub voluntary: u64,
    /// Involuntary context switches (it was preempted).
    pub involuntary: u64,
}

impl ThreadUsage {
    /// What was used from `before` to `self`.
    pub fn since(&self, before: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu: self.cpu.saturating_sub(before.cpu),
            voluntary: self.voluntary.saturating_sub(before.voluntary),
            involuntary: self.involuntary.saturating_sub(before.involuntary),
        }
    }

    /// Both added.
    pub fn plus(&self, other: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu: self.cpu + other.cpu,
            voluntary: self.voluntary + other.voluntary,
            involuntary: self.involuntary + other.involuntary,
        }
    }
}

/// Thread `tid`'s usage so far; `None` once it has ended (or `/proc` cannot be read).
pub(crate) fn thread_usage(tid: i32) -> Option<ThreadUsage> {
    let dir = format!("/proc/self/task/{tid}");
    let cpu = parse_schedstat(&std::fs::read_to_string(format!("{dir}/schedstat")).ok()?)?;
    let (voluntary, involuntary) =
        parse_switches(&std::fs::read_to_string(format!("{dir}/status")).ok()?)?;
    Some(ThreadUsage {
        cpu,
        voluntary,
        involuntary,
    })
}

/// The usage of each of `tids` that is still running, by thread.
pub(crate) fn threads_usage(tids: &[i32]) -> Vec<(i32, ThreadUsage)> {
    tids.iter()
        .filter_map(|&t| thread_usage(t).map(|u| (t, u)))
        .collect()
}

/// What the threads of `after` used since `before`, summed. A thread read only at the end
/// counts from zero; one that ended in between is missing from the sum (its time is still
/// in the process's `getrusage`, where [`crate::probe::process_cost`] then leaves it).
pub(crate) fn used_since(
    before: &[(i32, ThreadUsage)],
    after: &[(i32, ThreadUsage)],
) -> ThreadUsage {
    after
        .iter()
        .map(|(tid, now)| {
            let was = before
                .iter()
                .find(|(t, _)| t == tid)
                .map_or(ThreadUsage::default(), |(_, u)| *u);
            now.since(&was)
        })
        .fold(ThreadUsage::default(), |a, b| a.plus(&b))
}

/// The run time of a `schedstat` line: its first field, nanoseconds.
fn parse_schedstat(text: &str) -> Option<Duration> {
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` of a `status` file.
fn parse_switches(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.trim_start_matches(':').trim().parse().ok())
    };
    Some((
        field("voluntary_ctxt_switches")?,
        field("nonvoluntary_ctxt_switches")?,
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs on a CPU until this thread has used `d` of CPU time (wall time would not do:
    /// the tests share two cores).
    pub(crate) fn spin_cpu(d: Duration) {
        let cpu = || {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: writes the calling thread's CPU clock into a timespec we own.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
            Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        };
        let start = cpu();
        let mut x = 0u64;
        while cpu() - start < d {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    }

    fn gettid() -> i32 {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() }
    }

    #[test]
    fn schedstat_and_status_are_parsed() {
        assert_eq!(
            parse_schedstat("1234567 890 12\n"),
            Some(Duration::from_nanos(1_234_567))
        );
        assert_eq!(parse_schedstat(""), None);
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_switches(status), Some((17, 3)));
        assert_eq!(parse_switches("Name:\tx\n"), None);
    }

    #[test]
    fn a_threads_usage_grows_with_its_work_and_its_waits() {
        let me = gettid();
        assert!(thread_ids().unwrap().contains(&me));
        let before = threads_usage(&[me]);
        spin_cpu(Duration::from_millis(30));
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(2));
        }
        let used = used_since(&before, &threads_usage(&[me]));
        assert!(used.cpu >= Duration::from_millis(20), "{used:?}");
        assert!(used.voluntary >= 3, "each sleep waits: {used:?}");
    }

    #[test]
    fn a_thread_started_in_between_is_found_and_one_gone_is_left_out() {
        let before = thread_ids().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(gettid()).unwrap();
            stop_rx.recv().ok();
        });
        let tid = rx.recv().unwrap();
        let started = started_between(&before, &thread_ids().unwrap());
        assert!(started.contains(&tid), "{started:?} lacks {tid}");
        assert!(!started.contains(&gettid()));
        let while_running = threads_usage(&[tid]);
        assert_eq!(while_running.len(), 1);
        stop_tx.send(()).unwrap();
        t.join().unwrap();
        assert!(thread_usage(tid).is_none(), "an ended thread has no usage");
        assert_eq!(
            used_since(&while_running, &threads_usage(&[tid])),
            ThreadUsage::default()
        );
    }
}
