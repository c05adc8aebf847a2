//! The worker's tests: every iteration once across workers and fibers, statements,
//! sequences and batches counted, cycle ranges, pacing on the schedule and the release grid,
//! and validation's verdict on an answer.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::validated::validated;
use super::{run_worker, WorkerSpec};
use crate::engine::cycles::CycleRange;
use crate::engine::error_kind::ErrorKind;
use crate::engine::grid::ReleaseGrid;
use crate::engine::interval::interval_end;
use crate::engine::limit::Limit;
use crate::engine::plan::{PhasePlan, PlanGroup, PlanStatement};
use crate::engine::request::{Answer, RequestError};
use crate::engine::schedule::RateSchedule;
use crate::engine::session::{Args, BatchArgs, BenchSession};
use crate::stats::LatencyHistogram;
use crate::workload::{BoundArgs, RunGroup, RunMode, Statement};

/// A backend whose requests take `delay(i)` on the executor's timer and record `i`.
struct Mock<D: Fn(u64) -> Duration> {
    delay: D,
    seen: RefCell<Vec<u64>>,
}

impl<D: Fn(u64) -> Duration> BenchSession for Mock<D> {
    type Prepared = ();
    type Batch = ();
    type Sleeper = ();

    fn sleeper(&self) {}

    async fn execute_batch(&self, _: &(), args: BatchArgs<'_, ()>) -> Result<Answer, RequestError> {
        for n in 0..args.len() {
            if let Some((_, a)) = args.element(n) {
                self.seen.borrow_mut().push(a.iteration);
            }
        }
        doppio_driver::rt::sleep((self.delay)(args.iteration)).await;
        Ok(Answer::default())
    }

    async fn execute(&self, _: &(), args: Args<'_>) -> Result<Answer, RequestError> {
        self.seen.borrow_mut().push(args.iteration);
        doppio_driver::rt::sleep((self.delay)(args.iteration)).await;
        if args.iteration % 50 == 49 {
            return Err(RequestError {
                kind: ErrorKind::Overloaded,
                message: format!("iteration {}", args.iteration),
            });
        }
        // Iteration i answers i % 3 rows; iterations divisible by 7 are not applied.
        Ok(Answer {
            rows: args.iteration % 3,
            not_applied: args.iteration % 7 == 0,
            stages: None,
        })
    }

    async fn sleep_until(&self, _: &mut (), deadline: Instant) {
        let now = Instant::now();
        if deadline > now {
            doppio_driver::rt::sleep(deadline - now).await;
        }
    }
}

fn plan() -> Vec<PlanStatement<()>> {
    let statement = Statement {
        name: "s".into(),
        cql: "SELECT".into(),
        args: Vec::new(),
        line: 0,
        validate: None,
        written_by: None,
        idempotent: false,
        conditional: false,
    };
    vec![PlanStatement {
        prepared: (),
        args: BoundArgs::bind("t", &statement, &[]).unwrap(),
        validation: None,
    }]
}

fn spec(worker: usize, workers: usize, fibers: usize, rate: Option<f64>, n: u64) -> WorkerSpec {
    WorkerSpec {
        worker,
        workers,
        concurrency: fibers,
        rate: rate.map(|r| Arc::new(RateSchedule::steady(r))),
        grid: ReleaseGrid::none(),
        limit: Limit::Count(n),
        start: Instant::now(),
        interval: Duration::from_millis(100),
        record: true,
        max_outage: None,
        cycles: None,
    }
}

/// Runs `f` on an executor of doppio's default runtime (the engine itself knows none).
fn on_executor<T, F, Fut>(f: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T> + 'static,
{
    doppio_driver::rt::run_on(doppio_driver::rt::Runtime::default(), "engine-test", f).unwrap()
}

#[test]
fn every_iteration_runs_once_across_workers_and_fibers_and_errors_are_counted() {
    let (seen, samples) = on_executor(|| async {
        let mock = Mock {
            delay: |_| Duration::from_micros(200),
            seen: RefCell::new(Vec::new()),
        };
        let plan = PhasePlan::singles(plan());
        let mut samples = Vec::new();
        for w in 0..2 {
            let s = spec(w, 2, 3, None, 301);
            let end = run_worker(&mock, &|_| 0, &plan, &s, |x| samples.push(x)).await;
            // Iterations 49, 99, ... are odd: all on worker 1, which keeps the first.
            let expected = if w == 1 {
                vec![(ErrorKind::Overloaded, "iteration 49".to_string())]
            } else {
                vec![]
            };
            assert_eq!(end.first_errors, expected);
        }
        (mock.seen.into_inner(), samples)
    });
    let unique: BTreeSet<u64> = seen.iter().copied().collect();
    assert_eq!(seen.len(), 301, "no iteration twice");
    assert_eq!(unique, (0..301).collect(), "every iteration once");
    let requests: u64 = samples.iter().map(|s| s.requests).sum();
    let errors: u64 = samples
        .iter()
        .flat_map(|s| s.errors.iter())
        .map(|(_, n)| n)
        .sum();
    assert_eq!(requests, 301);
    assert_eq!(errors, 6, "iterations 49, 99, ..., 299 failed");
    let rows: u64 = samples.iter().map(|s| s.rows).sum();
    let failed_rows: u64 = (0..301).filter(|i| i % 50 == 49).map(|i| i % 3).sum();
    let all_rows: u64 = (0..301).map(|i| i % 3).sum();
    assert_eq!(rows, all_rows - failed_rows, "rows of successes only");
    let latencies: u64 = samples.iter().map(|s| s.latency.count()).sum();
    assert_eq!(latencies, 301 - 6, "latency of successes only");
}

#[test]
fn each_request_counts_in_its_statement_and_the_statements_add_up_to_the_totals() {
    // Two statements: iterations divisible by 3 run statement 1, the others statement 0.
    // Iterations 49, 99, ... fail: 99, 249 (divisible by 3) in statement 1.
    let (end, samples) = on_executor(|| async {
        let mock = Mock {
            delay: |_| Duration::from_micros(100),
            seen: RefCell::new(Vec::new()),
        };
        let mut statements = plan();
        statements.extend(self::plan());
        let plan = PhasePlan::singles(statements);
        let mut samples = Vec::new();
        let s = spec(0, 1, 4, None, 300);
        let pick = |i: u64| usize::from(i % 3 == 0);
        let end = run_worker(&mock, &pick, &plan, &s, |x| samples.push(x)).await;
        (end, samples)
    });
    let failed = |k: usize| {
        (0..300u64)
            .filter(|i| i % 50 == 49 && usize::from(i % 3 == 0) == k)
            .count() as u64
    };
    assert_eq!(end.statements.len(), 2);
    assert_eq!(end.statements[1].requests, 100);
    assert_eq!(end.statements[0].requests, 200);
    for (k, t) in end.statements.iter().enumerate() {
        assert_eq!(t.error_count(), failed(k), "statement {k}");
        assert_eq!(t.latency.count(), t.requests - failed(k));
        let rows: u64 = (0..300u64)
            .filter(|i| usize::from(i % 3 == 0) == k && i % 50 != 49)
            .map(|i| i % 3)
            .sum();
        assert_eq!(t.rows, rows, "statement {k}");
        let per_interval: u64 = samples.iter().map(|s| s.statements[k].requests).sum();
        assert_eq!(per_interval, t.requests, "intervals add up, statement {k}");
        let errors: u64 = samples.iter().map(|s| s.statements[k].errors).sum();
        assert_eq!(errors, failed(k));
    }
    assert_eq!(end.statements[1].errors, vec![("overloaded", 2)]);
    let total: u64 = samples.iter().map(|s| s.requests).sum();
    assert_eq!(total, 300);
}

#[test]
fn a_sequence_runs_its_steps_in_order_and_stops_at_the_first_failure() {
    // Steps 0 and 1 of one sequence (entries 0, 1; the sequence's entry 2); iterations
    // 49 and 99 fail at step 0, so step 1 never runs for them.
    let (end, samples, seen) = on_executor(|| async {
        let mock = Mock {
            delay: |_| Duration::from_micros(100),
            seen: RefCell::new(Vec::new()),
        };
        let mut statements = plan();
        statements.extend(self::plan());
        let plan = PhasePlan {
            statements,
            groups: vec![PlanGroup {
                group: RunGroup {
                    name: "seq".into(),
                    statements: 0..2,
                    mode: RunMode::Sequence,
                    repeat: 1,
                    entry: 0,
                },
                batch: None,
            }],
        };
        let mut samples = Vec::new();
        let s = spec(0, 1, 3, None, 100);
        let end = run_worker(&mock, &|_| 0, &plan, &s, |x| samples.push(x)).await;
        (end, samples, mock.seen.into_inner())
    });
    assert_eq!(
        seen.len(),
        198,
        "two steps each but for 2 failed iterations"
    );
    let st = &end.statements;
    assert_eq!(st.len(), 3);
    assert_eq!((st[0].requests, st[0].error_count()), (100, 2));
    assert_eq!((st[1].requests, st[1].error_count()), (98, 0));
    assert_eq!((st[2].requests, st[2].error_count()), (100, 2));
    assert_eq!(st[2].errors, vec![("overloaded", 2)]);
    assert_eq!(
        st[2].latency.count(),
        98,
        "one latency per successful iteration"
    );
    // Not applied: iterations divisible by 7, but 49 failed.
    assert_eq!(st[0].not_applied, 14);
    let rows: u64 = (0..100u64).filter(|i| i % 50 != 49).map(|i| i % 3).sum();
    assert_eq!((st[1].rows, st[2].rows), (rows, 2 * rows));
    // The sequence is not a request: the totals are its steps'.
    let requests: u64 = samples.iter().map(|s| s.requests).sum();
    let latencies: u64 = samples.iter().map(|s| s.latency.count()).sum();
    assert_eq!((requests, latencies), (198, 196));
    // A sequence's whole latency is at least its steps' together.
    assert!(st[2].latency.min() >= st[0].latency.min() + st[1].latency.min());
}

#[test]
fn a_batch_is_one_request_whose_copies_take_consecutive_iterations() {
    let (end, seen) = on_executor(|| async {
        let mock = Mock {
            delay: |_| Duration::from_micros(100),
            seen: RefCell::new(Vec::new()),
        };
        let plan = PhasePlan {
            statements: plan(),
            groups: vec![PlanGroup {
                group: RunGroup {
                    name: "fill".into(),
                    statements: 0..1,
                    mode: RunMode::Batch(crate::workload::BatchKind::Unlogged),
                    repeat: 10,
                    entry: 0,
                },
                batch: Some(()),
            }],
        };
        let s = spec(0, 1, 2, None, 30);
        let end = run_worker(&mock, &|_| 0, &plan, &s, |_| {}).await;
        (end, mock.seen.into_inner())
    });
    assert_eq!(end.statements.len(), 1);
    assert_eq!(end.statements[0].requests, 30, "one request per batch");
    let mut seen = seen;
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..300).collect::<Vec<u64>>(),
        "copy k of i: i * 10 + k"
    );
}

#[test]
fn with_a_range_iterations_come_from_it_and_a_timed_phase_wraps_within_it() {
    let range = CycleRange::new(100, 103).unwrap();
    let (counted, timed) = on_executor(move || async move {
        let plan = PhasePlan::singles(plan());
        let mut runs = Vec::new();
        for limit in [Limit::Count(3), Limit::Time(Duration::from_millis(30))] {
            let mock = Mock {
                delay: |_| Duration::from_micros(200),
                seen: RefCell::new(Vec::new()),
            };
            let s = WorkerSpec {
                limit,
                cycles: Some(range),
                ..spec(0, 1, 2, None, 0)
            };
            run_worker(&mock, &|_| 0, &plan, &s, |_| {}).await;
            runs.push(mock.seen.into_inner());
        }
        (runs[0].clone(), runs[1].clone())
    });
    let mut counted = counted;
    counted.sort_unstable();
    assert_eq!(counted, vec![100, 101, 102], "a count: each once");
    assert!(timed.len() > 6, "the range was exhausted: {timed:?}");
    assert!(timed.iter().all(|i| (100..103).contains(i)), "{timed:?}");
}

#[test]
fn a_stall_shows_in_the_latency_of_the_requests_it_delayed() {
    // 100 req/s on one fiber; iteration 10 stalls 300 ms. Iterations 11.. were due every
    // 10 ms during the stall: their latency counts from their due time.
    let samples = on_executor(|| async {
        let mock = Mock {
            delay: |i| Duration::from_millis(if i == 10 { 300 } else { 1 }),
            seen: RefCell::new(Vec::new()),
        };
        let plan = PhasePlan::singles(plan());
        let mut samples = Vec::new();
        let s = spec(0, 1, 1, Some(100.0), 48);
        run_worker(&mock, &|_| 0, &plan, &s, |x| samples.push(x)).await;
        samples
    });
    let mut latency = crate::stats::LatencyHistogram::new();
    let mut service = crate::stats::LatencyHistogram::new();
    for s in &samples {
        latency.merge(&s.latency);
        service.merge(&s.service);
    }
    assert_eq!(latency.count(), 48);
    // Service time: one slow request in 48 (2 %).
    assert!(
        service.value_at_percentile(95.0) < 50_000_000,
        "{service:?}"
    );
    assert!(service.max() >= 290_000_000);
    // Latency from the due time: the stalled request and the ones due while it stalled
    // (iterations 11 to about 27, due every 10 ms, sent when it ended, 300 ms in) are
    // late by up to 200 ms: more than a third of all requests.
    let p65 = latency.value_at_percentile(65.0);
    assert!(p65 > 50_000_000, "p65 {p65}");
    assert!(latency.max() >= 290_000_000);
}

/// On a grid of 4 ms at 2,000 req/s (8 requests per point) every request leaves at or
/// after the first grid point at or after its due time, never before; its lateness is
/// recorded from both.
#[test]
fn a_paced_request_is_released_on_the_grid_never_before_its_point() {
    struct Stamp {
        sent: RefCell<Vec<(u64, Instant)>>,
    }
    impl BenchSession for Stamp {
        type Prepared = ();
        type Batch = ();
        type Sleeper = doppio_driver::rt::Sleeper;
        fn sleeper(&self) -> doppio_driver::rt::Sleeper {
            doppio_driver::rt::Sleeper::new()
        }
        async fn execute_batch(
            &self,
            _: &(),
            _: BatchArgs<'_, ()>,
        ) -> Result<Answer, RequestError> {
            Ok(Answer::default())
        }
        async fn execute(&self, _: &(), args: Args<'_>) -> Result<Answer, RequestError> {
            self.sent
                .borrow_mut()
                .push((args.iteration, Instant::now()));
            doppio_driver::rt::sleep(Duration::from_micros(100)).await;
            Ok(Answer::default())
        }
        async fn sleep_until(&self, s: &mut doppio_driver::rt::Sleeper, deadline: Instant) {
            s.sleep_until(deadline).await;
        }
    }
    let step = Duration::from_millis(4);
    let rate = 2000.0;
    for runtime in doppio_driver::rt::Runtime::ALL {
        let (sent, start, end) =
            doppio_driver::rt::run_on(runtime, "grid-test", move || async move {
                let stamp = Stamp {
                    sent: RefCell::new(Vec::new()),
                };
                let s = WorkerSpec {
                    grid: ReleaseGrid::new(step),
                    ..spec(0, 1, 16, Some(rate), 400)
                };
                let end = run_worker(&stamp, &|_| 0, &PhasePlan::singles(plan()), &s, |_| {}).await;
                (stamp.sent.into_inner(), s.start, end)
            })
            .unwrap();
        assert_eq!(sent.len(), 400);
        let grid = ReleaseGrid::new(step);
        let mut points = BTreeSet::new();
        for (i, at) in &sent {
            let due = start + Duration::from_secs_f64(*i as f64 / rate);
            let release = grid.release(start, due);
            assert!(*at >= release, "iteration {i} left before its grid point");
            assert!(release >= due);
            points.insert(release);
        }
        // 400 requests 0.5 ms apart over 200 ms: 51 points of 4 ms (0 and 50 more).
        assert_eq!(points.len(), 51);
        let l = end
            .lateness
            .expect("a paced, recorded phase keeps its lateness");
        assert_eq!(l.count(), 400);
        // The grid's share: due times spread evenly over each step, so from the due time
        // half wait at least a little under half a step.
        assert!(l.from_due.value_at_percentile(50.0) >= 1_500_000);
        let p50 = |h: &LatencyHistogram| h.value_at_percentile(50.0);
        assert!(p50(&l.from_release) <= p50(&l.from_due));
    }
}

#[test]
fn a_worker_follows_its_schedule_and_a_rate_of_zero_waits_the_phase_out() {
    let run = |schedule: &str, limit: Limit| {
        let schedule = Arc::new(RateSchedule::parse(schedule).unwrap());
        on_executor(move || async move {
            let mock = Mock {
                delay: |_| Duration::from_micros(100),
                seen: RefCell::new(Vec::new()),
            };
            let plan = PhasePlan::singles(plan());
            let s = WorkerSpec {
                limit,
                rate: Some(schedule),
                ..spec(0, 1, 4, None, 0)
            };
            let started = Instant::now();
            let end = run_worker(&mock, &|_| 0, &plan, &s, |_| {}).await;
            (end.iterations, started.elapsed())
        })
    };
    // 0 to 2k req/s over 300 ms: 300 requests are due (and the 4 fibers' first at 0).
    let (n, _) = run("ramp:0..2k/300ms", Limit::Time(Duration::from_millis(300)));
    assert!((295..=305).contains(&n), "{n} requests");
    // Rate 0 for ever: nothing is sent, and the phase still lasts its time.
    let (n, took) = run("0", Limit::Time(Duration::from_millis(150)));
    assert_eq!(n, 0);
    assert!(took >= Duration::from_millis(140), "{took:?}");
    // A count that the schedule never reaches ends rather than hangs.
    let (n, _) = run("ramp:100..0/1s", Limit::Count(1000));
    assert!((50..=55).contains(&n), "{n} requests");
}

#[test]
fn without_a_rate_service_times_are_the_latencies_and_intervals_hold_what_ended_in_them() {
    let (samples, start, interval) = on_executor(|| async {
        let mock = Mock {
            delay: |i| Duration::from_micros(100 + (i % 7) * 50),
            seen: RefCell::new(Vec::new()),
        };
        let plan = PhasePlan::singles(plan());
        let mut samples = Vec::new();
        let s = WorkerSpec {
            interval: Duration::from_millis(20),
            limit: Limit::Time(Duration::from_millis(110)),
            ..spec(0, 1, 3, None, 0)
        };
        run_worker(&mock, &|_| 0, &plan, &s, |x| samples.push(x)).await;
        (samples, s.start, s.interval)
    });
    let mut total = 0;
    for (k, s) in samples.iter().enumerate() {
        assert_eq!(s.index, k as u64, "one sample per interval, in order");
        assert_eq!(s.service.count(), s.latency.count());
        assert_eq!(s.service.percentiles(), s.latency.percentiles());
        assert_eq!(s.lateness_ns, 0);
        total += s.requests;
    }
    assert!(total > 100, "{total} requests");
    // 110 ms of 20 ms intervals: the sixth (100 to 120 ms) is the last, and takes the
    // answers that arrived after the end.
    assert_eq!(samples.len(), 6);
    assert!(samples.last().is_some_and(|s| s.last));
    // The boundaries: interval k ends at start + (k + 1) * 20 ms; the last has none.
    assert_eq!(
        interval_end(start, interval, 2, Some(5)),
        Some(start + Duration::from_millis(60))
    );
    assert_eq!(interval_end(start, interval, 5, Some(5)), None);
    assert_eq!(interval_end(start, interval, u64::MAX, None), None);
}

/// A validated statement's check decides its rows and may turn an answer into a failure
/// or a failure into an answer; the answer's other fields go through untouched.
#[test]
fn validation_judges_the_rows_and_keeps_the_rest_of_the_answer() {
    let timed = Answer {
        rows: 3,
        not_applied: true,
        stages: Some(Box::default()),
    };
    let doubled = validated(Ok(timed.clone()), |r| r.map(|n| n * 2));
    assert_eq!(
        doubled,
        Ok(Answer {
            rows: 6,
            ..timed.clone()
        })
    );
    let wrong = RequestError {
        kind: ErrorKind::InvalidValue,
        message: "row 1 differs".into(),
    };
    let refused = validated(Ok(timed), |_| Err(wrong.clone()));
    assert_eq!(refused, Err(wrong.clone()));
    assert_eq!(validated(Err(wrong), |_| Ok(0)), Ok(Answer::rows(0)));
}
