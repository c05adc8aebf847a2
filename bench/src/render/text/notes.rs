//! NOTES (the run's warnings and fatal error) and the VERDICT of a run of several
//! backends.

use std::fmt::Write as _;

use super::layout::wrap;
use crate::report::Report;

pub(super) fn notes_section(out: &mut String, r: &Report) {
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

/// VERDICT: each figure's ratio between backends, paired by round, in plain sentences, the
/// number of comparisons their p-values are Holm-adjusted for, and what qualifies them;
/// nothing for a report of one backend.
pub(super) fn verdict_section(out: &mut String, report: &Report) {
    let Some(v) = crate::report::verdict::verdict(report) else {
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
            crate::report::verdict::CONFIDENCE * 100.0
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
