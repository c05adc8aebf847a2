//! The text report's table layout: its columns (the backends that measured something),
//! the header and row lines with their widths, a change between two columns, and wrapped
//! or fitted text.

use std::fmt::Write as _;

use crate::report::BackendReport;

/// A column of the report: a label and a backend's results.
pub(crate) type Column<'a> = (String, &'a BackendReport);

/// The backends of `drivers` (in their order) that measured requests, as columns, and the
/// names of those that did not (absent from `backends`, or with no request): a backend that
/// did not run is named as such, never shown as a column of zeros and -100 %.
pub(super) fn measured_columns<'a>(
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

pub(super) const LABEL_W: usize = 22;

pub(super) const COL_W: usize = 24;

pub(super) fn header(out: &mut String, title: &str, columns: &[Column<'_>]) {
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

pub(super) fn row(
    out: &mut String,
    label: &str,
    cells: &[String],
    change: Option<f64>,
    p: Option<f64>,
) {
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

pub(super) fn change_of(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| (b - a) / a)
}

/// The change of `b` from `a` for a row written with `decimals`, or none when `a` is
/// written as zero: a change from a figure the reader sees as 0.000 (an epoll-driven
/// backend's 0.0000014 `send` per request against another's 0.134) is a meaningless
/// "+9519063.1%".
pub(super) fn change_from_written(a: f64, b: f64, decimals: usize) -> Option<f64> {
    let scale = 10f64.powi(i32::try_from(decimals).unwrap_or(i32::MAX));
    if (a * scale).round() == 0.0 {
        return None;
    }
    change_of(a, b)
}

pub(super) fn wrap(out: &mut String, prefix: &str, text: &str) {
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

/// `name` cut to `width` characters (the last one a `~` when cut).
pub(super) fn fit(name: &str, width: usize) -> String {
    if name.chars().count() > width {
        format!("{}~", name.chars().take(width - 1).collect::<String>())
    } else {
        name.to_owned()
    }
}
