//! The table `doppio cost` writes (`cost.json`): user-space instructions and heap
//! allocations per request of each scenario on each driver, counted under Valgrind, and the
//! gate that compares doppio's figures with a recorded baseline (`doppio cost --check`).
//! How they are counted is `experiment::cost`'s; the markdown is `render::cost_table`'s.

use serde::{Deserialize, Serialize};

/// One scenario on one driver: per request (or, for `empty`, per run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScenarioCost {
    /// The scenario's name.
    pub scenario: String,
    /// The driver's name.
    pub driver: String,
    /// Requests measured (0 for `empty`).
    pub requests: u64,
    /// The driver's cost per request (per run for `empty`).
    pub client: PerRequest,
    /// The simulated runtime's own cost per request (doppio only).
    pub runtime: PerRequest,
}

/// Costs per request, as fractions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PerRequest {
    /// Instructions.
    pub instructions: f64,
    /// Allocations.
    pub allocations: f64,
    /// Bytes allocated.
    pub bytes: f64,
}

/// The whole table, as `cost.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CostTable {
    /// Whether the binary was built with optimisations (figures of a debug build are not
    /// comparable with a release build's).
    pub release: bool,
    /// Warm-up requests before the measured ones.
    pub warmup: u64,
    /// Every scenario on every driver.
    pub figures: Vec<ScenarioCost>,
}

/// Instructions per request may rise by this share before the check fails.
pub(crate) const INSTRUCTIONS_TOLERANCE: f64 = 0.02;
/// Allocations per request may rise by this much (less than one per hundred requests:
/// the figures are exact, so any allocation added per request is seen).
pub(crate) const ALLOCATIONS_TOLERANCE: f64 = 0.01;

/// The comparison of a table's doppio figures with a baseline's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Check {
    /// One line per doppio scenario compared: figure, baseline, change.
    pub lines: Vec<String>,
    /// The lines of the scenarios that regressed.
    pub regressions: Vec<String>,
    /// Why the figures could not be compared at all (different build or counts).
    pub incomparable: Option<String>,
}

/// Compares `table`'s doppio figures with `baseline`'s: instructions per request may rise
/// by [`INSTRUCTIONS_TOLERANCE`], allocations by [`ALLOCATIONS_TOLERANCE`]. Figures of a
/// different build profile, warm-up or request count are not comparable, which fails too.
pub(crate) fn check(table: &CostTable, baseline: &CostTable, requests: u64) -> Check {
    let mut c = Check {
        lines: Vec::new(),
        regressions: Vec::new(),
        incomparable: None,
    };
    let base_requests = baseline.figures.iter().map(|f| f.requests).find(|&n| n > 0);
    if table.release != baseline.release
        || table.warmup != baseline.warmup
        || base_requests.is_some_and(|n| n != requests)
    {
        let why = format!(
            "the baseline is of a {} build, warm-up {}, {} requests; this run: {} build, \
             warm-up {}, {requests} requests",
            if baseline.release { "release" } else { "debug" },
            baseline.warmup,
            base_requests.unwrap_or(0),
            if table.release { "release" } else { "debug" },
            table.warmup
        );
        c.regressions.push(why.clone());
        c.incomparable = Some(why);
        return c;
    }
    for f in table.figures.iter().filter(|f| f.driver == "doppio") {
        let Some(b) = baseline
            .figures
            .iter()
            .find(|b| b.driver == f.driver && b.scenario == f.scenario)
        else {
            c.lines.push(format!(
                "{}: not in the baseline (not compared)",
                f.scenario
            ));
            continue;
        };
        let (now, was) = (f.client.instructions, b.client.instructions);
        let change = if was > 0.0 { now / was - 1.0 } else { 0.0 };
        let line = format!(
            "{}: {now:.0} instructions per request (baseline {was:.0}, {:+.2} %), {:.2} \
             allocations (baseline {:.2})",
            f.scenario,
            change * 100.0,
            f.client.allocations,
            b.client.allocations
        );
        // `empty` is a whole process, not a request: its allocations (start-up, connection,
        // preparation) get the instructions' relative tolerance, not the per-request one.
        let allocation_bound = if f.requests == 0 {
            b.client.allocations * (1.0 + INSTRUCTIONS_TOLERANCE)
        } else {
            b.client.allocations + ALLOCATIONS_TOLERANCE
        };
        if change > INSTRUCTIONS_TOLERANCE || f.client.allocations > allocation_bound {
            c.regressions.push(line.clone());
            c.lines.push(format!("REGRESSED {line}"));
        } else {
            c.lines.push(line);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(release: bool, insert_instructions: f64, insert_allocations: f64) -> CostTable {
        let figure = |scenario: &str, driver: &str, instructions, allocations| ScenarioCost {
            scenario: scenario.into(),
            driver: driver.into(),
            requests: 1000,
            client: PerRequest {
                instructions,
                allocations,
                bytes: 0.0,
            },
            runtime: PerRequest::default(),
        };
        CostTable {
            release,
            warmup: 100,
            figures: vec![
                figure("insert", "doppio", insert_instructions, insert_allocations),
                figure("select_1", "doppio", 4000.0, 1.0),
                // scylla's figures move from run to run: never checked.
                figure("insert", "scylla", insert_instructions * 10.0, 9.0),
            ],
        }
    }

    /// The gate fires on a deliberately added 3 % of instructions or one allocation per
    /// request, not on 1 %, and refuses figures of another build.
    #[test]
    fn the_check_catches_three_percent_and_an_added_allocation() {
        let base = table(true, 3584.0, 0.0);
        let same = check(&table(true, 3584.0, 0.0), &base, 1000);
        assert!(same.regressions.is_empty(), "{same:?}");
        assert_eq!(same.lines.len(), 2, "doppio's scenarios only: {same:?}");
        let one = check(&table(true, 3584.0 * 1.01, 0.0), &base, 1000);
        assert!(one.regressions.is_empty(), "{one:?}");
        let three = check(&table(true, 3584.0 * 1.03, 0.0), &base, 1000);
        assert_eq!(three.regressions.len(), 1, "{three:?}");
        assert!(three.regressions[0].contains("+3.00 %"), "{three:?}");
        let alloc = check(&table(true, 3584.0, 1.0), &base, 1000);
        assert_eq!(alloc.regressions.len(), 1, "{alloc:?}");
        let debug = check(&table(false, 3584.0, 0.0), &base, 1000);
        assert!(debug.incomparable.is_some() && !debug.regressions.is_empty());
        let fewer = check(&table(true, 3584.0, 0.0), &base, 500);
        assert!(fewer.incomparable.is_some(), "{fewer:?}");
        // `empty` is a whole run: one more allocation of 1322 is within its tolerance.
        let empty = |allocations| {
            let mut t = table(true, 3584.0, 0.0);
            t.figures.push(ScenarioCost {
                scenario: "empty".into(),
                driver: "doppio".into(),
                requests: 0,
                client: PerRequest {
                    instructions: 1.4e6,
                    allocations,
                    bytes: 0.0,
                },
                runtime: PerRequest::default(),
            });
            t
        };
        let one_more = check(&empty(1323.0), &empty(1322.0), 1000);
        assert!(one_more.regressions.is_empty(), "{one_more:?}");
        let many_more = check(&empty(1400.0), &empty(1322.0), 1000);
        assert_eq!(many_more.regressions.len(), 1, "{many_more:?}");
    }
}
