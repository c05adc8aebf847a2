//! The tests of the process cost meter: syscalls counted exactly by kind on one thread, a
//! refused filter or a missing tracepoint reported, threads set apart, SQPOLL threads in
//! `getrusage`, CPU time and `/proc` readings.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use super::counters::{CounterPlan, Counting, SyscallCounters, TOTAL_ONLY};
use super::cpu::{children_cpu, kernel_thread_kind, process_cpu, stat_cpu, threads_delta};
use super::kinds::{ByKind, IoUringOps, SyscallKind};
use super::meter::Meter;

fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// `n` one-byte `write`s to `file`.
fn writes(file: &File, n: usize) {
    for _ in 0..n {
        // SAFETY: writes one byte from a live buffer to an fd that `file` keeps open.
        let w = unsafe { libc::write(file.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        assert_eq!(w, 1);
    }
}

/// `n` `membarrier(MEMBARRIER_CMD_QUERY)` calls.
fn membarriers(n: usize) {
    for _ in 0..n {
        // SAFETY: MEMBARRIER_CMD_QUERY (0) with flags 0 only returns the supported
        // commands; it touches no memory.
        unsafe {
            libc::syscall(libc::SYS_membarrier, 0, 0);
        }
    }
}

/// `n` `futex(FUTEX_WAKE)` calls on `word` (no one waits: each wakes nobody).
fn futex_wakes(word: &AtomicU32, n: usize) {
    for _ in 0..n {
        // SAFETY: FUTEX_WAKE on a live, aligned 32-bit word that `word` owns; the
        // remaining arguments are unused by FUTEX_WAKE.
        let woken = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0,
            )
        };
        assert_eq!(woken, 0);
    }
}

/// `n` `getppid` calls (a syscall of no named kind).
fn getppids(n: usize) {
    for _ in 0..n {
        // SAFETY: getppid has no preconditions.
        unsafe {
            libc::getppid();
        }
    }
}

#[test]
fn syscalls_are_counted_when_the_kernel_allows_it() {
    let m = Meter::start();
    getppids(1000);
    let cost = m.stop();
    match (cost.syscalls, &cost.syscalls_unavailable) {
        (Some(n), None) => assert!(n >= 1000, "counted {n}"),
        (None, Some(why)) => eprintln!("syscall counting unavailable here: {why}"),
        other => panic!("inconsistent result {other:?}"),
    }
}

/// A parked backend's thread set apart: what it does while another is measured is
/// counted to it (`Cost::apart`), and none of it is in the measured figures. Checked
/// against a plain meter over the same stretch (tests run in parallel in this process,
/// so the measured figures hold other tests' work too: only relations are exact).
#[test]
fn a_thread_set_apart_is_counted_apart_and_left_out_of_the_cost() {
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let parked = std::thread::spawn(move || {
        tid_tx.send(gettid()).unwrap();
        go_rx.recv().unwrap();
        getppids(500);
        crate::probe::thread_usage::tests::spin_cpu(Duration::from_millis(40));
        done_tx.send(()).unwrap();
        go_rx.recv().unwrap();
    });
    let tid = tid_rx.recv().unwrap();
    let plain = Meter::start();
    let m = Meter::start_apart(Counting::ByKind, &[vec![tid]]);
    go_tx.send(()).unwrap();
    done_rx.recv().unwrap();
    let cost = m.stop();
    let all = plain.stop();
    go_tx.send(()).unwrap();
    parked.join().unwrap();

    assert_eq!(cost.apart.len(), 1);
    let apart = cost.apart[0];
    assert!(apart.usage.cpu >= Duration::from_millis(30), "{apart:?}");
    // getrusage's figures are rounded to microseconds, per thread: a little slack.
    assert!(
        cost.user + cost.sys + apart.usage.cpu <= all.user + all.sys + Duration::from_millis(2),
        "the parked thread's time is left out: {cost:?} beside {all:?}"
    );
    assert!(cost.voluntary_ctx_switches + apart.usage.voluntary <= all.voluntary_ctx_switches);
    match (cost.syscalls, apart.syscalls, all.syscalls) {
        (Some(measured), Some(theirs), Some(all)) => {
            assert!(theirs >= 500, "the parked thread's calls: {theirs}");
            assert!(
                measured + theirs <= all,
                "the parked thread's calls are left out: {measured} + {theirs} > {all}"
            );
            let kinds = apart
                .syscalls_by_kind
                .expect("counted by kind with the total");
            assert_eq!(kinds.total(), theirs);
        }
        (None, None, None) => eprintln!(
            "syscall counting unavailable here: {:?}",
            cost.syscalls_unavailable
        ),
        other => panic!("inconsistent result {other:?}"),
    }
}

#[test]
fn total_only_counting_counts_the_total_and_says_why_the_rest_is_missing() {
    let m = Meter::start_counting(Counting::Total);
    getppids(1000);
    let cost = m.stop();
    match (cost.syscalls, &cost.syscalls_unavailable) {
        (Some(n), None) => {
            assert!(n >= 1000, "counted {n}");
            assert_eq!(cost.syscalls_by_kind, None);
            assert_eq!(cost.syscall_kinds_unavailable.as_deref(), Some(TOTAL_ONLY));
            assert_eq!(cost.io_uring, None);
            assert_eq!(cost.io_uring_unavailable.as_deref(), Some(TOTAL_ONLY));
        }
        (None, Some(why)) => eprintln!("syscall counting unavailable here: {why}"),
        other => panic!("inconsistent result {other:?}"),
    }
    for c in [Counting::Total, Counting::ByKind] {
        assert_eq!(Counting::parse(c.name()), Ok(c));
    }
    assert!(Counting::parse("none")
        .unwrap_err()
        .to_string()
        .contains("`none`"));
}

#[test]
fn threads_started_during_the_measurement_are_counted() {
    let m = Meter::start();
    std::thread::spawn(|| getppids(500)).join().unwrap_or(());
    let cost = m.stop();
    if let Some(n) = cost.syscalls {
        assert!(n >= 500, "counted {n}");
    }
}

#[test]
fn syscalls_are_counted_by_kind_on_the_measured_threads() {
    let dev_null = File::options().write(true).open("/dev/null").unwrap();
    let m = Meter::start();
    writes(&dev_null, 1000);
    membarriers(500);
    // Futex wakes and getppid on a thread started during the measurement: its counters
    // are inherited, filters included.
    std::thread::spawn(|| {
        let word = AtomicU32::new(0);
        futex_wakes(&word, 300);
        getppids(200);
    })
    .join()
    .unwrap();
    let cost = m.stop();
    let (Some(total), Some(kinds)) = (cost.syscalls, cost.syscalls_by_kind) else {
        // Only when the kernel refuses the counters, and then it says why.
        let why = cost.syscall_kinds_unavailable.as_deref();
        assert!(why.is_some(), "{cost:?}");
        eprintln!("syscalls by kind unavailable here: {why:?}");
        return;
    };
    eprintln!("total {total}, by kind {kinds:?}");
    // Other tests of this binary run beside this one: at least what we made.
    assert!(kinds.send >= 1000, "{kinds:?}");
    assert!(kinds.membarrier >= 500, "{kinds:?}");
    assert!(kinds.futex >= 300, "{kinds:?}");
    assert!(kinds.other >= 200, "{kinds:?}");
    // `other` is what the named kinds leave of the total: never below zero (the kinds
    // and the total of one thread are read together), so the kinds add up to the total.
    assert_eq!(kinds.total(), total);
    assert!(
        kinds.io_uring_enter
            + kinds.send
            + kinds.recv
            + kinds.epoll
            + kinds.futex
            + kinds.membarrier
            <= total
    );
    assert_eq!(cost.syscall_kinds_unavailable, None);
}

#[test]
fn one_threads_syscalls_are_counted_exactly_by_kind() {
    let tid = gettid();
    let dev_null = File::options().write(true).open("/dev/null").unwrap();
    let word = AtomicU32::new(0);
    let mut counters = match SyscallCounters::open_with(&CounterPlan::standard(), &[(tid, 0)], 1) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("syscall counting unavailable here: {why}");
            return;
        }
    };
    if let Some(why) = &counters.kinds_unavailable {
        eprintln!("syscalls by kind unavailable here: {why}");
        return;
    }
    let start = counters.read().unwrap();
    writes(&dev_null, 1000);
    membarriers(500);
    futex_wakes(&word, 300);
    getppids(200);
    let d = counters.read().unwrap()[0].since(&start[0]);
    // Each `read` of the counters is counted before it reads them: the first counted
    // itself, the second is the one `recv`.
    let expected = ByKind {
        io_uring_enter: 0,
        send: 1000,
        recv: 1,
        epoll: 0,
        futex: 300,
        membarrier: 500,
        other: 200,
    };
    assert_eq!(d.by_kind(), expected);
    assert_eq!(d.total, 2001);
    assert_eq!(d.kinds.iter().sum::<u64>() + 200, d.total);
    if counters.io_uring_unavailable.is_none() {
        assert_eq!(d.io_uring, IoUringOps::default());
    }
}

#[test]
fn a_refused_filter_leaves_the_total_and_says_why() {
    let mut plan = CounterPlan::standard();
    plan.kind_filters[2] = "no_such_field == 1".into();
    let mut counters = match SyscallCounters::open_with(&plan, &[(gettid(), 0)], 1) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("syscall counting unavailable here: {why}");
            return;
        }
    };
    let why = counters.kinds_unavailable.as_deref().unwrap();
    assert!(
        why.contains("recv") && why.contains("no_such_field"),
        "{why}"
    );
    let start = counters.read().unwrap();
    getppids(10);
    let d = counters.read().unwrap()[0].since(&start[0]);
    assert_eq!(d.total, 11);
}

#[test]
fn a_missing_io_uring_tracepoint_is_reported_and_the_rest_is_counted() {
    let plan = CounterPlan {
        io_uring_submit: &["io_uring/no_such_tracepoint"],
        ..CounterPlan::standard()
    };
    let mut counters = match SyscallCounters::open_with(&plan, &[(gettid(), 0)], 1) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("syscall counting unavailable here: {why}");
            return;
        }
    };
    let why = counters.io_uring_unavailable.as_deref().unwrap();
    assert!(why.contains("io_uring:no_such_tracepoint"), "{why}");
    let start = counters.read().unwrap();
    membarriers(10);
    let d = counters.read().unwrap()[0].since(&start[0]);
    assert_eq!(d.total, 11);
    if counters.kinds_unavailable.is_none() {
        assert_eq!(d.by_kind().membarrier, 10);
    }
}

#[test]
fn io_uring_operations_are_counted() {
    let m = Meter::start();
    // A glommio executor (an io_uring per thread, and a timeout operation per sleep)
    // started during the measurement.
    doppio_driver::rt::run_on(
        doppio_driver::rt::Runtime::Glommio,
        "io-uring-ops",
        || async {
            for _ in 0..10 {
                doppio_driver::rt::sleep(Duration::from_millis(1)).await;
            }
        },
    )
    .unwrap();
    let cost = m.stop();
    let (Some(ops), Some(kinds)) = (cost.io_uring, cost.syscalls_by_kind) else {
        let why = (&cost.io_uring_unavailable, &cost.syscall_kinds_unavailable);
        assert!(why.0.is_some() || why.1.is_some(), "{cost:?}");
        eprintln!("io_uring operations or syscall kinds not counted here: {why:?}");
        return;
    };
    eprintln!("io_uring {ops:?}, syscalls {kinds:?}");
    assert!(ops.submitted >= 10, "{ops:?}");
    assert!(ops.completed >= 10, "{ops:?}");
    assert!(kinds.io_uring_enter > 0, "{kinds:?}");
}

#[test]
fn kinds_name_their_syscalls_and_filters_list_them() {
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(
            SyscallKind::Send.filter(),
            "id == 44 || id == 46 || id == 307 || id == 1 || id == 20"
        );
        assert_eq!(
            SyscallKind::Epoll.filter(),
            "id == 232 || id == 281 || id == 441"
        );
        assert_eq!(SyscallKind::IoUringEnter.filter(), "id == 426");
    }
    assert!(SyscallKind::Other.syscalls().is_empty());
    // The JSON keys are the kinds' names, one per kind.
    let json = serde_json::to_value(ByKind::from_fn(|k| k as u64)).unwrap();
    assert_eq!(json.as_object().unwrap().len(), SyscallKind::ALL.len());
    for k in SyscallKind::ALL {
        assert_eq!(json[k.name()], k as u64, "{json}");
    }
}

#[test]
fn stat_cpu_reads_utime_and_stime_after_the_name() {
    let line = "4242 (iou-sqp-4) x) S 1 4241 4241 0 -1 4194368 0 0 0 0 150 25 0 0 20 0 1";
    assert_eq!(stat_cpu(line, 100), Some(Duration::from_millis(1750)));
    assert_eq!(stat_cpu("garbage", 100), None);
}

#[test]
fn sqpoll_threads_are_in_getrusage_and_measured_on_their_own() {
    use doppio_driver::rt::uring::{Config, SqPoll};
    use doppio_driver::rt::{ExecutorSpec, Runtime};
    // An executor in SQPOLL mode whose kernel thread polls for 2 s after the one
    // submission the executor makes at start (its wake-up read), while the executor
    // itself sleeps: a busy SQ thread beside an idle process.
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let spec = ExecutorSpec {
        uring: Config {
            sqpoll: Some(SqPoll {
                idle: Duration::from_secs(2),
                cpu: None,
            }),
            ..Config::default()
        },
        ..ExecutorSpec::new(Runtime::Uring, "sqpoll-meter")
    };
    let handle = doppio_driver::rt::spawn_executor(spec, move || async move {
        let _ = started_tx.send(());
        while stop_rx.try_recv().is_err() {
            doppio_driver::rt::sleep(Duration::from_millis(10)).await;
        }
    })
    .unwrap();
    started_rx.recv().unwrap();
    let m = Meter::start();
    std::thread::sleep(Duration::from_secs(1));
    let cost = m.stop();
    let _ = stop_tx.send(());
    handle.join().unwrap();
    let sq = cost.sqpoll.expect("an SQ thread was there");
    eprintln!(
        "1 s beside a polling SQ thread: getrusage {:?} user + {:?} sys, SQ thread {sq:?}",
        cost.user, cost.sys
    );
    // It polled (clock ticks of 10 ms; a loaded machine may give it far less than the
    // whole second, so only presence is checked).
    assert!(sq >= Duration::from_millis(20), "{cost:?}");
    // getrusage(RUSAGE_SELF) holds it already (one tick of slack per reading).
    assert!(
        cost.user + cost.sys + Duration::from_millis(20) >= sq,
        "getrusage misses the SQ thread: {cost:?}"
    );
}

#[test]
fn kernel_threads_are_told_apart_and_their_time_counts_from_each_reading() {
    assert_eq!(kernel_thread_kind("iou-sqp-4242\n"), Some(0));
    assert_eq!(kernel_thread_kind("iou-wrk-4242\n"), Some(1));
    assert_eq!(kernel_thread_kind("doppio-shard-0\n"), None);
    let ms = Duration::from_millis;
    // A thread that ran on, one that appeared (counted from zero), one that ended (lost).
    let before = [(1, ms(100)), (2, ms(50))];
    let after = [(1, ms(130)), (3, ms(20))];
    assert_eq!(threads_delta(&before, &after), Some(ms(50)));
    assert_eq!(threads_delta(&[], &[]), None);
    assert_eq!(threads_delta(&before, &[]), Some(Duration::ZERO));
}

#[test]
fn a_waited_childs_cpu_is_counted_apart_from_this_process() {
    let before = children_cpu();
    // A child that burns a little CPU, waited for.
    let status = std::process::Command::new("sh")
        .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        children_cpu() > before,
        "the child's CPU is counted once waited for"
    );
    assert!(process_cpu() > Duration::ZERO);
}

#[test]
fn cpu_time_grows_with_work() {
    let m = Meter::start();
    let mut x = 0u64;
    // Spin until this thread has 20 ms of CPU by its own clock (on a loaded machine that
    // takes longer than 20 ms of wall time); the meter, which counts the whole process,
    // must then show at least as much. The minute only bounds a clock that never moves.
    let own = doppio_driver::bench_internals::thread_cpu_time;
    let (begin, t) = (own(), std::time::Instant::now());
    while own().saturating_sub(begin) < Duration::from_millis(20)
        && t.elapsed() < Duration::from_secs(60)
    {
        for _ in 0..10_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
    }
    std::hint::black_box(x);
    let cost = m.stop();
    assert!(
        cost.user + cost.sys >= Duration::from_millis(19),
        "{cost:?}"
    );
    assert!(cost.peak_rss_bytes > 0);
}
