//! A paced run (`-r`) allocates nothing per request, on both of doppio's runtimes: the
//! engine, its pacer (each fiber's due times, and its sleeps on a timer it keeps and re-arms)
//! and a session whose requests complete at once, counted by the workspace's counting
//! allocator on the worker's own thread.
//!
//! Two runs of one fiber setup at one rate, of N and 3N requests: whatever is made once per
//! run (the fibers, their timers, the histograms) is the same in both, so the difference is
//! what the 2N more requests allocated. Counted
//! - inside the polls of the worker's future (the engine, pacer and session): none per
//!   request on the io_uring runtime. On glommio a few in a hundred requests: glommio's own
//!   timer map (a `BTreeMap` that its loop splits every turn) grows a leaf again when our
//!   re-armed timer is inserted into it after it emptied. One allocation of the engine's or
//!   the pacer's per request (as a new glommio `Timer` per sleep was before) would make it 1
//!   or more (about 1 with a new timer per sleep), so glommio's figure is held
//!   below 0.25;
//! - on the whole thread, event loop included: none per request on doppio's io_uring runtime.
//!   glommio's own loop allocates per turn (its timer map split per turn, its preemption timer
//!   sources: `perf/results/2026-11-25-bench-floor/`), so on glommio that figure is printed,
//!   not asserted.
//!
//! Counted on the worker's thread alone, so the tests of other files running beside it in
//! the same binary (whose `main.rs` installs the counting allocator) do not disturb it;
//! counts, never timings.
#![cfg(not(feature = "alloc-count"))]

use std::cell::Cell;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use doppio_alloc_count::thread_allocations;
use doppio_bench::engine::grid::ReleaseGrid;
use doppio_bench::engine::schedule::RateSchedule;
use doppio_bench::engine::{
    run_worker, Answer, Args, BatchArgs, BenchSession, Limit, PhasePlan, PlanStatement,
    RequestError, WorkerSpec,
};
use doppio_bench::workload::expr::Expr;
use doppio_bench::workload::{BoundArgs, Statement};
use doppio_driver::rt::{Runtime, Sleeper};

/// Requests that complete at once (after yielding to the executor once), with the pacer's
/// sleeps on the fiber's kept timer, as doppio's backends sleep.
struct AtOnce;

/// Pending once (waking its task at once), then ready.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl BenchSession for AtOnce {
    type Prepared = ();
    type Batch = ();
    type Sleeper = Sleeper;

    fn sleeper(&self) -> Sleeper {
        Sleeper::new()
    }

    async fn execute(&self, _: &(), args: Args<'_>) -> Result<Answer, RequestError> {
        // The argument is generated as a backend would before encoding it.
        for (e, _) in &args.bound.args {
            std::hint::black_box(e.eval(args.iteration).is_ok());
        }
        YieldOnce(false).await;
        Ok(Answer::rows(1))
    }

    async fn execute_batch(&self, _: &(), _: BatchArgs<'_, ()>) -> Result<Answer, RequestError> {
        Ok(Answer::default())
    }

    async fn sleep_until(&self, sleeper: &mut Sleeper, deadline: Instant) {
        sleeper.sleep_until(deadline).await;
    }
}

fn plan() -> PhasePlan<(), ()> {
    let statement = Statement {
        name: "s".into(),
        cql: "SELECT * FROM t WHERE k = ?".into(),
        args: vec![Expr::compile("hash(i) % 1000", 1, &|_| None).expect("expression")],
        line: 0,
        validate: None,
        written_by: None,
        idempotent: false,
        conditional: false,
    };
    let kind = doppio_bench::workload::encode::CqlType::Scalar(
        doppio_bench::workload::encode::CqlKind::BigInt,
    );
    PhasePlan::singles(vec![PlanStatement {
        prepared: (),
        args: BoundArgs::bind("t", &statement, &[kind]).expect("bind"),
        validation: None,
    }])
}

/// Allocations of a paced run of `requests` requests on `runtime` (4 fibers at 10,000 req/s:
/// every request waits for its due time): (inside the worker future's polls, on the whole
/// worker thread).
fn paced_run(runtime: Runtime, requests: u64) -> (u64, u64) {
    doppio_driver::rt::run_on(runtime, "paced-alloc", move || async move {
        let plan = plan();
        let spec = WorkerSpec {
            worker: 0,
            workers: 1,
            concurrency: 4,
            rate: Some(Arc::new(RateSchedule::steady(10_000.0))),
            // The default grid: many fibers' timers share a deadline.
            grid: ReleaseGrid::default(),
            limit: Limit::Count(requests),
            start: Instant::now(),
            // One interval for the whole run: a sample is handed over once, at the end.
            interval: Duration::from_secs(3600),
            record: true,
            max_outage: Some(Duration::from_secs(5)),
            cycles: None,
        };
        let in_polls = Cell::new(0u64);
        let before = thread_allocations();
        let mut worker = pin!(run_worker(&AtOnce, &|_| 0, &plan, &spec, |s| {
            assert_eq!(s.requests, requests, "every request in the one sample");
        }));
        let end = poll_fn(|cx| {
            let at = thread_allocations();
            let out = worker.as_mut().poll(cx);
            in_polls.set(in_polls.get() + thread_allocations() - at);
            out
        })
        .await;
        let on_thread = thread_allocations() - before;
        assert_eq!(end.iterations, requests);
        (in_polls.get(), on_thread)
    })
    .expect("executor")
}

fn paced_requests_allocate_nothing(runtime: Runtime) {
    let _turn = doppio_test_support::file_turn(module_path!());
    let (n, more) = (2_000u64, 6_000u64);
    let (polls_a, thread_a) = paced_run(runtime, n);
    let (polls_b, thread_b) = paced_run(runtime, more);
    let extra = (more - n) as f64;
    let per_request_polls = polls_b.saturating_sub(polls_a) as f64 / extra;
    let per_request_thread = thread_b.saturating_sub(thread_a) as f64 / extra;
    eprintln!(
        "{runtime}: allocations in the worker's polls {polls_a} ({n} requests) and {polls_b} \
         ({more}): {per_request_polls:.4} per request; on the whole thread {thread_a} and \
         {thread_b}: {per_request_thread:.4} per request"
    );
    // One allocation per request would make this 1; a handful in all is not per request.
    // glommio: its timer map's own leaf, now and then (see the file's documentation).
    let bound = match runtime {
        Runtime::Uring | Runtime::Sim => 0.01,
        Runtime::Glommio => 0.25,
    };
    assert!(
        per_request_polls < bound,
        "{runtime}: the engine, pacer or session allocated per request: {polls_a} -> {polls_b}"
    );
    if runtime == Runtime::Uring {
        assert!(
            per_request_thread < 0.01,
            "the io_uring runtime's thread allocated per paced request: {thread_a} -> {thread_b}"
        );
    }
}

doppio_driver::rt::runtime_tests!(paced_requests_allocate_nothing);
