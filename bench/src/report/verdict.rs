//! The VERDICT of a run of several backends: a few plain sentences, each a ratio with its
//! 99 % interval and p-value, that a skeptic can check.
//!
//! The unit of comparison is the round: round `r` runs every backend's segment `r` once,
//! side by side in time, so the ratio of two backends' figures within a round is free of
//! what drifts from round to round. Each figure's ratio is the geometric mean of the
//! rounds' ratios, with the paired t-test on their logarithms
//! (`stats::paired_ratio`). What drifts within a round shifts each round's ratio
//! by how far apart the two ran; when the order rotates, the places vary and that shift is
//! fitted out ([`crate::stats::paired_ratio_adjusted`], from three rounds on). With a fixed
//! order it cannot be, which the verdict says.
//!
//! Figures: client CPU per request, syscalls per request, and throughput (not when a rate
//! fixed it: then every backend did the same work and only its cost is compared).
//!
//! A verdict makes several comparisons at once (every figure for every pair of backends),
//! and the more it makes, the likelier one of them looks like a difference by chance. Its
//! p-values are therefore Holm-adjusted over its findings, those with an interval (two
//! rounds or more) making up the family ([`crate::stats::holm_adjusted`]): a finding is a
//! difference shown when its adjusted p-value is below 1 - [`CONFIDENCE`], which bounds the
//! chance of any false difference in the verdict by that much. The sentences give the
//! adjusted p-value; the raw one stays in the finding's ratio. The intervals are each
//! comparison's own, not adjusted.
//!
//! At a rate the work is the same only if every backend kept the release grid
//! ([`super::lateness::LatenessReport::kept_schedule`]): one whose own send lateness is a
//! step or more sends in coarser batches than the others, which is cheaper per request
//! whatever the driver. Its cost figures are then not compared; the verdict says why
//! instead ([`Verdict::refused`]).

use std::time::Duration;

use super::{BackendReport, Report, SegmentFigures};
use crate::stats::{holm_adjusted, paired_ratio_adjusted, PairedRatio};

/// Confidence of every interval the verdict gives.
pub(crate) const CONFIDENCE: f64 = 0.99;

/// Rounds below which a verdict's figure carries a warning: with fewer, the 99 % interval
/// of a paired test is too wide to tell much (t on 3 degrees of freedom is 5.8).
pub(crate) const ROUNDS_WANTED: usize = 5;

/// Holm-adjusted p below which a ratio counts as a difference shown (its own interval then
/// excludes 1 too: the adjusted p is never below the raw one).
const SIGNIFICANT: f64 = 1.0 - CONFIDENCE;

/// A figure the verdict compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Figure {
    /// Client CPU per request.
    Cpu,
    /// Syscalls per request.
    Syscalls,
    /// Requests per second.
    Throughput,
}

impl Figure {
    /// The figure's name in a sentence.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Figure::Cpu => "client CPU per request",
            Figure::Syscalls => "syscalls per request",
            Figure::Throughput => "throughput",
        }
    }

    /// What backend `b` did, as the sentence's verb ("used 0.49x a's").
    fn verb(self) -> &'static str {
        match self {
            Figure::Cpu => "used",
            Figure::Syscalls => "made",
            Figure::Throughput => "ran at",
        }
    }

    /// A segment's figure.
    fn of(self, s: &SegmentFigures) -> Option<f64> {
        match self {
            Figure::Cpu => s.cpu_us_per_req,
            Figure::Syscalls => s.syscalls_per_req,
            Figure::Throughput => Some(s.throughput_rps),
        }
    }
}

/// One comparison: backend `b` against backend `a` on one figure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    /// The figure.
    pub figure: Figure,
    /// The baseline's name.
    pub a: String,
    /// The compared backend's name.
    pub b: String,
    /// `b`'s figure over `a`'s, paired by round; its `p_value` is the raw one, of this
    /// comparison alone.
    pub ratio: PairedRatio,
    /// The p-value Holm-adjusted over the verdict's findings with an interval (the
    /// verdict's `comparisons`); the raw one when there is no interval (fewer than two
    /// rounds).
    pub p_adjusted: f64,
}

impl Finding {
    /// Whether the difference is shown: two rounds or more and an adjusted p-value below
    /// 1 - [`CONFIDENCE`].
    pub(crate) fn shown(&self) -> bool {
        self.ratio.pairs >= 2 && self.p_adjusted < SIGNIFICANT
    }

    /// The finding as a sentence.
    pub(crate) fn sentence(&self) -> String {
        let r = &self.ratio;
        let (name, a, b) = (self.figure.name(), &self.a, &self.b);
        if r.pairs < 2 {
            return format!(
                "{name}: {b} {} {:.2}x {a}'s in {} round (no interval: one round is no test)",
                self.figure.verb(),
                r.ratio,
                r.pairs
            );
        }
        let interval = format!(
            "{:.0} % interval {}-{}, {}",
            CONFIDENCE * 100.0,
            two_figures(r.low),
            two_figures(r.high),
            p_text(self.p_adjusted)
        );
        if self.shown() {
            format!(
                "{name}: {b} {} {}x {a}'s ({interval})",
                self.figure.verb(),
                two_figures(r.ratio)
            )
        } else {
            format!(
                "{name}: no difference shown between {b} and {a} ({}x, {interval})",
                two_figures(r.ratio)
            )
        }
    }
}

/// The verdict of a report: its findings and what qualifies them.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Verdict {
    /// The rounds paired (the fewest any comparison had).
    pub rounds: usize,
    /// Whether the order rotated.
    pub rotated: bool,
    /// Whether the ratios were adjusted for a drift within rounds (every comparison was).
    pub adjusted: bool,
    /// Every comparison, by figure then pair.
    pub findings: Vec<Finding>,
    /// The findings tested (those with two rounds or more): the number of comparisons their
    /// p-values are Holm-adjusted for.
    pub comparisons: usize,
    /// The comparisons not made, each as a sentence saying why (a backend that fell behind
    /// the release grid of a paced run).
    pub refused: Vec<String>,
    /// What the reader must know to weigh them.
    pub warnings: Vec<String>,
}

/// The verdict of `report`, or `None` when fewer than two backends measured per-segment
/// figures (one backend; a merged report; a report written before segments were kept).
pub(crate) fn verdict(report: &Report) -> Option<Verdict> {
    let columns: Vec<(&str, &BackendReport)> = report
        .config
        .drivers
        .iter()
        .filter_map(|d| report.backends.get(d).map(|b| (d.as_str(), b)))
        .filter(|(_, b)| b.throughput.requests > 0 && !b.segments.segments.is_empty())
        .collect();
    if columns.len() < 2 {
        return None;
    }
    let rotated = report.config.order.as_deref() == Some("rotate");
    let rate_fixed = report.config.rate.is_some();
    let mut figures = vec![Figure::Cpu, Figure::Syscalls];
    if !rate_fixed {
        figures.push(Figure::Throughput);
    }
    let behind = behind_schedule(report, &columns);
    // A pair with a backend behind the grid: its cost figures are refused, once for both.
    let late_of = |a: &str, b: &str| -> Vec<&str> {
        behind
            .iter()
            .filter(|(n, _)| n == a || n == b)
            .map(|(_, why)| why.as_str())
            .collect()
    };
    let mut refused = Vec::new();
    for i in 0..columns.len() {
        for j in i + 1..columns.len() {
            let (a, b) = (columns[i].0, columns[j].0);
            let late = late_of(a, b);
            if !late.is_empty() {
                refused.push(format!(
                    "client CPU and syscalls per request: not compared between {b} and {a}: {}",
                    late.join("; ")
                ));
            }
        }
    }
    let mut findings = Vec::new();
    for figure in figures {
        for i in 0..columns.len() {
            for j in i + 1..columns.len() {
                let (a, b) = (columns[i], columns[j]);
                if figure != Figure::Throughput && !late_of(a.0, b.0).is_empty() {
                    continue;
                }
                let pairs = pair_by_round(a.1, b.1, figure);
                if pairs.is_empty() {
                    continue;
                }
                let ratio = paired_ratio_adjusted(&pairs, CONFIDENCE);
                findings.push(Finding {
                    figure,
                    a: a.0.to_owned(),
                    b: b.0.to_owned(),
                    ratio,
                    p_adjusted: ratio.p_value,
                });
            }
        }
    }
    let comparisons = adjust_for_comparisons(&mut findings);
    let rounds = findings.iter().map(|f| f.ratio.pairs).min().unwrap_or(0);
    let mut warnings = Vec::new();
    if rounds < ROUNDS_WANTED {
        warnings.push(format!(
            "these rest on {rounds} round{}; a paired test wants at least {ROUNDS_WANTED} \
             (--segments {ROUNDS_WANTED} or more), or its intervals are too wide to tell much",
            if rounds == 1 { "" } else { "s" }
        ));
    }
    if !rotated {
        warnings.push(
            "the order was fixed: a drift within each round (a node warming up) biases every \
             ratio against the backends that ran later (--order rotate)"
                .to_owned(),
        );
    }
    if rate_fixed {
        warnings.push(
            "throughput is not compared: --rate set it, so every backend did the same work"
                .to_owned(),
        );
    }
    if let Some(w) = super::connection_shape::parity(&report.config.connection_shapes) {
        warnings.push(w);
    }
    let server_bound = server_bound(&columns);
    if !server_bound.is_empty() && !rate_fixed {
        warnings.push(format!(
            "throughput is server-bound: the node was saturated while {} ran; the throughput \
             ratio measures the node, not the drivers: the client-side figures above are the \
             comparison",
            server_bound.join(", ")
        ));
    }
    let adjusted = !findings.is_empty() && findings.iter().all(|f| f.ratio.adjusted);
    Some(Verdict {
        rounds,
        rotated,
        adjusted,
        findings,
        comparisons,
        refused,
        warnings,
    })
}

/// Sets each tested finding's (two rounds or more) `p_adjusted`, Holm-adjusted over all of
/// them, and returns how many they are.
fn adjust_for_comparisons(findings: &mut [Finding]) -> usize {
    let tested: Vec<&mut Finding> = findings.iter_mut().filter(|f| f.ratio.pairs >= 2).collect();
    let raw: Vec<f64> = tested.iter().map(|f| f.ratio.p_value).collect();
    let adjusted = holm_adjusted(&raw);
    for (f, p) in tested.into_iter().zip(adjusted) {
        f.p_adjusted = p;
    }
    raw.len()
}

/// The backends of a paced run that fell behind its release grid, each with why, as the
/// refusal says it.
fn behind_schedule(report: &Report, columns: &[(&str, &BackendReport)]) -> Vec<(String, String)> {
    let step = report
        .config
        .release_grid_s
        .filter(|g| g.is_finite() && *g >= 0.0)
        .map_or(Duration::ZERO, Duration::from_secs_f64);
    columns
        .iter()
        .filter_map(|(name, b)| {
            let l = b.latency.send_lateness.as_ref()?;
            if l.kept_schedule(step) {
                return None;
            }
            let own = l.from_release_ns.p50 as f64 / 1e6;
            let grid = if step.is_zero() {
                format!(
                    "no grid, so within {} us",
                    super::lateness::ON_TIME_WITHOUT_GRID.as_micros()
                )
            } else {
                format!("a grid of {}", humantime::format_duration(step))
            };
            Some((
                (*name).to_owned(),
                format!(
                    "{name} fell behind the release schedule (half its requests left {own:.2} ms \
                     or more after their release, with {grid}): it sent in coarser batches \
                     than asked, which costs less per request whatever the driver; a coarser \
                     --release-grid puts every backend on one pattern"
                ),
            ))
        })
        .collect()
}

/// The backends whose node was saturated in most of their segments, as `name (k of n)`.
pub(crate) fn server_bound(columns: &[(&str, &BackendReport)]) -> Vec<String> {
    columns
        .iter()
        .filter_map(|(name, b)| {
            let k = b.server_cpu.server_saturated_segments?;
            let n = b.segments.segments.len().max(1);
            (2 * k > n).then(|| format!("{name} ({k} of {n} segments)"))
        })
        .collect()
}

/// `a`'s and `b`'s `figure` in the rounds both measured it, with how many places later `b`
/// ran than `a` in each.
fn pair_by_round(a: &BackendReport, b: &BackendReport, figure: Figure) -> Vec<(f64, f64, f64)> {
    a.segments
        .segments
        .iter()
        .filter_map(|sa| {
            let sb = b.segments.segments.iter().find(|s| s.round == sa.round)?;
            let gap = sb.position as f64 - sa.position as f64;
            Some((figure.of(sa)?, figure.of(sb)?, gap))
        })
        .collect()
}

/// `x` with two significant figures at least (0.49, 1.0, 12, 1234).
fn two_figures(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".to_owned();
    }
    let magnitude = x.abs().log10().floor();
    let decimals = (1.0 - magnitude).clamp(0.0, 6.0) as usize;
    format!("{x:.decimals$}")
}

/// A p-value as a sentence gives it.
fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_owned()
    } else {
        format!("p = {p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{BackendRun, RunConfig};

    fn segments(cpu: &[f64], syscalls: &[f64], throughput: &[f64]) -> Vec<SegmentFigures> {
        (0..cpu.len())
            .map(|r| SegmentFigures {
                round: r,
                requests: 1000,
                elapsed_s: 1.0,
                throughput_rps: throughput[r],
                cpu_us_per_req: Some(cpu[r]),
                syscalls_per_req: Some(syscalls[r]),
                ..SegmentFigures::default()
            })
            .collect()
    }

    fn report(a: Vec<SegmentFigures>, b: Vec<SegmentFigures>, order: &str) -> Report {
        let mut r = Report {
            config: RunConfig {
                drivers: vec!["scylla".into(), "doppio-uring".into()],
                order: Some(order.into()),
                ..RunConfig::default()
            },
            ..Report::default()
        };
        for (k, (name, mut segments)) in
            [("scylla", a), ("doppio-uring", b)].into_iter().enumerate()
        {
            // Rotated: scylla first in the even rounds, second in the odd ones; fixed:
            // scylla first in every round.
            for s in &mut segments {
                s.position = match order {
                    "rotate" => (s.round + k) % 2,
                    _ => k,
                };
            }
            let mut entry = BackendRun::default().report(name);
            entry.throughput.requests = 1000 * segments.len() as u64;
            entry.segments.segments = segments;
            r.backends.insert(name.into(), entry);
        }
        r
    }

    fn sentences(v: &Verdict) -> Vec<String> {
        v.findings.iter().map(Finding::sentence).collect()
    }

    #[test]
    fn a_clear_win_is_a_ratio_with_its_interval_and_p_value() {
        let a = segments(
            &[5.7, 5.9, 5.6, 5.8, 5.75, 5.65],
            &[0.64, 0.65, 0.63, 0.64, 0.66, 0.64],
            &[75e3, 74e3, 76e3, 75e3, 75.5e3, 74.5e3],
        );
        let b = segments(
            &[2.81, 2.85, 2.78, 2.83, 2.80, 2.79],
            &[0.19, 0.19, 0.18, 0.19, 0.20, 0.19],
            &[77e3, 75e3, 78e3, 76e3, 74e3, 77.5e3],
        );
        let v = verdict(&report(a, b, "rotate")).unwrap();
        assert_eq!(v.rounds, 6);
        assert!(v.warnings.is_empty(), "{:?}", v.warnings);
        let s = sentences(&v);
        assert_eq!(
            s[0],
            "client CPU per request: doppio-uring used 0.49x scylla's (99 % interval 0.48-0.50, \
             p < 0.001)"
        );
        assert!(
            s[1].starts_with("syscalls per request: doppio-uring made 0.30x scylla's (99 %"),
            "{}",
            s[1]
        );
        assert!(
            s[2].starts_with(
                "throughput: no difference shown between doppio-uring and scylla (1.0"
            ),
            "{}",
            s[2]
        );
        assert!(v.findings[0].shown() && v.findings[1].shown() && !v.findings[2].shown());
    }

    #[test]
    fn a_tie_shows_no_difference() {
        let a = segments(&[3.0, 3.1, 2.9, 3.05, 2.95], &[0.5; 5], &[1e5; 5]);
        let b = segments(&[3.02, 3.0, 2.95, 3.1, 2.97], &[0.5; 5], &[1e5; 5]);
        let v = verdict(&report(a, b, "rotate")).unwrap();
        let s = sentences(&v);
        assert!(
            s[0].starts_with(
                "client CPU per request: no difference shown between doppio-uring and scylla (1.0"
            ),
            "{}",
            s[0]
        );
        assert!(
            s[0].contains("99 % interval 0.9") && s[0].contains("p = "),
            "{}",
            s[0]
        );
        // The same figure in every round: a ratio of 1, no difference.
        assert!(
            s[1].starts_with("syscalls per request: no difference shown"),
            "{}",
            s[1]
        );
        assert!(v.findings.iter().all(|f| !f.shown()));
    }

    #[test]
    fn too_few_rounds_and_a_fixed_order_are_warned_of() {
        let a = segments(&[5.0, 5.2], &[0.6, 0.6], &[1e5, 1e5]);
        let b = segments(&[2.5, 2.6], &[0.2, 0.2], &[1e5, 1.1e5]);
        let v = verdict(&report(a, b, "fixed")).unwrap();
        assert_eq!(v.rounds, 2);
        assert_eq!(v.warnings.len(), 2, "{:?}", v.warnings);
        assert!(v.warnings[0].contains("2 rounds") && v.warnings[0].contains("--segments 5"));
        assert!(v.warnings[1].contains("order was fixed"));
        // One round: the ratio, and no test.
        let one = verdict(&report(
            segments(&[5.0], &[0.6], &[1e5]),
            segments(&[2.5], &[0.2], &[1e5]),
            "rotate",
        ))
        .unwrap();
        assert_eq!(
            sentences(&one)[0],
            "client CPU per request: doppio-uring used 0.50x scylla's in 1 round (no interval: \
             one round is no test)"
        );
        assert!(one.warnings[0].contains("1 round;"), "{:?}", one.warnings);
    }

    #[test]
    fn a_fixed_rate_leaves_throughput_out_and_one_backend_gives_no_verdict() {
        let a = segments(&[5.0; 5], &[0.6; 5], &[1e4; 5]);
        let b = segments(&[2.5; 5], &[0.2; 5], &[1e4; 5]);
        let mut r = report(a, b, "rotate");
        r.config.rate = Some(1e4);
        let v = verdict(&r).unwrap();
        assert!(v.findings.iter().all(|f| f.figure != Figure::Throughput));
        assert!(v.warnings.iter().any(|w| w.contains("--rate set it")));
        r.backends.remove("scylla");
        assert_eq!(verdict(&r), None);
    }

    /// A paced run whose backend sent its requests a millisecond after their release (a
    /// timer of millisecond resolution) on a grid of 1 ms: its cost is not compared; on a
    /// grid of 2 ms it kept the grid, and is.
    #[test]
    fn cost_at_a_rate_is_not_compared_with_a_backend_that_fell_behind_the_grid() {
        use crate::engine::lateness::SendLateness;
        use crate::report::lateness::LatenessReport;
        use std::time::Instant;
        let lateness = |own_us: u64| {
            let mut l = SendLateness::default();
            let due = Instant::now();
            for k in 0..1000u64 {
                let release = due + Duration::from_micros(k % 500);
                l.record(
                    due,
                    release,
                    release + Duration::from_micros(own_us + k % 7),
                );
            }
            LatenessReport::of(&l)
        };
        let a = segments(&[5.0; 5], &[0.6; 5], &[1e4; 5]);
        let b = segments(&[2.5; 5], &[0.2; 5], &[1e4; 5]);
        let mut r = report(a, b, "rotate");
        r.config.rate = Some(1e4);
        r.config.release_grid_s = Some(0.001);
        r.backends.get_mut("scylla").unwrap().latency.send_lateness = lateness(1100);
        r.backends
            .get_mut("doppio-uring")
            .unwrap()
            .latency
            .send_lateness = lateness(30);
        let v = verdict(&r).unwrap();
        assert!(v.findings.is_empty(), "{:?}", sentences(&v));
        assert_eq!(v.refused.len(), 1, "{:?}", v.refused);
        let why = &v.refused[0];
        assert!(
            why.starts_with(
                "client CPU and syscalls per request: not compared between doppio-uring and \
                 scylla: scylla fell behind the release schedule (half its requests left 1.1"
            ),
            "{why}"
        );
        assert!(why.contains("a grid of 1ms"), "{why}");
        // One sentence, its words one space apart (the report wraps it to its width).
        assert!(!why.contains("  "), "{why}");
        assert!(
            why.ends_with("a coarser --release-grid puts every backend on one pattern"),
            "{why}"
        );
        r.config.release_grid_s = Some(0.002);
        let v = verdict(&r).unwrap();
        assert!(v.refused.is_empty(), "{:?}", v.refused);
        assert_eq!(v.findings.len(), 2);
        // Without a grid, a millisecond's lateness is behind too; 30 us is on time.
        r.config.release_grid_s = Some(0.0);
        let v = verdict(&r).unwrap();
        assert_eq!(v.refused.len(), 1);
        assert!(
            v.refused[0].contains("no grid, so within 100 us"),
            "{:?}",
            v.refused
        );
        r.backends.get_mut("scylla").unwrap().latency.send_lateness = lateness(20);
        assert!(verdict(&r).unwrap().refused.is_empty());
    }

    /// A finding of `p` on `pairs` rounds, before the correction.
    fn finding(p: f64, pairs: usize) -> Finding {
        let ratio = PairedRatio {
            ratio: 1.1,
            low: 1.02,
            high: 1.2,
            p_value: p,
            pairs,
            adjusted: true,
        };
        Finding {
            figure: Figure::Cpu,
            a: "scylla".into(),
            b: "doppio-uring".into(),
            ratio,
            p_adjusted: p,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Raw p = 0.006 among three comparisons is 0.018 once adjusted: no difference shown,
    /// though it would be alone. A finding of one round is not one of the comparisons.
    #[test]
    fn a_raw_p_below_the_threshold_is_not_shown_once_adjusted_for_the_comparisons() {
        let mut findings = vec![
            finding(0.006, 6),
            finding(0.2, 6),
            finding(0.5, 6),
            finding(1.0, 1),
        ];
        assert!(findings[0].shown(), "alone, 0.006 is a difference shown");
        assert_eq!(adjust_for_comparisons(&mut findings), 3);
        let adjusted: Vec<f64> = findings.iter().map(|f| f.p_adjusted).collect();
        assert!(
            close(adjusted[0], 0.018) && close(adjusted[1], 0.4),
            "{adjusted:?}"
        );
        assert!(
            close(adjusted[2], 0.5) && adjusted[3] == 1.0,
            "{adjusted:?}"
        );
        // The raw p-value stays in the ratio.
        assert_eq!(findings[0].ratio.p_value, 0.006);
        assert!(findings.iter().all(|f| !f.shown()));
        assert_eq!(
            findings[0].sentence(),
            "client CPU per request: no difference shown between doppio-uring and scylla (1.1x, \
             99 % interval 1.0-1.2, p = 0.018)"
        );
    }

    /// Raw p = 0.002 and 0.004 among three comparisons are 0.006 and 0.008 once adjusted:
    /// still differences shown, the sentence giving the adjusted p-value.
    #[test]
    fn a_raw_p_small_enough_is_still_shown_after_the_correction() {
        let mut findings = vec![finding(0.004, 6), finding(0.002, 6), finding(0.5, 6)];
        assert_eq!(adjust_for_comparisons(&mut findings), 3);
        assert!(close(findings[0].p_adjusted, 0.008), "{findings:?}");
        assert!(close(findings[1].p_adjusted, 0.006), "{findings:?}");
        assert!(findings[0].shown() && findings[1].shown() && !findings[2].shown());
        assert_eq!(
            findings[0].sentence(),
            "client CPU per request: doppio-uring used 1.1x scylla's (99 % interval 1.0-1.2, \
             p = 0.008)"
        );
        // One comparison alone: nothing to adjust.
        let mut one = vec![finding(0.006, 6)];
        assert_eq!(adjust_for_comparisons(&mut one), 1);
        assert!(one[0].shown() && one[0].p_adjusted == 0.006);
    }

    /// A whole verdict of three comparisons (CPU, syscalls and throughput; the last two
    /// ties): a CPU ratio of 1.07 at raw p = 0.0065 is not shown, one at raw p = 0.0009
    /// is.
    #[test]
    fn the_verdict_adjusts_its_p_values_for_its_comparisons() {
        let tie = |cpu: &[f64]| segments(cpu, &[0.5; 6], &[1e5; 6]);
        let a = tie(&[3.0; 6]);
        let v = verdict(&report(
            a.clone(),
            tie(&[3.3, 3.1, 3.25, 3.25, 3.1, 3.3]),
            "rotate",
        ))
        .unwrap();
        assert_eq!(v.comparisons, 3);
        let cpu = &v.findings[0];
        assert!(
            cpu.ratio.p_value > 0.005 && cpu.ratio.p_value < 0.008,
            "{cpu:?}"
        );
        assert!(
            (cpu.p_adjusted - 3.0 * cpu.ratio.p_value).abs() < 1e-12,
            "{cpu:?}"
        );
        assert!(!cpu.shown(), "{cpu:?}");
        assert!(
            cpu.sentence().starts_with(
                "client CPU per request: no difference shown between doppio-uring and scylla \
                 (1.1x, 99 % interval"
            ) && cpu.sentence().ends_with("p = 0.019)"),
            "{}",
            cpu.sentence()
        );
        let v = verdict(&report(a, tie(&[3.3, 3.2, 3.25, 3.2, 3.15, 3.3]), "rotate")).unwrap();
        let cpu = &v.findings[0];
        assert!(
            cpu.ratio.p_value < 0.001 && cpu.p_adjusted < 0.003,
            "{cpu:?}"
        );
        assert!(cpu.shown(), "{cpu:?}");
    }

    #[test]
    fn figures_are_written_with_two_significant_digits_at_least() {
        assert_eq!(two_figures(0.4912), "0.49");
        assert_eq!(two_figures(1.0), "1.0");
        assert_eq!(two_figures(12.34), "12");
        assert_eq!(two_figures(0.0123), "0.012");
        assert_eq!(two_figures(f64::NAN), "n/a");
    }
}
