//! `doppio cost`: user-space instructions and heap allocations per request, counted by
//! Valgrind rather than timed (how: `experiment::cost`), doppio beside scylla-rust-driver,
//! written as `cost.md` and `cost.json` (`report::cost`) and, with `--check`, compared with a
//! baseline. `doppio cost-child` is the process Valgrind watches: one scenario, nothing else.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::backend::cost_scenario::Scenario;
use crate::backend::Driver;
use crate::cli::CostArgs;
use crate::experiment::cost::{measure, missing_tool, CostPlan};
use crate::failure::{CostError, Failure};
use crate::render::cost_table::{check_text, markdown};
use crate::report::cost::{check, CostTable};

/// Runs the scenarios under Callgrind and DHAT and prints (and writes) the table.
pub fn cost(args: &CostArgs) -> Result<(), Failure> {
    if args.requests == 0 {
        return Err(CostError::Option("--requests must be at least 1".into()).into());
    }
    if let Some(tool) = missing_tool() {
        return Err(CostError::NoValgrind { tool }.into());
    }
    let scenarios = match &args.scenario {
        names if names.is_empty() => Scenario::ALL.to_vec(),
        names => names
            .iter()
            .map(|n| Scenario::parse(n))
            .collect::<Result<Vec<_>, _>>()
            .map_err(CostError::Option)?,
    };
    let drivers = match &args.driver {
        None => vec![Driver::Doppio, Driver::Scylla],
        Some(name) => match Driver::parse(name)? {
            d @ (Driver::Doppio | Driver::Scylla) => vec![d],
            other => {
                return Err(CostError::Option(format!(
                    "--driver {}: `doppio cost` measures doppio and scylla",
                    other.name()
                ))
                .into())
            }
        },
    };
    // The baseline is read before anything runs: a missing or unreadable one is an error
    // now, not after minutes of profiling.
    let baseline = match &args.check {
        None => None,
        Some(path) => Some(read_baseline(path)?),
    };
    std::fs::create_dir_all(&args.out)?;
    let table = measure(&CostPlan {
        scenarios,
        drivers,
        warmup: args.warmup,
        requests: args.requests,
        out: &args.out,
    })?;
    let text = markdown(&table);
    print!("{text}");
    std::fs::write(args.out.join("cost.md"), &text)?;
    let json = serde_json::to_string_pretty(&table).map_err(std::io::Error::other)?;
    std::fs::write(args.out.join("cost.json"), json)?;
    eprintln!("written: {}", args.out.join("cost.{md,json}").display());
    if let (Some(baseline), Some(path)) = (baseline, &args.check) {
        let verdict = check(&table, &baseline, args.requests);
        print!("{}", check_text(&verdict, path));
        if !verdict.regressions.is_empty() {
            return Err(CostError::Regressed {
                count: verdict.regressions.len(),
                baseline: path.clone(),
            }
            .into());
        }
    }
    Ok(())
}

fn read_baseline(path: &Path) -> Result<CostTable, CostError> {
    let bad = |why: String| CostError::Option(format!("--check {}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| bad(format!("not a cost.json: {e}")))
}

/// Runs one scenario in this process (the child Valgrind watches) and prints the rows read.
pub fn child(
    driver: &str,
    scenario: &str,
    requests: u64,
    stub: Option<SocketAddr>,
) -> Result<(), Failure> {
    let driver = Driver::parse(driver)?;
    let scenario = Scenario::parse(scenario).map_err(CostError::Option)?;
    let rows = crate::backend::cost::run(driver, scenario, requests, stub).map_err(|why| {
        CostError::Run {
            what: format!("{} on {}", scenario.name(), driver.name()),
            status: why,
            log: PathBuf::from("-"),
        }
    })?;
    println!("{rows} rows");
    Ok(())
}
