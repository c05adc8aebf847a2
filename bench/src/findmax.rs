//! `doppio findmax`: a saturation search. A constant rate is raised step by step (from
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
//! of it fails. The result is a text table on stdout and a JSON report ([`FindmaxReport`],
//! `"kind": "findmax"`, fields in bench/REPORT.md) that `doppio plot` draws as curves.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::backend::{self, Backend, Driver, Phase, PhaseSpec};
use crate::cli::FindmaxArgs;
use crate::engine::schedule::RateSchedule;
use crate::engine::Limit;
use crate::progress::Progress;
use crate::run::Failure;

/// A step holds only if its achieved rate is at least this fraction of its target.
pub const HOLD_FRACTION: f64 = 0.95;
/// A step holds only if at most this fraction of its requests failed.
pub const MAX_ERROR_RATIO: f64 = 0.01;
/// The value of a findmax report's `kind`.
pub const KIND: &str = "findmax";

pub use crate::slo::{parse_factor, parse_rate, RateError, Slo, SloError};

/// The targets of the search: `start`, times `factor` each step (rounded to whole requests
/// per second), and `max` last if the series passes it.
pub fn targets(start: f64, factor: f64, max: f64) -> Vec<f64> {
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

/// One objective's figure in a step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SloCheck {
    /// The objective as given (`p99<10ms`).
    pub objective: String,
    /// The step's latency at its percentile, milliseconds.
    pub value_ms: f64,
    /// Whether it stayed below the bound.
    pub met: bool,
}

/// One step of one backend.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    /// The rate asked for, requests per second.
    pub target_rps: f64,
    /// The rate achieved over the measured stretch (requests, successful or not, over its
    /// time).
    pub achieved_rps: f64,
    /// Requests measured.
    pub requests: u64,
    /// Requests that failed.
    pub errors: u64,
    /// Median latency from each request's intended start, milliseconds.
    pub latency_p50_ms: f64,
    /// 99th percentile, milliseconds.
    pub latency_p99_ms: f64,
    /// Each `--slo` objective's figure.
    pub slo: Vec<SloCheck>,
    /// Whether the step held (rate, errors and objectives).
    pub held: bool,
    /// Why it did not hold.
    pub failed_because: Option<String>,
    /// A bisection step of `--refine` (after the search by factor).
    #[serde(default)]
    pub refinement: bool,
}

/// One backend's search.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FindmaxBackend {
    /// The highest target that held (null: not even the first step held).
    pub max_rate_rps: Option<f64>,
    /// Why the search stopped: the failed step's reason, or that `--max-rate` held.
    pub stopped_because: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// The configuration of a search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindmaxConfig {
    /// Node addresses.
    pub nodes: Vec<String>,
    /// Backends, in the order they ran within each step.
    pub drivers: Vec<String>,
    /// Concurrent requests in total.
    pub concurrency: usize,
    /// Threads per backend.
    pub threads: usize,
    /// Connections per node.
    pub connections: usize,
    /// Consistency level.
    pub consistency: String,
    /// The first step's target.
    pub start_rps: f64,
    /// Each step's target over the previous one's.
    pub factor: f64,
    /// The last target tried.
    pub max_rate_rps: f64,
    /// Measured time per step and backend, seconds.
    pub step_duration_s: f64,
    /// Warmup before each step, seconds.
    pub warmup_s: f64,
    /// Bisection rounds after the search by factor (`--refine`).
    #[serde(default)]
    pub refine: u32,
    /// The latency objectives (`p99<10ms`).
    pub slo: Vec<String>,
    /// A step holds only if achieved >= hold_fraction x target.
    pub hold_fraction: f64,
    /// A step holds only if errors <= max_error_ratio x requests.
    pub max_error_ratio: f64,
    /// Rows per result page (`--page-size`); absent in reports older than the option.
    #[serde(default)]
    pub page_size: Option<u32>,
    /// Result rows counted, not decoded (`--discard-results`).
    #[serde(default)]
    pub discard_results: bool,
}

/// A findmax report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindmaxReport {
    /// Always `findmax`: tells it from a run's report.
    pub kind: String,
    /// The bench's name and version.
    pub tool: String,
    /// `--tag`.
    pub tag: Option<String>,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// The command line (no password).
    pub command: Vec<String>,
    /// The workload's name.
    pub workload: String,
    /// How the search ran.
    pub config: FindmaxConfig,
    /// Per backend (by name).
    pub backends: BTreeMap<String, FindmaxBackend>,
    /// What ended the search early, if anything did.
    pub fatal_error: Option<String>,
}

impl FindmaxReport {
    /// Reads `path` as a findmax report; `Ok(None)` when it is JSON of another kind.
    pub fn read_if_findmax(path: &Path) -> Result<Option<Self>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a doppio report: {e}", path.display()))?;
        if value.get("kind").and_then(|k| k.as_str()) != Some(KIND) {
            return Ok(None);
        }
        serde_json::from_value(value)
            .map(Some)
            .map_err(|e| format!("{}: not a findmax report: {e}", path.display()))
    }

    /// The text table: per backend one row per step, and its maximum.
    pub fn render(&self) -> String {
        let c = &self.config;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "FINDMAX  workload {}, -p {}, {:.1}s per step after {:.1}s warmup, x{} from {:.0} \
             to {:.0} req/s",
            self.workload,
            c.concurrency,
            c.step_duration_s,
            c.warmup_s,
            c.factor,
            c.start_rps,
            c.max_rate_rps
        );
        let _ = writeln!(
            out,
            "  a step holds when achieved >= {:.0} % of target, errors <= {:.0} %{}",
            c.hold_fraction * 100.0,
            c.max_error_ratio * 100.0,
            if c.slo.is_empty() {
                String::new()
            } else {
                format!(", {}", c.slo.join(", "))
            }
        );
        if let Some(page_size) = c.page_size {
            let _ = writeln!(
                out,
                "  results: pages of {page_size} rows, {}",
                if c.discard_results {
                    "rows counted, not decoded (--discard-results)"
                } else {
                    "every row decoded"
                }
            );
        }
        for name in &c.drivers {
            let Some(b) = self.backends.get(name) else {
                continue;
            };
            let _ = writeln!(out, "\n{name}");
            let _ = writeln!(
                out,
                "  {:>13} {:>15} {:>9} {:>9} {:>8}  held",
                "target[req/s]", "achieved[req/s]", "p50[ms]", "p99[ms]", "errors"
            );
            for s in &b.steps {
                let _ = writeln!(
                    out,
                    "  {:>13} {:>15.0} {:>9.3} {:>9.3} {:>8}  {}",
                    if s.refinement {
                        format!("(bisect) {:.0}", s.target_rps)
                    } else {
                        format!("{:.0}", s.target_rps)
                    },
                    s.achieved_rps,
                    s.latency_p50_ms,
                    s.latency_p99_ms,
                    s.errors,
                    match &s.failed_because {
                        None => "yes".to_owned(),
                        Some(why) => format!("no: {why}"),
                    }
                );
            }
        }
        let _ = writeln!(out, "\nHIGHEST RATE HELD");
        for name in &c.drivers {
            if let Some(b) = self.backends.get(name) {
                let _ = writeln!(
                    out,
                    "  {name:<14} {}  ({})",
                    b.max_rate_rps
                        .map_or("none".to_owned(), |r| format!("{r:.0} req/s")),
                    b.stopped_because
                );
            }
        }
        if let Some(e) = &self.fatal_error {
            let _ = writeln!(out, "\nFATAL ERROR: {e}");
        }
        out
    }
}

/// Judges a measured step against the hold rule and the objectives.
fn judge(target: f64, outcome: &backend::PhaseOutcome, slos: &[Slo]) -> Step {
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

/// `doppio show`: a findmax report's table, or else a run's report as
/// [`crate::run::show`] prints it. Findmax reports are compared by `doppio plot`, not here.
pub fn show(report: &Path, baseline: Option<&Path>, log: bool) -> Result<(), Failure> {
    let Some(found) = FindmaxReport::read_if_findmax(report).map_err(Failure::Input)? else {
        return crate::run::show(report, baseline, log);
    };
    if let Some(b) = baseline {
        return Err(Failure::Usage(format!(
            "{} is a findmax report: `doppio show` prints one alone; `doppio plot {} {}` \
             draws both",
            report.display(),
            report.display(),
            b.display()
        )));
    }
    print!("{}", found.render());
    Ok(())
}

/// `doppio findmax`: the search, the table on stdout, the report on disk.
pub fn findmax(a: &FindmaxArgs, argv: Vec<String>) -> Result<PathBuf, Failure> {
    let c = &a.connect;
    let workload = crate::run::with_validation(crate::run::workload_of(c)?, false)?;
    let drivers = c.drivers().map_err(Failure::Usage)?;
    if drivers.is_empty() {
        return Err(Failure::Usage("no driver given".into()));
    }
    let options = crate::run::result_options(c, &a.results, &drivers)?;
    if a.start > a.max_rate {
        return Err(Failure::Usage(format!(
            "--start {:.0} is above --max-rate {:.0}",
            a.start, a.max_rate
        )));
    }
    let started_at = crate::report::now_rfc3339();
    let output = a.output.clone().unwrap_or_else(|| {
        crate::run::default_report_path("doppio-findmax", &workload.name, &started_at)
    });
    crate::run::check_writable(&output, "-o")?;
    let mut report = FindmaxReport {
        kind: KIND.to_owned(),
        tool: format!("doppio-bench {}", env!("CARGO_PKG_VERSION")),
        tag: a.tag.clone(),
        started_at,
        command: argv,
        workload: workload.name.clone(),
        config: FindmaxConfig {
            nodes: options.nodes.iter().map(ToString::to_string).collect(),
            drivers: drivers.iter().map(|d| d.name().to_owned()).collect(),
            concurrency: a.concurrency,
            threads: options.threads,
            connections: options.connections,
            consistency: options.consistency.name().to_owned(),
            start_rps: a.start,
            factor: a.factor,
            max_rate_rps: a.max_rate,
            step_duration_s: a.step_duration.as_secs_f64(),
            warmup_s: a.warmup.as_secs_f64(),
            refine: a.refine,
            slo: a.slo.iter().map(|s| s.text.clone()).collect(),
            hold_fraction: HOLD_FRACTION,
            max_error_ratio: MAX_ERROR_RATIO,
            page_size: Some(a.results.page_size),
            discard_results: a.results.discard_results,
        },
        backends: drivers
            .iter()
            .map(|d| (d.name().to_owned(), FindmaxBackend::default()))
            .collect(),
        fatal_error: None,
    };
    let mut backends: Vec<(Driver, Arc<dyn Backend>)> = Vec::new();
    let connected = (|| {
        for &d in &drivers {
            backends.push((d, backend::connect(d, &options).map_err(Failure::Start)?));
        }
        Ok::<(), Failure>(())
    })();
    let result = connected.and_then(|()| search(a, &workload, &backends, &mut report));
    for (_, b) in &backends {
        b.shutdown();
    }
    let failure = match result {
        Ok(()) => None,
        // Could not start (no backend connected, statements refused): nothing to report.
        Err(e) if !matches!(e, Failure::Run(_) | Failure::Interrupted) => return Err(e),
        Err(e) => {
            report.fatal_error = Some(e.to_string());
            Some(e)
        }
    };
    print!("{}", report.render());
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| Failure::run(format!("the report could not be written: {e}")))?;
    let written = std::fs::write(&output, json);
    if let Some(e) = failure {
        return Err(e);
    }
    written.map_err(|e| {
        Failure::run(format!(
            "the report could not be written to {}: {e}",
            output.display()
        ))
    })?;
    eprintln!("report written to {}", output.display());
    Ok(output)
}

/// The steps: each target in turn, every backend still searching at it; then `--refine`
/// rounds of bisection between each backend's highest target held and the one that failed.
fn search(
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
    if !a.warmup.is_zero() {
        let mut progress = Progress::new(
            a.connect.quiet,
            &format!("{name} {target:.0} req/s warmup"),
            Limit::Time(a.warmup),
            a.connect.progress_every,
        );
        let warm = backend::drive_phase(b, workload, spec(a.warmup, false), |s| progress.sample(s))
            .map_err(|e| Failure::of_phase(e, *started))?;
        *started = true;
        progress.done();
        if let Some(why) = warm.aborted {
            return Err(Failure::run(format!("{name} (during a warmup): {why}")));
        }
    }
    let mut progress = Progress::new(
        a.connect.quiet,
        &format!("{name} {target:.0} req/s"),
        Limit::Time(a.step_duration),
        a.connect.progress_every,
    );
    let outcome = backend::drive_phase(b, workload, spec(a.step_duration, true), |s| {
        progress.sample(s)
    })
    .map_err(|e| Failure::of_phase(e, *started))?;
    *started = true;
    progress.done();
    if crate::interrupt::interrupted() {
        return Err(Failure::Interrupted);
    }
    if let Some(why) = &outcome.aborted {
        return Err(Failure::run(format!("{name}: {why}")));
    }
    Ok(judge(target, &outcome, &a.slo))
}

#[cfg(test)]
mod tests {
    use super::*;

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
