//! The saturation search of `doppio findmax`. A constant rate is raised step by step (from
//! `--start`, times `--factor` each step, a last step at `--max-rate`), each step a short
//! warmup and a measured stretch at that rate, until the step does not hold: the achieved
//! rate fell below [`HOLD_FRACTION`] of the target, more than [`MAX_ERROR_RATIO`] of the
//! requests failed, or a latency objective (`--slo p99<10ms`, latency from each request's
//! intended start) was broken. The highest target that held is the backend's maximum.
//!
//! `--refine N` then bisects N times between each backend's highest target held and the
//! one that failed (a backend whose first step failed has nothing to refine).
//!
//! With several backends (`--driver doppio,scylla`) every step runs each backend still
//! searching at that target before the next step; a backend stops on its own when a step
//! of it fails. The steps go into a [`FindmaxReport`] (the report layer's, `"kind":
//! "findmax"`, fields in bench/REPORT.md), which `doppio findmax` prints and writes and
//! `doppio plot` draws as curves.

use std::sync::Arc;
use std::time::Duration;

use super::connections::Before;
use super::measure::{ended, warm_then_measure, Stretch};
use crate::backend::{self, Backend, ConnectOptions, Driver};
use crate::cli::FindmaxArgs;
use crate::engine::drive::PhaseOutcome;
use crate::engine::grid::ReleaseGrid;
use crate::engine::phase::{Phase, PhaseSpec};
use crate::engine::schedule::RateSchedule;
use crate::engine::Limit;
use crate::failure::Failure;
use crate::report::findmax::{FindmaxReport, SloCheck, Step};
use crate::slo::Slo;

/// A step holds only if its achieved rate is at least this fraction of its target.
pub(crate) const HOLD_FRACTION: f64 = 0.95;
/// A step holds only if at most this fraction of its requests failed.
pub(crate) const MAX_ERROR_RATIO: f64 = 0.01;
/// The targets of the search: `start`, times `factor` each step (rounded to whole requests
/// per second), and `max` last if the series passes it.
pub(crate) fn targets(start: f64, factor: f64, max: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut t = start;
    while t < max && out.len() < 1000 {
        let r = t.round().max(1.0);
        if out.last() != Some(&r) {
            out.push(r);
        }
        t *= factor;
    }
    if out.last().is_none_or(|l| *l < max) {
        out.push(max);
    }
    out
}

/// Judges a measured step against the hold rule and the objectives.
fn judge(target: f64, outcome: &PhaseOutcome, slos: &[Slo]) -> Step {
    let secs = outcome.elapsed.as_secs_f64().max(1e-9);
    let requests = outcome.iterations;
    let achieved = requests as f64 / secs;
    let h = &outcome.latency;
    let ms = |p: f64| h.value_at_percentile(p) as f64 / 1e6;
    let mut why = Vec::new();
    if achieved < HOLD_FRACTION * target {
        why.push(format!(
            "achieved {achieved:.0} < {:.0} % of {target:.0} req/s",
            HOLD_FRACTION * 100.0
        ));
    }
    if outcome.errors as f64 > MAX_ERROR_RATIO * requests.max(1) as f64 {
        why.push(format!(
            "{} errors in {requests} requests (over {:.0} %)",
            outcome.errors,
            MAX_ERROR_RATIO * 100.0
        ));
    }
    let checks: Vec<SloCheck> = slos
        .iter()
        .map(|s| {
            // No success measured: the objective cannot be said to hold.
            let value = if h.count() == 0 {
                f64::INFINITY
            } else {
                ms(s.percentile)
            };
            let met = value < s.bound.as_secs_f64() * 1e3;
            if !met {
                why.push(format!("{} broken ({value:.3} ms)", s.text));
            }
            SloCheck {
                objective: s.text.clone(),
                value_ms: if value.is_finite() { value } else { -1.0 },
                met,
            }
        })
        .collect();
    Step {
        target_rps: target,
        achieved_rps: achieved,
        requests,
        errors: outcome.errors,
        latency_p50_ms: ms(50.0),
        latency_p99_ms: ms(99.0),
        slo: checks,
        held: why.is_empty(),
        failed_because: (!why.is_empty()).then(|| why.join("; ")),
        refinement: false,
    }
}

/// The search: the backends of `drivers` connected in order, the steps run into `report`
/// ([`steps`]), then the backends shut down (also those connected before one that failed
/// to).
pub(crate) fn search(
    a: &FindmaxArgs,
    workload: &Arc<crate::workload::Workload>,
    drivers: &[Driver],
    options: &ConnectOptions,
    report: &mut FindmaxReport,
) -> Result<(), Failure> {
    let mut backends: Vec<(Driver, Arc<dyn Backend>)> = Vec::new();
    let connected = (|| {
        for &d in drivers {
            let sockets = Before::now();
            let b = backend::connect(d, options).map_err(Failure::Start)?;
            sockets.record(
                b.as_ref(),
                options,
                d.name(),
                &mut report.config.connection_shapes,
            );
            backends.push((d, b));
        }
        if let Some(w) = crate::report::connection_shape::parity(&report.config.connection_shapes) {
            eprintln!("warning: {w}");
        }
        Ok::<(), Failure>(())
    })();
    let result = connected.and_then(|()| steps(a, workload, &backends, report));
    for (_, b) in &backends {
        b.shutdown();
    }
    result
}

/// The steps: each target in turn, every backend still searching at it; then `--refine`
/// rounds of bisection between each backend's highest target held and the one that failed.
fn steps(
    a: &FindmaxArgs,
    workload: &Arc<crate::workload::Workload>,
    backends: &[(Driver, Arc<dyn Backend>)],
    report: &mut FindmaxReport,
) -> Result<(), Failure> {
    let mut searching: Vec<bool> = vec![true; backends.len()];
    // The bracket of each backend whose search stopped at a failed step after a held one.
    let mut brackets: Vec<Option<(f64, f64)>> = vec![None; backends.len()];
    let mut started = false;
    for target in targets(a.start, a.factor, a.max_rate) {
        for (i, (driver, b)) in backends.iter().enumerate() {
            if !searching[i] {
                continue;
            }
            let step = run_step(a, workload, *driver, b, target, &mut started)?;
            let entry = report.backends.entry(driver.name().to_owned()).or_default();
            if step.held {
                entry.max_rate_rps = Some(target);
                entry.stopped_because = format!("--max-rate {:.0} req/s held", a.max_rate);
            } else {
                entry.stopped_because = format!(
                    "{target:.0} req/s did not hold: {}",
                    step.failed_because.clone().unwrap_or_default()
                );
                searching[i] = false;
                brackets[i] = entry.max_rate_rps.map(|lo| (lo, target));
            }
            entry.steps.push(step);
        }
        if !searching.iter().any(|s| *s) {
            break;
        }
    }
    for _ in 0..a.refine {
        for (i, (driver, b)) in backends.iter().enumerate() {
            let Some((lo, hi)) = brackets[i] else {
                continue;
            };
            let mid = ((lo + hi) / 2.0).round();
            if mid <= lo || mid >= hi {
                brackets[i] = None;
                continue;
            }
            let mut step = run_step(a, workload, *driver, b, mid, &mut started)?;
            step.refinement = true;
            let entry = report.backends.entry(driver.name().to_owned()).or_default();
            if step.held {
                entry.max_rate_rps = Some(mid);
                brackets[i] = Some((mid, hi));
            } else {
                brackets[i] = Some((lo, mid));
            }
            if let Some((lo, hi)) = brackets[i] {
                entry.stopped_because =
                    format!("refined: {lo:.0} req/s held, {hi:.0} req/s did not");
            }
            entry.steps.push(step);
        }
        if brackets.iter().all(Option::is_none) {
            break;
        }
    }
    Ok(())
}

/// One step of one backend: the warmup and the measured stretch at `target`, judged.
fn run_step(
    a: &FindmaxArgs,
    workload: &Arc<crate::workload::Workload>,
    driver: Driver,
    b: &Arc<dyn Backend>,
    target: f64,
    started: &mut bool,
) -> Result<Step, Failure> {
    let spec = |limit: Duration, record: bool| PhaseSpec {
        phase: Phase::Run,
        concurrency: a.concurrency,
        rate: Some(Arc::new(RateSchedule::steady(target))),
        grid: ReleaseGrid::new(a.release_grid),
        limit: Limit::Time(limit),
        interval: a.interval,
        record,
        max_outage: a.connect.outage_limit(),
        cycles: None,
    };
    if crate::interrupt::interrupted() {
        return Err(Failure::Interrupted);
    }
    let name = driver.name();
    let stretch = Stretch {
        backend: b,
        workload,
        warmup: (!a.warmup.is_zero()).then(|| spec(a.warmup, false)),
        measured: spec(a.step_duration, true),
        warmup_label: format!("{name} {target:.0} req/s warmup"),
        label: format!("{name} {target:.0} req/s"),
        warmup_name: "a warmup",
        quiet: a.connect.quiet,
        progress_every: a.connect.progress_every,
        meter: None,
        counters: false,
        parked: &[],
    };
    let outcome = warm_then_measure(stretch, started, &mut [])?
        .outcome
        .map_err(|e| Failure::of_phase(e, *started))?;
    ended(driver, outcome.aborted.clone())?;
    Ok(judge(target, &outcome, &a.slo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::{parse_factor, parse_rate, RateError, SloError};

    #[test]
    fn objectives_parse_and_bad_ones_say_what_is_wrong() {
        let s = Slo::parse("p99<10ms").unwrap();
        assert_eq!(s.percentile, 99.0);
        assert_eq!(s.bound, Duration::from_millis(10));
        let s = Slo::parse(" p99.9 < 2.5ms ").unwrap();
        assert_eq!((s.percentile, s.bound), (99.9, Duration::from_micros(2500)));
        assert!(matches!(Slo::parse("p99=10ms"), Err(SloError::Shape(_))));
        assert!(matches!(
            Slo::parse("99<10ms"),
            Err(SloError::Percentile { .. })
        ));
        assert!(matches!(
            Slo::parse("p101<10ms"),
            Err(SloError::Percentile { .. })
        ));
        assert!(matches!(
            Slo::parse("p0<10ms"),
            Err(SloError::Percentile { .. })
        ));
        let e = Slo::parse("p99<10").unwrap_err();
        assert!(matches!(e, SloError::Bound { .. }), "{e:?}");
        assert!(e.to_string().contains("`p99<10`"), "{e}");
        assert!(matches!(Slo::parse("p99<0ms"), Err(SloError::ZeroBound(_))));
    }

    #[test]
    fn targets_grow_by_the_factor_and_end_at_the_maximum() {
        assert_eq!(
            targets(1000.0, 1.5, 5000.0),
            vec![1000.0, 1500.0, 2250.0, 3375.0, 5000.0]
        );
        assert_eq!(targets(1000.0, 2.0, 4000.0), vec![1000.0, 2000.0, 4000.0]);
        assert_eq!(targets(1000.0, 2.0, 1000.0), vec![1000.0]);
        assert!(parse_factor("1").is_err() && parse_factor("x").is_err());
        assert_eq!(parse_factor("1.5"), Ok(1.5));
        assert_eq!(parse_rate("2k"), Ok(2000.0));
        assert_eq!(parse_rate("0"), Err(RateError::Zero));
    }
}
