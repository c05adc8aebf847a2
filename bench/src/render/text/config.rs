//! CONFIG: the run's options, workload, machine and build, and the differences of machine
//! and build between two reports.

use std::fmt::Write as _;

use super::layout::wrap;
use crate::report::Report;

pub(super) fn config_section(out: &mut String, r: &Report) {
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
pub(super) fn environment_lines(out: &mut String, e: &crate::probe::environment::Environment) {
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
/// io_uring set-ups and each backend's connections by node included, or that the reports
/// do not say.
pub(super) fn environment_differences(out: &mut String, new: &Report, baseline: &Report) {
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
    for (driver, shape) in &new.config.connection_shapes {
        if let Some(old) = baseline.config.connection_shapes.get(driver) {
            if !old.same_counts(shape) {
                differences.push(format!(
                    "{driver} connections: {} vs {}",
                    old.text(),
                    shape.text()
                ));
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
/// backoff), the cores each backend's request threads were pinned to and the connections
/// each held.
pub(super) fn driver_settings(out: &mut String, c: &crate::report::RunConfig) {
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
    if !c.connection_shapes.is_empty() {
        let held: Vec<String> = c
            .connection_shapes
            .iter()
            .map(|(driver, shape)| format!("{driver} {}", shape.text()))
            .collect();
        wrap(out, "  connections   ", &held.join("   "));
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

/// CONFIG's rate: a constant as `N req/s`, `schedule` (shown on a line of its own), or
/// `unlimited`.
pub(super) fn rate_text(c: &crate::report::RunConfig) -> String {
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
pub(super) fn schedule_of(c: &crate::report::RunConfig) -> Option<&str> {
    c.rate_schedule
        .as_deref()
        .filter(|s| s.contains([':', ',', '+']) || c.rate.is_none())
}
