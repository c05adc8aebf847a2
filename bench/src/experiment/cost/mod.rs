//! `doppio cost`'s measurement: user-space instructions and heap allocations per request,
//! counted by Valgrind (Callgrind and DHAT) rather than timed, so that the figures do not move
//! with the machine's weather: the same binary gives the same doppio figures to the
//! instruction.
//!
//! Each scenario runs in a child process (`doppio cost-child`) under each tool twice: with
//! the warm-up requests alone and with the warm-up and the measured requests; the difference
//! divided by the measured requests is the figure per request (connection, preparation and
//! first-use costs cancel out). `empty` makes no request: its figure is the whole run.
//!
//! doppio runs on the simulated runtime with the stub in memory as the simulation's peer;
//! its figure is the inclusive cost of polling the client's tasks (`poll_client_task`), and
//! the simulated executor's own share (the total less the client's and the stub's) is shown
//! apart. scylla-rust-driver runs on a current-thread tokio runtime against a stub served
//! by this process over loopback: its figure is the whole child process (driver and tokio;
//! the kernel's work is not user-space instructions, and is in neither figure).
//!
//! Children: [`counts`], what one child run cost, split by who did it; [`valgrind`], one
//! child run under Callgrind or DHAT and its output read.

mod counts;
mod valgrind;

use std::collections::BTreeMap;
use std::path::Path;

use crate::backend::cost_scenario::{Scenario, ROW_BYTES};
use crate::backend::Driver;
use crate::failure::CostError;
use crate::report::cost::{CostTable, PerRequest, ScenarioCost};

use counts::{Split, ToolCounts};
pub(crate) use valgrind::missing_tool;
use valgrind::Child;

fn per(c: ToolCounts, n: u64) -> PerRequest {
    let n = n.max(1) as f64;
    PerRequest {
        instructions: c.instructions as f64 / n,
        allocations: c.allocations as f64 / n,
        bytes: c.bytes as f64 / n,
    }
}

/// What `doppio cost` measures: each scenario on each driver, the warm-up and measured
/// requests, and the folder its tools' files go to.
#[derive(Debug, Clone)]
pub(crate) struct CostPlan<'a> {
    /// The scenarios, in order.
    pub(crate) scenarios: Vec<Scenario>,
    /// The drivers (doppio, scylla or both).
    pub(crate) drivers: Vec<Driver>,
    /// Requests before the measured ones.
    pub(crate) warmup: u64,
    /// Measured requests (at least 1).
    pub(crate) requests: u64,
    /// Where the tools' output files and logs go (it exists).
    pub(crate) out: &'a Path,
}

/// Runs every scenario on every driver under Callgrind and DHAT, twice each, and returns the
/// table of figures per request.
pub(crate) fn measure(plan: &CostPlan<'_>) -> Result<CostTable, CostError> {
    let exe = std::env::current_exe().map_err(|e| CostError::Output {
        path: "current executable".into(),
        why: e.to_string(),
    })?;
    // The stubs scylla-rust-driver's runs talk to, one per result shape, in this process
    // (outside Valgrind, on doppio's io_uring runtime).
    let mut stubs: BTreeMap<usize, doppio_stub::StubHandle> = BTreeMap::new();
    let mut figures = Vec::new();
    for &scenario in &plan.scenarios {
        for &driver in &plan.drivers {
            let stub = if driver == Driver::Scylla {
                let rows = scenario.rows();
                if let std::collections::btree_map::Entry::Vacant(e) = stubs.entry(rows) {
                    e.insert(start_stub(rows)?);
                }
                stubs.get(&rows).map(|s| s.addr())
            } else {
                None
            };
            let run = |requests: u64| -> Result<Split, CostError> {
                let child = Child {
                    exe: &exe,
                    out: plan.out,
                    driver,
                    scenario,
                    requests,
                    stub,
                };
                let mut split = Split::default();
                child.callgrind(&mut split)?;
                child.dhat(&mut split)?;
                Ok(split)
            };
            eprintln!("{} on {} ...", scenario.name(), driver.name());
            let figure = if scenario.has_requests() {
                let base = run(plan.warmup)?;
                let full = run(plan.warmup + plan.requests)?;
                ScenarioCost {
                    scenario: scenario.name().into(),
                    driver: driver.name().into(),
                    requests: plan.requests,
                    client: per(full.client.minus(base.client), plan.requests),
                    runtime: per(full.rest.minus(base.rest), plan.requests),
                }
            } else {
                // No request: the whole process but the stub, program start included, for
                // both drivers (the simulated runtime's column: all but doppio's polls).
                let whole = run(0)?;
                ScenarioCost {
                    scenario: scenario.name().into(),
                    driver: driver.name().into(),
                    requests: 0,
                    client: per(whole.client.plus(whole.rest), 1),
                    runtime: per(whole.rest, 1),
                }
            };
            figures.push(figure);
        }
    }
    Ok(CostTable {
        release: !cfg!(debug_assertions),
        warmup: plan.warmup,
        figures,
    })
}

fn start_stub(rows: usize) -> Result<doppio_stub::StubHandle, CostError> {
    doppio_stub::Stub::start(doppio_stub::StubConfig {
        listen: "127.0.0.1:0"
            .parse()
            .map_err(|e| CostError::Stub(format!("{e}")))?,
        cores: vec![0],
        pin: false,
        runtime: doppio_driver::rt::Runtime::Uring,
        log_rules: false,
        shape: doppio_stub::Shape {
            rows,
            row_bytes: ROW_BYTES,
            ..doppio_stub::Shape::default()
        },
        ..doppio_stub::StubConfig::default()
    })
    .map_err(|e| CostError::Stub(e.to_string()))
}
