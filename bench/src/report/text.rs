//! The text report: CONFIG, LOG, SUMMARY, LATENCY, OVERHEAD, STATEMENTS and ERRORS sections,
//! at most 100 columns wide. One backend prints one column; two (one run of `--driver doppio,scylla`,
//! or `show A.json B.json`) print side by side with the relative change and, where
//! per-sample data allow it, the p-value of Welch's t-test corrected for autocorrelation.
//!
//! The comparison tables (SUMMARY, LATENCY, OVERHEAD) are data: `tables` lists each row
//! once as a `Metric` (name, unit, how a backend's figure is read and written, whether two
//! columns show its change and p-value, when it is shown), and one loop writes them.
//!
//! STATEMENTS (workloads of several `[[run]]` statements only): with one backend, one line
//! per statement (weight, requests and their share, throughput, errors, latency); with two
//! or more, one table per statement with the backends side by side, as SUMMARY (p-values of
//! its throughput and mean latency from its per-sample figures).

use std::fmt::Write as _;

use super::cell::{Row, SampleFigure, Value, TESTED_PERCENTILES};
use super::figure::anatomy::AnatomyReport;
use super::figure::client_cpu::ClientCpuFigures;
use super::figure::context_switches::ContextSwitchFigures;
use super::figure::hardware::HardwareFigures;
use super::figure::latency::LatencyFigures;
use super::figure::memory::MemoryFigures;
use super::figure::server_cpu::ServerCpuFigures;
use super::figure::socket_batching::SocketBatchingFigures;
use super::figure::syscalls::SyscallFigures;
use super::figure::throughput::ThroughputFigures;
use super::figure::uring::{IoUringFigures, UringEnterFigures};
use super::figure::waterfall::WaterfallReport;
use super::{BackendReport, LatencySummary, Report, SampleReport, StatementReport};
use crate::probe::process_cost::SyscallKind;
use crate::stats::welch_t_test;

/// A column of the report: a label and a backend's results.
pub type Column<'a> = (String, &'a BackendReport);

/// Renders `report` in full (every backend side by side, LOG lines included if `log`).
pub fn render(report: &Report, log: bool) -> String {
    let (columns, not_run) = measured_columns(&report.config.drivers, &report.backends);
    let mut out = String::new();
    config_section(&mut out, report);
    if log {
        for (label, b) in &columns {
            log_section(&mut out, label, &b.samples);
        }
    }
    // A run that failed before any backend measured anything has no figures to show.
    if !columns.is_empty() {
        compare_sections(&mut out, &columns);
        pairs_section(&mut out, &columns);
        machines_section(&mut out, &columns);
    }
    if !not_run.is_empty() {
        let _ = writeln!(
            out,
            "NOT RUN          {} (no request measured: the run stopped before its turn, or it \
             could not start; no figure is shown for it, rather than zeros)\n",
            not_run.join(", ")
        );
    }
    notes_section(&mut out, report);
    verdict_section(&mut out, report);
    out
}

/// VERDICT: each figure's ratio between backends, paired by round, in plain sentences, the
/// number of comparisons their p-values are Holm-adjusted for, and what qualifies them;
/// nothing for a report of one backend.
fn verdict_section(out: &mut String, report: &Report) {
    let Some(v) = super::verdict::verdict(report) else {
        return;
    };
    wrap(
        out,
        "VERDICT  ",
        &format!(
            "({} rounds paired, order {}; each ratio is the geometric mean of the rounds' \
             ratios{}, with its {:.0} % interval and the p-value of a paired t-test)",
            v.rounds,
            if v.rotated { "rotated" } else { "fixed" },
            if v.adjusted {
                ", adjusted for a drift within rounds"
            } else {
                ""
            },
            super::verdict::CONFIDENCE * 100.0
        ),
    );
    for f in &v.findings {
        wrap(out, "  ", &f.sentence());
    }
    if v.comparisons >= 2 {
        wrap(
            out,
            "  ",
            &format!(
                "p-values adjusted (Holm) for the {} comparisons above (the intervals are not: \
                 each is its comparison's own)",
                v.comparisons
            ),
        );
    }
    for r in &v.refused {
        wrap(out, "  ", r);
    }
    for w in &v.warnings {
        wrap(out, "  warning: ", w);
    }
    out.push('\n');
}

/// The backends of `drivers` (in their order) that measured requests, as columns, and the
/// names of those that did not (absent from `backends`, or with no request): a backend that
/// did not run is named as such, never shown as a column of zeros and -100 %.
fn measured_columns<'a>(
    drivers: &[String],
    backends: &'a std::collections::BTreeMap<String, BackendReport>,
) -> (Vec<Column<'a>>, Vec<String>) {
    let mut columns = Vec::new();
    let mut not_run = Vec::new();
    for d in drivers {
        match backends.get(d) {
            Some(b) if b.throughput.requests > 0 => columns.push((d.clone(), b)),
            _ => not_run.push(d.clone()),
        }
    }
    (columns, not_run)
}

/// With more than two backends (`--driver doppio,doppio-uring,scylla`), every pair as a
/// two-backend run shows it: the change of the second relative to the first, and the
/// p-values of throughput and mean latency (Welch's t-test on batch means of the segments'
/// samples, as for two).
fn pairs_section(out: &mut String, columns: &[Column<'_>]) {
    if columns.len() < 3 {
        return;
    }
    let change = |a: f64, b: f64| match change_of(a, b) {
        Some(c) if c.is_finite() => format!("{:+.1}%", c * 100.0),
        _ => "n/a".to_owned(),
    };
    let p = |p: Option<f64>| match p.filter(|p| p.is_finite()) {
        Some(p) => format!("{p:.3}"),
        None => "n/a".to_owned(),
    };
    let _ = writeln!(
        out,
        "\nPAIRS (second vs first)    throughput  p-value    mean latency  p-value     CPU/req  syscalls/req"
    );
    for i in 0..columns.len() {
        for j in i + 1..columns.len() {
            let pair = [columns[i].clone(), columns[j].clone()];
            let (a, b) = (pair[0].1, pair[1].1);
            let syscalls = match (a.syscalls.syscalls_per_req, b.syscalls.syscalls_per_req) {
                (Some(x), Some(y)) => change(x, y),
                _ => "n/a".to_owned(),
            };
            let label = format!("{} vs {}", pair[1].0, pair[0].0);
            let _ = writeln!(
                out,
                "  {label:<24}{:>12}{:>9}{:>16}{:>9}{:>12}{:>14}",
                change(a.throughput.throughput_rps, b.throughput.throughput_rps),
                p(p_value(&pair, SampleFigure::Throughput)),
                change(a.latency.latency_ns.mean, b.latency.latency_ns.mean),
                p(p_value(&pair, SampleFigure::MeanLatency)),
                change(a.client_cpu.cpu_us_per_req, b.client_cpu.cpu_us_per_req),
                syscalls,
            );
        }
    }
    out.push('\n');
}

/// Renders two reports' first backends side by side (`show NEW.json BASELINE.json`).
pub fn render_pair(new: &Report, baseline: &Report) -> String {
    let mut out = String::new();
    config_section(&mut out, new);
    environment_differences(&mut out, new, baseline);
    fn first(r: &Report) -> Option<(String, &BackendReport)> {
        r.config
            .drivers
            .iter()
            .find_map(|d| r.backends.get(d).map(|b| (d.clone(), b)))
    }
    let (Some(a), Some(b)) = (first(new), first(baseline)) else {
        out.push_str("one of the reports has no backend results\n");
        return out;
    };
    let label = |r: &Report, d: &str| match &r.tag {
        Some(t) => format!("{d} [{t}]"),
        None => format!("{d} [{}]", &r.started_at.get(..16).unwrap_or(&r.started_at)),
    };
    // Baseline first, new second: the change reads as new relative to baseline.
    let columns = vec![(label(baseline, &b.0), b.1), (label(new, &a.0), a.1)];
    compare_sections(&mut out, &columns);
    notes_section(&mut out, new);
    out
}

fn config_section(out: &mut String, r: &Report) {
    let c = &r.config;
    let _ = writeln!(out, "CONFIG");
    let _ = writeln!(
        out,
        "  workload      {} ({})",
        r.workload.name, r.workload.description
    );
    if !r.workload.params.is_empty() {
        let params: Vec<String> = r
            .workload
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        wrap(out, "  params        ", &params.join(" "));
    }
    let _ = writeln!(out, "  nodes         {}", c.nodes.join(", "));
    let _ = writeln!(
        out,
        "  drivers       {}   segments {} per driver{}",
        c.drivers.join(", "),
        c.segments,
        match (c.drivers.len() > 1, c.order.as_deref()) {
            (false, _) => String::new(),
            (true, None) => " (alternating)".to_owned(),
            (true, Some(order)) => format!(", order {order}"),
        }
    );
    if c.drivers.len() > 1 && c.rounds.len() > 1 {
        // One cycle of the rotation says it all.
        let shown: Vec<String> = c
            .rounds
            .iter()
            .take(c.drivers.len())
            .enumerate()
            .map(|(k, r)| format!("{}: {}", k + 1, r.join(" ")))
            .collect();
        let more = if c.rounds.len() > shown.len() {
            "; and so on"
        } else {
            ""
        };
        wrap(
            out,
            "  rounds        ",
            &format!("{}{more}", shown.join("; ")),
        );
    }
    if let Some(e) = &c.equal_load {
        let capacities: Vec<String> = e
            .capacities
            .iter()
            .map(|(d, cap)| format!("{d} {cap:.0}/s"))
            .collect();
        wrap(
            out,
            "  equal load    ",
            &format!(
                "every segment at {:.0}/s, {:.0} % of the slowest capacity at full speed ({})",
                e.rate,
                e.share * 100.0,
                capacities.join(", ")
            ),
        );
    }
    if let Some(w) = &c.server_warmup {
        let first = c
            .rounds
            .first()
            .and_then(|r| r.first())
            .map_or("", String::as_str);
        let _ = writeln!(
            out,
            "  server warmup {w} unrecorded before round 1{}",
            if first.is_empty() {
                String::new()
            } else {
                format!(", with {first}")
            }
        );
    }
    let _ = writeln!(
        out,
        "  duration      {}   warmup {}   sample interval {}s",
        c.duration, c.warmup, c.sample_interval_s
    );
    let _ = writeln!(
        out,
        "  concurrency   {}   threads {}   connections {}   rate {}",
        c.concurrency,
        c.threads,
        c.connections,
        rate_text(c)
    );
    // A schedule on its own line: it may be long.
    if let Some(schedule) = schedule_of(c) {
        let _ = writeln!(out, "  schedule      {schedule} (req/s)");
    }
    let _ = writeln!(
        out,
        "  consistency   {}   timeout {}s   retries {}   compression {}",
        c.consistency, c.request_timeout_s, c.retries, c.compression
    );
    driver_settings(out, c);
    if !c.idempotent.is_empty() {
        let _ = writeln!(
            out,
            "  idempotent    {} (a lost answer may be retried)",
            c.idempotent.join(", ")
        );
    }
    if let Some(page_size) = c.page_size {
        let _ = writeln!(
            out,
            "  results       pages of {page_size} rows, {}",
            if c.discard_results {
                "discarded: rows counted, not decoded (--discard-results)"
            } else {
                "every row decoded"
            }
        );
    }
    if !c.validated.is_empty() {
        let _ = writeln!(
            out,
            "  validation    rows of {} compared with what their writer wrote (--validate)",
            c.validated.join(", ")
        );
    }
    if let Some(inputs) = &r.merged_from {
        let described: Vec<String> = inputs
            .iter()
            .map(|m| {
                let cycles = m
                    .config
                    .cycles
                    .as_ref()
                    .map_or("0..".to_owned(), |cy| format!("{}..{}", cy.start, cy.end));
                format!("{} (cycles {cycles}, started {})", m.file, m.started_at)
            })
            .collect();
        wrap(
            out,
            "  merged from   ",
            &format!("{} machines: {}", inputs.len(), described.join(", ")),
        );
    }
    if let Some(cy) = &c.cycles {
        let _ = writeln!(
            out,
            "  cycles        {}..{} ({} iterations{}; a timed phase wraps around within them)",
            cy.start,
            cy.end,
            cy.end.saturating_sub(cy.start),
            match (&cy.loader, cy.key_space) {
                (Some(l), Some(space)) => format!(", loader {l} of {space}"),
                _ => String::new(),
            }
        );
    }
    let _ = writeln!(
        out,
        "  figures       m ± e: the mean and its 99 % interval (from batch means of the samples);"
    );
    let _ = writeln!(
        out,
        "                p-value: Welch's t-test on those batch means (below 0.01: a difference)"
    );
    let _ = writeln!(
        out,
        "  started       {}{}",
        r.started_at,
        r.tag
            .as_ref()
            .map_or(String::new(), |t| format!("   tag {t}"))
    );
    if let Some(e) = &r.environment {
        environment_lines(out, e);
    }
    out.push('\n');
}

/// The machine and the build, two lines of CONFIG.
fn environment_lines(out: &mut String, e: &crate::probe::environment::Environment) {
    let unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let cpus = match (e.cpus_allowed, e.cpus_online) {
        (Some(a), Some(o)) => format!("{a} of {o} CPUs"),
        _ => "CPUs unknown".into(),
    };
    let affected = e
        .mitigations
        .values()
        .filter(|v| v.starts_with("Vulnerable"))
        .count();
    wrap(
        out,
        "  machine       ",
        &format!(
            "Linux {}, {} ({cpus}), governor {}, {} CPU vulnerabilities listed ({} mitigated, \
             {affected} vulnerable)",
            unknown(&e.kernel),
            unknown(&e.cpu_model),
            e.governor.as_deref().unwrap_or("not readable"),
            e.mitigations.len(),
            e.mitigations
                .values()
                .filter(|v| v.starts_with("Mitigation"))
                .count(),
        ),
    );
    let crates: Vec<String> = e.crates.iter().map(|(n, v)| format!("{n} {v}")).collect();
    let commit = match e.git_commit.split_once(' ') {
        Some((c, rest)) => format!("{} {rest}", &c[..c.len().min(12)]),
        None => e.git_commit[..e.git_commit.len().min(12)].to_owned(),
    };
    wrap(
        out,
        "  build         ",
        &format!(
            "commit {commit}, {}{}, {}; {}",
            e.build_profile,
            if e.features.is_empty() {
                String::new()
            } else {
                format!(" with {}", e.features.join(", "))
            },
            e.rustc,
            crates.join(", ")
        ),
    );
}

/// Under `show NEW BASELINE`'s CONFIG: every way the two machines and builds differ,
/// io_uring set-ups included, or that the reports do not say.
fn environment_differences(out: &mut String, new: &Report, baseline: &Report) {
    let (Some(a), Some(b)) = (&baseline.environment, &new.environment) else {
        wrap(
            out,
            "ENVIRONMENT  ",
            "not compared: a report written before reports recorded their machine and build",
        );
        out.push('\n');
        return;
    };
    let mut differences = crate::probe::environment::differences(a, b);
    for (driver, setup) in &new.config.uring_setup {
        if let Some(old) = baseline.config.uring_setup.get(driver) {
            if old != setup {
                differences.push(format!("{driver} io_uring set-up: {old} vs {setup}"));
            }
        }
    }
    if differences.is_empty() {
        let _ = writeln!(
            out,
            "ENVIRONMENT  the same machine and build in both reports\n"
        );
        return;
    }
    wrap(
        out,
        "ENVIRONMENT  warning: ",
        "the reports were measured on different machines or builds (baseline vs new):",
    );
    for d in differences {
        wrap(out, "  ", &d);
    }
    out.push('\n');
}

/// The driver settings every backend was given (serial consistency, locality, retry
/// backoff) and the cores each backend's request threads were pinned to.
fn driver_settings(out: &mut String, c: &super::RunConfig) {
    let or_default = |v: &Option<String>, none: &str| v.clone().unwrap_or_else(|| none.to_owned());
    let _ = writeln!(
        out,
        "  serial        {}   datacenter {}   rack {}   retry backoff {}",
        or_default(&c.serial_consistency, "-"),
        or_default(&c.datacenter, "default"),
        or_default(&c.rack, "none"),
        or_default(&c.retry_backoff, "none")
    );
    if !c.thread_cores.is_empty() {
        let cores: Vec<String> = c
            .thread_cores
            .iter()
            .map(|(driver, cores)| {
                let list: Vec<String> = cores.iter().map(ToString::to_string).collect();
                if list.is_empty() {
                    format!("{driver} not pinned")
                } else {
                    format!("{driver} {}", list.join(","))
                }
            })
            .collect();
        wrap(out, "  cores         ", &cores.join("   "));
    }
    let _ = writeln!(
        out,
        "  tls           {}",
        c.tls
            .as_deref()
            .map_or("off".to_owned(), |t| format!("on ({t})"))
    );
    if !c.uring_setup.is_empty() {
        let flags: Vec<String> = c
            .uring_setup
            .iter()
            .map(|(driver, f)| format!("{driver} {f}"))
            .collect();
        wrap(out, "  io_uring      ", &flags.join("   "));
    }
    if let Some(sq) = &c.sqpoll {
        let _ = writeln!(
            out,
            "  sqpoll        idle {} ms   SQ thread {}",
            sq.idle_ms,
            sq.cpu
                .map_or("not pinned".to_owned(), |c| format!("on core {c}"))
        );
    }
    if c.protocol.is_some() || !c.protocol_versions.is_empty() {
        let spoken: Vec<String> = c
            .protocol_versions
            .iter()
            .map(|(driver, v)| format!("{driver} v{v}"))
            .collect();
        let _ = writeln!(
            out,
            "  protocol      {}   {}",
            c.protocol
                .map_or("negotiated".to_owned(), |v| format!("v{v} asked")),
            spoken.join("   ")
        );
    }
}

fn wrap(out: &mut String, prefix: &str, text: &str) {
    let width = 100 - prefix.len();
    let mut line = String::new();
    let mut first = true;
    for word in text.split(' ') {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            let p = if first {
                prefix.to_owned()
            } else {
                " ".repeat(prefix.len())
            };
            let _ = writeln!(out, "{p}{line}");
            first = false;
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let p = if first {
            prefix.to_owned()
        } else {
            " ".repeat(prefix.len())
        };
        let _ = writeln!(out, "{p}{line}");
    }
}

/// CONFIG's rate: a constant as `N req/s`, `schedule` (shown on a line of its own), or
/// `unlimited`.
fn rate_text(c: &super::RunConfig) -> String {
    let rate = match (schedule_of(c), c.rate) {
        (Some(_), _) => "schedule".to_owned(),
        (None, Some(r)) => format!("{r:.0} req/s"),
        (None, None) => return "unlimited".to_owned(),
    };
    match c.release_grid_s {
        Some(g) if g > 0.0 => format!(
            "{rate}, released on a {} grid",
            humantime::format_duration(std::time::Duration::from_secs_f64(g))
        ),
        Some(_) => format!("{rate}, each request released at its due time"),
        None => rate,
    }
}

/// `-r` as given when it is more than a number: parts, Poisson arrivals, or several
/// machines' rates (a merged report).
fn schedule_of(c: &super::RunConfig) -> Option<&str> {
    c.rate_schedule
        .as_deref()
        .filter(|s| s.contains([':', ',', '+']) || c.rate.is_none())
}

fn log_section(out: &mut String, label: &str, samples: &[SampleReport]) {
    let _ = writeln!(out, "LOG ({label})");
    // The target column only for rate-limited runs: the schedule's mean over the interval.
    let targets = samples.iter().any(|s| s.target_rps.is_some());
    let _ = writeln!(
        out,
        "  {:>3} {:>8}{} {:>14} {:>8} {:>12} {:>12} {:>12}",
        "seg",
        "time[s]",
        if targets {
            format!(" {:>14}", "target[req/s]")
        } else {
            String::new()
        },
        "req/s",
        "errors",
        "mean[ms]",
        "p50[ms]",
        "p99[ms]"
    );
    for s in samples {
        let target = match (targets, s.target_rps) {
            (false, _) => String::new(),
            (true, Some(t)) => format!(" {t:>14.0}"),
            (true, None) => format!(" {:>14}", "-"),
        };
        let _ = writeln!(
            out,
            "  {:>3} {:>8.1}{target} {:>14.0} {:>8} {:>12.3} {:>12.3} {:>12.3}",
            s.segment + 1,
            s.start_s + s.duration_s,
            s.throughput_rps,
            s.errors,
            s.latency_mean_ns / 1e6,
            s.latency_p50_ns as f64 / 1e6,
            s.latency_p99_ns as f64 / 1e6
        );
    }
    out.push('\n');
}

/// `what` of every full sample (a partial last one under half an interval would skew it
/// and is left out, as in the report's margins); for latency figures only samples that
/// answered something.
fn per_sample(samples: &[SampleReport], what: SampleFigure) -> Vec<f64> {
    let full = samples.first().map_or(0.0, |s| s.duration_s) * 0.5;
    samples
        .iter()
        .filter(|s| s.duration_s >= full && s.duration_s > 0.0)
        .filter(|s| what == SampleFigure::Throughput || s.requests > s.errors)
        .filter_map(|s| match what {
            SampleFigure::Throughput => Some(s.throughput_rps),
            SampleFigure::MeanLatency => Some(s.latency_mean_ns),
            // Tested from the histograms (`percentile_p_value`).
            SampleFigure::Percentile(_) => None,
        })
        .collect()
}

/// Each full sample's [`TESTED_PERCENTILES`], ns, from its histogram (decoded once per
/// column); samples without a readable histogram (older reports) are left out.
fn sample_percentiles(samples: &[SampleReport]) -> Vec<[f64; TESTED_PERCENTILES.len()]> {
    let full = samples.first().map_or(0.0, |s| s.duration_s) * 0.5;
    samples
        .iter()
        .filter(|s| s.duration_s >= full && s.duration_s > 0.0 && s.requests > s.errors)
        .filter_map(|s| crate::stats::LatencyHistogram::from_base64(&s.histogram).ok())
        .filter(|h| h.count() > 0)
        .map(|h| TESTED_PERCENTILES.map(|p| h.value_at_percentile(p) as f64))
        .collect()
}

/// Per-column [`sample_percentiles`], computed on first need by one table.
type PercentileCache = Vec<Option<Vec<[f64; TESTED_PERCENTILES.len()]>>>;

/// The p-value of Welch's t-test (on batch means) of the two columns' per-sample
/// percentile `k` of [`TESTED_PERCENTILES`].
fn percentile_p_value(
    columns: &[Column<'_>],
    k: usize,
    cache: &mut PercentileCache,
) -> Option<f64> {
    if columns.len() != 2 {
        return None;
    }
    cache.resize(columns.len(), None);
    let mut series = Vec::with_capacity(2);
    for (i, (_, b)) in columns.iter().enumerate() {
        let all = cache[i].get_or_insert_with(|| sample_percentiles(&b.samples));
        series.push(all.iter().map(|p| p[k]).collect::<Vec<f64>>());
    }
    if series.iter().any(|s| s.len() < 2) {
        return None;
    }
    Some(welch_t_test(&series[0], &series[1]).p_value)
}

const LABEL_W: usize = 22;
const COL_W: usize = 24;

fn header(out: &mut String, title: &str, columns: &[Column<'_>]) {
    let _ = write!(out, "{title:<LABEL_W$}");
    for (label, _) in columns {
        let l: String = label.chars().take(COL_W - 1).collect();
        let _ = write!(out, "{l:>COL_W$}");
    }
    if columns.len() == 2 {
        let _ = write!(out, "{:>10}{:>9}", "change", "p-value");
    }
    out.push('\n');
}

fn row(out: &mut String, label: &str, cells: &[String], change: Option<f64>, p: Option<f64>) {
    let _ = write!(out, "  {label:<w$}", w = LABEL_W - 2);
    for c in cells {
        let _ = write!(out, "{c:>COL_W$}");
    }
    if cells.len() == 2 {
        match change {
            Some(ch) if ch.is_finite() => {
                let _ = write!(out, "{:>+9.1}%", ch * 100.0);
            }
            _ => {
                let _ = write!(out, "{:>10}", "");
            }
        }
        if let Some(p) = p.filter(|p| p.is_finite()) {
            let _ = write!(out, "{p:>9.3}");
        }
    }
    out.push('\n');
}

fn change_of(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| (b - a) / a)
}

/// The change of `b` from `a` for a row written with `decimals`, or none when `a` is
/// written as zero: a change from a figure the reader sees as 0.000 (an epoll-driven
/// backend's 0.0000014 `send` per request against another's 0.134) is a meaningless
/// "+9519063.1%".
fn change_from_written(a: f64, b: f64, decimals: usize) -> Option<f64> {
    let scale = 10f64.powi(i32::try_from(decimals).unwrap_or(i32::MAX));
    if (a * scale).round() == 0.0 {
        return None;
    }
    change_of(a, b)
}

fn p_value(columns: &[Column<'_>], what: SampleFigure) -> Option<f64> {
    if columns.len() != 2 {
        return None;
    }
    let a = per_sample(&columns[0].1.samples, what);
    let b = per_sample(&columns[1].1.samples, what);
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    Some(welch_t_test(&a, &b).p_value)
}

/// The per-sample figure whose p-value a row shows: the backend's, or a run statement's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tested<'a> {
    /// The backend's figure.
    Backend(SampleFigure),
    /// The figure of the run statement of this name.
    Statement(&'a str, SampleFigure),
}

/// The p-value of Welch's t-test (on batch means) of run statement `name`'s per-sample
/// `what` in two columns; `None` unless both have two or more samples that carry the
/// statement's figures (reports written before them do not).
fn statement_p_value(columns: &[Column<'_>], name: &str, what: SampleFigure) -> Option<f64> {
    let [(_, a), (_, b)] = columns else {
        return None;
    };
    let series = |r: &BackendReport| {
        let k = r.statements.iter().position(|s| s.name == name)?;
        if r.samples.iter().any(|s| s.statements.len() <= k) {
            return None;
        }
        let (throughputs, means) = super::accumulate::statement_series(&r.samples, k);
        Some(match what {
            SampleFigure::Throughput => throughputs,
            SampleFigure::MeanLatency => means,
            // A statement's samples carry no histogram: not tested.
            SampleFigure::Percentile(_) => return None,
        })
    };
    let (a, b) = (series(a)?, series(b)?);
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    Some(welch_t_test(&a, &b).p_value)
}

/// A backend's figure as a table row reads it.
type Getter<'a> = Box<dyn Fn(&BackendReport) -> Value + 'a>;

/// One row of a comparison table: what it is called and in which unit, how a backend's
/// figure is read and written, and how two columns are compared.
struct Metric<'a> {
    /// The row's name (indented when it breaks down the row above).
    name: String,
    /// The unit, written in brackets after the name ("" for none).
    unit: &'static str,
    /// A backend's figure.
    get: Getter<'a>,
    /// Decimals of the figure as written.
    decimals: usize,
    /// Whether two columns show the relative change (second vs first).
    change: bool,
    /// The per-sample figure whose p-value two columns show.
    tested: Option<Tested<'a>>,
    /// The row is shown only when this holds for some column.
    shown_if: Box<dyn Fn(&BackendReport) -> bool + 'a>,
}

impl<'a> Metric<'a> {
    /// A row without a change column.
    fn new(
        name: impl Into<String>,
        unit: &'static str,
        decimals: usize,
        get: impl Fn(&BackendReport) -> Value + 'a,
    ) -> Self {
        Metric {
            name: name.into(),
            unit,
            get: Box::new(get),
            decimals,
            change: false,
            tested: None,
            shown_if: Box::new(|_| true),
        }
    }

    /// A figure's `row`, read from the part of a backend's entry `part` picks.
    fn of<T: 'a>(row: Row<'a, T>, part: fn(&BackendReport) -> &T) -> Self {
        let (get, shown_if) = (row.get, row.shown_if);
        Metric {
            name: row.name,
            unit: row.unit,
            get: Box::new(move |b| get(part(b))),
            decimals: row.decimals,
            change: row.change,
            tested: row.tested.map(Tested::Backend),
            shown_if: Box::new(move |b| shown_if(part(b))),
        }
    }

    /// Every row of `rows`, as [`Self::of`].
    fn all<T: 'a>(rows: Vec<Row<'a, T>>, part: fn(&BackendReport) -> &T) -> Vec<Self> {
        rows.into_iter().map(|r| Self::of(r, part)).collect()
    }

    /// Two columns show the relative change.
    fn change(mut self) -> Self {
        self.change = true;
        self
    }

    /// Two columns show the change and the p-value of run statement `name`'s `figure`.
    fn tested_statement(mut self, name: &'a str, figure: SampleFigure) -> Self {
        self.change = true;
        self.tested = Some(Tested::Statement(name, figure));
        self
    }

    /// Shown only when `when` holds for some column.
    fn shown_if(mut self, when: fn(&BackendReport) -> bool) -> Self {
        self.shown_if = Box::new(when);
        self
    }

    fn label(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} [{}]", self.name, self.unit)
        }
    }
}

/// The comparison tables: a title and its rows, in the order they are printed.
fn tables<'a>(columns: &[Column<'a>]) -> Vec<(&'static str, Vec<Metric<'a>>)> {
    let mut summary = Metric::all(ThroughputFigures::rows(), |b| &b.throughput);
    summary.extend([
        Metric::new("retries", "/s", 1, |b| Value::or_missing(b.retries_per_s))
            .shown_if(|b| b.retries.is_some_and(|r| r > 0)),
        Metric::new("re-prepares", "", 0, |b| {
            b.reprepares.map_or(Value::Missing, Value::Count)
        })
        .shown_if(|b| b.reprepares.is_some_and(|r| r > 0)),
        Metric::new("tablet misroutes", "", 0, |b| {
            b.tablet_misroutes.map_or(Value::Missing, Value::Count)
        })
        .shown_if(|b| b.tablet_misroutes.is_some_and(|r| r > 0)),
    ]);
    summary.push(Metric::of(ThroughputFigures::time_row(), |b| &b.throughput));
    summary.extend([
        Metric::new("rows", "", 0, |b| {
            b.rows.map_or(Value::Missing, Value::Count)
        })
        .change()
        .shown_if(|b| b.rows.is_some()),
        Metric::new("rows", "rows/s", 0, |b| Value::or_missing(b.rows_per_s))
            .change()
            .shown_if(|b| b.rows.is_some()),
    ]);
    summary.extend(Metric::all(ServerCpuFigures::rows(), |b| &b.server_cpu));

    let latency = Metric::all(LatencyFigures::rows(), |b| &b.latency);

    let mut overhead = Metric::all(ClientCpuFigures::rows(), |b| &b.client_cpu);
    overhead.extend([Metric::new("client CPU per row", "us", 3, |b| {
        Value::or_missing(b.cpu_us_per_row)
    })
    .change()
    .shown_if(|b| b.cpu_us_per_row.is_some())]);
    overhead.extend(Metric::all(SyscallFigures::rows(), |b| &b.syscalls));
    overhead.extend(Metric::all(UringEnterFigures::rows(), |b| &b.enters));
    overhead.extend(Metric::all(IoUringFigures::rows(), |b| &b.io_uring));
    overhead.extend(Metric::all(HardwareFigures::rows(), |b| &b.hardware));
    overhead.extend(Metric::all(ContextSwitchFigures::rows(), |b| {
        &b.context_switches
    }));
    overhead.extend(Metric::all(MemoryFigures::allocation_rows(), |b| &b.memory));
    overhead.extend(Metric::all(SocketBatchingFigures::rows(), |b| {
        &b.socket_batching
    }));
    overhead.extend(Metric::all(MemoryFigures::rss_rows(), |b| &b.memory));
    // What each backend's threads did, in all, while the others' segments were measured
    // (left out of those): totals, not per request.
    type Parked = fn(&super::WhileParked) -> Value;
    let parked: [(&str, usize, Parked); 5] = [
        ("while parked: segments", 0, |p| Value::Count(p.segments)),
        ("  syscalls, in all", 0, |p| {
            p.syscalls.map_or(Value::Missing, Value::Count)
        }),
        ("    io_uring_enter", 0, |p| {
            p.syscalls_by_kind.map_or(Value::Missing, |k| {
                Value::Count(k.get(SyscallKind::IoUringEnter))
            })
        }),
        ("  context switches", 0, |p| Value::Count(p.ctx_switches)),
        ("  CPU, in all (ms)", 3, |p| Value::Num(p.cpu_s * 1e3)),
    ];
    for (label, decimals, get) in parked {
        overhead.push(
            Metric::new(label, "", decimals, move |b| {
                b.while_parked.as_ref().map_or(Value::Missing, get)
            })
            .shown_if(|b| b.while_parked.is_some()),
        );
    }
    // Where the requests went (doppio's per-node counters), when there is more than one node.
    let mut nodes: Vec<String> = columns
        .iter()
        .filter_map(|(_, b)| b.requests_by_node.as_ref())
        .flat_map(|m| m.keys().cloned())
        .collect();
    nodes.sort();
    nodes.dedup();
    if nodes.len() > 1 {
        for node in nodes {
            overhead.push(Metric::new(format!("  sent to {node}"), "", 1, move |b| {
                let Some(m) = &b.requests_by_node else {
                    return Value::Missing;
                };
                let total: u64 = m.values().sum();
                let n = m.get(&node).copied().unwrap_or(0);
                if total == 0 {
                    Value::Missing
                } else {
                    Value::Percent(100.0 * n as f64 / total as f64)
                }
            }));
        }
    }
    // Where the requests went among each node's ScyllaDB shards (doppio's per-connection
    // counters grouped by the shard each connection landed on).
    let mut shards: Vec<(String, usize)> = columns
        .iter()
        .filter_map(|(_, b)| b.requests_by_scylla_shard.as_ref())
        .flat_map(|m| {
            m.iter()
                .flat_map(|(node, c)| (0..c.len()).map(|i| (node.clone(), i)))
        })
        .collect();
    shards.sort();
    shards.dedup();
    for (node, shard) in shards {
        let label = format!("  ScyllaDB shard {shard} of {node}");
        overhead.push(Metric::new(label, "", 1, move |b| {
            let Some(counts) = b
                .requests_by_scylla_shard
                .as_ref()
                .and_then(|m| m.get(&node))
            else {
                return Value::Missing;
            };
            let total: u64 = counts.iter().sum();
            match counts.get(shard) {
                Some(&n) if total > 0 => Value::Percent(100.0 * n as f64 / total as f64),
                _ => Value::Missing,
            }
        }));
    }
    vec![
        ("SUMMARY", summary),
        ("LATENCY [ms]", latency),
        ("OVERHEAD (per request)", overhead),
    ]
}

/// The title of the waterfall table.
const WATERFALL: &str = "WATERFALL [us, mean]";

/// The waterfall table's rows: each stage's mean over the timed requests, then the timed
/// requests' mean latency (which the stages add up to) and their count. A backend without
/// stage hooks (scylla) shows its end-to-end mean latency only.
fn waterfall_metrics<'a>() -> Vec<Metric<'a>> {
    let mut rows = Metric::all(WaterfallReport::stage_rows(), |b| &b.waterfall);
    rows.push(
        Metric::new("end to end", "", 3, |b| {
            Value::Num(
                b.waterfall
                    .as_ref()
                    .map_or(b.latency.latency_ns.mean, |w| w.end_to_end.mean_ns)
                    / 1e3,
            )
        })
        .change(),
    );
    rows.extend(Metric::all(WaterfallReport::count_rows(), |b| &b.waterfall));
    rows
}

/// The title of the anatomy table.
const ANATOMY: &str = "ANATOMY [us/req]";

/// The anatomy table's rows: the client CPU it splits, every layer's part (0 where a layer
/// had no sample), what the samples stood for, and perf's own CPU.
fn anatomy_metrics<'a>() -> Vec<Metric<'a>> {
    let mut rows = vec![Metric::new("client CPU", "", 2, |b| {
        Value::Num(b.client_cpu.cpu_us_per_req)
    })
    .change()];
    rows.extend(Metric::all(AnatomyReport::rows(), |b| &b.anatomy));
    rows
}

/// Writes one table: its header, then each row shown for these columns.
fn table(out: &mut String, title: &str, metrics: &[Metric<'_>], columns: &[Column<'_>]) {
    header(out, title, columns);
    let mut percentiles = PercentileCache::new();
    for m in metrics {
        if !columns.iter().any(|(_, b)| (m.shown_if)(b)) {
            continue;
        }
        let values: Vec<Value> = columns.iter().map(|(_, b)| (m.get)(b)).collect();
        let cells: Vec<String> = values.iter().map(|v| v.text(m.decimals)).collect();
        let change = match values.as_slice() {
            [a, b] if m.change => change_from_written(a.compared(), b.compared(), m.decimals),
            _ => None,
        };
        // No p-value beside a figure a column lacks.
        let p = m
            .tested
            .filter(|_| !values.contains(&Value::Missing))
            .and_then(|t| match t {
                Tested::Backend(SampleFigure::Percentile(k)) => {
                    percentile_p_value(columns, k, &mut percentiles)
                }
                Tested::Backend(f) => p_value(columns, f),
                Tested::Statement(name, f) => statement_p_value(columns, name, f),
            });
        row(out, &m.label(), &cells, change, p);
    }
}

fn compare_sections(out: &mut String, columns: &[Column<'_>]) {
    let tables = tables(columns);
    let last = tables.len() - 1;
    for (i, (title, metrics)) in tables.iter().enumerate() {
        table(out, title, metrics, columns);
        if i == 0 {
            server_bound_note(out, columns);
        }
        // The OVERHEAD table's notes follow it before the blank line.
        if i < last {
            out.push('\n');
        }
    }
    statements_section(out, columns);
    // What could not be counted, and why: once per figure and reason, naming the columns.
    let mut notes: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for (label, b) in columns {
        let mut said: Vec<&str> = Vec::new();
        let missing = (b.syscalls.missing().into_iter())
            .chain(b.io_uring.missing())
            .chain(b.hardware.missing());
        for (what, why) in missing {
            // A reason already given for this column's other figure is not repeated.
            let Some(why) = why.as_deref().filter(|w| !said.contains(w)) else {
                continue;
            };
            said.push(why);
            match notes.iter_mut().find(|(w, r, _)| *w == what && *r == why) {
                Some((_, _, labels)) => labels.push(label),
                None => notes.push((what, why, vec![label])),
            }
        }
    }
    for (what, why, labels) in notes {
        wrap(
            out,
            "  ",
            &format!("{}: {what} not counted: {why}", labels.join(", ")),
        );
    }
    out.push('\n');
    // After OVERHEAD's notes: ANATOMY when some backend's stacks were sampled, WATERFALL
    // when some backend timed requests stage by stage.
    if columns.iter().any(|(_, b)| b.anatomy.is_some()) {
        table(out, ANATOMY, &anatomy_metrics(), columns);
        anatomy_notes(out, columns);
        out.push('\n');
    }
    if columns.iter().any(|(_, b)| b.waterfall.is_some()) {
        table(out, WATERFALL, &waterfall_metrics(), columns);
        waterfall_notes(out, columns);
        out.push('\n');
    }

    let any_errors = columns.iter().any(|(_, b)| b.throughput.errors > 0);
    let _ = writeln!(out, "ERRORS");
    if !any_errors {
        let _ = writeln!(out, "  none");
    }
    for (label, b) in columns {
        for (kind, n) in &b.throughput.errors_by_kind {
            let first = b
                .throughput
                .first_errors
                .get(kind)
                .map_or("", String::as_str);
            let line = format!("  {label}: {kind} x{n}: {first}");
            let line: String = line.chars().take(100).collect();
            let _ = writeln!(out, "{line}");
        }
        // Which statements they came from, when there are several.
        if b.statements.len() > 1 {
            for st in &b.statements {
                for (kind, n) in &st.errors_by_kind {
                    let _ = writeln!(out, "  {label} statement {}: {kind} x{n}", st.name);
                }
            }
        }
    }
    out.push('\n');
}

/// Under WATERFALL: what the stages are, and which backends have none.
fn waterfall_notes(out: &mut String, columns: &[Column<'_>]) {
    let figures: Vec<(&str, Option<&WaterfallReport>)> = columns
        .iter()
        .map(|(l, b)| (l.as_str(), b.waterfall.as_ref()))
        .collect();
    for (prefix, note) in WaterfallReport::notes(&figures) {
        wrap(out, prefix, &note);
    }
}

/// Under ANATOMY: how the stacks were sampled, and a warning where the samples stood for
/// much less CPU than was measured (threads the sampling missed, samples lost).
fn anatomy_notes(out: &mut String, columns: &[Column<'_>]) {
    let figures: Vec<(&str, Option<&AnatomyReport>, f64)> = columns
        .iter()
        .map(|(l, b)| (l.as_str(), b.anatomy.as_ref(), b.client_cpu.cpu_us_per_req))
        .collect();
    for (prefix, note) in AnatomyReport::notes(&figures) {
        wrap(out, prefix, &note);
    }
}

/// Under SUMMARY: when the node was saturated, throughput is the node's.
fn server_bound_note(out: &mut String, columns: &[Column<'_>]) {
    let named: Vec<(&str, &BackendReport)> =
        columns.iter().map(|(l, b)| (l.as_str(), *b)).collect();
    let bound = super::verdict::server_bound(&named);
    if bound.is_empty() {
        return;
    }
    wrap(
        out,
        "  ",
        &format!(
            "throughput is server-bound: the node was saturated while {} ran, so it measures \
             the node, not the driver; compare the client-side figures (OVERHEAD: client CPU \
             and syscalls per request)",
            bound.join(", ")
        ),
    );
}

/// Whether the STATEMENTS section has anything to say: some backend ran several statements,
/// a sequence or a batch, or a conditional statement (its not-applied count).
fn several_statements(columns: &[Column<'_>]) -> bool {
    columns.iter().any(|(_, b)| {
        b.statements.len() > 1
            || b.statements
                .iter()
                .any(|s| s.kind.is_some() || s.not_applied.is_some())
    })
}

/// The notes under the STATEMENTS tables: what a sequence's or a batch's entry counts, and
/// each conditional statement's updates not applied, per backend.
fn statement_notes(out: &mut String, columns: &[Column<'_>]) {
    let mut lines = Vec::new();
    if let Some((_, b)) = columns.first() {
        for st in &b.statements {
            match st.kind.as_deref() {
                Some("sequence") => lines.push(format!(
                    "  {}: sequence (requests: its iterations; latency: the whole sequence, \
                     from the iteration's due time; errors: iterations stopped by a step)",
                    st.name
                )),
                Some(kind) => lines.push(format!(
                    "  {}: {} (one request per iteration)",
                    st.name,
                    kind.replace('_', " ")
                )),
                None => {}
            }
        }
    }
    for (label, b) in columns {
        for st in &b.statements {
            if let Some(n) = st.not_applied {
                let succeeded = st.requests.saturating_sub(st.errors);
                lines.push(format!(
                    "  {label} {}: {n} of {succeeded} conditional updates not applied",
                    st.name
                ));
            }
        }
    }
    if !lines.is_empty() {
        out.push('\n');
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
    }
}

/// The STATEMENTS section (see the module's description), after the OVERHEAD notes.
fn statements_section(out: &mut String, columns: &[Column<'_>]) {
    if !several_statements(columns) {
        return;
    }
    out.push('\n');
    match columns {
        [(label, b)] => statement_lines(out, label, b),
        _ => statement_tables(out, columns),
    }
    statement_notes(out, columns);
}

/// `name` cut to `width` characters (the last one a `~` when cut).
fn fit(name: &str, width: usize) -> String {
    if name.chars().count() > width {
        format!("{}~", name.chars().take(width - 1).collect::<String>())
    } else {
        name.to_owned()
    }
}

/// One backend's statements, one line each.
fn statement_lines(out: &mut String, label: &str, b: &BackendReport) {
    let _ = writeln!(out, "STATEMENTS ({label})");
    let _ = writeln!(
        out,
        "  {:<16}{:>7}{:>10}{:>7}{:>18}{:>7}{:>9}{:>8}{:>8}",
        "", "weight", "requests", "share", "throughput", "errors", "mean", "p50", "p99"
    );
    let _ = writeln!(
        out,
        "  {:<16}{:>7}{:>10}{:>7}{:>18}{:>7}{:>9}{:>8}{:>8}",
        "", "[%]", "", "[%]", "[req/s]", "", "[ms]", "[ms]", "[ms]"
    );
    for st in &b.statements {
        // In ms; `n/a` when none of its requests succeeded (nothing was measured).
        let latency = |ns: f64| {
            if st.requests > st.errors {
                format!("{:.3}", ns / 1e6)
            } else {
                "n/a".to_owned()
            }
        };
        let _ = writeln!(
            out,
            "  {:<16}{:>7.1}{:>10}{:>7.1}{:>18}{:>7}{:>9}{:>8}{:>8}",
            fit(&st.name, 15),
            st.weight_share * 100.0,
            st.requests,
            st.request_share * 100.0,
            format!("{:.0} ± {:.0}", st.throughput_rps, st.throughput_margin_rps),
            st.errors,
            latency(st.latency_ns.mean),
            latency(st.latency_ns.p50 as f64),
            latency(st.latency_ns.p99 as f64),
        );
    }
}

/// Every statement's table, the backends side by side (with the change of the second
/// relative to the first when there are two); statements in the order the backends list
/// them, matched by name.
fn statement_tables(out: &mut String, columns: &[Column<'_>]) {
    let mut names: Vec<&str> = Vec::new();
    for (_, b) in columns {
        for st in &b.statements {
            if !names.contains(&st.name.as_str()) {
                names.push(&st.name);
            }
        }
    }
    for (i, name) in names.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let metrics = statement_metrics(name);
        table(
            out,
            &format!("STATEMENT {}", fit(name, 11)),
            &metrics,
            columns,
        );
    }
}

/// The rows of one statement's table.
fn statement_metrics(name: &str) -> Vec<Metric<'_>> {
    fn ms(ns: f64) -> f64 {
        ns / 1e6
    }
    // The statement's figure of a backend, `n/a` where the backend did not run it.
    let of = move |f: fn(&StatementReport) -> Value| {
        move |b: &BackendReport| {
            b.statements
                .iter()
                .find(|s| s.name == name)
                .map_or(Value::Missing, f)
        }
    };
    // Its latency figure in ms, `n/a` when none of its requests succeeded (nothing was
    // measured).
    let latency = move |f: fn(&LatencySummary) -> u64| {
        move |b: &BackendReport| match b.statements.iter().find(|s| s.name == name) {
            Some(s) if s.requests > s.errors => Value::Num(ms(f(&s.latency_ns) as f64)),
            _ => Value::Missing,
        }
    };
    let mean = move |b: &BackendReport| match b.statements.iter().find(|s| s.name == name) {
        Some(s) if s.requests > s.errors => {
            Value::Margin(ms(s.latency_ns.mean), ms(s.latency_ns.mean_margin))
        }
        _ => Value::Missing,
    };
    vec![
        Metric::new(
            "throughput",
            "req/s",
            0,
            of(|s| Value::Margin(s.throughput_rps, s.throughput_margin_rps)),
        )
        .tested_statement(name, SampleFigure::Throughput),
        Metric::new("requests", "", 0, of(|s| Value::Count(s.requests))).change(),
        Metric::new(
            "  share",
            "",
            1,
            of(|s| Value::Percent(s.request_share * 100.0)),
        ),
        Metric::new(
            "  weight",
            "",
            1,
            of(|s| Value::Percent(s.weight_share * 100.0)),
        ),
        Metric::new("errors", "", 0, of(|s| Value::Count(s.errors))),
        Metric::new(
            "rows",
            "",
            0,
            of(|s| s.rows.map_or(Value::Missing, Value::Count)),
        )
        .change()
        .shown_if(|b| b.rows.is_some()),
        Metric::new("mean", "ms", 3, mean).tested_statement(name, SampleFigure::MeanLatency),
        Metric::new("p50", "ms", 3, latency(|l| l.p50)).change(),
        Metric::new("p99", "ms", 3, latency(|l| l.p99)).change(),
        Metric::new("p99.9", "ms", 3, latency(|l| l.p999)).change(),
        Metric::new("max", "ms", 3, latency(|l| l.max)).change(),
    ]
}

fn notes_section(out: &mut String, r: &Report) {
    if r.warnings.is_empty() && r.fatal_error.is_none() {
        return;
    }
    let _ = writeln!(out, "NOTES");
    for w in &r.warnings {
        wrap(out, "  warning: ", w);
    }
    if let Some(e) = &r.fatal_error {
        wrap(out, "  FATAL: ", e);
    }
    out.push('\n');
}

/// A merged report's per-machine figures (`doppio merge` keeps overheads per machine): one
/// line per machine and backend.
fn machines_section(out: &mut String, columns: &[Column<'_>]) {
    if columns.iter().all(|(_, b)| b.machines.is_none()) {
        return;
    }
    let _ = writeln!(
        out,
        "MACHINES                    requests  throughput [req/s]  CPU/req [us]  syscalls/req  allocs/req"
    );
    let opt =
        |x: Option<f64>, digits: usize| x.map_or("n/a".to_owned(), |v| format!("{v:.digits$}"));
    for (label, b) in columns {
        for m in b.machines.iter().flatten() {
            // The file's name, not its folder: the folders are usually the same.
            let file = std::path::Path::new(&m.file)
                .file_name()
                .map_or(m.file.clone(), |f| f.to_string_lossy().into_owned());
            let name = format!("{label} {file}");
            let name = if name.chars().count() > 26 {
                format!("{}~", name.chars().take(25).collect::<String>())
            } else {
                name
            };
            let _ = writeln!(
                out,
                "  {name:<26}{:>10}{:>20.0}{:>14.2}{:>14}{:>12}",
                m.requests,
                m.throughput_rps,
                m.cpu_us_per_req,
                opt(m.syscalls_per_req, 3),
                opt(m.allocations_per_req, 2),
            );
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::process_cost::{ByKind, Cost, IoUringOps};
    use crate::report::{BackendRun, SampleStatement};

    /// A backend's report with every figure the comparison tables show set to a value
    /// derived from `k` (so two columns differ), and per-sample figures for the p-values.
    fn fixture(driver: &str, k: f64, counted: bool) -> BackendReport {
        let mut b = BackendRun::default().report(driver);
        b.throughput.throughput_rps = 15_000.0 * k;
        b.throughput.throughput_margin_rps = 310.6 * k;
        b.throughput.requests = (45_237.0 * k) as u64;
        b.throughput.errors = if counted { 3 } else { 0 };
        if counted {
            b.throughput.errors_by_kind.insert("timeout".into(), 2);
            b.throughput.errors_by_kind.insert("overloaded".into(), 1);
            b.throughput
                .first_errors
                .insert("timeout".into(), "request timed out after 5 s".into());
        }
        b.throughput.elapsed_s = 3.01 * k;
        b.client_cpu.cpu_us_per_req = 5.55 * k;
        b.client_cpu.cpu_user_us_per_req = 1.78 * k;
        b.client_cpu.cpu_sys_us_per_req = 3.77 * k;
        b.context_switches.ctx_switches_per_req = 0.0123 * k;
        b.context_switches.sleeps_per_req = Some(0.0101 * k);
        b.memory.peak_rss_bytes = (15.9 * k * (1 << 20) as f64) as u64;
        let ms = |x: f64| (x * 1e6 * k) as u64;
        b.latency.latency_ns = LatencySummary {
            mean: 1.234e6 * k,
            mean_margin: 0.056e6 * k,
            min: ms(0.1),
            p25: ms(0.5),
            p50: ms(1.0),
            p75: ms(1.5),
            p90: ms(2.0),
            p95: ms(2.5),
            p99: ms(4.0),
            p999: ms(8.0),
            p9999: ms(16.0),
            max: ms(32.0),
        };
        b.latency.service_time_ns = LatencySummary {
            p50: ms(0.9),
            p99: ms(3.5),
            ..LatencySummary::default()
        };
        if counted {
            b.syscalls.syscalls_per_req = Some(0.985 * k);
            b.syscalls.syscalls_by_kind_per_req =
                Some(ByKind::from_fn(|s| (s as usize + 1) as f64 * k / 10.0));
            b.io_uring.io_uring_submitted_per_req = Some(0.25 * k);
            b.io_uring.io_uring_completed_per_req = Some(0.5 * k);
            b.memory.allocations_per_req = Some(0.48 * k);
            b.socket_batching.requests_per_flush = Some(256.0 * k);
            b.socket_batching.requests_per_read = Some(12.5 * k);
            b.requests_by_node = Some(
                [
                    ("127.0.0.1:9042", 600),
                    ("127.0.0.2:9042", 300),
                    ("127.0.0.3:9042", 100),
                ]
                .into_iter()
                .map(|(n, c)| (n.to_owned(), c))
                .collect(),
            );
        } else {
            b.syscalls.syscalls_unavailable = Some("perf_event_paranoid is 3".into());
            b.syscalls.syscall_kinds_unavailable = Some("perf_event_paranoid is 3".into());
            b.io_uring.io_uring_unavailable = Some("no io_uring tracepoints".into());
        }
        b.samples = (0..6)
            .map(|i| SampleReport {
                segment: 0,
                start_s: f64::from(i),
                duration_s: 1.0,
                requests: 15_000,
                errors: 0,
                throughput_rps: b.throughput.throughput_rps + f64::from(i % 3) * 100.0,
                latency_mean_ns: b.latency.latency_ns.mean + f64::from(i % 2) * 1e4,
                latency_p50_ns: 0,
                latency_p99_ns: 0,
                histogram: String::new(),
                target_rps: None,
                start_unix_s: None,
                statements: Vec::new(),
                requests_by_node: Default::default(),
                tablet_misroutes: None,
            })
            .collect();
        b
    }

    /// `fixture` with 12 samples whose histograms hold latencies spread around `scale` ms
    /// (a different spread per sample, so that per-sample percentiles vary).
    fn with_histograms(driver: &str, scale: f64) -> BackendReport {
        let mut b = fixture(driver, 1.0, true);
        b.samples = (0..12)
            .map(|i| {
                let mut h = crate::stats::LatencyHistogram::new();
                for v in 1..=1000u64 {
                    let jitter = 1.0 + f64::from(i % 4) * 0.01;
                    h.record((v as f64 * 2_000.0 * scale * jitter) as u64);
                }
                SampleReport {
                    segment: 0,
                    start_s: f64::from(i),
                    duration_s: 1.0,
                    requests: 1000,
                    errors: 0,
                    throughput_rps: 1000.0,
                    latency_mean_ns: h.mean(),
                    latency_p50_ns: h.value_at_percentile(50.0),
                    latency_p99_ns: h.value_at_percentile(99.0),
                    histogram: h.to_base64(),
                    target_rps: None,
                    start_unix_s: None,
                    statements: Vec::new(),
                    requests_by_node: Default::default(),
                    tablet_misroutes: None,
                }
            })
            .collect();
        b
    }

    /// The p-value column of the LATENCY row `label`, if it has one.
    fn p_of(out: &str, label: &str) -> Option<f64> {
        let section = out.split("LATENCY [ms]").nth(1)?;
        let line = section
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{label} ")))?;
        let cells: Vec<&str> = line.split_whitespace().collect();
        // label, value, value, change, p-value
        (cells.len() == 5).then(|| cells[4].parse().ok())?
    }

    #[test]
    fn every_tested_latency_percentile_gets_a_p_value_from_the_samples_histograms() {
        let a = with_histograms("doppio", 1.0);
        let slower = with_histograms("scylla", 1.25);
        let same = with_histograms("scylla", 1.0);
        for (b, differ) in [(&slower, true), (&same, false)] {
            let mut out = String::new();
            compare_sections(&mut out, &[("doppio".into(), &a), ("scylla".into(), b)]);
            for label in ["25", "50", "75", "90", "95", "99", "99.9", "99.99"] {
                let p = p_of(&out, label).unwrap_or_else(|| panic!("row {label}: {out}"));
                if differ {
                    assert!(p < 0.001, "{label}: p {p} for latencies 25 % higher");
                } else {
                    assert!(p > 0.5, "{label}: p {p} for the same latencies");
                }
            }
            // min and max are single values: no test.
            assert_eq!(p_of(&out, "min"), None, "{out}");
            assert_eq!(p_of(&out, "max"), None, "{out}");
        }
    }

    #[test]
    fn a_backend_that_measured_nothing_is_not_run_never_a_column_of_zeros() {
        let ran = fixture("doppio", 1.0, true);
        let mut stopped = fixture("scylla", 1.0, false);
        stopped.throughput.requests = 0;
        let backends = std::collections::BTreeMap::from([
            ("doppio".to_owned(), ran),
            ("scylla".to_owned(), stopped),
        ]);
        let drivers = ["doppio", "doppio-uring", "scylla"].map(String::from);
        let (columns, not_run) = measured_columns(&drivers, &backends);
        let names: Vec<&str> = columns.iter().map(|(d, _)| d.as_str()).collect();
        assert_eq!(names, ["doppio"]);
        assert_eq!(not_run, ["doppio-uring", "scylla"]);
    }

    #[test]
    fn comparison_of_two_backends_is_pinned() {
        let (a, b) = (fixture("doppio", 1.0, true), fixture("scylla", 1.25, false));
        let mut out = String::new();
        compare_sections(&mut out, &[("doppio".into(), &a), ("scylla".into(), &b)]);
        assert_golden(&out, GOLDEN_TWO);
    }

    #[test]
    fn comparison_of_one_and_of_three_backends_is_pinned() {
        let a = fixture("doppio", 1.0, true);
        let b = fixture("doppio-uring", 0.5, true);
        let c = fixture("scylla", 2.0, false);
        let mut one = String::new();
        compare_sections(&mut one, &[("doppio".into(), &a)]);
        assert_golden(&one, GOLDEN_ONE);
        let mut three = String::new();
        compare_sections(
            &mut three,
            &[
                ("doppio".into(), &a),
                ("doppio-uring".into(), &b),
                ("scylla".into(), &c),
            ],
        );
        assert_golden(&three, GOLDEN_THREE);
    }

    /// A VERDICT of three comparisons (client CPU, syscalls and throughput, the last two
    /// ties): the CPU ratio's raw p of 0.0065 is 0.019 once adjusted, no difference shown,
    /// and a line says for how many comparisons the p-values are adjusted.
    #[test]
    fn the_verdict_gives_holm_adjusted_p_values_and_says_so() {
        use crate::report::{RunConfig, SegmentFigures};
        let mut r = Report {
            config: RunConfig {
                drivers: vec!["scylla".into(), "doppio-uring".into()],
                order: Some("rotate".into()),
                ..RunConfig::default()
            },
            ..Report::default()
        };
        let cpu = [[3.0; 6], [3.3, 3.1, 3.25, 3.25, 3.1, 3.3]];
        for (k, name) in ["scylla", "doppio-uring"].into_iter().enumerate() {
            let mut b = BackendRun::default().report(name);
            b.throughput.requests = 6000;
            b.segments = (0..6)
                .map(|round| SegmentFigures {
                    round,
                    position: (round + k) % 2,
                    requests: 1000,
                    elapsed_s: 1.0,
                    throughput_rps: 1e5,
                    cpu_us_per_req: Some(cpu[k][round]),
                    syscalls_per_req: Some(0.5),
                    ..SegmentFigures::default()
                })
                .collect();
            r.backends.insert(name.into(), b);
        }
        let mut out = String::new();
        verdict_section(&mut out, &r);
        assert_golden(
            &out,
            &[
                "VERDICT  (6 rounds paired, order rotated; each ratio is the geometric mean of the rounds' ratios,",
                "         adjusted for a drift within rounds, with its 99 % interval and the p-value of a paired",
                "         t-test)",
                "  client CPU per request: no difference shown between doppio-uring and scylla (1.1x, 99 % interval",
                "  1.0-1.1, p = 0.019)",
                "  syscalls per request: no difference shown between doppio-uring and scylla (1.0x, 99 % interval",
                "  1.0-1.0, p = 1.000)",
                "  throughput: no difference shown between doppio-uring and scylla (1.0x, 99 % interval 1.0-1.0, p =",
                "  1.000)",
                "  p-values adjusted (Holm) for the 3 comparisons above (the intervals are not: each is its",
                "  comparison's own)",
                "",
            ],
        );
    }

    /// Compares rendered text with golden lines (every line, its trailing spaces included,
    /// and the final newline).
    fn assert_golden(out: &str, golden: &[&str]) {
        assert_eq!(out, golden.join("\n") + "\n", "got:\n{out}");
    }

    const GOLDEN_TWO: &[&str] = &[
        "SUMMARY                                 doppio                  scylla    change  p-value",
        "  throughput [req/s]               15000 ± 311             18750 ± 388    +25.0%    0.000",
        "  requests                               45237                   56546    +25.0%",
        "  errors                                     3                       0          ",
        "  measured time [s]                       3.01                    3.76          ",
        "",
        "LATENCY [ms]                            doppio                  scylla    change  p-value",
        "  mean                           1.234 ± 0.056           1.542 ± 0.070    +25.0%    0.000",
        "  min                                    0.100                   0.125    +25.0%",
        "  25                                     0.500                   0.625    +25.0%",
        "  50                                     1.000                   1.250    +25.0%",
        "  75                                     1.500                   1.875    +25.0%",
        "  90                                     2.000                   2.500    +25.0%",
        "  95                                     2.500                   3.125    +25.0%",
        "  99                                     4.000                   5.000    +25.0%",
        "  99.9                                   8.000                  10.000    +25.0%",
        "  99.99                                 16.000                  20.000    +25.0%",
        "  max                                   32.000                  40.000    +25.0%",
        "  service time p50                       0.900                   1.125    +25.0%",
        "  service time p99                       3.500                   4.375    +25.0%",
        "",
        "OVERHEAD (per request)                  doppio                  scylla    change  p-value",
        "  client CPU [us]                         5.55                    6.94    +25.0%",
        "    user / sys [us]                1.78 / 3.77             2.23 / 4.71          ",
        "  syscalls                               0.985                     n/a          ",
        "    io_uring_enter                       0.100                     n/a          ",
        "    send                                 0.200                     n/a          ",
        "    recv                                 0.300                     n/a          ",
        "    epoll                                0.400                     n/a          ",
        "    futex                                0.500                     n/a          ",
        "    membarrier                           0.600                     n/a          ",
        "    other                                0.700                     n/a          ",
        "  io_uring submitted                     0.250                     n/a          ",
        "  io_uring completed                     0.500                     n/a          ",
        "  context switches                       0.012                   0.015    +25.0%",
        "    sleeps (wake-ups)                    0.010                   0.013    +25.0%",
        "  heap allocations                        0.48                     n/a          ",
        "  requests per write                     256.0                     n/a          ",
        "  requests per read                       12.5                     n/a          ",
        "  peak RSS [MiB]                          15.9                    19.9          ",
        "    sent to 127.0.0.1:9042                  60.0 %                     n/a          ",
        "    sent to 127.0.0.2:9042                  30.0 %                     n/a          ",
        "    sent to 127.0.0.3:9042                  10.0 %                     n/a          ",
        "  scylla: syscalls not counted: perf_event_paranoid is 3",
        "  scylla: io_uring operations not counted: no io_uring tracepoints",
        "",
        "ERRORS",
        "  doppio: overloaded x1: ",
        "  doppio: timeout x2: request timed out after 5 s",
        "",
    ];

    const GOLDEN_ONE: &[&str] = &[
        "SUMMARY                                 doppio",
        "  throughput [req/s]               15000 ± 311",
        "  requests                               45237",
        "  errors                                     3",
        "  measured time [s]                       3.01",
        "",
        "LATENCY [ms]                            doppio",
        "  mean                           1.234 ± 0.056",
        "  min                                    0.100",
        "  25                                     0.500",
        "  50                                     1.000",
        "  75                                     1.500",
        "  90                                     2.000",
        "  95                                     2.500",
        "  99                                     4.000",
        "  99.9                                   8.000",
        "  99.99                                 16.000",
        "  max                                   32.000",
        "  service time p50                       0.900",
        "  service time p99                       3.500",
        "",
        "OVERHEAD (per request)                  doppio",
        "  client CPU [us]                         5.55",
        "    user / sys [us]                1.78 / 3.77",
        "  syscalls                               0.985",
        "    io_uring_enter                       0.100",
        "    send                                 0.200",
        "    recv                                 0.300",
        "    epoll                                0.400",
        "    futex                                0.500",
        "    membarrier                           0.600",
        "    other                                0.700",
        "  io_uring submitted                     0.250",
        "  io_uring completed                     0.500",
        "  context switches                       0.012",
        "    sleeps (wake-ups)                    0.010",
        "  heap allocations                        0.48",
        "  requests per write                     256.0",
        "  requests per read                       12.5",
        "  peak RSS [MiB]                          15.9",
        "    sent to 127.0.0.1:9042                  60.0 %",
        "    sent to 127.0.0.2:9042                  30.0 %",
        "    sent to 127.0.0.3:9042                  10.0 %",
        "",
        "ERRORS",
        "  doppio: overloaded x1: ",
        "  doppio: timeout x2: request timed out after 5 s",
        "",
    ];

    const GOLDEN_THREE: &[&str] = &[
        "SUMMARY                                 doppio            doppio-uring                  scylla",
        "  throughput [req/s]               15000 ± 311              7500 ± 155             30000 ± 621",
        "  requests                               45237                   22618                   90474",
        "  errors                                     3                       3                       0",
        "  measured time [s]                       3.01                    1.50                    6.02",
        "",
        "LATENCY [ms]                            doppio            doppio-uring                  scylla",
        "  mean                           1.234 ± 0.056           0.617 ± 0.028           2.468 ± 0.112",
        "  min                                    0.100                   0.050                   0.200",
        "  25                                     0.500                   0.250                   1.000",
        "  50                                     1.000                   0.500                   2.000",
        "  75                                     1.500                   0.750                   3.000",
        "  90                                     2.000                   1.000                   4.000",
        "  95                                     2.500                   1.250                   5.000",
        "  99                                     4.000                   2.000                   8.000",
        "  99.9                                   8.000                   4.000                  16.000",
        "  99.99                                 16.000                   8.000                  32.000",
        "  max                                   32.000                  16.000                  64.000",
        "  service time p50                       0.900                   0.450                   1.800",
        "  service time p99                       3.500                   1.750                   7.000",
        "",
        "OVERHEAD (per request)                  doppio            doppio-uring                  scylla",
        "  client CPU [us]                         5.55                    2.77                   11.10",
        "    user / sys [us]                1.78 / 3.77             0.89 / 1.89             3.56 / 7.54",
        "  syscalls                               0.985                   0.492                     n/a",
        "    io_uring_enter                       0.100                   0.050                     n/a",
        "    send                                 0.200                   0.100                     n/a",
        "    recv                                 0.300                   0.150                     n/a",
        "    epoll                                0.400                   0.200                     n/a",
        "    futex                                0.500                   0.250                     n/a",
        "    membarrier                           0.600                   0.300                     n/a",
        "    other                                0.700                   0.350                     n/a",
        "  io_uring submitted                     0.250                   0.125                     n/a",
        "  io_uring completed                     0.500                   0.250                     n/a",
        "  context switches                       0.012                   0.006                   0.025",
        "    sleeps (wake-ups)                    0.010                   0.005                   0.020",
        "  heap allocations                        0.48                    0.24                     n/a",
        "  requests per write                     256.0                   128.0                     n/a",
        "  requests per read                       12.5                     6.2                     n/a",
        "  peak RSS [MiB]                          15.9                     7.9                    31.8",
        "    sent to 127.0.0.1:9042                  60.0 %                  60.0 %                     n/a",
        "    sent to 127.0.0.2:9042                  30.0 %                  30.0 %                     n/a",
        "    sent to 127.0.0.3:9042                  10.0 %                  10.0 %                     n/a",
        "  scylla: syscalls not counted: perf_event_paranoid is 3",
        "  scylla: io_uring operations not counted: no io_uring tracepoints",
        "",
        "ERRORS",
        "  doppio: overloaded x1: ",
        "  doppio: timeout x2: request timed out after 5 s",
        "  doppio-uring: overloaded x1: ",
        "  doppio-uring: timeout x2: request timed out after 5 s",
        "",
    ];

    /// A backend's report of 1000 requests of two statements: `read` (weight 3) and `write`
    /// (weight 1; every one of its requests failed when `failing`), figures scaled by `k`.
    fn with_statements(driver: &str, k: f64, failing: bool) -> BackendReport {
        let mut b = BackendRun::default().report(driver);
        let statement = |name: &str, weight: f64, requests: u64, errors: u64| StatementReport {
            kind: None,
            not_applied: None,
            name: name.into(),
            cql: format!("{name} CQL"),
            weight,
            weight_share: weight / 4.0,
            requests,
            request_share: requests as f64 / 1000.0,
            throughput_rps: requests as f64 * k,
            throughput_margin_rps: 12.0,
            errors,
            errors_by_kind: if errors > 0 {
                [("overloaded".to_owned(), errors)].into()
            } else {
                Default::default()
            },
            rows: Some(requests - errors),
            latency_ns: LatencySummary {
                mean: 1.5e6 * k,
                mean_margin: 1e4,
                p50: (1e6 * k) as u64,
                p99: (4e6 * k) as u64,
                p999: (8e6 * k) as u64,
                max: (9e6 * k) as u64,
                ..LatencySummary::default()
            },
            histogram: String::new(),
        };
        b.throughput.requests = 1000;
        b.throughput.errors = if failing { 250 } else { 0 };
        b.throughput.errors_by_kind = [("overloaded".to_owned(), b.throughput.errors)].into();
        b.rows = Some(b.throughput.requests - b.throughput.errors);
        b.statements = vec![
            statement("read", 3.0, 750, 0),
            statement("write", 1.0, 250, if failing { 250 } else { 0 }),
        ];
        b
    }

    /// `got` is `want`, line by line, trailing spaces aside.
    fn assert_lines(got: &[&str], want: &[&str]) {
        let got: Vec<&str> = got.iter().map(|l| l.trim_end()).collect();
        assert_eq!(got, want, "got:\n{}", got.join("\n"));
    }

    #[test]
    fn statements_get_a_line_each_for_one_backend_and_side_by_side_tables_for_two() {
        let a = with_statements("doppio", 1.0, true);
        let mut out = String::new();
        compare_sections(&mut out, &[("doppio".into(), &a)]);
        let section: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.starts_with("STATEMENTS"))
            .take(5)
            .collect();
        assert_lines(
            &section,
            &[
                "STATEMENTS (doppio)",
                "                   weight  requests  share        throughput errors     mean     p50     p99",
                "                      [%]              [%]           [req/s]            [ms]    [ms]    [ms]",
                "  read               75.0       750   75.0          750 ± 12      0    1.500   1.000   4.000",
                "  write              25.0       250   25.0          250 ± 12    250      n/a     n/a     n/a",
            ],
        );
        assert!(
            out.contains("  doppio statement write: overloaded x250"),
            "{out}"
        );
        assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");

        let b = with_statements("scylla", 2.0, false);
        let mut out = String::new();
        compare_sections(&mut out, &[("doppio".into(), &a), ("scylla".into(), &b)]);
        let write: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.starts_with("STATEMENT write"))
            .take(12)
            .collect();
        assert_lines(
            &write,
            &[
                "STATEMENT write                         doppio                  scylla    change  p-value",
                "  throughput [req/s]                  250 ± 12                500 ± 12   +100.0%",
                "  requests                                 250                     250     +0.0%",
                "    share                               25.0 %                  25.0 %",
                "    weight                              25.0 %                  25.0 %",
                "  errors                                   250                       0",
                "  rows                                       0                     250",
                "  mean [ms]                                n/a           3.000 ± 0.010",
                "  p50 [ms]                                 n/a                   2.000",
                "  p99 [ms]                                 n/a                   8.000",
                "  p99.9 [ms]                               n/a                  16.000",
                "  max [ms]                                 n/a                  18.000",
            ],
        );
        assert!(out.contains("STATEMENT read "), "{out}");
        // With per-sample figures of the statements, their throughput and mean latency get
        // a p-value: read's throughput doubled in every sample (p < 0.001), its per-sample
        // mean latency did not change at all (p = 1); none beside an n/a (write's mean).
        let with_samples = |b: &BackendReport, k: f64| {
            let mut b = b.clone();
            b.samples = (0..16)
                .map(|i| SampleReport {
                    segment: 0,
                    start_s: f64::from(i),
                    duration_s: 1.0,
                    requests: 1000,
                    errors: 0,
                    throughput_rps: 1000.0,
                    latency_mean_ns: 1e6,
                    latency_p50_ns: 0,
                    latency_p99_ns: 0,
                    histogram: String::new(),
                    target_rps: None,
                    start_unix_s: None,
                    statements: vec![
                        SampleStatement {
                            requests: 750,
                            errors: 0,
                            throughput_rps: 750.0 * k + f64::from(i % 4),
                            latency_mean_ns: 1e6,
                        },
                        SampleStatement {
                            requests: 250,
                            errors: 0,
                            throughput_rps: 250.0,
                            latency_mean_ns: 2e6,
                        },
                    ],
                    requests_by_node: Default::default(),
                    tablet_misroutes: None,
                })
                .collect();
            b
        };
        let (a2, b2) = (with_samples(&a, 1.0), with_samples(&b, 2.0));
        let mut out = String::new();
        compare_sections(&mut out, &[("doppio".into(), &a2), ("scylla".into(), &b2)]);
        let row = |table: &str, label: &str| {
            out.lines()
                .skip_while(|l| !l.starts_with(table))
                .find(|l| l.starts_with(label))
                .unwrap()
                .to_owned()
        };
        let p = |line: String| {
            line.split_whitespace()
                .last()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        };
        assert!(p(row("STATEMENT read", "  throughput")) < 0.001, "{out}");
        assert_eq!(p(row("STATEMENT read", "  mean")), 1.0, "{out}");
        assert!(
            row("STATEMENT write", "  mean")
                .trim_end()
                .ends_with("± 0.010"),
            "{out}"
        );
        // One statement: nothing beyond the totals.
        let mut single = with_statements("doppio", 1.0, false);
        single.statements.truncate(1);
        let mut out = String::new();
        compare_sections(&mut out, &[("doppio".into(), &single)]);
        assert!(!out.contains("STATEMENT"), "{out}");
    }

    #[test]
    fn overhead_shows_syscalls_by_kind_and_io_uring_ops_or_says_why_not() {
        let mut counted = BackendRun::default();
        counted.add_cost(&Cost {
            syscalls: Some(28),
            syscalls_by_kind: Some(ByKind::from_fn(|k| k as u64 + 1)),
            io_uring: Some(IoUringOps {
                submitted: 5,
                completed: 4,
            }),
            ..Cost::default()
        });
        let counted = counted.report("doppio");
        // Syscalls counted, not by kind; no io_uring tracepoints.
        let mut partial = BackendRun::default();
        partial.add_cost(&Cost {
            syscalls: Some(28),
            syscall_kinds_unavailable: Some("filter refused".into()),
            io_uring_unavailable: Some("no io_uring tracepoints".into()),
            ..Cost::default()
        });
        let partial = partial.report("scylla");
        let mut out = String::new();
        compare_sections(
            &mut out,
            &[("doppio".into(), &counted), ("scylla".into(), &partial)],
        );
        for kind in SyscallKind::ALL {
            let line = out
                .lines()
                .find(|l| l.starts_with(&format!("    {} ", kind.name())))
                .unwrap_or_else(|| panic!("no row for {kind:?} in\n{out}"));
            assert!(line.contains("n/a"), "{line}");
        }
        for label in ["  io_uring submitted", "  io_uring completed"] {
            let line = out.lines().find(|l| l.starts_with(label)).unwrap();
            assert!(line.contains("n/a"), "{line}");
        }
        assert!(out.contains("scylla: syscalls by kind not counted: filter refused"));
        assert!(out.contains("scylla: io_uring operations not counted: no io_uring tracepoints"));

        // Nothing counted at all: one reason, not three, and no rows for kinds or io_uring.
        let mut none = BackendRun::default();
        let why = Some("no tracefs".to_owned());
        none.add_cost(&Cost {
            syscalls_unavailable: why.clone(),
            syscall_kinds_unavailable: why.clone(),
            io_uring_unavailable: why,
            ..Cost::default()
        });
        let none = none.report("doppio");
        let mut out = String::new();
        compare_sections(&mut out, &[("doppio".into(), &none)]);
        assert_eq!(out.matches("no tracefs").count(), 1, "{out}");
        assert!(!out.contains("io_uring_enter"), "{out}");
        assert!(!out.contains("io_uring submitted"), "{out}");
    }

    #[test]
    fn no_change_is_shown_from_a_figure_written_as_zero() {
        // 0.113 vs 0.000 syscalls written with 3 decimals: the change from 0.113 is shown,
        // the one from 0.0000014 (written 0.000) is not.
        assert_eq!(change_from_written(0.0000014, 0.134, 3), None);
        assert_eq!(change_from_written(0.0, 0.134, 3), None);
        let c = change_from_written(0.113, 0.0000014, 3).unwrap();
        assert!((c + 1.0).abs() < 1e-4, "{c}");
        assert!(
            change_from_written(0.0005, 0.001, 3).is_some(),
            "0.0005 is written 0.001"
        );
        assert!(change_from_written(70801.0, 62251.0, 0).is_some());
        assert_eq!(change_from_written(0.4, 1.0, 0), None, "written as 0");
    }

    #[test]
    fn rows_and_cpu_per_row_are_shown_when_counted_and_n_a_where_missing() {
        let mut a = fixture("doppio", 1.0, true);
        a.rows = Some(452_370);
        a.rows_per_s = Some(150_000.0);
        a.cpu_us_per_row = Some(0.555);
        // An older report of the other backend: no rows.
        let b = fixture("scylla", 1.25, false);
        let mut out = String::new();
        compare_sections(&mut out, &[("doppio".into(), &a), ("scylla".into(), &b)]);
        let line = |label: &str| {
            out.lines()
                .find(|l| l.starts_with(label))
                .unwrap_or_else(|| panic!("no `{label}` in\n{out}"))
                .to_owned()
        };
        let rows = line("  rows  ");
        assert!(rows.contains("452370") && rows.contains("n/a"), "{rows}");
        let per_s = line("  rows [rows/s]");
        assert!(per_s.contains("150000") && per_s.contains("n/a"), "{per_s}");
        let cpu = line("  client CPU per row [us]");
        assert!(cpu.contains("0.555") && cpu.contains("n/a"), "{cpu}");
        // Neither backend counted rows: no row for them at all.
        let mut out = String::new();
        compare_sections(&mut out, &[("scylla".into(), &b)]);
        assert!(!out.contains("rows"), "{out}");
    }
}

#[cfg(test)]
mod environment_and_anatomy_tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::probe::anatomy::Layer;
    use crate::probe::environment::Environment;
    use crate::report::{AnatomyReport, RunConfig};

    fn report(driver: &str, environment: Option<Environment>, b: BackendReport) -> Report {
        Report {
            config: RunConfig {
                drivers: vec![driver.to_owned()],
                ..RunConfig::default()
            },
            backends: BTreeMap::from([(driver.to_owned(), b)]),
            environment,
            ..Report::default()
        }
    }

    fn backend(cpu: f64, anatomy: Option<AnatomyReport>) -> BackendReport {
        let mut b = crate::report::BackendRun::default().report("doppio");
        b.throughput.requests = 1000;
        b.client_cpu.cpu_us_per_req = cpu;
        b.anatomy = anatomy;
        b
    }

    #[test]
    fn show_names_every_difference_of_machine_and_build() {
        let here = Environment::here();
        let mut other = here.clone();
        other.kernel = Some("5.15.0".into());
        other.rustc = "rustc 1.80.0".into();
        let a = report("doppio", Some(here.clone()), backend(1.0, None));
        let b = report("doppio", Some(other), backend(1.0, None));
        let out = render_pair(&b, &a);
        assert!(out.contains("ENVIRONMENT  warning: "), "{out}");
        let kernel = format!(
            "kernel: {} vs 5.15.0",
            here.kernel.clone().unwrap_or_default()
        );
        assert!(out.contains(&kernel), "{out}");
        assert!(
            out.contains(&format!("rustc: {} vs rustc 1.80.0", here.rustc)),
            "{out}"
        );
        // The same machine and build: said so.
        let same = render_pair(&a, &a);
        assert!(
            same.contains("ENVIRONMENT  the same machine and build in both reports"),
            "{same}"
        );
        // A report from before environments were recorded: not compared, and why.
        let old = report("doppio", None, backend(1.0, None));
        assert!(render_pair(&a, &old).contains("ENVIRONMENT  not compared"));
        // One report alone: its machine and build in CONFIG.
        let alone = render(&a, false);
        assert!(alone.contains("  machine       Linux "), "{alone}");
        assert!(alone.contains("  build         commit "), "{alone}");
    }

    #[test]
    fn the_anatomy_table_shows_every_layer_and_compares_two_reports() {
        let anatomy = |codec: f64, driver: f64| AnatomyReport {
            sampling: "perf record -e cpu-clock -F 499 --call-graph dwarf,8192".into(),
            sampled_cpu_us_per_req: codec + driver,
            us_per_req: BTreeMap::from([(Layer::Codec, codec), (Layer::Driver, driver)]),
            skipped_lines: 0,
            recorder_cpu_us_per_req: Some(0.1),
            folded: None,
        };
        let a = report("doppio", None, backend(1.0, Some(anatomy(0.25, 0.75))));
        let b = report("doppio", None, backend(2.0, Some(anatomy(0.5, 1.5))));
        let out = render_pair(&b, &a);
        let table = out.split("ANATOMY [us/req]").nth(1).unwrap_or_default();
        assert!(table.contains("  codec"), "{out}");
        // Every layer is a row, 0 where it had no sample.
        for layer in Layer::ALL {
            assert!(
                table.contains(&format!("  {}", layer.name())),
                "{}: {out}",
                layer.name()
            );
        }
        let codec = table
            .lines()
            .find(|l| l.starts_with("    codec"))
            .unwrap_or_default();
        assert!(codec.contains("+100.0%"), "{codec}");
        // Without sampled stacks there is no table.
        let plain = report("doppio", None, backend(1.0, None));
        assert!(!render(&plain, false).contains("ANATOMY"));
        // Samples that stand for much less than the measured CPU are pointed out.
        let mut thin = anatomy(0.1, 0.1);
        thin.sampled_cpu_us_per_req = 0.2;
        let thin = report("doppio", None, backend(1.0, Some(thin)));
        assert!(render(&thin, false).contains("the samples stand for 0.20 us per request"));
    }
}
