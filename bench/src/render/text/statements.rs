//! STATEMENTS: each run statement's line (one backend) or table (two or more side by
//! side), and the notes on them.

use std::fmt::Write as _;

use super::layout::{fit, Column};
use super::metric::{table, Metric};
use crate::report::cell::{SampleFigure, Value};
use crate::report::{BackendReport, LatencySummary, StatementReport};

/// Whether the STATEMENTS section has anything to say: some backend ran several statements,
/// a sequence or a batch, or a conditional statement (its not-applied count).
pub(super) fn several_statements(columns: &[Column<'_>]) -> bool {
    columns.iter().any(|(_, b)| {
        b.statements.statements.len() > 1
            || b.statements
                .statements
                .iter()
                .any(|s| s.kind.is_some() || s.not_applied.is_some())
    })
}

/// The notes under the STATEMENTS tables: what a sequence's or a batch's entry counts, and
/// each conditional statement's updates not applied, per backend.
pub(super) fn statement_notes(out: &mut String, columns: &[Column<'_>]) {
    let mut lines = Vec::new();
    if let Some((_, b)) = columns.first() {
        for st in &b.statements.statements {
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
        for st in &b.statements.statements {
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
pub(super) fn statements_section(out: &mut String, columns: &[Column<'_>]) {
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

/// One backend's statements, one line each.
pub(super) fn statement_lines(out: &mut String, label: &str, b: &BackendReport) {
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
    for st in &b.statements.statements {
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
pub(super) fn statement_tables(out: &mut String, columns: &[Column<'_>]) {
    let mut names: Vec<&str> = Vec::new();
    for (_, b) in columns {
        for st in &b.statements.statements {
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
pub(super) fn statement_metrics(name: &str) -> Vec<Metric<'_>> {
    fn ms(ns: f64) -> f64 {
        ns / 1e6
    }
    // The statement's figure of a backend, `n/a` where the backend did not run it.
    let of = move |f: fn(&StatementReport) -> Value| {
        move |b: &BackendReport| {
            b.statements
                .statements
                .iter()
                .find(|s| s.name == name)
                .map_or(Value::Missing, f)
        }
    };
    // Its latency figure in ms, `n/a` when none of its requests succeeded (nothing was
    // measured).
    let latency = move |f: fn(&LatencySummary) -> u64| {
        move |b: &BackendReport| match b.statements.statements.iter().find(|s| s.name == name) {
            Some(s) if s.requests > s.errors => Value::Num(ms(f(&s.latency_ns) as f64)),
            _ => Value::Missing,
        }
    };
    let mean =
        move |b: &BackendReport| match b.statements.statements.iter().find(|s| s.name == name) {
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
        .shown_if(|b| b.result_rows.rows.is_some()),
        Metric::new("mean", "ms", 3, mean).tested_statement(name, SampleFigure::MeanLatency),
        Metric::new("p50", "ms", 3, latency(|l| l.p50)).change(),
        Metric::new("p99", "ms", 3, latency(|l| l.p99)).change(),
        Metric::new("p99.9", "ms", 3, latency(|l| l.p999)).change(),
        Metric::new("max", "ms", 3, latency(|l| l.max)).change(),
    ]
}
