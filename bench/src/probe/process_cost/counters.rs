//! The syscall and io_uring counters of a measurement: what to count ([`Counting`], the plan
//! of each group's slots), one counter group per thread led by the total, each owned by the
//! measured threads or by a set of threads set apart, and their counts summed by owner.

use perf_event::Counter;

use super::kinds::{ByKind, IoUringOps, SyscallKind};
use super::perf_event::{open_counter, read_group, set_filter, tracepoint_id};

/// The tracepoint of `raw_syscalls:sys_enter`, for the total and the kinds.
const SYS_ENTER: &[&str] = &["raw_syscalls/sys_enter"];
/// The tracepoint of an io_uring submission, by its names new and old (before Linux 5.19).
const IO_URING_SUBMIT: &[&str] = &[
    "io_uring/io_uring_submit_req",
    "io_uring/io_uring_submit_sqe",
];
/// The tracepoint of an io_uring completion.
const IO_URING_COMPLETE: &[&str] = &["io_uring/io_uring_complete"];

/// What a counter of a thread's group counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Every syscall (the leader).
    Total,
    /// The syscalls of `SyscallKind::NAMED[i]`.
    Kind(usize),
    /// io_uring operations submitted.
    Submitted,
    /// io_uring completions posted.
    Completed,
}

/// What to count besides the total.
pub(super) struct CounterPlan {
    /// What to count besides the total.
    pub(super) counting: Counting,
    /// The tracepoint filter of each named kind, in `SyscallKind::NAMED` order.
    pub(super) kind_filters: [String; SyscallKind::NAMED.len()],
    /// The io_uring submission tracepoint's possible names (`system/name`).
    pub(super) io_uring_submit: &'static [&'static str],
    /// The io_uring completion tracepoint's possible names.
    pub(super) io_uring_complete: &'static [&'static str],
}

impl CounterPlan {
    pub(super) fn standard() -> Self {
        CounterPlan {
            counting: Counting::ByKind,
            kind_filters: SyscallKind::NAMED.map(SyscallKind::filter),
            io_uring_submit: IO_URING_SUBMIT,
            io_uring_complete: IO_URING_COMPLETE,
        }
    }
}

/// What the syscall counters count (`doppio run --syscalls`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Counting {
    /// The total, each kind, and io_uring operations submitted and completed (the default).
    #[default]
    ByKind,
    /// The total only: one counter per thread, for studies of CPU alone (each counter costs
    /// a little on every syscall and context switch: see the module's table).
    Total,
}

/// A `--syscalls` that is neither `by-kind` nor `total`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown syscall counting `{0}`: by-kind (the total, each kind, io_uring operations) or total"
)]
pub(crate) struct UnknownCounting(pub String);

impl Counting {
    /// Reads `by-kind` or `total`.
    pub(crate) fn parse(text: &str) -> Result<Self, UnknownCounting> {
        match text {
            "by-kind" => Ok(Counting::ByKind),
            "total" => Ok(Counting::Total),
            other => Err(UnknownCounting(other.to_owned())),
        }
    }

    /// Its name, as `--syscalls` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Counting::ByKind => "by-kind",
            Counting::Total => "total",
        }
    }
}

/// Why a count `--syscalls total` turned off is missing.
pub(super) const TOTAL_ONLY: &str = "--syscalls total (only the total was counted)";

/// Counts at one moment, summed over threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) total: u64,
    pub(super) kinds: [u64; SyscallKind::NAMED.len()],
    pub(super) io_uring: IoUringOps,
}

impl Counts {
    /// What was counted from `before` to `self`.
    pub(super) fn since(&self, before: &Counts) -> Counts {
        Counts {
            total: self.total.saturating_sub(before.total),
            kinds: std::array::from_fn(|i| self.kinds[i].saturating_sub(before.kinds[i])),
            io_uring: IoUringOps {
                submitted: self
                    .io_uring
                    .submitted
                    .saturating_sub(before.io_uring.submitted),
                completed: self
                    .io_uring
                    .completed
                    .saturating_sub(before.io_uring.completed),
            },
        }
    }

    /// The syscalls by kind, `other` being the total minus the named kinds.
    pub(super) fn by_kind(&self) -> ByKind<u64> {
        let named: u64 = self.kinds.iter().sum();
        ByKind::from_fn(|k| match SyscallKind::NAMED.iter().position(|n| *n == k) {
            Some(i) => self.kinds[i],
            None => self.total.saturating_sub(named),
        })
    }
}

/// One thread's counters: a group led by the total, read in one `read`.
struct ThreadGroup {
    /// Whose thread: 0 the measured one's (every thread not set apart), `k + 1` the `k`th
    /// set of threads set apart ([`Meter::start_apart`](super::Meter::start_apart)).
    owner: usize,
    /// The leader (the total) first, then the others in the order opened: the order in
    /// which the kernel returns their counts.
    counters: Vec<Counter>,
    /// What each counter counts.
    slots: Vec<Slot>,
}

impl ThreadGroup {
    /// Adds `counter` counting `slot` to the group.
    fn push(&mut self, counter: Counter, slot: Slot) {
        self.counters.push(counter);
        self.slots.push(slot);
    }
}

/// Why a group member could not be opened.
enum MemberError {
    /// The thread ended since it was listed.
    ThreadGone,
    /// The kernel refused.
    Refused(String),
}

/// Opens a counter of `config` in `group`'s thread, with `filter` if given.
fn open_member(
    group: &mut ThreadGroup,
    tid: i32,
    config: u64,
    filter: Option<&str>,
    what: &str,
) -> Result<Counter, MemberError> {
    let Some(leader) = group.counters.first_mut() else {
        return Err(MemberError::Refused(format!("{what}: no group leader")));
    };
    let fd = open_counter(config, tid, Some(leader)).and_then(|fd| match filter {
        Some(f) => set_filter(&fd, f).map(|()| fd),
        None => Ok(fd),
    });
    fd.map_err(|e| {
        if e.raw_os_error() == Some(libc::ESRCH) {
            MemberError::ThreadGone
        } else {
            MemberError::Refused(format!("{what}: {e}"))
        }
    })
}

/// Open syscall and io_uring counters, one group per thread present at the start.
pub(super) struct SyscallCounters {
    groups: Vec<ThreadGroup>,
    /// How many owners the groups are summed into (1 + the sets set apart).
    owners: usize,
    /// Why syscalls are not counted by kind, if they are not.
    pub(super) kinds_unavailable: Option<String>,
    /// Why io_uring operations are not counted, if they are not.
    pub(super) io_uring_unavailable: Option<String>,
}

impl SyscallCounters {
    /// Counters on every thread of the process, counting what `counting` asks; the
    /// threads of each set in `apart` summed on their own.
    pub(super) fn open(counting: Counting, apart: Vec<&[i32]>) -> Result<Self, String> {
        let tids: Vec<(i32, usize)> = crate::probe::thread_usage::thread_ids()
            .map_err(|e| format!("/proc/self/task: {e}"))?
            .into_iter()
            .map(|t| (t, owner_of(t, &apart)))
            .collect();
        Self::open_with(
            &CounterPlan {
                counting,
                ..CounterPlan::standard()
            },
            &tids,
            1 + apart.len(),
        )
    }

    /// Counters on threads `tids` (each with its owner, below `owners`): the total, and
    /// what `plan` says where the kernel lets us.
    pub(super) fn open_with(
        plan: &CounterPlan,
        tids: &[(i32, usize)],
        owners: usize,
    ) -> Result<Self, String> {
        let sys_enter = tracepoint_id(SYS_ENTER)?;
        let mut io_uring_unavailable = None;
        let mut kinds_unavailable = None;
        if plan.counting == Counting::Total {
            io_uring_unavailable = Some(TOTAL_ONLY.to_owned());
            kinds_unavailable = Some(TOTAL_ONLY.to_owned());
        }
        let io_uring = match (
            tracepoint_id(plan.io_uring_submit),
            tracepoint_id(plan.io_uring_complete),
        ) {
            (Ok(submit), Ok(complete)) => Some((submit, complete)),
            (Err(e), _) | (_, Err(e)) => {
                io_uring_unavailable.get_or_insert(e);
                None
            }
        };
        let mut groups = Vec::new();
        'threads: for &(tid, owner) in tids {
            let leader = match open_counter(sys_enter, tid, None) {
                Ok(fd) => fd,
                // A thread that ended since we listed it is not an error.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
                Err(e) => return Err(format!("perf_event_open(raw_syscalls:sys_enter): {e}")),
            };
            let mut group = ThreadGroup {
                owner,
                counters: vec![leader],
                slots: vec![Slot::Total],
            };
            let mut members: Vec<(Slot, u64, Option<&str>, String)> = Vec::new();
            if kinds_unavailable.is_none() {
                for (i, (kind, filter)) in SyscallKind::NAMED
                    .iter()
                    .zip(&plan.kind_filters)
                    .enumerate()
                {
                    let what = format!(
                        "counting {} syscalls (raw_syscalls:sys_enter filtered by `{filter}`)",
                        kind.name()
                    );
                    members.push((Slot::Kind(i), sys_enter, Some(filter), what));
                }
            }
            if let (None, Some((submit, complete))) = (&io_uring_unavailable, io_uring) {
                let what = |what| format!("counting io_uring {what} (perf_event_open)");
                members.push((Slot::Submitted, submit, None, what("submissions")));
                members.push((Slot::Completed, complete, None, what("completions")));
            }
            for (slot, config, filter, what) in members {
                let unavailable = match slot {
                    Slot::Kind(_) => &mut kinds_unavailable,
                    _ => &mut io_uring_unavailable,
                };
                if unavailable.is_some() {
                    continue;
                }
                match open_member(&mut group, tid, config, filter, &what) {
                    Ok(fd) => group.push(fd, slot),
                    Err(MemberError::ThreadGone) => continue 'threads,
                    Err(MemberError::Refused(why)) => *unavailable = Some(why),
                }
            }
            groups.push(group);
        }
        Ok(Self {
            groups,
            owners,
            kinds_unavailable,
            io_uring_unavailable,
        })
    }

    /// The counts now, summed over each owner's threads (index 0: the measured threads).
    pub(super) fn read(&mut self) -> Result<Vec<Counts>, String> {
        let mut all = vec![Counts::default(); self.owners];
        for group in &mut self.groups {
            let Some(counts) = all.get_mut(group.owner) else {
                continue;
            };
            let Some(leader) = group.counters.first_mut() else {
                continue;
            };
            let data = read_group(leader).map_err(|e| format!("reading a syscall counter: {e}"))?;
            let want = group.slots.len();
            if data.len() != want {
                return Err(format!(
                    "reading a syscall counter: {} counters, for {want} counters",
                    data.len()
                ));
            }
            for (slot, counter) in group.slots.iter().zip(&group.counters) {
                let Some(v) = data.get(counter).map(|e| e.value()) else {
                    return Err(format!(
                        "reading a syscall counter: no count for counter {}",
                        counter.id()
                    ));
                };
                match *slot {
                    Slot::Total => counts.total += v,
                    Slot::Kind(i) => counts.kinds[i] += v,
                    Slot::Submitted => counts.io_uring.submitted += v,
                    Slot::Completed => counts.io_uring.completed += v,
                }
            }
        }
        Ok(all)
    }
}

/// Which owner thread `tid` has: `k + 1` if it is in the `k`th set of `apart`, else 0.
fn owner_of(tid: i32, apart: &[&[i32]]) -> usize {
    apart
        .iter()
        .position(|set| set.contains(&tid))
        .map_or(0, |k| k + 1)
}
