//! The comparison tables (SUMMARY, LATENCY, OVERHEAD, WATERFALL, ANATOMY) as data, the
//! notes that follow them, and PAIRS (two backends' figures of each round).

use std::fmt::Write as _;

use super::layout::{change_of, wrap, Column};
use super::metric::{table, Metric};
use super::p_value::p_value;
use super::statements::statements_section;
use crate::report::cell::SampleFigure;
use crate::report::figure::anatomy::AnatomyReport;
use crate::report::figure::client_cpu::ClientCpuFigures;
use crate::report::figure::context_switches::ContextSwitchFigures;
use crate::report::figure::driver_counts::DriverCountFigures;
use crate::report::figure::hardware::HardwareFigures;
use crate::report::figure::latency::LatencyFigures;
use crate::report::figure::memory::MemoryFigures;
use crate::report::figure::rows::RowFigures;
use crate::report::figure::scylla_shards::ScyllaShardFigures;
use crate::report::figure::server_cpu::ServerCpuFigures;
use crate::report::figure::socket_batching::SocketBatchingFigures;
use crate::report::figure::syscalls::SyscallFigures;
use crate::report::figure::throughput::ThroughputFigures;
use crate::report::figure::uring::{IoUringFigures, UringEnterFigures};
use crate::report::figure::waterfall::WaterfallReport;
use crate::report::figure::while_parked::WhileParked;
use crate::report::BackendReport;

/// The comparison tables: a title and its rows, in the order they are printed.
pub(super) fn tables<'a>(columns: &[Column<'a>]) -> Vec<(&'static str, Vec<Metric<'a>>)> {
    let mut summary = Metric::all(ThroughputFigures::rows(), |b| &b.throughput);
    summary.extend(Metric::all(DriverCountFigures::rows(), |b| {
        &b.driver_counts
    }));
    summary.push(Metric::of(ThroughputFigures::time_row(), |b| &b.throughput));
    summary.extend(Metric::all(RowFigures::rows(), |b| &b.result_rows));
    summary.extend(Metric::all(ServerCpuFigures::rows(), |b| &b.server_cpu));

    let latency = Metric::all(LatencyFigures::rows(), |b| &b.latency);

    let mut overhead = Metric::all(ClientCpuFigures::rows(), |b| &b.client_cpu);
    overhead.extend(Metric::all(RowFigures::cpu_rows(), |b| &b.result_rows));
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
    overhead.extend(Metric::all(WhileParked::rows(), |b| &b.while_parked));
    // Where the requests went (doppio's per-node counters), when there is more than one node.
    let mut nodes: Vec<String> = columns
        .iter()
        .filter_map(|(_, b)| b.driver_counts.requests_by_node.as_ref())
        .flat_map(|m| m.keys().cloned())
        .collect();
    nodes.sort();
    nodes.dedup();
    if nodes.len() > 1 {
        overhead.extend(Metric::all(DriverCountFigures::node_rows(nodes), |b| {
            &b.driver_counts
        }));
    }
    // Where the requests went among each node's ScyllaDB shards (doppio's per-connection
    // counters grouped by the shard each connection landed on).
    let mut shards: Vec<(String, usize)> = columns
        .iter()
        .filter_map(|(_, b)| b.scylla_shards.requests_by_scylla_shard.as_ref())
        .flat_map(|m| {
            m.iter()
                .flat_map(|(node, c)| (0..c.len()).map(|i| (node.clone(), i)))
        })
        .collect();
    shards.sort();
    shards.dedup();
    overhead.extend(Metric::all(ScyllaShardFigures::rows(shards), |b| {
        &b.scylla_shards
    }));
    vec![
        ("SUMMARY", summary),
        ("LATENCY [ms]", latency),
        ("OVERHEAD (per request)", overhead),
    ]
}

/// The title of the waterfall table.
pub(super) const WATERFALL: &str = "WATERFALL [us, mean]";

/// The waterfall table's rows: each stage's mean over the timed requests, then the timed
/// requests' mean latency (which the stages add up to) and their count. A backend without
/// stage hooks (scylla) shows its end-to-end mean latency only.
pub(super) fn waterfall_metrics<'a>() -> Vec<Metric<'a>> {
    let mut rows = Metric::all(WaterfallReport::stage_rows(), |b| &b.waterfall);
    let end_to_end =
        WaterfallReport::end_to_end_row(|b: &BackendReport| &b.waterfall, |b| &b.latency);
    rows.push(Metric::of(end_to_end, |b| b));
    rows.extend(Metric::all(WaterfallReport::count_rows(), |b| &b.waterfall));
    rows
}

/// The title of the anatomy table.
pub(super) const ANATOMY: &str = "ANATOMY [us/req]";

/// The anatomy table's rows: the client CPU it splits, every layer's part (0 where a layer
/// had no sample), what the samples stood for, and perf's own CPU.
pub(super) fn anatomy_metrics<'a>() -> Vec<Metric<'a>> {
    let mut rows = vec![Metric::of(AnatomyReport::cpu_row(), |b| &b.client_cpu)];
    rows.extend(Metric::all(AnatomyReport::rows(), |b| &b.anatomy));
    rows
}

pub(super) fn compare_sections(out: &mut String, columns: &[Column<'_>]) {
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
        if b.statements.statements.len() > 1 {
            for st in &b.statements.statements {
                for (kind, n) in &st.errors_by_kind {
                    let _ = writeln!(out, "  {label} statement {}: {kind} x{n}", st.name);
                }
            }
        }
    }
    out.push('\n');
}

/// Under WATERFALL: what the stages are, and which backends have none.
pub(super) fn waterfall_notes(out: &mut String, columns: &[Column<'_>]) {
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
pub(super) fn anatomy_notes(out: &mut String, columns: &[Column<'_>]) {
    let figures: Vec<(&str, Option<&AnatomyReport>, f64)> = columns
        .iter()
        .map(|(l, b)| (l.as_str(), b.anatomy.as_ref(), b.client_cpu.cpu_us_per_req))
        .collect();
    for (prefix, note) in AnatomyReport::notes(&figures) {
        wrap(out, prefix, &note);
    }
}

/// Under SUMMARY: when the node was saturated, throughput is the node's.
pub(super) fn server_bound_note(out: &mut String, columns: &[Column<'_>]) {
    let named: Vec<(&str, &BackendReport)> =
        columns.iter().map(|(l, b)| (l.as_str(), *b)).collect();
    let bound = crate::report::verdict::server_bound(&named);
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

/// With more than two backends (`--driver doppio,doppio-uring,scylla`), every pair as a
/// two-backend run shows it: the change of the second relative to the first, and the
/// p-values of throughput and mean latency (Welch's t-test on batch means of the segments'
/// samples, as for two).
pub(super) fn pairs_section(out: &mut String, columns: &[Column<'_>]) {
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
